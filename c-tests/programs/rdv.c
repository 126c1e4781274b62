/* Rendezvous senders, timed alike by the three simulators. Three ranks, no compute: rank 2 sends
 * 4 MiB to rank 1 and rank 0 sends 1 MiB to rank 1 at the same moment,
 * both standard-mode sends above the eager threshold; rank 1 receives
 * rank 2's message first. A rendezvous holds rank 0's send until rank 1
 * posts its receive, so rank 0 ends when its data arrives, not at once.
 *
 * `rdv exchange`: ranks 0 and 1 each send 1 MiB to the other, then
 * receive: it runs only if MPI buffers sends above the eager threshold,
 * and deadlocks otherwise (rank 2 does nothing).
 *
 * usage: rdv [exchange]
 * prints, per rank after its last call: rdv: rank R end_s T
 * (T its MPI_Wtime since the end of MPI_Init, seconds, %.17g)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    double start = MPI_Wtime();
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int exchange = argc > 1 && strcmp(argv[1], "exchange") == 0;
    const int big = 4 << 20, small = 1 << 20;
    char *buf = calloc(big, 1);
    if (size >= 3 && !exchange) {
        if (rank == 2) {
            MPI_Send(buf, big, MPI_BYTE, 1, 2, MPI_COMM_WORLD);
        } else if (rank == 0) {
            MPI_Send(buf, small, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        } else if (rank == 1) {
            MPI_Recv(buf, big, MPI_BYTE, 2, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Recv(buf, small, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else if (size >= 2 && rank < 2) {
        int peer = 1 - rank;
        MPI_Send(buf, small, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
        MPI_Recv(buf, small, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    double end = MPI_Wtime();
    printf("rdv: rank %d end_s %.17g\n", rank, end - start);
    fflush(stdout);
    free(buf);
    MPI_Finalize();
    return 0;
}
