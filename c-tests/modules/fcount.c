/* Counts the calls a Fortran program makes (c-tests/fortran/calls.F90),
 * as C calls, and checks their handles: every communicator must be
 * MPI_COMM_WORLD or one this module saw created (Comm_split, Comm_dup),
 * every datatype MPI_INTEGER (or MPI_INT, from the C library), every op
 * MPI_SUM, every receive's status (when not ignored) must name a rank of
 * the communicator and the tag asked for. At MPI_Finalize each rank prints:
 *   fcount rank R: MPI_Allreduce=2 MPI_Barrier=2 ... bad=B
 * (routines in alphabetical order; B: calls whose handles failed a check). */
#include <mpi.h>
#include <xmpi.h>
#include <stdio.h>
#include <string.h>

enum {
    ALLREDUCE, BARRIER, BCAST, COMM_DUP, COMM_FREE, COMM_RANK, COMM_SIZE, COMM_SPLIT,
    FINALIZE, GATHERV, INIT, IRECV, ISEND, RECV, SEND, SENDRECV, WAITALL, ROUTINES
};
static const char *names[ROUTINES] = {
    "MPI_Allreduce", "MPI_Barrier", "MPI_Bcast", "MPI_Comm_dup", "MPI_Comm_free",
    "MPI_Comm_rank", "MPI_Comm_size", "MPI_Comm_split", "MPI_Finalize", "MPI_Gatherv", "MPI_Init",
    "MPI_Irecv", "MPI_Isend", "MPI_Recv", "MPI_Send", "MPI_Sendrecv", "MPI_Waitall",
};
static int counts[ROUTINES], bad;
static MPI_Comm created[64];
static int ncreated;

static void comm_ok(MPI_Comm c)
{
    if (c == MPI_COMM_WORLD)
        return;
    for (int i = 0; i < ncreated; i++)
        if (created[i] == c)
            return;
    bad++;
}

static void type_ok(MPI_Datatype t)
{
    if (t != MPI_INTEGER && t != MPI_INT)
        bad++;
}

static void created_comm(MPI_Comm c)
{
    if (ncreated < 64)
        created[ncreated++] = c;
}

/* Size and rank through the communicator's group: this module wraps
 * MPI_Comm_size and MPI_Comm_rank, so calling their PMPI_ versions would
 * make it an unpatched PMPI tool. */
static int group_size(MPI_Comm comm)
{
    MPI_Group g;
    int size;
    PMPI_Comm_group(comm, &g);
    PMPI_Group_size(g, &size);
    PMPI_Group_free(&g);
    return size;
}

static void status_ok(const MPI_Status *s, MPI_Comm comm, int tag)
{
    int size;
    if (s == MPI_STATUS_IGNORE)
        return;
    size = group_size(comm);
    if (s->MPI_SOURCE < 0 || s->MPI_SOURCE >= size || s->MPI_TAG != tag)
        bad++;
}

int MPI_Init(int *argc, char ***argv)
{
    counts[INIT]++;
    return XMPI_Init(argc, argv);
}

int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    counts[COMM_RANK]++;
    comm_ok(comm);
    return XMPI_Comm_rank(comm, rank);
}

int MPI_Comm_size(MPI_Comm comm, int *size)
{
    counts[COMM_SIZE]++;
    comm_ok(comm);
    return XMPI_Comm_size(comm, size);
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    counts[SEND]++;
    type_ok(type);
    comm_ok(comm);
    return XMPI_Send(buf, count, type, dest, tag, comm);
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    counts[RECV]++;
    type_ok(type);
    comm_ok(comm);
    int rc = XMPI_Recv(buf, count, type, source, tag, comm, status);
    status_ok(status, comm, tag);
    return rc;
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    counts[ISEND]++;
    type_ok(type);
    comm_ok(comm);
    return XMPI_Isend(buf, count, type, dest, tag, comm, req);
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    counts[IRECV]++;
    type_ok(type);
    comm_ok(comm);
    return XMPI_Irecv(buf, count, type, source, tag, comm, req);
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[])
{
    counts[WAITALL]++;
    for (int i = 0; i < n; i++)
        if (reqs[i] == MPI_REQUEST_NULL)
            bad++;
    return XMPI_Waitall(n, reqs, statuses);
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                 int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status *status)
{
    counts[SENDRECV]++;
    type_ok(stype);
    type_ok(rtype);
    comm_ok(comm);
    int rc = XMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status);
    status_ok(status, comm, rtag);
    return rc;
}

int MPI_Allreduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    counts[ALLREDUCE]++;
    type_ok(type);
    comm_ok(comm);
    if (op != MPI_SUM)
        bad++;
    return XMPI_Allreduce(s, r, count, type, op, comm);
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    counts[BCAST]++;
    type_ok(type);
    comm_ok(comm);
    return XMPI_Bcast(buf, count, type, root, comm);
}

int MPI_Gatherv(const void *s, int scount, MPI_Datatype stype, void *r, const int rcounts[],
                const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm)
{
    counts[GATHERV]++;
    type_ok(stype);
    type_ok(rtype);
    comm_ok(comm);
    return XMPI_Gatherv(s, scount, stype, r, rcounts, displs, rtype, root, comm);
}

int MPI_Barrier(MPI_Comm comm)
{
    counts[BARRIER]++;
    comm_ok(comm);
    return XMPI_Barrier(comm);
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *out)
{
    counts[COMM_SPLIT]++;
    comm_ok(comm);
    int rc = XMPI_Comm_split(comm, color, key, out);
    created_comm(*out);
    return rc;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *out)
{
    counts[COMM_DUP]++;
    comm_ok(comm);
    int rc = XMPI_Comm_dup(comm, out);
    created_comm(*out);
    return rc;
}

int MPI_Comm_free(MPI_Comm *comm)
{
    counts[COMM_FREE]++;
    comm_ok(*comm);
    return XMPI_Comm_free(comm);
}

int MPI_Finalize(void)
{
    int rank;
    char line[1024];
    size_t len;
    MPI_Group g;
    counts[FINALIZE]++;
    PMPI_Comm_group(MPI_COMM_WORLD, &g);
    PMPI_Group_rank(g, &rank);
    PMPI_Group_free(&g);
    len = (size_t)snprintf(line, sizeof line, "fcount rank %d:", rank);
    for (int i = 0; i < ROUTINES; i++)
        if (counts[i])
            len += (size_t)snprintf(line + len, sizeof line - len, " %s=%d", names[i], counts[i]);
    snprintf(line + len, sizeof line - len, " bad=%d\n", bad);
    fputs(line, stdout);
    fflush(stdout);
    return XMPI_Finalize();
}
