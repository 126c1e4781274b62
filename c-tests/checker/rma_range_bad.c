// expect: rma
// Rank 0 gets 8 ints from displacement 4 of rank 1's 8-int window: past its end.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, mem[8] = {0}, data[8];
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_fence(0, win);
    if (rank == 0)
        MPI_Get(data, 8, MPI_INT, 1, 4, 8, MPI_INT, win); // reported
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
