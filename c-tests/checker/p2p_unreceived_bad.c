// expect: p2p
// Rank 0 sends a message that rank 1 never receives.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, x[3] = {1, 2, 3};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        MPI_Send(x, 3, MPI_INT, 1, 123, MPI_COMM_WORLD);
    MPI_Finalize(); // reported
    return 0;
}
