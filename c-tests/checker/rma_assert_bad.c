// expect: rma
// Rank 0's closing fence asserts MPI_MODE_NOPRECEDE after its put.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, mem[8] = {0}, data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    if (rank == 0)
        MPI_Put(data, 8, MPI_INT, 1, 0, 8, MPI_INT, win);
    MPI_Win_fence(rank == 0 ? MPI_MODE_NOPRECEDE : 0, win); // reported
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
