/* Times an 8-byte MPI_Allreduce on MPI_COMM_WORLD, for what a tool adds
 * to the cheapest collective at a few ranks (the checker's comparison of
 * each collective across ranks).
 *
 * usage: allreduce CALLS
 * prints (rank 0): ns_per_call X
 *
 * The CALLS timed calls run as BATCHES equal batches, each started by a
 * barrier, and X is the fastest batch's mean, as in comm_rank.c: a batch
 * that the scheduler interrupted is longer by far more than the
 * differences being measured.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BATCHES 20

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long calls = argc > 1 ? atol(argv[1]) : 100000;
    long per_batch = calls / BATCHES > 0 ? calls / BATCHES : 1;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double in = rank, out = 0, best = -1;
    for (long i = 0; i < per_batch / 10 + 1; ++i) {
        MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    for (int b = 0; b < BATCHES; ++b) {
        MPI_Barrier(MPI_COMM_WORLD);
        double start = now_ns();
        for (long i = 0; i < per_batch; ++i) {
            MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        }
        double ns = (now_ns() - start) / (double)per_batch;
        /* Every rank's batch ends together; rank 0's time is the batch's. */
        if (best < 0 || ns < best) {
            best = ns;
        }
    }
    if (rank == 0) {
        printf("ns_per_call %.1f\n", best);
    }
    MPI_Finalize();
    return 0;
}
