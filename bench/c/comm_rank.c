/* Times MPI_Comm_rank, about the cheapest MPI call, so that what is
 * measured is the cost of reaching MPI: natively, or through libpnmpi and
 * its module layers.
 *
 * usage: comm_rank CALLS [DEPTH]
 * prints: ns_per_call X
 *
 * With DEPTH, the calls are made DEPTH frames of a recursion below main,
 * for tools whose cost could depend on the depth of the stack (the
 * profiler's call sites).
 *
 * The CALLS timed calls run as BATCHES equal batches and X is the fastest
 * batch's mean: a batch that the scheduler interrupted (another process,
 * an interrupt) is longer by microseconds to milliseconds, which at a few
 * ns per call would swamp the differences being measured. The paper took
 * minima over runs for the same reason.
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

/* Makes the timed calls `depth` frames below its first caller; returns
 * the fastest batch's ns per call and adds the ranks seen to *sum. */
__attribute__((noinline)) static double run(int depth, long calls, long *sum)
{
    if (depth > 0) {
        double best = run(depth - 1, calls, sum);
        __asm__ volatile("" ::: "memory"); /* not a tail call: the frame stays */
        return best;
    }
    int rank = 0;
    /* Warm-up: fault in the code and data of every layer, train the
     * branch predictors, let the CPU clock settle. */
    for (long i = 0; i < calls / 10; i++) {
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        *sum += rank;
    }
    long per_batch = calls / BATCHES;
    double best = -1;
    for (int b = 0; b < BATCHES; b++) {
        double start = now_ns();
        for (long i = 0; i < per_batch; i++) {
            MPI_Comm_rank(MPI_COMM_WORLD, &rank);
            *sum += rank; /* keeps each call's result used */
        }
        double ns = (now_ns() - start) / (double)per_batch;
        if (best < 0 || ns < best) {
            best = ns;
        }
    }
    return best;
}

int main(int argc, char **argv)
{
    long calls = argc > 1 ? atol(argv[1]) : 10000000L;
    int depth = argc > 2 ? atoi(argv[2]) : 0;
    if (calls < BATCHES || depth < 0) {
        fprintf(stderr, "comm_rank: CALLS must be at least %d, DEPTH at least 0\n", BATCHES);
        return 2;
    }
    MPI_Init(&argc, &argv);
    int rank = 0;
    long sum = 0;
    double best = run(depth, calls, &sum);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        printf("ns_per_call %.3f\n", best);
    }
    MPI_Finalize();
    return sum < 0; /* never true (ranks are >= 0); keeps `sum` live */
}
