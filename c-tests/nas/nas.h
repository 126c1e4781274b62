/* Shared by the NAS-like kernels of this folder (ep, cg, ft, mg, is, lu):
 * NPB's random number generator and the rank-count check.
 *
 * randlc is NPB's linear congruential generator x' = a x mod 2^46 with
 * a = 5^13, computed exactly in doubles (the product split in 23-bit
 * halves), so every compiler and language gets the same sequence; skip
 * jumps ahead n steps by binary powers, so each rank can start its own
 * part of one global sequence, whatever the number of ranks.
 */
#ifndef NAS_H
#define NAS_H

#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NAS_A 1220703125.0 /* 5^13 */

static inline double randlc(double *x, double a)
{
    const double r23 = 1.0 / 8388608.0, t23 = 8388608.0;
    const double r46 = r23 * r23, t46 = t23 * t23;
    double t1 = r23 * a, a1 = (int)t1, a2 = a - t23 * a1;
    t1 = r23 * *x;
    double x1 = (int)t1, x2 = *x - t23 * x1;
    t1 = a1 * x2 + a2 * x1;
    double t2 = (int)(r23 * t1), z = t1 - t23 * t2;
    double t3 = t23 * z + a2 * x2, t4 = (int)(r46 * t3);
    *x = t3 - t46 * t4;
    return r46 * *x;
}

/* The seed n steps of multiplier a after seed. */
static inline double skip(double seed, double a, int64_t n)
{
    double t = a;
    while (n > 0) {
        if (n & 1)
            randlc(&seed, t);
        randlc(&t, t);
        n >>= 1;
    }
    return seed;
}

/* Stops every rank with a message from rank 0 when the run's rank count
 * does not fit the kernel's problem (rule says which counts do). */
static inline void need_ranks(int ok, const char *kernel, int np, const char *rule)
{
    if (ok)
        return;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        fprintf(stderr, "%s: %d ranks do not fit: %s\n", kernel, np, rule);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

#endif
