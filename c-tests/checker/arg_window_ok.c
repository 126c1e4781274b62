// expect: none
// A window of 8 ints, displacement unit sizeof(int).
#include <mpi.h>

int main(int argc, char **argv) {
    int mem[8];
    MPI_Win win;
    MPI_Init(&argc, &argv);
    if (MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win) == MPI_SUCCESS)
        MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
