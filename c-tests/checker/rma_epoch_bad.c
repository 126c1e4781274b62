// expect: rma
// Rank 0 puts into rank 1's window before any fence: no access epoch is open.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, mem[8] = {0}, data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    if (rank == 0)
        MPI_Put(data, 8, MPI_INT, 1, 0, 8, MPI_INT, win); // reported
    MPI_Win_fence(0, win);
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
