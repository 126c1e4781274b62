// expect: argument
// A duplicate communicator used after MPI_Comm_free.
#include <mpi.h>

int main(int argc, char **argv) {
    MPI_Comm dup;
    MPI_Init(&argc, &argv);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm kept = dup;
    MPI_Comm_free(&dup);
    MPI_Barrier(kept);
    MPI_Finalize();
    return 0;
}
