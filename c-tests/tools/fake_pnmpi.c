/* fake_pnmpi: a stand-in for libpnmpi in the patcher's tests. It defines the XMPI_ entry
 * points that a patched ptool imports and forwards each to PMPI_, counting the calls, so a
 * patched tool can be linked and run without the real libpnmpi. At XMPI_Finalize it prints
 *     fake_pnmpi: xmpi_calls=N
 * Build with -DOMIT_TYPE_SIZE to leave out XMPI_Type_size (for the missing-entry-point test).
 */
#include <mpi.h>
#include <stdio.h>

static long calls;

int XMPI_Init(int *argc, char ***argv)
{
    calls++;
    return PMPI_Init(argc, argv);
}

int XMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    calls++;
    return PMPI_Comm_rank(comm, rank);
}

#ifndef OMIT_TYPE_SIZE
int XMPI_Type_size(MPI_Datatype type, int *size)
{
    calls++;
    return PMPI_Type_size(type, size);
}
#endif

int XMPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    calls++;
    return PMPI_Send(buf, count, type, dest, tag, comm);
}

int XMPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Status *status)
{
    calls++;
    return PMPI_Recv(buf, count, type, source, tag, comm, status);
}

int XMPI_Finalize(void)
{
    fprintf(stderr, "fake_pnmpi: xmpi_calls=%ld\n", calls + 1);
    return PMPI_Finalize();
}
