/* The module file of a "split" tool (see splitcore.c): a thin MPI_Send
 * wrapper that hands over to the core library, and prints at MPI_Finalize
 *   splitfront: rank R sends N */
#include <mpi.h>
#include <xmpi.h>
#include <stdio.h>

extern int splitcore_sends;
int splitcore_send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm);

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    return splitcore_send(buf, count, type, dest, tag, comm);
}

int MPI_Finalize(void)
{
    int rank;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("splitfront: rank %d sends %d\n", rank, __atomic_load_n(&splitcore_sends, __ATOMIC_RELAXED));
    fflush(stdout);
    return XMPI_Finalize();
}
