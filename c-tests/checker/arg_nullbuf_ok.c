// expect: none
// An empty message from a NULL buffer.
#include <mpi.h>
#include <stddef.h>

int main(int argc, char **argv) {
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        MPI_Send(NULL, 0, MPI_INT, 1, 0, MPI_COMM_WORLD);
    if (rank == 1)
        MPI_Recv(NULL, 0, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
