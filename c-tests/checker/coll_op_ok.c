// expect: none
// Every rank sums, then every rank takes the maximum.
#include <mpi.h>

int main(int argc, char **argv) {
    int x = 1, y = 0;
    MPI_Init(&argc, &argv);
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
