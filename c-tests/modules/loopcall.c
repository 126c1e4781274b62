/* A layer that calls the next one several times per call: its
 * MPI_Comm_rank wrapper calls XMPI_Comm_rank LOOPS times (-DLOOPS=3 by
 * default) and returns the last result, so every layer below must see
 * LOOPS times the calls. Only MPI_Comm_rank (and MPI_Finalize, to report)
 * are wrapped. Prints at MPI_Finalize, on stdout:
 *   loopcall NAME: rank R Comm_rank C made M wrong W
 * (C calls seen, M calls made below, W failed calls or results that differ
 * from the first of their loop). Build with -DNAME=A. */
#include "layerutil.h"

#ifndef LOOPS
#define LOOPS 3
#endif

static long seen, made, wrong;

int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    int first = -1, rc = MPI_SUCCESS;
    __atomic_add_fetch(&seen, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < LOOPS; i++) {
        *rank = -2;
        rc = XMPI_Comm_rank(comm, rank);
        __atomic_add_fetch(&made, 1, __ATOMIC_RELAXED);
        if (i == 0)
            first = *rank;
        if (rc != MPI_SUCCESS || *rank < 0 || *rank != first)
            __atomic_add_fetch(&wrong, 1, __ATOMIC_RELAXED);
    }
    return rc;
}

int MPI_Finalize(void)
{
    printf("loopcall %s: rank %s Comm_rank %ld made %ld wrong %ld\n", ME, env_rank(),
           __atomic_load_n(&seen, __ATOMIC_RELAXED), __atomic_load_n(&made, __ATOMIC_RELAXED),
           __atomic_load_n(&wrong, __ATOMIC_RELAXED));
    return finalize_below();
}
