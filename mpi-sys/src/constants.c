/* MPI's handle constants are cast macros (Open MPI: addresses of library
 * globals; MPICH: integers) that bindgen cannot evaluate. Compiled against
 * the native mpi.h, this file turns them into symbols Rust can read.
 * (The plain integer macros that bindgen does evaluate are constants.rs's
 * int_macros.) */
#include <mpi.h>

const MPI_Comm pnmpi_sys_COMM_WORLD = MPI_COMM_WORLD;
const MPI_Comm pnmpi_sys_COMM_SELF = MPI_COMM_SELF;
const MPI_Comm pnmpi_sys_COMM_NULL = MPI_COMM_NULL;
const MPI_Info pnmpi_sys_INFO_NULL = MPI_INFO_NULL;
const MPI_Datatype pnmpi_sys_BYTE = MPI_BYTE;
const MPI_Datatype pnmpi_sys_INT = MPI_INT;
const MPI_Datatype pnmpi_sys_LONG_LONG = MPI_LONG_LONG;
const MPI_Datatype pnmpi_sys_UINT64_T = MPI_UINT64_T;
const MPI_Datatype pnmpi_sys_PACKED = MPI_PACKED;
const MPI_Datatype pnmpi_sys_DOUBLE = MPI_DOUBLE;
const MPI_Datatype pnmpi_sys_CHAR = MPI_CHAR;
const MPI_Datatype pnmpi_sys_DATATYPE_NULL = MPI_DATATYPE_NULL;
const MPI_Op pnmpi_sys_SUM = MPI_SUM;
const MPI_Op pnmpi_sys_MAX = MPI_MAX;
const MPI_Op pnmpi_sys_MIN = MPI_MIN;
const MPI_Request pnmpi_sys_REQUEST_NULL = MPI_REQUEST_NULL;
MPI_Status *const pnmpi_sys_STATUS_IGNORE = MPI_STATUS_IGNORE;
MPI_Status *const pnmpi_sys_STATUSES_IGNORE = MPI_STATUSES_IGNORE;
const int pnmpi_sys_PROC_NULL = MPI_PROC_NULL;
const int pnmpi_sys_UNDEFINED = MPI_UNDEFINED;
const int pnmpi_sys_ROOT = MPI_ROOT;
const int pnmpi_sys_ERR_OTHER = MPI_ERR_OTHER;
const int pnmpi_sys_THREAD_MULTIPLE = MPI_THREAD_MULTIPLE;
void *const pnmpi_sys_IN_PLACE = MPI_IN_PLACE;

/* The predefined operations, in the order of pnmpi_trace::rma::OP_NAMES:
 * an operation's index is its code in traces and its name across ranks. */
const MPI_Op pnmpi_sys_ops[] = {
    MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_BAND, MPI_LOR,
    MPI_BOR, MPI_LXOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE,
    MPI_NO_OP,
};
_Static_assert(sizeof pnmpi_sys_ops / sizeof pnmpi_sys_ops[0] == 14, "constants.rs's length");

/* The predefined datatypes, in a fixed order: a type's index names it
 * across ranks and processes, whose handles differ (Open MPI's are
 * addresses): the checker's signatures, virtual ranks' one-sided
 * accumulates across processes. */
const MPI_Datatype pnmpi_sys_types[] = {
    MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_WCHAR,
    MPI_SHORT, MPI_UNSIGNED_SHORT, MPI_INT, MPI_UNSIGNED, MPI_LONG,
    MPI_UNSIGNED_LONG, MPI_LONG_LONG_INT, MPI_UNSIGNED_LONG_LONG, MPI_FLOAT,
    MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_INT8_T, MPI_INT16_T, MPI_INT32_T,
    MPI_INT64_T, MPI_UINT8_T, MPI_UINT16_T, MPI_UINT32_T, MPI_UINT64_T,
    MPI_C_BOOL, MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX, MPI_AINT,
    MPI_OFFSET, MPI_PACKED, MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT,
    MPI_2INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT, MPI_INTEGER, MPI_REAL,
    MPI_DOUBLE_PRECISION, MPI_COMPLEX, MPI_DOUBLE_COMPLEX, MPI_LOGICAL,
    MPI_CHARACTER, MPI_2INTEGER, MPI_2REAL, MPI_2DOUBLE_PRECISION,
};
_Static_assert(sizeof pnmpi_sys_types / sizeof pnmpi_sys_types[0] == 46, "constants.rs's length");

/* The one-sided assertions, in the order of pnmpi_trace::rma::ASSERT_NAMES
 * (Open MPI and MPICH give them different bits). */
const int pnmpi_sys_modes[] = {
    MPI_MODE_NOCHECK, MPI_MODE_NOSTORE, MPI_MODE_NOPUT, MPI_MODE_NOPRECEDE,
    MPI_MODE_NOSUCCEED,
};
const int pnmpi_sys_LOCK_EXCLUSIVE = MPI_LOCK_EXCLUSIVE;
const int pnmpi_sys_LOCK_SHARED = MPI_LOCK_SHARED;
const MPI_Win pnmpi_sys_WIN_NULL = MPI_WIN_NULL;
const MPI_Group pnmpi_sys_GROUP_EMPTY = MPI_GROUP_EMPTY;
/* A window's attributes, their keys and values (the two MPIs differ). */
const int pnmpi_sys_win_keys[] = {
    MPI_WIN_BASE, MPI_WIN_SIZE, MPI_WIN_DISP_UNIT, MPI_WIN_CREATE_FLAVOR, MPI_WIN_MODEL,
};
const int pnmpi_sys_win_flavors[] = {
    MPI_WIN_FLAVOR_CREATE, MPI_WIN_FLAVOR_ALLOCATE, MPI_WIN_FLAVOR_SHARED, MPI_WIN_FLAVOR_DYNAMIC,
};
const int pnmpi_sys_WIN_UNIFIED = MPI_WIN_UNIFIED;
const int pnmpi_sys_ERR_RMA_SYNC = MPI_ERR_RMA_SYNC;

/* The MPI-1 combiners MPI-3 removed: Open MPI keeps their values under
 * other names unless built for MPI-1 compatibility; MPICH keeps them. */
#if defined(OPEN_MPI) && !(OMPI_ENABLE_MPI1_COMPAT)
#define HVECTOR_INTEGER OMPI_WAS_MPI_COMBINER_HVECTOR_INTEGER
#define HINDEXED_INTEGER OMPI_WAS_MPI_COMBINER_HINDEXED_INTEGER
#define STRUCT_INTEGER OMPI_WAS_MPI_COMBINER_STRUCT_INTEGER
#else
#define HVECTOR_INTEGER MPI_COMBINER_HVECTOR_INTEGER
#define HINDEXED_INTEGER MPI_COMBINER_HINDEXED_INTEGER
#define STRUCT_INTEGER MPI_COMBINER_STRUCT_INTEGER
#endif

/* The datatype combiners, in the order of combiner.rs's `COMBINERS`. */
const int pnmpi_sys_combiners[] = {
    MPI_COMBINER_NAMED, MPI_COMBINER_DUP, MPI_COMBINER_CONTIGUOUS,
    MPI_COMBINER_VECTOR, MPI_COMBINER_HVECTOR, HVECTOR_INTEGER,
    MPI_COMBINER_INDEXED, MPI_COMBINER_HINDEXED, HINDEXED_INTEGER,
    MPI_COMBINER_INDEXED_BLOCK, MPI_COMBINER_HINDEXED_BLOCK,
    MPI_COMBINER_STRUCT, STRUCT_INTEGER, MPI_COMBINER_SUBARRAY,
    MPI_COMBINER_DARRAY, MPI_COMBINER_RESIZED, MPI_COMBINER_F90_REAL,
    MPI_COMBINER_F90_COMPLEX, MPI_COMBINER_F90_INTEGER,
};
const int pnmpi_sys_combiner_count = sizeof pnmpi_sys_combiners / sizeof pnmpi_sys_combiners[0];
