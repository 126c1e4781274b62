// expect: none
// Each rank is the root of its own broadcast, in turn.
#include <mpi.h>

int main(int argc, char **argv) {
    int size, x = 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int r = 0; r < size; r++)
        MPI_Bcast(&x, 1, MPI_INT, r, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
