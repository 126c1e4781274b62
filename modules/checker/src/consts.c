/* The MPI constants the checker needs that pnmpi-mpi-sys does not carry:
 * error codes and constants, whose handles are cast macros (Open MPI: addresses of
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

/* What each of pnmpi-mpi-sys's predefined types holds (constants.c's
 * order), for `types native` (types.rs): 'i'
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
_Static_assert(sizeof pnmpi_checker_type_kinds == 46, "pnmpi-mpi-sys's predefined types");

const MPI_Message pnmpi_checker_message_null = MPI_MESSAGE_NULL;
