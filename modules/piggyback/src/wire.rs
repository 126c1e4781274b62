//! What goes on the wire: the application's data and the piggybacked
//! bytes in one message, described by a struct datatype built for each
//! call, `{size bytes at pb, count x datatype at buf}`, relative to `buf`.
//! Any datatype, any count (0 included), blocking or not. The status of a
//! receive or probe then counts the piggybacked bytes too; [`fix_count`]
//! takes them off again, so that `MPI_Get_count` answers as without them.

use pnmpi_sdk::sys::ffi::{self, MPI_Aint, MPI_Datatype, MPI_Status};
use pnmpi_sdk::{constants, Datatype};
use std::ffi::{c_int, c_void};

/// A committed struct datatype, freed when dropped (MPI keeps it alive
/// for the operations still using it).
pub struct Wire(MPI_Datatype);

impl Wire {
    /// `{size bytes at pb, count x datatype at buf}`, displaced from `buf`.
    /// `None` if MPI refuses (an invalid datatype: the call then goes
    /// down unchanged and MPI reports the application's error).
    pub fn new(
        buf: *const c_void,
        count: c_int,
        datatype: Datatype,
        pb: *const u8,
        size: usize,
    ) -> Option<Wire> {
        let (mut at_buf, mut at_pb): (MPI_Aint, MPI_Aint) = (0, 0);
        let lengths = [c_int::try_from(size).ok()?, count];
        let types = [constants::BYTE(), datatype];
        let mut wire = constants::DATATYPE_NULL();
        // SAFETY: PMPI_Get_address reads no memory; the arrays hold 2
        // entries each, as the count says; `wire` is a local handle.
        let ok = unsafe {
            ffi::PMPI_Get_address(buf, &mut at_buf) == 0
                && ffi::PMPI_Get_address(pb.cast(), &mut at_pb) == 0
                && ffi::PMPI_Type_create_struct(
                    2,
                    lengths.as_ptr(),
                    [at_pb - at_buf, 0].as_ptr(),
                    types.as_ptr(),
                    &mut wire,
                ) == 0
        };
        if !ok {
            return None;
        }
        // SAFETY: a datatype just created.
        if unsafe { ffi::PMPI_Type_commit(&mut wire) } != 0 {
            return None;
        }
        Some(Wire(wire))
    }

    /// The datatype, to send or receive one of from `buf`.
    pub fn datatype(&self) -> MPI_Datatype {
        self.0
    }
}

impl Drop for Wire {
    fn drop(&mut self) {
        // SAFETY: committed by `new` and freed only here.
        unsafe { ffi::PMPI_Type_free(&mut self.0) };
    }
}

/// Takes the `size` piggybacked bytes off the element count of a status
/// that received or probed a message.
pub fn fix_count(status: *mut MPI_Status, size: usize) {
    if status.is_null() || status == constants::STATUS_IGNORE() || status == constants::STATUSES_IGNORE() {
        return;
    }
    let mut bytes: c_int = 0;
    // SAFETY: a real status MPI filled; `bytes` is local.
    unsafe {
        if ffi::PMPI_Get_count(status, constants::BYTE(), &mut bytes) == 0 && bytes != constants::UNDEFINED()
        {
            let payload = usize::try_from(bytes).unwrap_or(0).saturating_sub(size);
            ffi::PMPI_Status_set_elements(status, constants::BYTE(), c_int::try_from(payload).unwrap_or(0));
        }
    }
}
