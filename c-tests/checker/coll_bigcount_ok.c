// expect: none
// Rank 0 sums 4 ints with MPI 4's large-count MPI_Allreduce_c where the
// MPI has it (MPICH 4), the others with MPI_Allreduce: one collective,
// whichever count type each rank passes.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, x[4] = {1, 2, 3, 4}, y[4];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#if MPI_VERSION >= 4
    if (rank == 0)
        MPI_Allreduce_c(x, y, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    else
#endif
        MPI_Allreduce(x, y, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
