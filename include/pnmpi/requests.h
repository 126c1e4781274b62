/* pnmpi/requests.h: the API of the bundled `requests` module, LLNL
 * PnMPI's request tracking service, with LLNL's names (also found as
 * <requests.h> with -I PREFIX/include/pnmpi).
 *
 * Services of the module registered as PNMPI_MODULE_REQUEST:
 *  - "add-storage" (signature "i"): reserve bytes in every request's
 *    `data`; call it in MPI_Init *before* XMPI_Init; returns their offset.
 *  - "map-request" (signature "r"): the parameters of a live request
 *    (those of a null request, type PNMPIMOD_REQUESTS_NULL, if unknown).
 * Global "status-offset" ('i'): where, in each status block of the
 * `status` module (see status.h), a completed request's parameters and
 * then its `data` bytes are stored. Load `requests` below (after, in the
 * configuration) the modules using it, and `status` above them.
 */
#ifndef PNMPI_MOD_REQUESTS_H
#define PNMPI_MOD_REQUESTS_H

#include <mpi.h>
#include "status.h"

#define PNMPI_MODULE_REQUEST "request-storage"

/* The call that made a request (`type`). */
#define PNMPIMOD_REQUESTS_SEND 0x01
#define PNMPIMOD_REQUESTS_BSEND 0x03
#define PNMPIMOD_REQUESTS_RSEND 0x05
#define PNMPIMOD_REQUESTS_SSEND 0x07
#define PNMPIMOD_REQUESTS_RECV 0x00
#define PNMPIMOD_REQUESTS_NULL 0xFF

/* A request's parameters, as the call that made it gave them. */
typedef struct PNMPIMOD_Requests_Parameters_d {
    int type;              /* PNMPIMOD_REQUESTS_* */
    void *buf;
    int count;
    MPI_Datatype datatype;
    int node;              /* peer rank (or MPI_ANY_SOURCE) */
    int tag;
    int persistent;        /* made by MPI_X_init */
    int active;            /* started and not completed */
    int cancelled;
    MPI_Comm comm;
    MPI_Request inreq;     /* the handle MPI returned */
    char *data;            /* the bytes reserved with "add-storage" */
} PNMPIMOD_Requests_Parameters_t;

/* The parameters of the request completed in status `num` of an extended
 * array of `count` (blocks of `total` bytes; `offset` = "status-offset"),
 * and the `type` at byte `offset` of its `data`... */
#define REQ_FROM_STATUSARRAY(status, offset, total, count, num) \
    STATUS_STORAGE_ARRAY(status, offset, total, PNMPIMOD_Requests_Parameters_t, count, num)
#define INFO_FROM_STATUSARRAY(status, offset, total, type, count, num) \
    STATUS_STORAGE_ARRAY(status, (offset) + sizeof(PNMPIMOD_Requests_Parameters_t), total, type, count, num)
/* ... and the same for a single status. */
#define REQ_FROM_STATUS(status, offset) REQ_FROM_STATUSARRAY(status, offset, 0, 1, 0)
#define INFO_FROM_STATUS(status, offset, type) INFO_FROM_STATUSARRAY(status, offset, 0, type, 1, 0)

typedef int (*PNMPIMOD_Requests_RequestStorage_t)(int size);
typedef PNMPIMOD_Requests_Parameters_t *(*PNMPIMOD_Requests_MapRequest_t)(MPI_Request request);

#endif
