/* ptool: a plain PMPI tool, the kind pnmpi-patch turns into a PnMPI module.
 *
 * It wraps MPI_Init, MPI_Send, MPI_Recv, MPI_Comm_rank and MPI_Finalize, counts sends and
 * receives, and prints one summary line per rank at MPI_Finalize to stderr:
 *     ptool: rank R sends=N recvs=M bytes=B
 * Its MPI_Send wrapper makes nested PMPI calls (PMPI_Comm_rank, PMPI_Type_size).
 *
 * The string below contains "PMPI_Send" on purpose: it lives in .rodata and must survive
 * patching unchanged (only .dynstr import names are renamed).
 *
 * Build: mpicc -shared -fPIC -o libptool.so ptool.c
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

const char ptool_banner[] = "ptool wraps MPI_Send and calls PMPI_Send";

static long sends;
static long recvs;
static long bytes_sent;
static int world_rank = -1;

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    return rc;
}

int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    return PMPI_Comm_rank(comm, rank);
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    int rank, size;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Type_size(type, &size);
    sends++;
    bytes_sent += (long)count * size;
    return PMPI_Send(buf, count, type, dest, tag, comm);
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    recvs++;
    return PMPI_Recv(buf, count, type, source, tag, comm, status);
}

int MPI_Finalize(void)
{
    fprintf(stderr, "ptool: rank %d sends=%ld recvs=%ld bytes=%ld\n", world_rank, sends, recvs,
            bytes_sent);
    if (getenv("PTOOL_BANNER"))
        fprintf(stderr, "%s\n", ptool_banner);
    return PMPI_Finalize();
}
