/* pnmpi/commsub.h: LLNL PnMPI's communication callbacks (its `comm`
 * module's interface, commsub.h), served by the bundled `comm` module.
 *
 * Under LLNL's, a tool defines the callbacks and is compiled with LLNL's
 * comm.c into a module of its own. Here a tool fills a
 * PNMPIMOD_Comm_Callbacks_t with the same callbacks (any may be NULL)
 * and hands it to the service "registerCallbacks" ("p") of the module
 * registered as PNMPI_MODULE_COMM (see comm.h) in its MPI_Init, before
 * XMPI_Init; `comm` then calls them for every point-to-point call and
 * collective that passes through it:
 *  - COMM_ALL_INIT after MPI_Init, COMM_ALL_FINALIZE before MPI_Finalize;
 *  - SEND_P2P_START / _END around MPI_Send, Bsend, Rsend, Ssend and the
 *    send of Sendrecv (type PNMPIMOD_COMM_P2P); RECV_P2P_START / _END
 *    around MPI_Recv and Sendrecv's receive, _END with the source, tag
 *    and count that came;
 *  - for MPI_Isend, Ibsend, Irsend, Issend and Irecv (type
 *    PNMPIMOD_COMM_ASYNC_P2P): _START, the call, _ASYNC_MID1; then in the
 *    wait or test that completes the request (Wait, Test, and their any,
 *    some and all forms): COMM_P2P_ASYNC_MID2 before it, the request's
 *    _END after it (with the `*ptr` its _START set, and the `*midptr`
 *    MID2 set), and COMM_P2P_ASYNC_COMPLETION;
 *  - COMM_COLL_START / _END around MPI_Barrier, Bcast, Gather(v),
 *    Scatter(v), Allgather(v), Alltoall(v), Reduce, Allreduce,
 *    Reduce_scatter and Scan (root -1 for rootless ones).
 * What a _START stores in `*ptr` comes back to its _END. Not served:
 * LLNL's dissolution of collectives into point-to-point callbacks
 * (pnmpimod_comm_collective_support: only PNMPIMOD_COMM_KEEPCOLLECTIVE),
 * COMM_COLL_REDUCE, and persistent requests. One tool registers at a
 * time (a second registration fails), as under LLNL's.
 */
#ifndef PNMPI_MOD_COMMSUB_H
#define PNMPI_MOD_COMMSUB_H

#include <mpi.h>
#include "comm.h"

/* The `type` argument: the kind of call ... */
#define PNMPIMOD_COMM_COLLTYPEMASK 0x7
#define PNMPIMOD_COMM_P2P 0x0
#define PNMPIMOD_COMM_ASYNC_P2P 0x1
#define PNMPIMOD_COMM_COLL_FANIN 0x2
#define PNMPIMOD_COMM_COLL_FANOUT 0x3
#define PNMPIMOD_COMM_COLL_ALL2ALL 0x4
#define PNMPIMOD_COMM_COLL_OTHER 0x5
#define PNMPIMOD_COMM_COLL_BARRIER 0x6
/* ... whether a collective reduces ... */
#define PNMPIMOD_COMM_COLLREDMASK 0x8
#define PNMPIMOD_COMM_COLL_REDUCE 0x8
/* ... which collective ... */
#define PNMPIMOD_COMM_COLLOPMASK 0xF0
#define PNMPIMOD_COMM_BARRIER 0x10
#define PNMPIMOD_COMM_BCAST 0x20
#define PNMPIMOD_COMM_GATHER 0x30
#define PNMPIMOD_COMM_GATHERV 0x40
#define PNMPIMOD_COMM_SCATTER 0x50
#define PNMPIMOD_COMM_SCATTERV 0x60
#define PNMPIMOD_COMM_ALLGATHER 0x70
#define PNMPIMOD_COMM_ALLGATHERV 0x80
#define PNMPIMOD_COMM_ALL2ALL 0x90
#define PNMPIMOD_COMM_ALL2ALLV 0xA0
#define PNMPIMOD_COMM_REDUCE 0xB0
#define PNMPIMOD_COMM_REDUCESCATTER 0xC0
#define PNMPIMOD_COMM_ALLREDUCE 0xD0
#define PNMPIMOD_COMM_SCAN 0xE0
/* ... and, for MID2 and COMPLETION, which wait or test. */
#define PNMPIMOD_COMM_TESTWAITMASK 0x100
#define PNMPIMOD_COMM_COMPLETEMASK 0x600
#define PNMPIMOD_COMM_TEST 0x000
#define PNMPIMOD_COMM_WAIT 0x100
#define PNMPIMOD_COMM_ONE 0x000
#define PNMPIMOD_COMM_ANY 0x200
#define PNMPIMOD_COMM_SOME 0x400
#define PNMPIMOD_COMM_ALL 0x600

/* LLNL's callbacks, with its names and signatures. */
typedef struct PNMPIMOD_Comm_Callbacks_d {
    void (*COMM_ALL_INIT)(int argc, char **argv);
    void (*COMM_ALL_FINALIZE)(void);
    void (*SEND_P2P_START)(const void *buf, int count, MPI_Datatype dt, int node, int tag, MPI_Comm comm,
                           void **ptr, int type);
    void (*SEND_P2P_ASYNC_MID1)(const void *buf, int count, MPI_Datatype dt, int node, int tag, MPI_Comm comm,
                                void **ptr, int type);
    void (*SEND_P2P_END)(const void *buf, int count, MPI_Datatype dt, int node, int tag, MPI_Comm comm, int err,
                         void **ptr, void **midptr, int type);
    void (*RECV_P2P_START)(void *buf, int count, MPI_Datatype dt, int node, int tag, MPI_Comm comm, void **ptr,
                           int type);
    void (*RECV_P2P_ASYNC_MID1)(void *buf, int count, MPI_Datatype dt, int node, int tag, MPI_Comm comm, int err,
                                void **ptr, int type);
    void (*RECV_P2P_END)(void *buf, int count, MPI_Datatype dt, int node, int tag, MPI_Comm comm, int err,
                         void **ptr, void **midptr, int type, MPI_Status *status, int numindex, int index);
    void (*COMM_P2P_ASYNC_MID2)(int count, MPI_Request *requests, int flag, void **midptr);
    void (*COMM_P2P_ASYNC_COMPLETION)(int type);
    void (*COMM_COLL_START)(MPI_Comm comm, int root, int type, void **ptr);
    void (*COMM_COLL_END)(MPI_Comm comm, int root, int type, void **ptr);
} PNMPIMOD_Comm_Callbacks_t;

typedef int (*PNMPIMOD_Comm_registerCallbacks_t)(const PNMPIMOD_Comm_Callbacks_t *callbacks);

#endif
