//! Point-to-point wrappers: arguments checked; blocking sends and
//! receives made as test loops (see `wait`); a receive's message matched
//! first (`MPI_Improbe`), so that one longer than the receive buffer is
//! reported as truncation before MPI's error handler ends the job.

use crate::args::{self, refuse, Checked};
use crate::config;
use crate::consts::Err;
use crate::gate::gate;
use crate::graph::Blocked;
use crate::p2psig;
use crate::report::{self, Class};
use crate::site::Here;
use crate::types;
use crate::wait::{self, block_on};
use pnmpi_sdk::constants as mpi;
use pnmpi_sdk::raw::{self as x, routine};
use pnmpi_sdk::sys::ffi::{self, MPI_Comm, MPI_Message, MPI_Request, MPI_Status};
use std::ffi::{c_int, c_void};

/// The `MPI_COMM_WORLD` rank of rank `r` of `comm` (-1 if none).
pub fn to_world(comm: MPI_Comm, r: i32) -> i32 {
    if crate::registry::is_world(comm) {
        return r;
    }
    let (mut group, mut world) = (std::mem::MaybeUninit::uninit(), std::mem::MaybeUninit::uninit());
    let mut out: c_int = -1;
    // SAFETY: out-parameters MPI fills; both groups are freed below.
    unsafe {
        if ffi::PMPI_Comm_group(comm, group.as_mut_ptr()) != mpi::SUCCESS() {
            return -1;
        }
        ffi::PMPI_Comm_group(mpi::COMM_WORLD(), world.as_mut_ptr());
        let (mut group, mut world) = (group.assume_init(), world.assume_init());
        ffi::PMPI_Group_translate_ranks(group, 1, &r, world, &mut out);
        ffi::PMPI_Group_free(&mut group);
        ffi::PMPI_Group_free(&mut world);
    }
    if out == mpi::UNDEFINED() {
        -1
    } else {
        out
    }
}

/// What a collective on `comm` waits for: every other rank of it.
pub fn collective_waits(comm: MPI_Comm) -> Blocked {
    let size = args::comm_size(comm);
    let me = report::rank();
    let peers: Vec<i32> = (0..size)
        .map(|r| to_world(comm, r))
        .filter(|&r| r != me && r >= 0)
        .collect();
    let text = format!(
        "the other ranks of its communicator ({} ranks) to join the collective",
        size
    );
    wait::waiting_for(peers, false, text)
}

/// What a receive from `source` (or any) with `tag` waits for.
pub fn recv_waits(source: i32, tag: i32, comm: MPI_Comm) -> Blocked {
    if source == mpi::ANY_SOURCE() {
        return wait::waiting_for(Vec::new(), true, format!("a message from any rank (tag {tag})"));
    }
    let world = to_world(comm, source);
    wait::waiting_for(
        vec![world],
        false,
        format!("a message from rank {world} (tag {tag})"),
    )
}

/// What a send of `bytes` to `dest` waits for; `standard`: a standard
/// send checked as synchronous (it would complete if MPI buffered it).
fn send_waits(dest: i32, tag: i32, comm: MPI_Comm, bytes: u64, standard: bool) -> Blocked {
    let world = to_world(comm, dest);
    let mut b = wait::waiting_for(
        vec![world],
        false,
        format!("rank {world} to receive its message of {bytes} bytes (tag {tag})"),
    );
    b.standard_send = standard;
    b
}

/// Whether a standard send of `count` elements of `dt` is checked as a
/// synchronous send (`sends`, `eager_limit`), and its bytes.
fn standard_is_synchronous(count: c_int, dt: ffi::MPI_Datatype) -> (bool, u64) {
    let bytes = types::size(dt) * count.max(0) as u64;
    (config::get().sends.synchronous(bytes), bytes)
}

/// A status for MPI to fill, from `MPI_PROC_NULL` until it does.
pub fn empty_status() -> MPI_Status {
    // SAFETY: MPI_Status is plain integers; all zeroes is valid.
    let mut status: MPI_Status = unsafe { std::mem::zeroed() };
    status.MPI_SOURCE = mpi::PROC_NULL();
    status.MPI_TAG = mpi::ANY_TAG();
    status
}

/// Copies the checker's status to the application's, unless ignored.
pub fn give(status: *mut MPI_Status, own: &MPI_Status) {
    if !status.is_null() && status != mpi::STATUS_IGNORE() {
        // SAFETY: the caller's status, a plain struct.
        unsafe { *status = *own };
    }
}

/// One `MPI_Test` (next layer) of the call's own request.
pub fn test(req: &mut MPI_Request, status: *mut MPI_Status) -> Result<bool, c_int> {
    // SAFETY: a request the wrapper posted; `status` is the caller's or ignore.
    crate::wait::flagged(|flag| unsafe { x::XMPI_Test(req, flag, status) })
}

/// A blocking send as a test loop: `MPI_Issend` for `MPI_Ssend`, and for
/// an `MPI_Send` that `sends` checks as synchronous (by default, one of
/// more than `eager_limit` bytes), else `MPI_Isend`.
#[allow(clippy::too_many_arguments)]
pub fn send(
    here: &Here,
    buf: *const c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    sync: bool,
) -> c_int {
    if let Err(r) = args::p2p(buf, count, dt, dest, tag, comm, false) {
        return r.report(here);
    }
    if dest == mpi::PROC_NULL() {
        return mpi::SUCCESS();
    }
    crate::concurrency::check(here, buf, count, dt, false);
    p2psig::announce(count, dt, dest, tag, comm);
    let (as_sync, bytes) = standard_is_synchronous(count, dt);
    let standard = !sync && as_sync;
    let mut req = mpi::REQUEST_NULL();
    // SAFETY: the application's send arguments; `req` is completed by the
    // loop below before the wrapper returns, as the blocking call would.
    let rc = unsafe {
        if sync || standard {
            x::XMPI_Issend(buf, count, dt, dest, tag, comm, &mut req)
        } else {
            x::XMPI_Isend(buf, count, dt, dest, tag, comm, &mut req)
        }
    };
    if rc != mpi::SUCCESS() {
        return rc;
    }
    block_on(
        here,
        || send_waits(dest, tag, comm, bytes, standard),
        || test(&mut req, mpi::STATUS_IGNORE()),
    )
}

/// Whether a message of `bytes` fits `count` elements of `dt`.
pub fn truncation(bytes: i64, count: c_int, dt: ffi::MPI_Datatype) -> Checked {
    let room = types::size(dt) as i64 * count.max(0) as i64;
    if bytes > room {
        let mut r = refuse(
            Err::Truncate,
            "truncation",
            format!("the message has {bytes} bytes, the receive buffer room for {room} ({count} elements)"),
        );
        r.class = Class::P2p;
        return Err(r);
    }
    Ok(())
}

/// A blocking receive: `MPI_Improbe` until a message matches, the
/// truncation check, then `MPI_Mrecv`.
#[allow(clippy::too_many_arguments)]
pub fn recv(
    here: &Here,
    buf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    if let Err(r) = args::p2p(buf, count, dt, source, tag, comm, true) {
        return r.report(here);
    }
    if source == mpi::PROC_NULL() {
        // SAFETY: the application's own call, unchanged.
        return unsafe { x::XMPI_Recv(buf, count, dt, source, tag, comm, status) };
    }
    crate::concurrency::check(here, buf, count, dt, true);
    let mut msg: MPI_Message = crate::consts::message_null();
    // SAFETY: MPI_Status is plain integers; all zeroes is valid.
    let mut probed: MPI_Status = unsafe { std::mem::zeroed() };
    let rc = block_on(
        here,
        || recv_waits(source, tag, comm),
        || {
            // SAFETY: local out-parameters; the application's envelope.
            crate::wait::flagged(|flag| unsafe {
                x::XMPI_Improbe(source, tag, comm, flag, &mut msg, &mut probed)
            })
        },
    );
    if rc != mpi::SUCCESS() {
        return rc;
    }
    let signature = p2psig::verify(&probed, comm, count, dt);
    receive_matched(here, (buf, count, dt), &mut msg, &probed, signature, status)
}

/// Receives the message `msg`, matched as `probed` says, into the
/// application's `(buf, count, dt)` and `status`; reports a message
/// longer than the buffer (then received elsewhere, so that MPI does not
/// end the job, and the buffer is left as it was), else the outcome
/// `signature` of its type signature's comparison.
pub fn receive_matched(
    here: &Here,
    (buf, count, dt): (*mut c_void, c_int, ffi::MPI_Datatype),
    msg: &mut MPI_Message,
    probed: &MPI_Status,
    signature: Checked,
    status: *mut MPI_Status,
) -> c_int {
    let mut bytes: c_int = 0;
    // SAFETY: the status the matching probe filled.
    unsafe { ffi::PMPI_Get_count(probed, mpi::BYTE(), &mut bytes) };
    if let Err(r) = truncation(bytes as i64, count, dt) {
        let code = r.report(here);
        let mut scratch = vec![0u8; bytes.max(0) as usize];
        // SAFETY: `scratch` holds the whole message as bytes.
        unsafe { x::XMPI_Mrecv(scratch.as_mut_ptr().cast(), bytes, mpi::BYTE(), msg, status) };
        return code;
    }
    // SAFETY: the application's buffer and status for the message it matched.
    let rc = unsafe { x::XMPI_Mrecv(buf, count, dt, msg, status) };
    match signature {
        Ok(()) => rc,
        Err(r) => r.report(here),
    }
}

/// A send checked and passed on as it is (`call`): its arguments, then
/// its signature message.
pub fn passed_on(
    here: &Here,
    data: (*const c_void, c_int, ffi::MPI_Datatype),
    envelope: (c_int, c_int, MPI_Comm),
    call: impl FnOnce() -> c_int,
) -> c_int {
    let ((buf, count, dt), (dest, tag, comm)) = (data, envelope);
    match args::p2p(buf, count, dt, dest, tag, comm, false) {
        Ok(()) => {
            p2psig::announce(count, dt, dest, tag, comm);
            call()
        }
        Err(r) => r.report(here),
    }
}

/// `MPI_Sendrecv`, checked (both halves, and that the buffers do not
/// overlap), as a test loop of a receive and a send (synchronous if
/// `sends` says so).
pub fn sendrecv(
    here: &Here,
    (sendbuf, sendcount, sendtype, dest, sendtag): (*const c_void, c_int, ffi::MPI_Datatype, c_int, c_int),
    (recvbuf, recvcount, recvtype, source, recvtag): (*mut c_void, c_int, ffi::MPI_Datatype, c_int, c_int),
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    let checked = args::p2p(sendbuf, sendcount, sendtype, dest, sendtag, comm, false)
        .and_then(|()| args::p2p(recvbuf, recvcount, recvtype, source, recvtag, comm, true))
        .and_then(|()| {
            args::disjoint(
                args::span(sendbuf, sendcount, sendtype),
                args::span(recvbuf, recvcount, recvtype),
            )
        });
    if let Err(r) = checked {
        return r.report(here);
    }
    let mut reqs = [mpi::REQUEST_NULL(), mpi::REQUEST_NULL()];
    // SAFETY: the application's arguments; both requests complete in
    // the loop below before the wrapper returns.
    let rc = unsafe { x::XMPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &mut reqs[0]) };
    if rc != mpi::SUCCESS() {
        return rc;
    }
    let (sync, bytes) = standard_is_synchronous(sendcount, sendtype);
    p2psig::announce(sendcount, sendtype, dest, sendtag, comm);
    // SAFETY: as above.
    let rc = unsafe {
        if sync {
            x::XMPI_Issend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &mut reqs[1])
        } else {
            x::XMPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &mut reqs[1])
        }
    };
    if rc != mpi::SUCCESS() {
        return rc;
    }
    let mut statuses = [empty_status(), empty_status()];
    let rc = block_on(
        here,
        || {
            let mut b = recv_waits(source, recvtag, comm);
            if dest != mpi::PROC_NULL() {
                let send = send_waits(dest, sendtag, comm, bytes, sync);
                b.peers.extend(send.peers);
                b.waits = format!("{} and {}", b.waits, send.waits);
                b.standard_send = sync;
            }
            b
        },
        || {
            // SAFETY: our two requests and room for their statuses.
            crate::wait::flagged(|flag| unsafe {
                x::XMPI_Testall(2, reqs.as_mut_ptr(), flag, statuses.as_mut_ptr())
            })
        },
    );
    give(status, &statuses[0]);
    // MPICH's status of a receive from MPI_PROC_NULL may name rank 0.
    if rc == mpi::SUCCESS() && source != mpi::PROC_NULL() {
        let got = statuses[0];
        if let Err(r) = p2psig::verify(&got, comm, recvcount, recvtype) {
            return r.report(here);
        }
    }
    rc
}

/// `MPI_Sendrecv_replace`, checked; its message's signature sent and its
/// receive's compared.
pub fn sendrecv_replace(
    here: &Here,
    (buf, count, datatype): (*mut c_void, c_int, ffi::MPI_Datatype),
    (dest, sendtag): (c_int, c_int),
    (source, recvtag): (c_int, c_int),
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    let checked = args::p2p(buf, count, datatype, dest, sendtag, comm, false)
        .and_then(|()| args::p2p(buf, count, datatype, source, recvtag, comm, true));
    if let Err(r) = checked {
        return r.report(here);
    }
    p2psig::announce(count, datatype, dest, sendtag, comm);
    let mut own = empty_status();
    // SAFETY: the application's buffer and envelope; our status.
    let rc = unsafe {
        x::XMPI_Sendrecv_replace(
            buf, count, datatype, dest, sendtag, source, recvtag, comm, &mut own,
        )
    };
    give(status, &own);
    if rc == mpi::SUCCESS() && source != mpi::PROC_NULL() {
        if let Err(r) = p2psig::verify(&own, comm, count, datatype) {
            return r.report(here);
        }
    }
    rc
}

pnmpi_sdk::wrap! {
    /// Checked, as a test loop; synchronous if `sends` says so.
    fn MPI_Send(buf, count, datatype, dest, tag, comm) {
        let here = Here::new(routine::MPI_Send);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        send(&here, buf, count, datatype, dest, tag, comm, false)
    }

    /// Checked, as a test loop.
    fn MPI_Ssend(buf, count, datatype, dest, tag, comm) {
        let here = Here::new(routine::MPI_Ssend);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        send(&here, buf, count, datatype, dest, tag, comm, true)
    }

    /// Checked.
    fn MPI_Rsend(buf, count, datatype, dest, tag, comm) {
        let here = Here::new(routine::MPI_Rsend);
        gate(&here).unwrap_or_else(|| passed_on(&here, (buf, count, datatype), (dest, tag, comm), || next!()))
    }

    /// Checked.
    fn MPI_Bsend(buf, count, datatype, dest, tag, comm) {
        let here = Here::new(routine::MPI_Bsend);
        gate(&here).unwrap_or_else(|| passed_on(&here, (buf, count, datatype), (dest, tag, comm), || next!()))
    }

    /// Checked, matched first, as a test loop.
    fn MPI_Recv(buf, count, datatype, source, tag, comm, status) {
        let here = Here::new(routine::MPI_Recv);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        recv(&here, buf, count, datatype, source, tag, comm, status)
    }

    /// Checked (both halves, and that the buffers do not overlap), as a
    /// test loop of a receive and a send (synchronous if `sends` says so).
    fn MPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, status) {
        let here = Here::new(routine::MPI_Sendrecv);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        sendrecv(&here, (sendbuf, sendcount, sendtype, dest, sendtag), (recvbuf, recvcount, recvtype, source, recvtag), comm, status)
    }

    /// Checked; its message's signature sent and its receive's compared.
    fn MPI_Sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, status) {
        let here = Here::new(routine::MPI_Sendrecv_replace);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        sendrecv_replace(&here, (buf, count, datatype), (dest, sendtag), (source, recvtag), comm, status)
    }

    /// Checked, as an `MPI_Iprobe` loop.
    fn MPI_Probe(source, tag, comm, status) {
        let here = Here::new(routine::MPI_Probe);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        let checked = args::comm(comm).and_then(|()| args::rank(source, comm, true)).and_then(|()| args::tag(tag, true));
        if let Err(r) = checked {
            return r.report(&here);
        }
        block_on(&here, || recv_waits(source, tag, comm), || {
            // SAFETY: the application's envelope and status.
            crate::wait::flagged(|flag| unsafe { x::XMPI_Iprobe(source, tag, comm, flag, status) })
        })
    }
}
