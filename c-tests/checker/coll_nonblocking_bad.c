// expect: collective
// Rank 0 starts a broadcast while the others start a reduction; both
// wait.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, x = 1, y = 0;
    MPI_Request req;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        MPI_Ibcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD, &req); // reported
    else
        MPI_Ireduce(&x, &y, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, &req); // reported
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
