// expect: collective
// Rank 0 computes a prefix sum while the others reduce to all.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, x = 1, y = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); // reported
    else
        MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); // reported
    MPI_Finalize();
    return 0;
}
