/* pnmpi/comm.h: the API of the bundled `comm` module, pnmpi's
 * communicator tracking service (LLNL PnMPI has none; also found as
 * <comm.h> with -I PREFIX/include/pnmpi).
 *
 * Every communicator the application makes (dup, split, create, cart,
 * graph, dist_graph, intercomm create and merge), and MPI_COMM_WORLD and
 * MPI_COMM_SELF, has a record: an id all its members agree on (world 0,
 * self 1, then agreed by one MPI_Allreduce on the new communicator at its
 * creation), and the lowest world rank among its members, `leader`: the
 * pair (id, leader) names a communicator uniquely across processes.
 * MPI_Comm_free and MPI_Comm_disconnect mark the record freed; freed
 * records stay listed, their member arrays valid until the program ends.
 * Communicators made by MPI_Comm_idup, spawn, connect or accept are not
 * tracked (getCommInfo fails for them).
 *
 * Services of the module registered as PNMPI_MODULE_COMM (each returns
 * PNMPI_SUCCESS, or PNMPI_FAILURE for an unknown communicator, an index
 * out of range or a NULL pointer):
 *  - "getCommInfo" ("mp"): the live communicator `comm`'s record;
 *  - "getCommCount" ("p"): the number of records so far, freed included;
 *  - "getCommByIndex" ("ip"): record `index`, in creation order.
 * Load `comm` where the application's communicator calls pass through it.
 */
#ifndef PNMPI_MOD_COMM_H
#define PNMPI_MOD_COMM_H

#include <mpi.h>

#define PNMPI_MODULE_COMM "comm-tracking"

/* The call that made a communicator (`kind`). */
#define PNMPIMOD_COMM_MADE_WORLD 0
#define PNMPIMOD_COMM_MADE_SELF 1
#define PNMPIMOD_COMM_MADE_DUP 2       /* MPI_Comm_dup, _dup_with_info */
#define PNMPIMOD_COMM_MADE_SPLIT 3     /* MPI_Comm_split, _split_type */
#define PNMPIMOD_COMM_MADE_CREATE 4    /* MPI_Comm_create, _create_group */
#define PNMPIMOD_COMM_MADE_CART 5      /* MPI_Cart_create, MPI_Cart_sub */
#define PNMPIMOD_COMM_MADE_GRAPH 6     /* MPI_Graph_create, MPI_Dist_graph_create(_adjacent) */
#define PNMPIMOD_COMM_MADE_INTERCOMM 7 /* MPI_Intercomm_create */
#define PNMPIMOD_COMM_MADE_MERGE 8     /* MPI_Intercomm_merge */

/* A communicator's record. */
typedef struct PNMPIMOD_Comm_Info_d {
    int id;                    /* the same on every member */
    int leader;                /* the lowest world rank among its members */
    int kind;                  /* PNMPIMOD_COMM_MADE_* */
    int parent;                /* the id of the communicator it was made from; -1 */
    int size;                  /* of the (local) group */
    int remote_size;           /* of the remote group; 0 if not an intercommunicator */
    int rank;                  /* this process's rank in it */
    int inter;                 /* an intercommunicator */
    int freed;                 /* freed (or disconnected) */
    const int *members;        /* world ranks of the group, by rank (-1: not in world) */
    const int *remote_members; /* world ranks of the remote group; NULL */
    MPI_Comm comm;             /* the handle; MPI_COMM_NULL once freed */
} PNMPIMOD_Comm_Info_t;

typedef int (*PNMPIMOD_Comm_getInfo_t)(MPI_Comm comm, PNMPIMOD_Comm_Info_t *info);
typedef int (*PNMPIMOD_Comm_getCount_t)(int *count);
typedef int (*PNMPIMOD_Comm_getByIndex_t)(int index, PNMPIMOD_Comm_Info_t *info);

#endif
