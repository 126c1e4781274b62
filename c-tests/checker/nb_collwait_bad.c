// expect: nonblocking
// The nonblocking reduction is never waited for.
#include <mpi.h>

int main(int argc, char **argv) {
    int x = 1, y = 0;
    MPI_Request req;
    MPI_Init(&argc, &argv);
    MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize(); // reported
    return 0;
}
