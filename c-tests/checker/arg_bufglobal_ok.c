// expect: none
// A broadcast of a global array, whole.
#include <mpi.h>

static float field[16];

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Bcast(field, 16, MPI_FLOAT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
