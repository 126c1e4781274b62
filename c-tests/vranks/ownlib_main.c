/* Per-rank state in a shared library of the application's own
 * (ownlib.c) and in the executable's thread-local storage: rank r bumps
 * the library's counters r + 1 times by r + 1, and keeps 7 r in a
 * thread-local variable. Every rank prints what it saw; with shared
 * state, ranks of one process would see each other's bumps.
 *
 * prints: ownlib: rank R value V tls T
 */
#include <mpi.h>
#include <stdio.h>

int ownlib_bump(int by);
static __thread int mine;

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    mine = 7 * rank;
    int v = 0;
    for (int i = 0; i <= rank; i++)
        v = ownlib_bump(rank + 1);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("ownlib: rank %d value %d tls %d\n", rank, v, mine);
    MPI_Finalize();
    return 0;
}
