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

/* Compute phases of fixed length, for `pnmpi trace analyze`'s what-if
 * tests (tests/analyze.rs): a phase runs from the return of one MPI call
 * to the entry of the next, and the kernels that support this (cg, lu)
 * mark their calls PHASED(call). Two environment variables set it:
 *   NAS_PHASE_MS=D  every phase lasts D ms: its real work, then a busy
 *                   wait on PMPI_Wtime until D ms after the phase began
 *                   (no sleep, whose end waits for the wake-up: a rank
 *                   that lost its core meanwhile still ends on time if
 *                   it has it back by then). The real loops' time
 *                   depends on the machine's load; padded phases do not,
 *                   as long as the work fits in D.
 *   NAS_SLOW="R F"  rank R's phases last F times as long (D x F when
 *                   padded, else F times the real work's time, F >= 1).
 * Unset, PHASED(call) is the call. The wait reads PMPI_Wtime so that the
 * tracer sees no call. */
struct nas_phases {
    int ready;
    double ms, factor, start;
};

static inline struct nas_phases *nas_phases(void)
{
    static struct nas_phases p = {0, 0, 1, -1};
    if (!p.ready) {
        p.ready = 1;
        const char *ms = getenv("NAS_PHASE_MS"), *slow = getenv("NAS_SLOW");
        p.ms = ms ? atof(ms) : 0;
        int r, rank;
        double f;
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (slow && sscanf(slow, "%d %lf", &r, &f) == 2 && r == rank && f > 0)
            p.factor = f;
    }
    return &p;
}

/* Ends the phase begun at the last call's return, or at the kernel's
 * nas_phase_begin() after its set-up calls. */
static inline void nas_phase_end(void)
{
    struct nas_phases *p = nas_phases();
    if (p->ms <= 0 && p->factor == 1)
        return;
    double now = PMPI_Wtime();
    if (p->start < 0)
        p->start = now;
    double until = p->start + (p->ms > 0 ? p->ms * 1e-3 * p->factor : (now - p->start) * p->factor);
    while (PMPI_Wtime() < until)
        ;
}

static inline void nas_phase_begin(void) { nas_phases()->start = PMPI_Wtime(); }

#define PHASED(call) (nas_phase_end(), (call), nas_phase_begin())

#endif
