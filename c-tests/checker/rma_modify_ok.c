// expect: none
// Rank 0 writes the buffer of its MPI_Get once the fence completed it.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, mem[8] = {1, 2, 3, 4, 5, 6, 7, 8}, data[8] = {0};
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_fence(0, win);
    if (rank == 0)
        MPI_Get(data, 8, MPI_INT, 1, 0, 8, MPI_INT, win);
    MPI_Win_fence(0, win);
    int got = data[7];
    data[0] = 42;
    MPI_Win_free(&win);
    MPI_Finalize();
    return rank == 0 && got != 8;
}
