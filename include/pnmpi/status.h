/* pnmpi/status.h: the API of the bundled `status` module, LLNL PnMPI's
 * status service, with LLNL's names (also found as <status.h> with
 * -I PREFIX/include/pnmpi).
 *
 * Below the `status` module, every routine that fills MPI_Status gets an
 * extended array: the `count` statuses, then one block of
 * `total-status-extension` bytes per status. A module reserves bytes in
 * each block by calling the service "add-storage" (signature "i") after
 * XMPI_Init returns; the answer is the offset of its bytes in a block.
 * An extended status has MPI_ERROR == PNMPIMOD_STATUS_TAG on the way up.
 * Load `status` above (before, in the configuration) the modules using it.
 */
#ifndef PNMPI_MOD_STATUS_H
#define PNMPI_MOD_STATUS_H

#include <mpi.h>

/* The name the module registers under (PNMPI_Service_GetModuleByName). */
#define PNMPI_MODULE_STATUS "status-storage"

/* The MPI_ERROR mark of an extended status. */
#define PNMPIMOD_STATUS_TAG 0x3e1f9

/* The `type` at byte `offset` of block `num` of an extended array of
 * `count` statuses whose blocks are `total` bytes. */
#define STATUS_STORAGE_ARRAY(status, offset, total, type, count, num) \
    (*((type *)((char *)(status) + (count) * sizeof(MPI_Status) + (num) * (total) + (offset))))

/* The same, for a single status. */
#define STATUS_STORAGE(status, offset, type) STATUS_STORAGE_ARRAY(status, offset, 0, type, 1, 0)

/* The service "add-storage": reserve `size` bytes per status; returns
 * their offset in each block, or < 0 on error. */
typedef int (*PNMPIMOD_Status_RequestStorage_t)(int size);

#endif
