/* reqinfo: a module written only against LLNL PnMPI's documented API of
 * the `requests` and `status` modules (include/pnmpi/requests.h), loaded
 * between them: `module status`, `module reqinfo`, `module requests`.
 *
 * In MPI_Init it reserves an int in every request ("add-storage" of
 * request-storage, before XMPI_Init), then finds "map-request", the
 * global "status-offset" and status-storage's "total-status-extension".
 * Each request it sees made (Isend, Issend, Irecv, and the persistent
 * X_init) it looks up with map-request, checks the parameters against the
 * call's own arguments and stamps with a serial number plus one in its
 * int (0 marks requests made by calls it does not wrap, MPI_Imrecv). Each
 * completion (Wait, Waitall, Waitany, Waitsome, Test, Testall) it reads
 * the request's parameters and its serial back from the status extension
 * and checks them against what the call that made the request gave.
 * At MPI_Finalize, on every rank:
 *   reqinfo rank R: made M persistent P completed C mismatches X
 * and one `reqinfo rank R: mismatch ...` line per mismatch. */
#include <mpi.h>
#include <pnmpi.h>
#include <pnmpi/requests.h>
#include <xmpi.h>
#include <stdio.h>
#include <string.h>

#define MAX_MADE 4096

static PNMPIMOD_Requests_MapRequest_t map_request;
static int data_offset = -1, *status_offset, *total_extension;
static int rank = -1, made, persistent, completed, mismatches;
static PNMPIMOD_Requests_Parameters_t made_with[MAX_MADE];

static void mismatch(const char *what, long got, long want)
{
    mismatches++;
    printf("reqinfo rank %d: mismatch %s: got %ld want %ld\n", rank, what, got, want);
}

int MPI_Init(int *argc, char ***argv)
{
    PNMPI_modHandle_t requests, status;
    PNMPI_Service_descriptor_t add, map;
    PNMPI_Global_descriptor_t offset, total;
    if (PNMPI_Service_GetModuleByName(PNMPI_MODULE_REQUEST, &requests) == PNMPI_SUCCESS &&
        PNMPI_Service_GetServiceByName(requests, "add-storage", "i", &add) == PNMPI_SUCCESS)
        data_offset = ((PNMPIMOD_Requests_RequestStorage_t)add.fct)(sizeof(int));
    int err = XMPI_Init(argc, argv);
    XMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (PNMPI_Service_GetServiceByName(requests, "map-request", "r", &map) == PNMPI_SUCCESS)
        /* int (*)() to another return type: through void (*)(void), as GCC asks. */
        map_request = (PNMPIMOD_Requests_MapRequest_t)(void (*)(void))map.fct;
    if (PNMPI_Service_GetGlobalByName(requests, "status-offset", 'i', &offset) == PNMPI_SUCCESS)
        status_offset = offset.addr.i;
    if (PNMPI_Service_GetModuleByName(PNMPI_MODULE_STATUS, &status) == PNMPI_SUCCESS &&
        PNMPI_Service_GetGlobalByName(status, "total-status-extension", 'i', &total) == PNMPI_SUCCESS)
        total_extension = total.addr.i;
    if (data_offset < 0 || !map_request || !status_offset || !total_extension)
        printf("reqinfo rank %d: services missing (data %d map %d offset %d total %d)\n", rank, data_offset,
               map_request != NULL, status_offset != NULL, total_extension != NULL);
    return err;
}

/* Checks the parameters map-request gives for a request just made, and
 * stamps it with its serial number. */
static int made_request(int err, MPI_Request *req, int type, const void *buf, int count, MPI_Datatype dt, int peer,
                        int tag, MPI_Comm comm, int is_persistent)
{
    if (err != MPI_SUCCESS || !map_request || made >= MAX_MADE)
        return err;
    PNMPIMOD_Requests_Parameters_t *p = map_request(*req);
    if (p->inreq != *req)
        mismatch("map-request handle", 0, 1);
    if (p->type != type)
        mismatch("made type", p->type, type);
    if (p->node != peer || p->tag != tag || p->count != count)
        mismatch("made peer", p->node, peer);
    if (p->buf != buf || p->datatype != dt || p->comm != comm)
        mismatch("made buf/datatype/comm", 0, 1);
    if (p->persistent != is_persistent || p->active != !is_persistent)
        mismatch("made persistent/active", p->persistent, is_persistent);
    *(int *)(p->data + data_offset) = made + 1; /* 0: not made through these wrappers */
    made_with[made++] = *p;
    persistent += is_persistent;
    return err;
}

/* Whether the `status` module above extended this array: its mark is
 * there before the call (MPI may overwrite MPI_ERROR). */
static int extended(MPI_Status *statuses)
{
    if (statuses == MPI_STATUS_IGNORE || statuses == MPI_STATUSES_IGNORE)
        return 0;
    if (statuses[0].MPI_ERROR != PNMPIMOD_STATUS_TAG)
        mismatch("status not extended", statuses[0].MPI_ERROR, PNMPIMOD_STATUS_TAG);
    return statuses[0].MPI_ERROR == PNMPIMOD_STATUS_TAG;
}

/* Checks status `num` of an extended array of `count`: the request that
 * completed there is the one stamped with the serial it carries. */
static void completed_in(int ext, MPI_Status *statuses, int count, int num)
{
    if (!ext || !status_offset)
        return;
    PNMPIMOD_Requests_Parameters_t p =
        REQ_FROM_STATUSARRAY(statuses, *status_offset, *total_extension, count, num);
    if (p.type == PNMPIMOD_REQUESTS_NULL)
        return; /* a null or inactive request: nothing completed */
    int serial = INFO_FROM_STATUSARRAY(statuses, *status_offset + data_offset, *total_extension, int, count, num) - 1;
    if (serial == -1)
        return; /* a request made by a call not wrapped here (MPI_Imrecv) */
    completed++;
    if (serial < 0 || serial >= made) {
        mismatch("serial", serial, made);
        return;
    }
    PNMPIMOD_Requests_Parameters_t *w = &made_with[serial];
    if (p.type != w->type || p.node != w->node || p.tag != w->tag || p.count != w->count || p.buf != w->buf ||
        p.comm != w->comm)
        mismatch("completed parameters of serial", serial, serial);
    if (p.type == PNMPIMOD_REQUESTS_RECV && !p.cancelled && w->node != MPI_ANY_SOURCE &&
        statuses[num].MPI_SOURCE != w->node)
        mismatch("status source", statuses[num].MPI_SOURCE, w->node);
}

int MPI_Isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    return made_request(XMPI_Isend(buf, count, dt, dest, tag, comm, req), req, PNMPIMOD_REQUESTS_SEND, buf, count,
                        dt, dest, tag, comm, 0);
}

int MPI_Issend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    return made_request(XMPI_Issend(buf, count, dt, dest, tag, comm, req), req, PNMPIMOD_REQUESTS_SSEND, buf, count,
                        dt, dest, tag, comm, 0);
}

int MPI_Irecv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Request *req)
{
    return made_request(XMPI_Irecv(buf, count, dt, source, tag, comm, req), req, PNMPIMOD_REQUESTS_RECV, buf, count,
                        dt, source, tag, comm, 0);
}

int MPI_Send_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    return made_request(XMPI_Send_init(buf, count, dt, dest, tag, comm, req), req, PNMPIMOD_REQUESTS_SEND, buf, count,
                        dt, dest, tag, comm, 1);
}

int MPI_Ssend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    return made_request(XMPI_Ssend_init(buf, count, dt, dest, tag, comm, req), req, PNMPIMOD_REQUESTS_SSEND, buf,
                        count, dt, dest, tag, comm, 1);
}

int MPI_Bsend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    return made_request(XMPI_Bsend_init(buf, count, dt, dest, tag, comm, req), req, PNMPIMOD_REQUESTS_BSEND, buf,
                        count, dt, dest, tag, comm, 1);
}

int MPI_Recv_init(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Request *req)
{
    return made_request(XMPI_Recv_init(buf, count, dt, source, tag, comm, req), req, PNMPIMOD_REQUESTS_RECV, buf,
                        count, dt, source, tag, comm, 1);
}

int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
    int ext = extended(status);
    int err = XMPI_Wait(req, status);
    completed_in(ext, status, 1, 0);
    return err;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
    int ext = extended(status);
    int err = XMPI_Test(req, flag, status);
    if (*flag)
        completed_in(ext, status, 1, 0);
    return err;
}

int MPI_Waitany(int count, MPI_Request *reqs, int *index, MPI_Status *status)
{
    int ext = extended(status);
    int err = XMPI_Waitany(count, reqs, index, status);
    if (*index != MPI_UNDEFINED)
        completed_in(ext, status, 1, 0);
    return err;
}

int MPI_Waitall(int count, MPI_Request *reqs, MPI_Status *statuses)
{
    int ext = extended(statuses);
    int err = XMPI_Waitall(count, reqs, statuses);
    for (int i = 0; i < count; i++)
        completed_in(ext, statuses, count, i);
    return err;
}

int MPI_Testall(int count, MPI_Request *reqs, int *flag, MPI_Status *statuses)
{
    int ext = extended(statuses);
    int err = XMPI_Testall(count, reqs, flag, statuses);
    for (int i = 0; *flag && i < count; i++)
        completed_in(ext, statuses, count, i);
    return err;
}

int MPI_Waitsome(int incount, MPI_Request *reqs, int *outcount, int *indices, MPI_Status *statuses)
{
    int ext = extended(statuses);
    int err = XMPI_Waitsome(incount, reqs, outcount, indices, statuses);
    for (int i = 0; *outcount != MPI_UNDEFINED && i < *outcount; i++)
        completed_in(ext, statuses, incount, i);
    return err;
}

int MPI_Finalize(void)
{
    printf("reqinfo rank %d: made %d persistent %d completed %d mismatches %d\n", rank, made, persistent, completed,
           mismatches);
    return XMPI_Finalize();
}
