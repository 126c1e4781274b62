/* Channel order and arrival. Two ranks, no compute: rank 0 starts a
 * 2 MiB send (a rendezvous above a 64 KiB eager threshold), then three
 * 8-byte sends with the same tag, then 64 KiB with another tag. Rank 1
 * posts the five receives at once and takes them with MPI_Waitany.
 * MPI orders the matching of one channel (source, tag, communicator):
 * the 2 MiB message takes the first receive. Its data does not hold the
 * later small messages back: they complete first, and the 64 KiB one of
 * another tag does not wait for it either.
 *
 * prints, on rank 1, per completion in completion order:
 *   overtake: recv I at_s T
 * (I the receive's index in posting order, T the MPI_Wtime since the end
 * of MPI_Init, seconds, %.17g), and per rank after its last call:
 *   overtake: rank R end_s T
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { BIG = 2 << 20, SMALL = 8, OTHER = 64 << 10, N = 5 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    double start = MPI_Wtime();
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *buf = calloc(BIG + 3 * SMALL + OTHER, 1);
    const int counts[N] = {BIG, SMALL, SMALL, SMALL, OTHER};
    const int tags[N] = {1, 1, 1, 1, 2};
    MPI_Request reqs[N];
    if (size >= 2 && rank < 2) {
        char *p = buf;
        for (int i = 0; i < N; i++) {
            if (rank == 0) {
                MPI_Isend(p, counts[i], MPI_BYTE, 1, tags[i], MPI_COMM_WORLD, &reqs[i]);
            } else {
                MPI_Irecv(p, counts[i], MPI_BYTE, 0, tags[i], MPI_COMM_WORLD, &reqs[i]);
            }
            p += counts[i];
        }
        if (rank == 0) {
            MPI_Waitall(N, reqs, MPI_STATUSES_IGNORE);
        } else {
            for (int k = 0; k < N; k++) {
                int i;
                MPI_Waitany(N, reqs, &i, MPI_STATUS_IGNORE);
                printf("overtake: recv %d at_s %.17g\n", i, MPI_Wtime() - start);
            }
        }
    }
    double end = MPI_Wtime();
    printf("overtake: rank %d end_s %.17g\n", rank, end - start);
    fflush(stdout);
    free(buf);
    MPI_Finalize();
    return 0;
}
