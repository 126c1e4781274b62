// expect: none
// A duplicate communicator freed after its last use.
#include <mpi.h>

int main(int argc, char **argv) {
    MPI_Comm dup;
    MPI_Init(&argc, &argv);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Barrier(dup);
    MPI_Comm_free(&dup);
    MPI_Finalize();
    return 0;
}
