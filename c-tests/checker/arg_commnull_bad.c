// expect: argument
// A barrier on MPI_COMM_NULL: the split gave no communicator to anyone.
#include <mpi.h>

int main(int argc, char **argv) {
    MPI_Comm none;
    MPI_Init(&argc, &argv);
    MPI_Comm_split(MPI_COMM_WORLD, MPI_UNDEFINED, 0, &none);
    MPI_Barrier(none);
    MPI_Finalize();
    return 0;
}
