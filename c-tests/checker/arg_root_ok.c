// expect: none
// Every rank reduces to the last rank.
#include <mpi.h>

int main(int argc, char **argv) {
    int size, x = 1, y = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, size - 1, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
