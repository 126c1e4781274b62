//! The data layouts of LLNL PnMPI's building-block modules, shared by the
//! bundled `status`, `requests` and `piggyback` modules (and declared for
//! C in `include/pnmpi/status.h` and `requests.h`).
//!
//! Status arrays passed in are trusted, as MPI trusts them (see
//! [`crate::next`]), hence the `allow` below.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

use crate::sys::ffi::{MPI_Comm, MPI_Datatype, MPI_Request, MPI_Status};
use std::ffi::{c_char, c_int, c_void};

/// `PNMPIMOD_STATUS_TAG`: the `MPI_ERROR` of a status the `status` module
/// extended, as the modules below it see it before their call.
pub const STATUS_MARK: c_int = 0x3e1f9;

/// `PNMPIMOD_REQUESTS_*`: the call that made a request.
pub mod kind {
    use std::ffi::c_int;
    pub const SEND: c_int = 0x01;
    pub const BSEND: c_int = 0x03;
    pub const RSEND: c_int = 0x05;
    pub const SSEND: c_int = 0x07;
    pub const RECV: c_int = 0x00;
    /// An unknown or null request.
    pub const NULL: c_int = 0xFF;
}

/// `PNMPIMOD_Requests_Parameters_t`, field for field.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct RequestParameters {
    pub kind: c_int,
    pub buf: *mut c_void,
    pub count: c_int,
    pub datatype: MPI_Datatype,
    pub node: c_int,
    pub tag: c_int,
    pub persistent: c_int,
    pub active: c_int,
    pub cancelled: c_int,
    pub comm: MPI_Comm,
    pub inreq: MPI_Request,
    /// The bytes reserved with the `requests` module's `add-storage`.
    pub data: *mut c_char,
}

/// Whether status `num` of `statuses` is marked as extended (read it
/// before the MPI call: MPI may overwrite `MPI_ERROR`).
pub fn is_extended(statuses: *mut MPI_Status, num: usize) -> bool {
    use crate::constants;
    if statuses.is_null()
        || statuses == constants::STATUS_IGNORE()
        || statuses == constants::STATUSES_IGNORE()
    {
        return false;
    }
    // SAFETY: a real status array of at least num + 1 statuses (MPI's
    // contract for the call it is passed to).
    unsafe { (*statuses.add(num)).MPI_ERROR == STATUS_MARK }
}

/// The address of byte `offset` of the extension block of status `num` in
/// an extended array of `count` statuses with blocks of `total` bytes
/// (`STATUS_STORAGE_ARRAY`).
///
/// # Safety
/// `statuses` is an extended array of `count` statuses made by the
/// `status` module, and `offset` lies within what the caller reserved.
pub unsafe fn extension(
    statuses: *mut MPI_Status,
    count: usize,
    total: usize,
    num: usize,
    offset: usize,
) -> *mut u8 {
    // SAFETY: by the contract, inside the array's blocks.
    unsafe { statuses.add(count).cast::<u8>().add(num * total + offset) }
}
