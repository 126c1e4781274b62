//! MPI's predefined handles and constants, read from the C shim
//! `constants.c` that is compiled against the native `mpi.h`.

use crate::ffi;

macro_rules! constants {
    ($($(#[$doc:meta])* $name:ident / $sym:ident : $ty:ty;)*) => {
        extern "C" {
            $(static $sym: $ty;)*
        }
        $(
            $(#[$doc])*
            #[allow(non_snake_case)]
            pub fn $name() -> $ty {
                // SAFETY: an immutable C object initialised at load time.
                unsafe { $sym }
            }
        )*
    };
}

/// Integer macros that bindgen evaluated (`stubgen::bind::INT_MACROS`):
/// constants, where the others are loads.
macro_rules! int_macros {
    ($($(#[$doc:meta])* $name:ident = $value:path;)*) => {
        $(
            $(#[$doc])*
            #[allow(non_snake_case)]
            #[inline(always)]
            pub const fn $name() -> i32 {
                $value
            }
        )*
    };
}

int_macros! {
    /// `MPI_ANY_SOURCE`
    ANY_SOURCE = ffi::MPI_ANY_SOURCE;
    /// `MPI_ANY_TAG`
    ANY_TAG = ffi::MPI_ANY_TAG;
    /// `MPI_SUCCESS`
    SUCCESS = ffi::MPI_SUCCESS;
}

constants! {
    /// `MPI_COMM_WORLD`
    COMM_WORLD / pnmpi_sys_COMM_WORLD: ffi::MPI_Comm;
    /// `MPI_COMM_SELF`
    COMM_SELF / pnmpi_sys_COMM_SELF: ffi::MPI_Comm;
    /// `MPI_COMM_NULL`
    COMM_NULL / pnmpi_sys_COMM_NULL: ffi::MPI_Comm;
    /// `MPI_INFO_NULL`
    INFO_NULL / pnmpi_sys_INFO_NULL: ffi::MPI_Info;
    /// `MPI_BYTE`
    BYTE / pnmpi_sys_BYTE: ffi::MPI_Datatype;
    /// `MPI_INT`
    INT / pnmpi_sys_INT: ffi::MPI_Datatype;
    /// `MPI_LONG_LONG`
    LONG_LONG / pnmpi_sys_LONG_LONG: ffi::MPI_Datatype;
    /// `MPI_UINT64_T`
    UINT64_T / pnmpi_sys_UINT64_T: ffi::MPI_Datatype;
    /// `MPI_PACKED`: any message may be received as it, then unpacked.
    PACKED / pnmpi_sys_PACKED: ffi::MPI_Datatype;
    /// `MPI_DOUBLE`
    DOUBLE / pnmpi_sys_DOUBLE: ffi::MPI_Datatype;
    /// `MPI_CHAR`
    CHAR / pnmpi_sys_CHAR: ffi::MPI_Datatype;
    /// `MPI_DATATYPE_NULL`
    DATATYPE_NULL / pnmpi_sys_DATATYPE_NULL: ffi::MPI_Datatype;
    /// `MPI_SUM`
    SUM / pnmpi_sys_SUM: ffi::MPI_Op;
    /// `MPI_MAX`
    MAX / pnmpi_sys_MAX: ffi::MPI_Op;
    /// `MPI_MIN`
    MIN / pnmpi_sys_MIN: ffi::MPI_Op;
    /// `MPI_REQUEST_NULL`
    REQUEST_NULL / pnmpi_sys_REQUEST_NULL: ffi::MPI_Request;
    /// `MPI_STATUS_IGNORE`
    STATUS_IGNORE / pnmpi_sys_STATUS_IGNORE: *mut ffi::MPI_Status;
    /// `MPI_STATUSES_IGNORE`
    STATUSES_IGNORE / pnmpi_sys_STATUSES_IGNORE: *mut ffi::MPI_Status;
    /// `MPI_PROC_NULL`
    PROC_NULL / pnmpi_sys_PROC_NULL: i32;
    /// `MPI_UNDEFINED`
    UNDEFINED / pnmpi_sys_UNDEFINED: i32;
    /// `MPI_ROOT`
    ROOT / pnmpi_sys_ROOT: i32;
    /// `MPI_ERR_OTHER`
    ERR_OTHER / pnmpi_sys_ERR_OTHER: i32;
    /// `MPI_THREAD_MULTIPLE`
    THREAD_MULTIPLE / pnmpi_sys_THREAD_MULTIPLE: i32;
    /// `MPI_IN_PLACE`
    IN_PLACE / pnmpi_sys_IN_PLACE: *mut core::ffi::c_void;
    /// `MPI_LOCK_EXCLUSIVE`
    LOCK_EXCLUSIVE / pnmpi_sys_LOCK_EXCLUSIVE: i32;
    /// `MPI_LOCK_SHARED`
    LOCK_SHARED / pnmpi_sys_LOCK_SHARED: i32;
    /// `MPI_WIN_NULL`
    WIN_NULL / pnmpi_sys_WIN_NULL: ffi::MPI_Win;
    /// `MPI_GROUP_EMPTY`
    GROUP_EMPTY / pnmpi_sys_GROUP_EMPTY: ffi::MPI_Group;
    /// `MPI_WIN_UNIFIED`: the memory model of a window whose public and
    /// private copies are one.
    WIN_UNIFIED / pnmpi_sys_WIN_UNIFIED: i32;
    /// `MPI_ERR_RMA_SYNC`
    ERR_RMA_SYNC / pnmpi_sys_ERR_RMA_SYNC: i32;
}

extern "C" {
    static pnmpi_sys_ops: [ffi::MPI_Op; 14];
    static pnmpi_sys_types: [ffi::MPI_Datatype; 46];
    static pnmpi_sys_modes: [i32; 5];
    static pnmpi_sys_win_keys: [i32; 5];
    static pnmpi_sys_win_flavors: [i32; 4];
}

/// The predefined operations, in the order of `pnmpi_trace::rma::OP_NAMES`
/// (`MPI_MAX` ... `MPI_NO_OP`): an operation's index is its code in
/// traces and its name across ranks.
pub fn predefined_ops() -> &'static [ffi::MPI_Op; 14] {
    // SAFETY: an immutable C array initialised at load time, of the
    // length constants.c asserts.
    unsafe { &pnmpi_sys_ops }
}

/// The predefined datatypes (`MPI_CHAR` ... `MPI_2DOUBLE_PRECISION`,
/// `constants.c`'s order): a type's index names it across ranks and
/// processes, whose handles differ.
pub fn predefined_types() -> &'static [ffi::MPI_Datatype; 46] {
    // SAFETY: an immutable C array initialised at load time, of the
    // length constants.c asserts.
    unsafe { &pnmpi_sys_types }
}

/// The one-sided assertions `MPI_MODE_NOCHECK`, `_NOSTORE`, `_NOPUT`,
/// `_NOPRECEDE`, `_NOSUCCEED`, in the order of
/// `pnmpi_trace::rma::ASSERT_NAMES`.
pub fn modes() -> &'static [i32; 5] {
    // SAFETY: an immutable C array initialised at load time.
    unsafe { &pnmpi_sys_modes }
}

/// A window's predefined attribute keys: `MPI_WIN_BASE`, `_SIZE`,
/// `_DISP_UNIT`, `_CREATE_FLAVOR`, `_MODEL`.
pub fn win_keys() -> &'static [i32; 5] {
    // SAFETY: an immutable C array initialised at load time.
    unsafe { &pnmpi_sys_win_keys }
}

/// The window flavors `MPI_WIN_FLAVOR_CREATE`, `_ALLOCATE`, `_SHARED`,
/// `_DYNAMIC` (the order of `pnmpi_trace::rma::WinKind`).
pub fn win_flavors() -> &'static [i32; 4] {
    // SAFETY: an immutable C array initialised at load time.
    unsafe { &pnmpi_sys_win_flavors }
}
