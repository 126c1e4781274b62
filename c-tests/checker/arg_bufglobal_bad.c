// expect: argument
// A broadcast of 32 floats from a global array of 16.
#include <mpi.h>

static float field[16];

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Bcast(field, 32, MPI_FLOAT, 0, MPI_COMM_WORLD); // reported
    MPI_Finalize();
    return 0;
}
