//! status: LLNL PnMPI's status service. Every routine that fills
//! `MPI_Status`es is given, below this module, an extended status array
//! (see `extended.rs`) with room for the data other modules asked for; the
//! application gets its ordinary statuses back. `requests` stores a
//! completed request's call, peer, tag and buffer there, `piggyback` the
//! bytes that came with a message.
//!
//! LLNL's API, unchanged (`include/pnmpi/status.h`): the module registers
//! as `status-storage` and offers the service `add-storage` (signature
//! `"i"`: `int add(int bytes)`, returning the offset of the new bytes in
//! each status's block) and the global `total-status-extension` (`'i'`,
//! the block size). Load it *above* the modules that use it, and ask for
//! room in `MPI_Init`, after `XMPI_Init` returns.

mod extended;

use extended::Extended;
use pnmpi_sdk::raw;
use pnmpi_sdk::services::{self, ServiceFn};
use pnmpi_sdk::sys::ffi::MPI_Status;
use std::ffi::c_int;
use std::sync::atomic::{AtomicI32, Ordering::Relaxed};

/// Bytes of extension behind each status: the global
/// `total-status-extension`.
static TOTAL: AtomicI32 = AtomicI32::new(0);

/// The service `add-storage`: reserves `bytes` more in every status's
/// block and returns where they start; a negative size is refused (-1).
extern "C" fn add_storage(bytes: c_int) -> c_int {
    if bytes < 0 {
        return -1;
    }
    TOTAL.fetch_add(bytes, Relaxed)
}

pnmpi_sdk::module! {
    name: "status-storage",
    registration_point: || {
        // SAFETY: a C caller looks the service up with signature "i" and
        // casts it back to int (*)(int), add_storage's own type; function
        // pointers of any signature have one representation.
        let fct = unsafe { std::mem::transmute::<extern "C" fn(c_int) -> c_int, ServiceFn>(add_storage) };
        let offered = services::offer("add-storage", "i", fct)
            .and_then(|()| services::register_global("total-status-extension", &TOTAL));
        if let Err(e) = offered {
            pnmpi_sdk::say::warn("status", format_args!("cannot offer its service: {e}"));
        }
    },
}

/// Runs `call` on an extended array of `count` statuses and copies the
/// first `copy(result)` of them back into `user`.
fn extended(
    user: *mut MPI_Status,
    count: c_int,
    call: impl FnOnce(*mut MPI_Status) -> c_int,
    copy: impl FnOnce() -> c_int,
) -> c_int {
    let count = usize::try_from(count).unwrap_or(0);
    let extension = usize::try_from(TOTAL.load(Relaxed)).unwrap_or(0);
    let mut statuses = Extended::new(count, extension);
    let err = call(statuses.as_mut_ptr());
    let n = usize::try_from(copy()).unwrap_or(0);
    // SAFETY: MPI's contract: `user` is an ignore constant or holds the
    // `count` statuses this call may fill, of which n <= count were.
    unsafe { statuses.copy_out(user, n) };
    err
}

/// A flag or count that MPI wrote, read after the call.
fn read(value: *const c_int) -> c_int {
    // SAFETY: MPI wrote it during the call; null stands for "nothing".
    unsafe { value.as_ref() }.copied().unwrap_or(0)
}

pnmpi_sdk::wrap! {
    fn MPI_Recv(buf, count, datatype, source, tag, comm, status) {
        // SAFETY (all wrappers below): the application's arguments, with
        // an extended status array of the size MPI fills in its place.
        extended(status, 1, |s| unsafe { raw::XMPI_Recv(buf, count, datatype, source, tag, comm, s) }, || 1)
    }

    fn MPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, status) {
        extended(status, 1, |s| unsafe {
            raw::XMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, s)
        }, || 1)
    }

    fn MPI_Sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, status) {
        extended(status, 1, |s| unsafe {
            raw::XMPI_Sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, s)
        }, || 1)
    }

    fn MPI_Probe(source, tag, comm, status) {
        extended(status, 1, |s| unsafe { raw::XMPI_Probe(source, tag, comm, s) }, || 1)
    }

    fn MPI_Iprobe(source, tag, comm, flag, status) {
        extended(status, 1, |s| unsafe { raw::XMPI_Iprobe(source, tag, comm, flag, s) }, || read(flag))
    }

    fn MPI_Mprobe(source, tag, comm, message, status) {
        extended(status, 1, |s| unsafe { raw::XMPI_Mprobe(source, tag, comm, message, s) }, || 1)
    }

    fn MPI_Improbe(source, tag, comm, flag, message, status) {
        extended(status, 1, |s| unsafe { raw::XMPI_Improbe(source, tag, comm, flag, message, s) }, || read(flag))
    }

    fn MPI_Mrecv(buf, count, datatype, message, status) {
        extended(status, 1, |s| unsafe { raw::XMPI_Mrecv(buf, count, datatype, message, s) }, || 1)
    }

    fn MPI_Wait(request, status) {
        extended(status, 1, |s| unsafe { raw::XMPI_Wait(request, s) }, || 1)
    }

    fn MPI_Test(request, flag, status) {
        extended(status, 1, |s| unsafe { raw::XMPI_Test(request, flag, s) }, || read(flag))
    }

    fn MPI_Waitany(count, requests, index, status) {
        extended(status, 1, |s| unsafe { raw::XMPI_Waitany(count, requests, index, s) }, || 1)
    }

    fn MPI_Testany(count, requests, index, flag, status) {
        extended(status, 1, |s| unsafe { raw::XMPI_Testany(count, requests, index, flag, s) }, || read(flag))
    }

    fn MPI_Waitall(count, requests, statuses) {
        extended(statuses, count, |s| unsafe { raw::XMPI_Waitall(count, requests, s) }, || count)
    }

    fn MPI_Testall(count, requests, flag, statuses) {
        extended(statuses, count, |s| unsafe { raw::XMPI_Testall(count, requests, flag, s) }, || read(flag) * count)
    }

    fn MPI_Waitsome(incount, requests, outcount, indices, statuses) {
        extended(statuses, incount, |s| unsafe { raw::XMPI_Waitsome(incount, requests, outcount, indices, s) }, || read(outcount))
    }

    fn MPI_Testsome(incount, requests, outcount, indices, statuses) {
        extended(statuses, incount, |s| unsafe { raw::XMPI_Testsome(incount, requests, outcount, indices, s) }, || read(outcount))
    }
}
