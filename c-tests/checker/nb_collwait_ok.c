// expect: none
// The nonblocking reduction is completed by a test loop.
#include <mpi.h>

int main(int argc, char **argv) {
    int x = 1, y = 0, done = 0;
    MPI_Request req;
    MPI_Init(&argc, &argv);
    MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    MPI_Barrier(MPI_COMM_WORLD);
    while (!done)
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
