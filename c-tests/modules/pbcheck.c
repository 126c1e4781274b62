/* pbcheck: a module written only against LLNL PnMPI's documented API of
 * the `piggyback`, `requests` and `status` modules, loaded as
 *   module status / module pbcheck / module piggyback / module requests
 *
 * Before XMPI_Init it sets the piggyback size to 12 bytes
 * ("piggyback-size"). Before each send it hands "piggyback" the bytes
 * { PB_MAGIC, its rank, the message's tag (-1 for persistent starts,
 * which may start several tags at once) }. At every receive's completion
 * (Recv, Sendrecv(_replace), Mrecv, and the waits and tests of receive
 * requests, told apart by the `requests` parameters in the status) it
 * reads the bytes that came with the message from the status extension
 * at "piggyback-offset" and checks them against the status's source and
 * tag. At MPI_Finalize, on every rank:
 *   pbcheck rank R: sent S received V bad B
 * and one `pbcheck rank R: bad ...` line per bad message. */
#include <mpi.h>
#include <pnmpi.h>
#include <pnmpi/requests.h>
#include <xmpi.h>
#include <stdio.h>

#define PB_MAGIC 0x50424b21

typedef int (*piggyback_t)(int size, char *bytes);

static piggyback_t set_bytes;
static int *pb_offset, *total, *req_offset;
static int rank = -1, sent, received, bad;

static PNMPI_status_t lookup_int(PNMPI_modHandle_t h, const char *name, int **out)
{
    PNMPI_Global_descriptor_t g;
    PNMPI_status_t err = PNMPI_Service_GetGlobalByName(h, name, 'i', &g);
    if (err == PNMPI_SUCCESS)
        *out = g.addr.i;
    return err;
}

int MPI_Init(int *argc, char ***argv)
{
    PNMPI_modHandle_t pb, status, requests;
    PNMPI_Service_descriptor_t s;
    int ok = PNMPI_Service_GetModuleByName("piggyback", &pb) == PNMPI_SUCCESS &&
             PNMPI_Service_GetServiceByName(pb, "piggyback-size", "i", &s) == PNMPI_SUCCESS &&
             ((PNMPIMOD_Status_RequestStorage_t)s.fct)(3 * sizeof(int)) == 0;
    int err = XMPI_Init(argc, argv);
    XMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    ok = ok && PNMPI_Service_GetServiceByName(pb, "piggyback", "ip", &s) == PNMPI_SUCCESS;
    if (ok)
        set_bytes = (piggyback_t)s.fct;
    ok = ok && lookup_int(pb, "piggyback-offset", &pb_offset) == PNMPI_SUCCESS &&
         PNMPI_Service_GetModuleByName(PNMPI_MODULE_STATUS, &status) == PNMPI_SUCCESS &&
         lookup_int(status, "total-status-extension", &total) == PNMPI_SUCCESS &&
         PNMPI_Service_GetModuleByName(PNMPI_MODULE_REQUEST, &requests) == PNMPI_SUCCESS &&
         lookup_int(requests, "status-offset", &req_offset) == PNMPI_SUCCESS;
    if (!ok)
        printf("pbcheck rank %d: services missing\n", rank);
    return err;
}

/* The next sends carry { magic, rank, tag }. */
static void stamp(int tag)
{
    int bytes[3] = {PB_MAGIC, rank, tag};
    if (set_bytes)
        set_bytes(sizeof bytes, (char *)bytes);
    sent++;
}

/* Not inlined: GCC would take MPICH's MPI_STATUSES_IGNORE ((MPI_Status *)1)
 * compared here for an array of size 0 in the XMPI_ call that follows. */
__attribute__((noinline)) static int extended(MPI_Status *s)
{
    return s != MPI_STATUS_IGNORE && s != MPI_STATUSES_IGNORE && s[0].MPI_ERROR == PNMPIMOD_STATUS_TAG;
}

/* Checks the bytes that came with the message of status `num` of an
 * extended array of `count`. */
static void check(MPI_Status *s, int count, int num)
{
    if (!pb_offset)
        return;
    int *got = &STATUS_STORAGE_ARRAY(s, *pb_offset, *total, int, count, num);
    received++;
    if (got[0] != PB_MAGIC || got[1] != s[num].MPI_SOURCE || (got[2] != -1 && got[2] != s[num].MPI_TAG)) {
        bad++;
        printf("pbcheck rank %d: bad %x from %d tag %d, status source %d tag %d\n", rank, got[0], got[1], got[2],
               s[num].MPI_SOURCE, s[num].MPI_TAG);
    }
}

/* A completed request: a receive that was not cancelled is checked. */
static void completed(MPI_Status *s, int count, int num)
{
    PNMPIMOD_Requests_Parameters_t p = REQ_FROM_STATUSARRAY(s, *req_offset, *total, count, num);
    int cancelled = 0;
    MPI_Test_cancelled(&s[num], &cancelled);
    if (p.type == PNMPIMOD_REQUESTS_RECV && !cancelled && s[num].MPI_SOURCE != MPI_PROC_NULL)
        check(s, count, num);
}

#define SEND(NAME)                                                                                            \
    int MPI_##NAME(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)             \
    {                                                                                                         \
        stamp(tag);                                                                                           \
        return XMPI_##NAME(buf, count, dt, dest, tag, comm);                                                  \
    }
#define ISEND(NAME)                                                                                           \
    int MPI_##NAME(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,            \
                   MPI_Request *req)                                                                          \
    {                                                                                                         \
        stamp(tag);                                                                                           \
        return XMPI_##NAME(buf, count, dt, dest, tag, comm, req);                                             \
    }
SEND(Send)
SEND(Ssend)
SEND(Bsend)
SEND(Rsend)
ISEND(Isend)
ISEND(Issend)
ISEND(Ibsend)
ISEND(Irsend)

int MPI_Start(MPI_Request *req)
{
    stamp(-1);
    return XMPI_Start(req);
}

int MPI_Startall(int count, MPI_Request *reqs)
{
    stamp(-1);
    return XMPI_Startall(count, reqs);
}

int MPI_Recv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    int ext = extended(status);
    int err = XMPI_Recv(buf, count, dt, source, tag, comm, status);
    if (ext && status[0].MPI_SOURCE != MPI_PROC_NULL)
        check(status, 1, 0);
    return err;
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *message, MPI_Status *status)
{
    int ext = extended(status);
    int err = XMPI_Mrecv(buf, count, dt, message, status);
    if (ext)
        check(status, 1, 0);
    return err;
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf, int rcount,
                 MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status *status)
{
    int ext = extended(status);
    stamp(stag);
    int err = XMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status);
    if (ext)
        check(status, 1, 0);
    return err;
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int stag, int source, int rtag,
                         MPI_Comm comm, MPI_Status *status)
{
    int ext = extended(status);
    stamp(stag);
    int err = XMPI_Sendrecv_replace(buf, count, dt, dest, stag, source, rtag, comm, status);
    if (ext)
        check(status, 1, 0);
    return err;
}

int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
    int ext = extended(status);
    int err = XMPI_Wait(req, status);
    if (ext)
        completed(status, 1, 0);
    return err;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
    int ext = extended(status);
    int err = XMPI_Test(req, flag, status);
    if (ext && *flag)
        completed(status, 1, 0);
    return err;
}

int MPI_Waitall(int count, MPI_Request *reqs, MPI_Status *statuses)
{
    int ext = extended(statuses);
    int err = XMPI_Waitall(count, reqs, statuses);
    for (int i = 0; ext && i < count; i++)
        completed(statuses, count, i);
    return err;
}

int MPI_Finalize(void)
{
    printf("pbcheck rank %d: sent %d received %d bad %d\n", rank, sent, received, bad);
    return XMPI_Finalize();
}
