// expect: none
// Ranks 0 and 1 expose their windows to each other and put into each
// other's in one post/start/complete/wait round, rank 1 testing for the
// end of its exposure epoch with MPI_Win_test; then a second round.
#include <mpi.h>

int main(int argc, char **argv) {
    int rank, mem[8] = {0}, data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    MPI_Win win;
    MPI_Group world, peer;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int other = 1 - rank;
    if (rank < 2) {
        MPI_Group_incl(world, 1, &other, &peer);
        for (int round = 0; round < 2; ++round) {
            MPI_Win_post(peer, 0, win);
            MPI_Win_start(peer, 0, win);
            MPI_Put(data, 8, MPI_INT, other, 0, 8, MPI_INT, win);
            MPI_Win_complete(win);
            if (rank == 1) {
                int done = 0;
                while (!done) {
                    MPI_Win_test(win, &done);
                }
            } else {
                MPI_Win_wait(win);
            }
        }
        MPI_Group_free(&peer);
    }
    MPI_Group_free(&world);
    MPI_Win_free(&win);
    MPI_Finalize();
    return mem[7] == 8 ? 0 : 1;
}
