// expect: none
// The same split, its result checked before use.
#include <mpi.h>

int main(int argc, char **argv) {
    MPI_Comm none;
    MPI_Init(&argc, &argv);
    MPI_Comm_split(MPI_COMM_WORLD, MPI_UNDEFINED, 0, &none);
    if (none != MPI_COMM_NULL)
        MPI_Barrier(none);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
