/* A library's atexit handler that asks MPI whether it is still up, as
 * libraries that finalize MPI only if nobody else did do: the handler
 * runs after main returned, when the process exits, after every rank's
 * MPI_Finalize. MPI_Initialized and MPI_Finalized are legal then; both
 * must answer 1. Rank 0 registers the handler, so it runs once.
 *
 * prints: atexit_fin: finalized=F initialized=I
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static void at_end(void)
{
    int fin = -1, init = -1;
    MPI_Finalized(&fin);
    MPI_Initialized(&init);
    printf("atexit_fin: finalized=%d initialized=%d\n", fin, init);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int fin = -1, init = -1;
    MPI_Initialized(&init);
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Finalized(&fin);
    if (init != 0 || fin != 0)
        printf("atexit_fin: rank %d before: initialized=%d finalized=%d\n", rank, init, fin);
    if (rank == 0)
        atexit(at_end);
    MPI_Finalize();
    return 0;
}
