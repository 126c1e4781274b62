//! Under `MPI_THREAD_MULTIPLE`, the blocking receives (`MPI_Recv`,
//! `MPI_Sendrecv`, `MPI_Sendrecv_replace`) go down the chain as their
//! nonblocking posts, made in the rank's posting turn
//! ([`crate::turns`]), and a wait outside it: a thread blocked in a
//! receive holds no turn, so the other threads' sends and receives go
//! on. Their completions are timed as any request's
//! ([`p2p::completed`]).

use crate::p2p;
use crate::state::blank_status;
use crate::turns;
use pnmpi_mpi_sys::ffi::{self, MPI_Request, MPI_Status};
use pnmpi_sdk::{constants, raw, Comm};
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// A key for a receive of the module's own in the table of requests: MPI
/// may give its handle to another thread's new request as soon as the
/// wait returns, before the receive is timed, so it is not keyed by its
/// handle. (Handles are pointers or 32-bit numbers, far below these.)
fn key() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    u64::MAX - NEXT.fetch_add(1, Relaxed)
}

/// The status to fill: the application's, or `own` if it ignores it.
fn status_or(status: *mut MPI_Status, own: &mut MPI_Status) -> *mut MPI_Status {
    if status == constants::STATUS_IGNORE() {
        own
    } else {
        status
    }
}

/// A receive from `source` with `tag` on `comm`, posted by `post` (the
/// application's receive as `MPI_Irecv`, given the request to fill),
/// then waited for; `status` is the application's.
///
/// # Safety
/// `post` makes a valid receive; `status` is the application's status
/// argument.
pub unsafe fn recv(
    comm: Comm,
    (source, tag): (c_int, c_int),
    status: *mut MPI_Status,
    post: impl FnOnce(*mut MPI_Request) -> c_int,
) -> c_int {
    let turn = turns::posting();
    let mut req = constants::REQUEST_NULL();
    let rc = post(&mut req);
    if rc != constants::SUCCESS() {
        return rc;
    }
    let handle = key();
    if source != constants::PROC_NULL() {
        p2p::recv_posted(comm, handle, false, (source, tag));
    }
    drop(turn);
    let mut own = blank_status();
    let st = status_or(status, &mut own);
    // SAFETY: the request just posted; `st` is a status to fill.
    let rc = unsafe { raw::XMPI_Wait(&mut req, st) };
    if rc == constants::SUCCESS() {
        // SAFETY: MPI filled `st` for this completion.
        unsafe { p2p::completed(handle, st) };
    }
    rc
}

/// A send and a receive on `comm` (`MPI_Sendrecv`): the timestamp of the
/// send (`dest`, `tag`, `bytes`), the receive (`post_recv`, from
/// `source` with `tag`) and the send (`post_send`) posted in one turn,
/// then both waited for, the receive timed first.
///
/// # Safety
/// `post_recv` and `post_send` make a valid receive and send; `status` is
/// the application's status argument.
#[allow(clippy::too_many_arguments)]
pub unsafe fn sendrecv(
    comm: Comm,
    (dest, send_tag, bytes): (c_int, c_int, u64),
    (source, recv_tag): (c_int, c_int),
    status: *mut MPI_Status,
    post_recv: impl FnOnce(*mut MPI_Request) -> c_int,
    post_send: impl FnOnce(*mut MPI_Request) -> c_int,
) -> c_int {
    let turn = turns::posting();
    let mut reqs = [constants::REQUEST_NULL(); 2];
    let rc = post_recv(&mut reqs[0]);
    if rc != constants::SUCCESS() {
        return rc;
    }
    let handle = key();
    if source != constants::PROC_NULL() {
        p2p::recv_posted(comm, handle, false, (source, recv_tag));
    }
    let sent = p2p::post_send(comm, dest, send_tag, bytes, p2p::Mode::Standard);
    let rc = post_send(&mut reqs[1]);
    drop(turn);
    let mut statuses = [blank_status(); 2];
    if rc != constants::SUCCESS() {
        // The receive is posted: it completes, then the send's error.
        // SAFETY: the receive just posted; a status to fill.
        unsafe { raw::XMPI_Wait(&mut reqs[0], &mut statuses[0]) };
        return rc;
    }
    // SAFETY: the two requests just posted, a status for each.
    let rc = unsafe { raw::XMPI_Waitall(2, reqs.as_mut_ptr(), statuses.as_mut_ptr()) };
    if rc == constants::SUCCESS() {
        if status != constants::STATUS_IGNORE() {
            // SAFETY: the application's status, to fill.
            unsafe { *status = statuses[0] };
        }
        // SAFETY: MPI filled the receive's status.
        unsafe { p2p::completed(handle, &statuses[0]) };
        p2p::sent(sent);
    }
    rc
}

/// `MPI_Sendrecv_replace` of `count` items of `dt` at `buf`: the send
/// goes from `buf`, the receive into a packed copy (any message may be
/// received as `MPI_PACKED`) unpacked into `buf` once both completed.
///
/// # Safety
/// The arguments are the application's, valid for the call.
#[allow(clippy::too_many_arguments)]
pub unsafe fn sendrecv_replace(
    buf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    (dest, send_tag): (c_int, c_int),
    (source, recv_tag): (c_int, c_int),
    comm: Comm,
    status: *mut MPI_Status,
) -> c_int {
    let mut size: c_int = 0;
    // SAFETY: the application's count, type and communicator; `size` is
    // a local out-parameter.
    let rc = unsafe { ffi::PMPI_Pack_size(count, dt, comm, &mut size) };
    if rc != constants::SUCCESS() {
        return rc;
    }
    let mut packed = vec![0u8; usize::try_from(size).unwrap_or(0)];
    let bytes = crate::coll::bytes(count, dt);
    let tmp = packed.as_mut_ptr().cast::<c_void>();
    let mut own = blank_status();
    let st = status_or(status, &mut own);
    // SAFETY: `packed` holds `size` bytes, the packed size of the
    // message; the send is the application's.
    let rc = unsafe {
        sendrecv(
            comm,
            (dest, send_tag, bytes),
            (source, recv_tag),
            st,
            |req| raw::XMPI_Irecv(tmp, size, constants::PACKED(), source, recv_tag, comm, req),
            |req| raw::XMPI_Isend(buf.cast_const(), count, dt, dest, send_tag, comm, req),
        )
    };
    if rc != constants::SUCCESS() || source == constants::PROC_NULL() {
        return rc;
    }
    let mut position: c_int = 0;
    // SAFETY: `packed` holds what was received, `buf` room for `count`
    // items of `dt` (the application's contract).
    unsafe { ffi::PMPI_Unpack(tmp.cast_const(), size, &mut position, buf, count, dt, comm) }
}
