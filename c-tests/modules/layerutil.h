/* Small helpers shared by the direct-binding test modules (retaddr.c,
 * backtrace.c, tailcall.c, loopcall.c; tests/binding.rs). Everything is
 * static inline: a module imports only what it uses, so a module that wraps
 * MPI_Comm_rank does not import PMPI_Comm_rank through world_rank(). Needs
 * the generated <xmpi.h> (the tests' -I target/<profile>/include). */
#ifndef LAYERUTIL_H
#define LAYERUTIL_H

#include <mpi.h>
#include <xmpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STR2(x) #x
#define STR(x) STR2(x)
/* The module's -DNAME, as a string. */
#define ME STR(NAME)

/* The basename of `path`, or "?" for none. */
static inline const char *base(const char *path)
{
    if (!path)
        return "?";
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The world rank, from PMPI_Comm_rank (-1 if it fails). */
static inline int world_rank(void)
{
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

/* The world rank, from the launcher's environment: for a module that wraps
 * MPI_Comm_rank, which may not import PMPI_Comm_rank (libpnmpi refuses such
 * a module as an unpatched PMPI tool), and for which asking through
 * XMPI_Comm_rank would add a call to every count below. */
static inline const char *env_rank(void)
{
    const char *names[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"};
    for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *rank = getenv(names[i]);
        if (rank)
            return rank;
    }
    return "?";
}

/* A table of at most `max` entries of `size` bytes, `*n` of them in use,
 * guarded by the caller's lock: the index of the entry that `same` finds
 * equal to `entry`; else of a copy of `entry` added at the end (`*n` grows);
 * else, the table being full, -1. */
static inline int find_or_add(void *table, int *n, int max, size_t size, const void *entry,
                              int (*same)(const void *, const void *))
{
    char *slots = table;
    int i = 0;
    while (i < *n && !same(slots + (size_t)i * size, entry))
        i++;
    if (i == *n) {
        if (*n == max)
            return -1;
        memcpy(slots + (size_t)i * size, entry, size);
        (*n)++;
    }
    return i;
}

/* Calls the next layer's MPI_Send, then counts the return in *returned.
 * Always inlined into the wrapper: the work after the call means no tail
 * call, so the wrapper's frame stays on the stack and the module below sees
 * a return address inside the wrapper. */
__attribute__((always_inline)) static inline int send_below(const void *buf, int count,
                                                            MPI_Datatype type, int dest, int tag,
                                                            MPI_Comm comm, long *returned)
{
    int rc = XMPI_Send(buf, count, type, dest, tag, comm);
    __atomic_add_fetch(returned, 1, __ATOMIC_RELAXED);
    return rc;
}

/* The end of a reporting MPI_Finalize wrapper: flushes the report and
 * finalizes through the layers below. */
static inline int finalize_below(void)
{
    fflush(stdout);
    return XMPI_Finalize();
}

#endif
