/* Ping-pong between ranks 0 and 1 with MPI_Send and MPI_Recv: the
 * latency of figure 4 and 6 of the paper (section 5.2, 5.4) at 0 bytes,
 * its bandwidth (table 1) at large sizes.
 *
 * usage: pingpong BYTES ROUND_TRIPS [BATCHES]     (exactly 2 ranks)
 * prints (rank 0): latency_ns X
 *                  bandwidth_mb_s Y
 *
 * X is half a round trip (one message one way, so one MPI_Send and one
 * MPI_Recv), the mean over the fastest of BATCHES (default 10) equal
 * batches; Y is BYTES / X in 10^6 bytes per second. The fastest batch, as
 * in comm_rank.c: a batch in which either rank was descheduled (2
 * busy-polling ranks on a shared machine) is longer by far more than what
 * is measured. Slow round trips (delay layers, large messages) take short
 * batches, down to one round trip, so that some batch is undisturbed.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* One round trip started by rank 0; rank 1 echoes. */
static void round_trip(int rank, char *buf, int bytes)
{
    if (rank == 0) {
        MPI_Send(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    int bytes = argc > 1 ? atoi(argv[1]) : 0;
    long trips = argc > 2 ? atol(argv[2]) : 10000L;
    long batches = argc > 3 ? atol(argv[3]) : 10L;
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2 || bytes < 0 || batches < 1 || trips < batches) {
        if (rank == 0) {
            fprintf(stderr, "pingpong: needs 2 ranks, BYTES >= 0 and ROUND_TRIPS >= BATCHES >= 1\n");
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char *buf = malloc(bytes > 0 ? (size_t)bytes : 1);
    memset(buf, 1, bytes > 0 ? (size_t)bytes : 1);
    /* Warm-up: connections, buffers, caches, branch predictors. */
    for (long i = 0; i < trips / 10 + 1; i++) {
        round_trip(rank, buf, bytes);
    }
    long per_batch = trips / batches;
    double best = -1;
    for (long b = 0; b < batches; b++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double start = now_ns();
        for (long i = 0; i < per_batch; i++) {
            round_trip(rank, buf, bytes);
        }
        double ns = (now_ns() - start) / (2.0 * (double)per_batch);
        if (best < 0 || ns < best) {
            best = ns;
        }
    }
    if (rank == 0) {
        printf("latency_ns %.3f\n", best);
        printf("bandwidth_mb_s %.3f\n", (double)bytes / best * 1e3);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
