// expect: none
// Rank 1 starts its barrier only after a message that rank 0 sends once
// its own barrier is under way: legal for a nonblocking collective, which
// each rank starts when it likes, in the same order.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, x = 1, y = 0;
    MPI_Request req, red;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        MPI_Ibarrier(MPI_COMM_WORLD, &req);
        MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Ibarrier(MPI_COMM_WORLD, &req);
    } else {
        MPI_Ibarrier(MPI_COMM_WORLD, &req);
    }
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &red);
    MPI_Wait(&red, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
