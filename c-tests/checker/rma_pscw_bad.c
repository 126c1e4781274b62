// expect: rma
// Rank 0 opens a second access epoch to rank 1 with MPI_Win_start while
// its first is still open (no MPI_Win_complete between them), and rank 1
// waits for an exposure epoch it never posted; both calls are refused, the
// rest of the exchange completes.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, size, mem[8] = {0}, data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    MPI_Win win;
    MPI_Group world, peer;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int other = 1 - rank;
    if (rank < 2) {
        MPI_Group_incl(world, 1, &other, &peer);
    }
    if (rank == 0) {
        MPI_Win_start(peer, 0, win);
        MPI_Put(data, 8, MPI_INT, 1, 0, 8, MPI_INT, win);
        MPI_Win_start(peer, 0, win); // reported
        MPI_Win_complete(win);
    } else if (rank == 1) {
        MPI_Win_wait(win); // reported
        MPI_Win_post(peer, 0, win);
        MPI_Win_wait(win);
    }
    if (rank < 2) {
        MPI_Group_free(&peer);
    }
    MPI_Group_free(&world);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
