/* A module that logs its place in the chain. Build with -DNAME=A (the name
 * it logs under) and optionally:
 *   -DONLY_SEND  wrap MPI_Send only
 *   -DNESTED     MPI_Send's wrapper also calls XMPI_Comm_rank (a nested
 *                downward call into another routine's stack)
 *   -DREENTER    MPI_Barrier's wrapper calls plain MPI_Comm_rank, which
 *                re-enters the chain at the top
 * It also counts every call it sees and prints the count at MPI_Finalize:
 * on stderr, or, if SEQ_COUNTS_DIR is set, appended to that folder's file
 * rank-R (mpirun may cut and interleave long stderr output of two ranks). */
#include <mpi.h>
#include <xmpi.h>
#include <stdio.h>
#include <stdlib.h>
#include "chaincheck.h"

#define STR2(x) #x
#define STR(x) STR2(x)
#define ME STR(NAME)


static long calls;

#define AROUND(routine, call)                   \
    do {                                        \
        __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED); \
        chaincheck_log(ME, '>', routine);       \
        int rc_ = (call);                       \
        chaincheck_log(ME, '<', routine);       \
        return rc_;                             \
    } while (0)

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
#ifdef NESTED
    __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
    chaincheck_log(ME, '>', "Send");
    int me;
    XMPI_Comm_rank(comm, &me);
    int rc = XMPI_Send(buf, count, type, dest, tag, comm);
    chaincheck_log(ME, '<', "Send");
    return rc;
#else
    AROUND("Send", XMPI_Send(buf, count, type, dest, tag, comm));
#endif
}

#ifndef ONLY_SEND
int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    AROUND("Recv", XMPI_Recv(buf, count, type, source, tag, comm, status));
}

int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    AROUND("Comm_rank", XMPI_Comm_rank(comm, rank));
}

int MPI_Barrier(MPI_Comm comm)
{
#ifdef REENTER
    __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
    chaincheck_log(ME, '>', "Barrier");
    int me;
    MPI_Comm_rank(comm, &me);
    int rc = XMPI_Barrier(comm);
    chaincheck_log(ME, '<', "Barrier");
    return rc;
#else
    AROUND("Barrier", XMPI_Barrier(comm));
#endif
}

int MPI_Init(int *argc, char ***argv)
{
    AROUND("Init", XMPI_Init(argc, argv));
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    AROUND("Init_thread", XMPI_Init_thread(argc, argv, required, provided));
}

int MPI_Finalize(void)
{
    int rank;
    XMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long seen = __atomic_load_n(&calls, __ATOMIC_RELAXED);
    const char *dir = getenv("SEQ_COUNTS_DIR");
    FILE *out = stderr;
    char path[4096];
    if (dir && snprintf(path, sizeof path, "%s/rank-%d", dir, rank) < (int)sizeof path)
        out = fopen(path, "a");
    if (!out)
        out = stderr;
    fprintf(out, "seq %s: rank %d saw %ld calls\n", ME, rank, seen);
    if (out != stderr)
        fclose(out);
    AROUND("Finalize", XMPI_Finalize());
}
#endif
