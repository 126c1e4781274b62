// expect: argument
// A window with a displacement unit of 0.
#include <mpi.h>

int main(int argc, char **argv) {
    int mem[8];
    MPI_Win win;
    MPI_Init(&argc, &argv);
    if (MPI_Win_create(mem, sizeof mem, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &win) == MPI_SUCCESS) // reported
        MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
