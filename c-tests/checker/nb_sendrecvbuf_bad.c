// expect: nonblocking
// A blocking send from part of the buffer that an active receive writes.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, buffer[4] = {1, 2, 3, 4};
    MPI_Request req;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank < 2) {
        int peer = 1 - rank;
        MPI_Irecv(buffer, 2, MPI_INT, peer, 0, MPI_COMM_WORLD, &req);
        MPI_Send(&buffer[1], 2, MPI_INT, peer, 0, MPI_COMM_WORLD); // reported
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
