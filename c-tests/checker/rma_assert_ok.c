// expect: none
// The first fence asserts MPI_MODE_NOPRECEDE, the last MPI_MODE_NOSUCCEED.
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
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    MPI_Win_free(&win);
    MPI_Finalize();
    return rank == 1 && mem[7] != 8;
}
