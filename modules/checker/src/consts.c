/* The MPI constants the checker needs that pnmpi-mpi-sys does not carry:
 * error codes and the predefined datatypes, whose handles are cast macros (Open MPI: addresses of
 * library globals; MPICH: integers) that bindgen cannot evaluate.
 * Compiled against the native mpi.h by build.rs. */
#include <mpi.h>
#include <stddef.h>

/* In the order of consts.rs's `Err`. */
const int pnmpi_checker_err[] = {
    MPI_ERR_RANK, MPI_ERR_TAG, MPI_ERR_COUNT, MPI_ERR_ROOT, MPI_ERR_TYPE,
    MPI_ERR_COMM, MPI_ERR_OP, MPI_ERR_BUFFER, MPI_ERR_OTHER,
    MPI_ERR_TRUNCATE, MPI_ERR_REQUEST, MPI_ERR_SIZE, MPI_ERR_DISP,
    MPI_ERR_RMA_SYNC, MPI_ERR_RMA_RANGE, MPI_ERR_WIN,
};

/* The thread levels, in their order (single, funneled, serialized, multiple). */
const int pnmpi_checker_thread_levels[] = {
    MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED, MPI_THREAD_MULTIPLE,
};

const int pnmpi_checker_tag_ub_key = MPI_TAG_UB;
const MPI_Op pnmpi_checker_op_null = MPI_OP_NULL;
const MPI_Group pnmpi_checker_group_null = MPI_GROUP_NULL;
const MPI_Group pnmpi_checker_group_empty = MPI_GROUP_EMPTY;
const MPI_Datatype pnmpi_checker_byte = MPI_BYTE;
const MPI_Datatype pnmpi_checker_packed = MPI_PACKED;

/* Predefined datatypes, in a fixed order: a type's index here is its
 * name in a signature, the same on every rank. */
const MPI_Datatype pnmpi_checker_types[] = {
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
const int pnmpi_checker_type_count = sizeof pnmpi_checker_types / sizeof pnmpi_checker_types[0];

/* What each of those types holds, for `types native` (types.rs): 'i'
 * signed and 'u' unsigned integers, 'f' floating point, 'c' complex, 'b'
 * C booleans, 'l' Fortran logicals, 'w' wide characters, 'r' raw bytes
 * (MPI_BYTE, MPI_PACKED, and C's char and unsigned char, the types of an
 * object's bytes), '-' a pair type, which matches only itself. */
const char pnmpi_checker_type_kinds[] = {
    'r', 'i', 'r', 'r', 'w',
    'i', 'u', 'i', 'u', 'i',
    'u', 'i', 'u', 'f',
    'f', 'f', 'i', 'i', 'i',
    'i', 'u', 'u', 'u', 'u',
    'b', 'c', 'c', 'i',
    'i', 'r', '-', '-', '-',
    '-', '-', '-', 'i', 'f',
    'f', 'c', 'c', 'l',
    'r', '-', '-', '-',
};
_Static_assert(sizeof pnmpi_checker_type_kinds == sizeof pnmpi_checker_types / sizeof pnmpi_checker_types[0],
               "one kind per predefined type");

const MPI_Message pnmpi_checker_message_null = MPI_MESSAGE_NULL;
