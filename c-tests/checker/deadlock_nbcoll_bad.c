// expect: deadlock
// Rank 0 waits for a barrier that the others never start.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank;
    MPI_Request req;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        MPI_Ibarrier(MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE); // reported
    }
    MPI_Finalize(); // reported
    return 0;
}
