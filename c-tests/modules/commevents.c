/* commevents: a tool written only against LLNL's communication callback
 * interface as pnmpi/commsub.h serves it, loaded above `comm`:
 * `module commevents`, `module comm`.
 *
 * It registers every callback in MPI_Init (before XMPI_Init) and counts
 * them. Each _START stores a fresh serial number in `*ptr` (1000 + n for
 * sends, 2000 + n for receives, 3000 + n for collectives) and its _END
 * must bring that same number back, else it counts as bad; so must a
 * MID1 (its _START's) and an async _END's `*midptr` (the one MID2 set).
 * A receive's _END must name a real source and tag. At MPI_Finalize
 * (from COMM_ALL_FINALIZE), on every rank:
 *   commevents rank R: init I sends S/E recvs S/E mid1 M mid2 W completions C colls S/E bad B */
#include <mpi.h>
#include <pnmpi.h>
#include <pnmpi/commsub.h>
#include <xmpi.h>
#include <stdint.h>
#include <stdio.h>

static int rank = -1, inits, send_s, send_e, recv_s, recv_e, mid1, mid2, completions, coll_s, coll_e, bad;
static intptr_t serial, mid_serial;
static intptr_t live_mid; /* the MID2 number of the wait or test running */

static void start(void **ptr, intptr_t base) { *ptr = (void *)(base + ++serial); }

static void end(void **ptr, intptr_t base)
{
    intptr_t v = (intptr_t)*ptr;
    if (v <= base || v > base + serial)
        bad++;
}

static void all_init(int argc, char **argv) { (void)argc; (void)argv; inits++; }

static void send_start(const void *b, int c, MPI_Datatype d, int n, int t, MPI_Comm m, void **ptr, int type)
{
    (void)b; (void)c; (void)d; (void)n; (void)t; (void)m; (void)type;
    send_s++;
    start(ptr, 1000);
}

static void send_mid1(const void *b, int c, MPI_Datatype d, int n, int t, MPI_Comm m, void **ptr, int type)
{
    (void)b; (void)c; (void)d; (void)n; (void)t; (void)m;
    mid1++;
    if (type != PNMPIMOD_COMM_ASYNC_P2P)
        bad++;
    end(ptr, 1000);
}

static void send_end(const void *b, int c, MPI_Datatype d, int n, int t, MPI_Comm m, int err, void **ptr, void **midptr, int type)
{
    (void)b; (void)c; (void)d; (void)n; (void)t; (void)m;
    send_e++;
    end(ptr, 1000);
    if (err != MPI_SUCCESS || (type == PNMPIMOD_COMM_ASYNC_P2P && (intptr_t)*midptr != live_mid))
        bad++;
}

static void recv_start(void *b, int c, MPI_Datatype d, int n, int t, MPI_Comm m, void **ptr, int type)
{
    (void)b; (void)c; (void)d; (void)n; (void)t; (void)m; (void)type;
    recv_s++;
    start(ptr, 2000);
}

static void recv_mid1(void *b, int c, MPI_Datatype d, int n, int t, MPI_Comm m, int err, void **ptr, int type)
{
    (void)b; (void)c; (void)d; (void)n; (void)t; (void)m;
    mid1++;
    if (err != MPI_SUCCESS || type != PNMPIMOD_COMM_ASYNC_P2P)
        bad++;
    end(ptr, 2000);
}

static void recv_end(void *b, int c, MPI_Datatype d, int node, int tag, MPI_Comm m, int err, void **ptr,
                     void **midptr, int type, MPI_Status *status, int numindex, int index)
{
    (void)b; (void)c; (void)d; (void)m;
    recv_e++;
    end(ptr, 2000);
    if (err != MPI_SUCCESS || node < 0 || tag < 0 || status == NULL || index < 0 || index >= (numindex > 0 ? numindex : 1) ||
        node != status->MPI_SOURCE || (type == PNMPIMOD_COMM_ASYNC_P2P && (intptr_t)*midptr != live_mid))
        bad++;
}

static void async_mid2(int count, MPI_Request *requests, int flag, void **midptr)
{
    (void)count; (void)requests; (void)flag;
    mid2++;
    live_mid = 4000 + ++mid_serial;
    *midptr = (void *)live_mid;
}

static void async_completion(int type) { (void)type; completions++; }

static void coll_start(MPI_Comm comm, int root, int type, void **ptr)
{
    (void)comm; (void)root; (void)type;
    coll_s++;
    start(ptr, 3000);
}

static void coll_end(MPI_Comm comm, int root, int type, void **ptr)
{
    (void)comm; (void)root;
    coll_e++;
    end(ptr, 3000);
    if ((type & PNMPIMOD_COMM_COLLOPMASK) == 0)
        bad++;
}

static void all_finalize(void)
{
    printf("commevents rank %d: init %d sends %d/%d recvs %d/%d mid1 %d mid2 %d completions %d colls %d/%d bad %d\n",
           rank, inits, send_s, send_e, recv_s, recv_e, mid1, mid2, completions, coll_s, coll_e, bad);
}

int MPI_Init(int *argc, char ***argv)
{
    static const PNMPIMOD_Comm_Callbacks_t callbacks = {
        all_init, all_finalize, send_start, send_mid1, send_end, recv_start, recv_mid1, recv_end,
        async_mid2, async_completion, coll_start, coll_end,
    };
    PNMPI_modHandle_t h;
    PNMPI_Service_descriptor_t s;
    int registered = PNMPI_Service_GetModuleByName(PNMPI_MODULE_COMM, &h) == PNMPI_SUCCESS &&
                     PNMPI_Service_GetServiceByName(h, "registerCallbacks", "p", &s) == PNMPI_SUCCESS &&
                     ((PNMPIMOD_Comm_registerCallbacks_t)s.fct)(&callbacks) == PNMPI_SUCCESS;
    int err = XMPI_Init(argc, argv);
    XMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (!registered)
        printf("commevents rank %d: cannot register\n", rank);
    return err;
}
