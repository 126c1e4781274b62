// expect: deadlock
// Rank 0 starts a nonblocking reduction where the others make the
// blocking one, which MPI never matches with it: each waits for its own.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, x = 1, y = 0;
    MPI_Request req;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE); // reported
    } else {
        MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); // reported
    }
    MPI_Finalize();
    return 0;
}
