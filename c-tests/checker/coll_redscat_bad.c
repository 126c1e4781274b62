// expect: collective
// Rank 0 reduce-scatters with MPI_SUM, the others with MPI_MAX.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[4] = {0};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Reduce_scatter_block(x, y, 1, MPI_INT, rank == 0 ? MPI_SUM : MPI_MAX, MPI_COMM_WORLD); // reported
    MPI_Finalize();
    return 0;
}
