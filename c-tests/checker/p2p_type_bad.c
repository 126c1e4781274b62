// expect: p2p
// Rank 0 sends 4 ints; rank 1 receives 4 floats (as many bytes).
// The buffer is a char array, storage for either type: the only error
// is the one below.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank;
    char x[16] = {0};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        MPI_Send(x, 4, MPI_INT, 1, 0, MPI_COMM_WORLD);
    if (rank == 1)
        MPI_Recv(x, 4, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
