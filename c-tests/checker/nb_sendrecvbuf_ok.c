// expect: none
// The send goes from another buffer than the active receive's.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, buffer[4] = {1, 2, 3, 4}, out[4] = {5, 6, 7, 8};
    MPI_Request req;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank < 2) {
        int peer = 1 - rank;
        MPI_Irecv(buffer, 4, MPI_INT, peer, 0, MPI_COMM_WORLD, &req);
        MPI_Send(out, 4, MPI_INT, peer, 0, MPI_COMM_WORLD);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
