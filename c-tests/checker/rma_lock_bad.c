// expect: rma
// Rank 0 locks rank 1's window inside the active-target epoch that its
// first fence started (a put followed the fence; a fence that no
// operation follows starts none, and a lock after it is legal).
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, mem[8] = {0}, data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_fence(0, win);
    if (rank == 0) {
        MPI_Put(data, 8, MPI_INT, 1, 0, 8, MPI_INT, win);
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win); // reported
        MPI_Win_unlock(1, win);
    }
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
