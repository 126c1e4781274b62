/* Counts the calls it sees of Send, Recv, Barrier, Comm_rank, Comm_size and
 * Pcontrol (with the levels), and prints them at PNMPI_Fini, on every rank,
 * whether or not its selection let any call through:
 *   count NAME rank R: Send s Recv r Barrier b Comm_rank c Comm_size z Pcontrol p levels L pcself F
 * (L: the Pcontrol levels seen, comma-separated, or "-"; F:
 * PNMPI_Service_GetPcontrolSelf()). Build with -DNAME=A. */
#include <mpi.h>
#include <xmpi.h>
#include <pnmpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STR2(x) #x
#define STR(x) STR2(x)

static int sends, recvs, barriers, ranks, sizes, pcontrols;
static char levels[256];

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    sends++;
    return XMPI_Send(buf, count, type, dest, tag, comm);
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    recvs++;
    return XMPI_Recv(buf, count, type, source, tag, comm, status);
}

int MPI_Barrier(MPI_Comm comm)
{
    barriers++;
    return XMPI_Barrier(comm);
}

int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    ranks++;
    return XMPI_Comm_rank(comm, rank);
}

int MPI_Comm_size(MPI_Comm comm, int *size)
{
    sizes++;
    return XMPI_Comm_size(comm, size);
}

int MPI_Pcontrol(const int level, ...)
{
    size_t len = strlen(levels);
    snprintf(levels + len, sizeof levels - len, "%s%d", pcontrols ? "," : "", level);
    pcontrols++;
    return XMPI_Pcontrol(level);
}

/* MPI is finalized here: the rank comes from the launcher's environment,
 * or from COUNT_RANK, which a test sets when it fakes the launcher's. */
void PNMPI_Fini(void)
{
    const char *rank = getenv("COUNT_RANK");
    if (!rank)
        rank = getenv("OMPI_COMM_WORLD_RANK");
    if (!rank)
        rank = getenv("PMI_RANK");
    printf("count %s rank %s: Send %d Recv %d Barrier %d Comm_rank %d Comm_size %d Pcontrol %d levels %s "
           "pcself %d\n",
           STR(NAME), rank ? rank : "?", sends, recvs, barriers, ranks, sizes, pcontrols,
           pcontrols ? levels : "-", PNMPI_Service_GetPcontrolSelf());
    fflush(stdout);
}
