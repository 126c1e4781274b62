// expect: none
// Every rank starts the barrier and waits for it.
#include <mpi.h>

int main(int argc, char **argv) {
    MPI_Request req;
    MPI_Init(&argc, &argv);
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
