/* dtwalk: a module written only against the documented API of the
 * `datatype` module (include/pnmpi/datatype.h), loaded above it:
 * `module dtwalk`, `module datatype`.
 *
 * Each MPI_Send it walks with "getDatatypeReference" and the header's
 * PNMPIMOD_Datatype_getItem, and prints the send's flattened signature,
 * one `offset TYPE count size` per run (offsets from the buffer), with
 * the type's data size from "getDatatypeSize":
 *   dtwalk rank R tag T: size S runs 0 INT 2 4 | 16 INT 2 4
 * or `dtwalk rank R tag T: cannot walk` when the service refuses. In
 * MPI_Init it asks for a walk of -1 elements, which the service must
 * refuse: `dtwalk rank R: count -1 refused` (else `... accepted`). */
#include <mpi.h>
#include <pnmpi.h>
#include <pnmpi/datatype.h>
#include <xmpi.h>
#include <stdio.h>
#include <string.h>

static PNMPIMOD_Datatype_getReference_t get_ref;
static PNMPIMOD_Datatype_delReference_t del_ref;
static PNMPIMOD_Datatype_getSize_t get_size;
static int rank = -1;

int MPI_Init(int *argc, char ***argv)
{
    PNMPI_modHandle_t h;
    PNMPI_Service_descriptor_t s;
    int err = XMPI_Init(argc, argv);
    XMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (PNMPI_Service_GetModuleByName(PNMPI_MODULE_DATATYPE, &h) != PNMPI_SUCCESS) {
        printf("dtwalk rank %d: no module %s\n", rank, PNMPI_MODULE_DATATYPE);
        return err;
    }
    if (PNMPI_Service_GetServiceByName(h, "getDatatypeReference", "pimp", &s) == PNMPI_SUCCESS)
        get_ref = (PNMPIMOD_Datatype_getReference_t)s.fct;
    if (PNMPI_Service_GetServiceByName(h, "delDatatypeReference", "p", &s) == PNMPI_SUCCESS)
        del_ref = (PNMPIMOD_Datatype_delReference_t)s.fct;
    if (PNMPI_Service_GetServiceByName(h, "getDatatypeSize", "mp", &s) == PNMPI_SUCCESS)
        get_size = (PNMPIMOD_Datatype_getSize_t)s.fct;
    if (!get_ref || !del_ref || !get_size) {
        printf("dtwalk rank %d: services missing\n", rank);
        return err;
    }
    PNMPIMOD_Datatype_Parameters_t ref;
    if (get_ref(NULL, -1, MPI_INT, &ref) == PNMPI_FAILURE) {
        printf("dtwalk rank %d: count -1 refused\n", rank);
    } else {
        printf("dtwalk rank %d: count -1 accepted\n", rank);
        del_ref(&ref);
    }
    return err;
}

static const char *name(MPI_Datatype t)
{
    if (t == MPI_INT) return "INT";
    if (t == MPI_DOUBLE) return "DOUBLE";
    if (t == MPI_SHORT) return "SHORT";
    if (t == MPI_FLOAT) return "FLOAT";
    if (t == MPI_CHAR) return "CHAR";
    return "OTHER";
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    PNMPIMOD_Datatype_Parameters_t ref;
    char line[4096];
    size_t at = 0;
    int size = -1;
    if (get_ref && get_size(type, &size) == PNMPI_SUCCESS && get_ref(buf, count, type, &ref) == PNMPI_SUCCESS) {
        int done = 0;
        do {
            char *b;
            MPI_Datatype basic;
            int n, elem;
            PNMPIMOD_Datatype_getItem(&ref, &b, &basic, &n, &elem, &done);
            if (at < sizeof line)
                at += snprintf(line + at, sizeof line - at, "%s%ld %s %d %d", at ? " | " : "",
                               (long)(b - (const char *)buf), name(basic), n, elem);
        } while (!done);
        del_ref(&ref);
        printf("dtwalk rank %d tag %d: size %d runs %s\n", rank, tag, size, line);
    } else {
        printf("dtwalk rank %d tag %d: cannot walk\n", rank, tag);
    }
    return XMPI_Send(buf, count, type, dest, tag, comm);
}
