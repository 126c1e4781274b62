/* The nonblocking vector collectives and scans (MPI_Ialltoallv,
 * MPI_Iallgatherv, MPI_Igatherv, MPI_Iscatterv, MPI_Ireduce_scatter,
 * MPI_Ireduce_scatter_block, MPI_Iscan, MPI_Iexscan) against their
 * blocking forms, with uneven counts and gaps in the displacements.
 * Each is run blocking, then nonblocking and completed by MPI_Wait,
 * from a barrier each (so that every rank enters at the same time when
 * compute is not counted).
 *
 * prints, per rank and collective:
 *   icoll_v: rank R NAME same S sum X   (S: 1 if both forms gave the same)
 *   icoll_v_time: rank R NAME blocking_ns B nonblocking_ns N
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXP 16
#define CAP 4096

static int rank, size;
static int sbuf[CAP], rb[CAP], rn[CAP];
static int scounts[MAXP], sdispls[MAXP], rcounts[MAXP], rdispls[MAXP];
static double t_b, t_n;

static double now_ns(void) { return MPI_Wtime() * 1e9; }

/* Prints whether the blocking and the nonblocking form agreed, the
 * checksum of the result and both durations. */
static void report(const char *name)
{
    long sum = 0;
    if (rank == 0 && strcmp(name, "exscan") == 0) {
        /* Rank 0's exclusive scan result is undefined. */
        memset(rb, 0, 5 * sizeof *rb);
        memset(rn, 0, 5 * sizeof *rn);
    }
    for (int i = 0; i < CAP; i++)
        sum += (long)rb[i] * (i % 7 + 1);
    printf("icoll_v: rank %d %s same %d sum %ld\n", rank, name, memcmp(rb, rn, sizeof rb) == 0, sum);
    printf("icoll_v_time: rank %d %s blocking_ns %.0f nonblocking_ns %.0f\n", rank, name, t_b, t_n);
}

/* Runs `blocking`, then `nonblocking` and a wait, each into fresh
 * receive buffers after a barrier, and reports. */
#define BOTH(name, blocking, nonblocking)                                                          \
    do {                                                                                           \
        MPI_Request req;                                                                           \
        double t0;                                                                                 \
        memset(rb, 0xff, sizeof rb);                                                               \
        memset(rn, 0xff, sizeof rn);                                                               \
        MPI_Barrier(MPI_COMM_WORLD);                                                               \
        t0 = now_ns();                                                                             \
        blocking;                                                                                  \
        t_b = now_ns() - t0;                                                                       \
        MPI_Barrier(MPI_COMM_WORLD);                                                               \
        t0 = now_ns();                                                                             \
        nonblocking;                                                                               \
        MPI_Wait(&req, MPI_STATUS_IGNORE);                                                         \
        t_n = now_ns() - t0;                                                                       \
        report(name);                                                                              \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > MAXP) {
        if (rank == 0)
            printf("icoll_v: at most %d ranks\n", MAXP);
        MPI_Finalize();
        return 1;
    }
    for (int i = 0; i < CAP; i++)
        sbuf[i] = rank * 100000 + i;
    MPI_Comm w = MPI_COMM_WORLD;

    /* All-to-all: rank r sends (r + j) % 3 + 1 ints to j, with a gap of 2
     * between blocks on both sides. */
    int at = 0, rat = 0;
    for (int j = 0; j < size; j++) {
        scounts[j] = (rank + j) % 3 + 1;
        sdispls[j] = at;
        at += scounts[j] + 2;
        rcounts[j] = (j + rank) % 3 + 1;
        rdispls[j] = rat;
        rat += rcounts[j] + 2;
    }
    BOTH("alltoallv", MPI_Alltoallv(sbuf, scounts, sdispls, MPI_INT, rb, rcounts, rdispls, MPI_INT, w),
         MPI_Ialltoallv(sbuf, scounts, sdispls, MPI_INT, rn, rcounts, rdispls, MPI_INT, w, &req));

    /* Rank j contributes j + 1 ints, with a gap of 3 after each block. */
    rat = 0;
    for (int j = 0; j < size; j++) {
        rcounts[j] = j + 1;
        rdispls[j] = rat;
        rat += j + 4;
    }
    BOTH("allgatherv", MPI_Allgatherv(sbuf, rank + 1, MPI_INT, rb, rcounts, rdispls, MPI_INT, w),
         MPI_Iallgatherv(sbuf, rank + 1, MPI_INT, rn, rcounts, rdispls, MPI_INT, w, &req));
    BOTH("gatherv", MPI_Gatherv(sbuf, rank + 1, MPI_INT, rb, rcounts, rdispls, MPI_INT, 1 % size, w),
         MPI_Igatherv(sbuf, rank + 1, MPI_INT, rn, rcounts, rdispls, MPI_INT, 1 % size, w, &req));
    /* The root scatters j + 1 ints to rank j, from the same layout. */
    BOTH("scatterv", MPI_Scatterv(sbuf, rcounts, rdispls, MPI_INT, rb, rank + 1, MPI_INT, 0, w),
         MPI_Iscatterv(sbuf, rcounts, rdispls, MPI_INT, rn, rank + 1, MPI_INT, 0, w, &req));

    /* Reduce-scatter: rank j gets j + 1 sums. */
    BOTH("reduce_scatter", MPI_Reduce_scatter(sbuf, rb, rcounts, MPI_INT, MPI_SUM, w),
         MPI_Ireduce_scatter(sbuf, rn, rcounts, MPI_INT, MPI_SUM, w, &req));
    BOTH("reduce_scatter_block", MPI_Reduce_scatter_block(sbuf, rb, 3, MPI_INT, MPI_SUM, w),
         MPI_Ireduce_scatter_block(sbuf, rn, 3, MPI_INT, MPI_SUM, w, &req));

    /* Prefix sums, inclusive and exclusive. */
    BOTH("scan", MPI_Scan(sbuf, rb, 5, MPI_INT, MPI_SUM, w),
         MPI_Iscan(sbuf, rn, 5, MPI_INT, MPI_SUM, w, &req));
    BOTH("exscan", MPI_Exscan(sbuf, rb, 5, MPI_INT, MPI_SUM, w),
         MPI_Iexscan(sbuf, rn, 5, MPI_INT, MPI_SUM, w, &req));
    MPI_Finalize();
    return 0;
}
