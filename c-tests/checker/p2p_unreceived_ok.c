// expect: none
// Rank 0 sends a message that rank 1 receives.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, x[3] = {1, 2, 3};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        MPI_Send(x, 3, MPI_INT, 1, 123, MPI_COMM_WORLD);
    else if (rank == 1)
        MPI_Recv(x, 3, MPI_INT, 0, 123, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
