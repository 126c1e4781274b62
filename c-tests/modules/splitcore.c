/* The core library of a "split" tool: its wrapper bodies live here, in a
 * library the module file (splitfront.c) links against, and call the next
 * layer through XMPI_Send from this library's own GOT, which libpnmpi does
 * not bind. libpnmpi must notice and use the dispatcher for the chain. */
#include <mpi.h>
#include <xmpi.h>

int splitcore_sends;

int splitcore_send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    int rc = XMPI_Send(buf, count, type, dest, tag, comm);
    __atomic_add_fetch(&splitcore_sends, 1, __ATOMIC_RELAXED);
    return rc;
}
