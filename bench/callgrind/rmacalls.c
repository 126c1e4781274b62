/* One-sided calls for the tools' per-call cost (docs/performance.md):
 * one rank, its own target, under MPI_Win_lock_all: N rounds of an
 * MPI_Put of 8 doubles and an MPI_Win_flush.
 *
 * usage: rmacalls N
 */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    double *base, out[8] = {0};
    MPI_Win win;
    MPI_Win_allocate(8 * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_SELF, &base, &win);
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < n; i++) {
        out[0] = i;
        MPI_Put(out, 8, MPI_DOUBLE, 0, 0, 8, MPI_DOUBLE, win);
        MPI_Win_flush(0, win);
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
