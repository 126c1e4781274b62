// expect: none
// Every rank starts a nonblocking reduction, then makes a blocking one,
// then waits for the first.
#include <mpi.h>

int main(int argc, char **argv) {
    int x = 1, y = 0, z = 0;
    MPI_Request req;
    MPI_Init(&argc, &argv);
    MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    MPI_Allreduce(&x, &z, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return y == z ? 0 : 1;
}
