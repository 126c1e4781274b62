// expect: argument
// An allreduce whose send and receive buffers overlap.
#include <mpi.h>

int main(int argc, char **argv) {
    int x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    MPI_Init(&argc, &argv);
    MPI_Allreduce(x, x + 2, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
