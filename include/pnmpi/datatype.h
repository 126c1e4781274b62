/* pnmpi/datatype.h: the API of the bundled `datatype` module, LLNL
 * PnMPI's datatype service, with LLNL's names (also found as
 * <datatype.h> with -I PREFIX/include/pnmpi).
 *
 * The module walks `count` elements of any datatype at `buf` as its
 * flattened type signature: one item per run of one basic type, in the
 * order of the type map, with the run's address, its basic type (a
 * predefined MPI_Datatype), its number of elements and the element size.
 * Runs that continue one another (same basic type, next element where
 * the last one ends) are one item: 3 elements of a vector(2, 4, 4,
 * MPI_INT) are 5 items; 10 MPI_DOUBLEs are one.
 *
 * Services of the module registered as PNMPI_MODULE_DATATYPE (call them
 * once MPI runs):
 *  - "getDatatypeReference" ("pimp"): starts a walk in `*ref`; returns
 *    PNMPI_SUCCESS, or PNMPI_FAILURE (and says why on stderr) for a type
 *    MPI cannot describe or a negative count;
 *  - "delDatatypeReference" ("p"): ends it (always call it after a
 *    successful start);
 *  - "getDatatypeSize" ("mp"): the bytes of data in one element.
 * Then, from the first item to the last:
 *
 *     PNMPIMOD_Datatype_Parameters_t ref;
 *     char *at; MPI_Datatype basic; int n, size, done;
 *     if (get(buf, count, type, &ref) == PNMPI_SUCCESS) {
 *         do {
 *             PNMPIMOD_Datatype_getItem(&ref, &at, &basic, &n, &size, &done);
 *             ... n elements of `basic`, `size` bytes each, at `at` ...
 *         } while (!done);
 *         del(&ref);
 *     }
 *
 * An empty walk (count 0, or a type of no data) has one item of 0
 * elements. The structures have LLNL's layout: modules built against
 * LLNL's datatype.h walk this module's state too.
 */
#ifndef PNMPI_MOD_DATATYPE_H
#define PNMPI_MOD_DATATYPE_H

#include <mpi.h>

#define PNMPI_MODULE_DATATYPE "datatype-tracking"

typedef struct PNMPIMOD_Datatype_storage_d *PNMPIMOD_Datatype_storage_p;

/* The walk's position at one level: the top lists the runs. */
typedef struct PNMPIMOD_Datatype_stack_d {
    int i, j, b;            /* i: the current run (at the top level) */
    char *buf, *startbuf, *blockbuf;  /* startbuf: the walked buffer */
    PNMPIMOD_Datatype_storage_p dt;
} PNMPIMOD_Datatype_stack_t;

/* The caller's handle on a walk. */
typedef struct PNMPIMOD_Datatype_Parameters_d {
    int level;
    PNMPIMOD_Datatype_storage_p top;
    PNMPIMOD_Datatype_stack_t *stack;
} PNMPIMOD_Datatype_Parameters_t;

/* A run: `start` bytes from the buffer, of the leaf type `dt`. */
typedef struct PNMPIMOD_Datatype_entry_d {
    MPI_Aint start;
    int block, repeat, step;
    PNMPIMOD_Datatype_storage_p dt;
} PNMPIMOD_Datatype_entry_t;

/* A type in the walk: the top (`count` runs in `list`) or a leaf
 * (`count` elements of the basic type `mpi_dt`, `homogeneous` bytes
 * each). `realsize`: bytes of data; `size`: bytes spanned. */
typedef struct PNMPIMOD_Datatype_storage_d {
    int count;
    int depth;
    int size;
    int realsize;
    int homogeneous;
    int usage;
    int native;
    MPI_Datatype mpi_dt, store_dt;
    PNMPIMOD_Datatype_entry_t *list;
} PNMPIMOD_Datatype_storage_t;

typedef int (*PNMPIMOD_Datatype_getReference_t)(const void *buf, int count, MPI_Datatype dt,
                                                 PNMPIMOD_Datatype_Parameters_t *ref);
typedef int (*PNMPIMOD_Datatype_delReference_t)(PNMPIMOD_Datatype_Parameters_t *ref);
typedef int (*PNMPIMOD_Datatype_getSize_t)(MPI_Datatype dt, int *size);

/* Steps past the current item; `*done` becomes 1 when it was the last. */
#define PNMPIMOD_Datatype_nextItem(ref, done)                                  \
    {                                                                          \
        PNMPIMOD_Datatype_stack_t *pnmpimod_dt_top_ = &(ref)->stack[0];        \
        pnmpimod_dt_top_->i++;                                                 \
        *(done) = pnmpimod_dt_top_->i >= pnmpimod_dt_top_->dt->count;          \
    }

/* The current item: its address, basic type, number of elements and
 * element size; then steps past it (`*last` = 1 if it was the last). */
#define PNMPIMOD_Datatype_getItem(ref, buf, typ, len, size, last)              \
    {                                                                          \
        PNMPIMOD_Datatype_entry_t *pnmpimod_dt_run_ =                          \
            &(ref)->stack[0].dt->list[(ref)->stack[0].i];                      \
        *(buf) = (ref)->stack[0].startbuf + pnmpimod_dt_run_->start;           \
        *(typ) = pnmpimod_dt_run_->dt->mpi_dt;                                 \
        *(len) = pnmpimod_dt_run_->dt->count;                                  \
        *(size) = pnmpimod_dt_run_->dt->homogeneous;                           \
        PNMPIMOD_Datatype_nextItem(ref, last)                                  \
    }

#endif
