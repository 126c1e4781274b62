//! What the MPI routines tell the tracer ([`crate::trace`]) about the
//! running rank's call, when the run is traced: its arguments, the
//! requests it made or completed, the communicators it built.

use crate::engine::with;
use pnmpi_mpi_sys::{ffi, Handle};
use pnmpi_trace::counts::PeerBytesOf;
use pnmpi_trace::rank::{NewComm, RawDone, RawRecord};
use std::ffi::c_int;

/// Adds arguments to the running rank's event, when the run is traced.
/// `f` must not call into the engine.
pub fn note(f: impl FnOnce(&mut RawRecord)) {
    with(|e| e.trace_event(f));
}

/// Whether the run is traced.
pub fn on() -> bool {
    with(|e| e.traced())
}

/// Records the request the running rank's call created or started.
pub fn request(h: ffi::MPI_Request) {
    note(|rec| rec.reqs.push(h.bits()));
}

/// Records a completed request: its handle before the call, and for a
/// receive the status's source and tag.
pub fn done(h: u64, status: Option<(c_int, c_int)>) {
    note(|rec| {
        rec.done.push(RawDone {
            handle: h,
            status: status.map(|(s, t)| (i64::from(s), i64::from(t))),
        })
    });
}

/// Records the communicator a constructor made (`MPI_COMM_NULL` for a
/// rank left out): its handle and its members' world ranks.
pub fn new_comm(parent: ffi::MPI_Comm, made: ffi::MPI_Comm) {
    if !on() {
        return;
    }
    let members = match crate::handles::comm(made) {
        Some(i) => with(|e| e.members(i)),
        None => Vec::new(),
    };
    note(|rec| {
        rec.comm = Some(parent.bits());
        rec.newcomm = Some(NewComm {
            handle: made.bits(),
            members: members.iter().map(|&w| i64::from(w)).collect(),
            remote: None,
        });
    });
}

/// Records the per-peer bytes of a `v` collective.
pub fn per_peer(send: Vec<i64>, recv: Vec<i64>) {
    note(|rec| rec.counts = Some(PeerBytesOf { send, recv }));
}

/// `count` items of `dt`, in bytes.
pub fn bytes(count: c_int, dt: ffi::MPI_Datatype) -> i64 {
    crate::dtype::layout(dt).size as i64 * i64::from(count.max(0))
}

/// Records a point-to-point call's peer (source or destination), tag,
/// communicator and bytes.
pub fn p2p(peer: c_int, tag: c_int, comm: ffi::MPI_Comm, count: c_int, dt: ffi::MPI_Datatype) {
    note(|rec| {
        rec.peer = Some(i64::from(peer));
        rec.tag = Some(i64::from(tag));
        rec.comm = Some(comm.bits());
        rec.bytes = Some(bytes(count, dt));
    });
}

/// Records the receive half of `MPI_Sendrecv`: its source, tag and bytes.
pub fn recv_half(source: c_int, tag: c_int, count: c_int, dt: ffi::MPI_Datatype) {
    note(|rec| {
        rec.src = Some(i64::from(source));
        rec.rtag = Some(i64::from(tag));
        rec.rbytes = Some(bytes(count, dt));
    });
}

/// Records the status (source, tag) of a blocking receive or probe.
pub fn status(source: c_int, tag: c_int) {
    note(|rec| rec.status = Some((i64::from(source), i64::from(tag))));
}

/// Records a collective's communicator, bytes sent and received, and
/// root, as the tracer reads them from its arguments.
pub fn collective(comm: ffi::MPI_Comm, bytes: Option<i64>, rbytes: Option<i64>, root: Option<c_int>) {
    note(|rec| {
        rec.comm = Some(comm.bits());
        rec.bytes = bytes;
        rec.rbytes = rbytes;
        rec.root = root.map(i64::from);
    });
}

/// Starts rank `r`'s file and records its `MPI_Init` (`routine`), at
/// virtual time 0.
pub fn init(routine: &'static str) {
    let started = with(|e| e.trace_start(routine));
    if let Err(what) = started {
        super::fatal("tracer", &what);
    }
}

/// Completes the running rank's file at `MPI_Finalize`.
pub fn finalize() {
    let finished = with(|e| e.trace_finish());
    if let Err(what) = finished {
        super::fatal("tracer", &what);
    }
}
