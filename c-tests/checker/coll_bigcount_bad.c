// expect: collective
// Rank 0 sums 4 ints, the others 4 floats (as many bytes), through MPI
// 4's large-count MPI_Allreduce_c where the MPI has it (MPICH 4), else
// MPI_Allreduce.
// The buffer is a char array, storage for either type: the only error
// is the one below.
#include <mpi.h>

#if MPI_VERSION >= 4
#define ALLREDUCE MPI_Allreduce_c
#else
#define ALLREDUCE MPI_Allreduce
#endif

int main(int argc, char **argv) {
    int rank;
    char x[16] = {0}, y[16];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    ALLREDUCE(x, y, 4, rank == 0 ? MPI_INT : MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
