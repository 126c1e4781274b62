// expect: argument
// Every rank reduces to root `size`, which does not exist.
#include <mpi.h>

int main(int argc, char **argv) {
    int size, x = 1, y = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, size, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
