// expect: collective
// Rank 1 frees the window where rank 0 makes its closing fence.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, mem[8] = {0};
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_fence(0, win);
    if (rank == 0)
        MPI_Win_fence(0, win); // reported
    MPI_Win_free(&win); // reported
    MPI_Finalize();
    return 0;
}
