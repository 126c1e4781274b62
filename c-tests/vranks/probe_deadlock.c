/* A deadlock in MPI_Probe: ranks 0 and 1 each wait for a message from
 * the other that neither sends. A real MPI hangs; virtual ranks must
 * report it, naming the ranks and the routine, and stop.
 *
 * prints nothing (the deadlock report is on stderr)
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank < 2) {
        MPI_Status st;
        MPI_Probe(1 - rank, 5, MPI_COMM_WORLD, &st);
        printf("probe_deadlock: rank %d probed a message\n", rank);
    }
    MPI_Finalize();
    return 0;
}
