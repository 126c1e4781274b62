//! Matched probes and receives (`MPI_Mprobe`, `MPI_Improbe`, `MPI_Mrecv`,
//! `MPI_Imrecv`): a probe that matches a message takes its type signature
//! then, in the message's order among those of its source and tag (see
//! `p2psig`), and keeps it with the message handle; the receive of that
//! message checks its arguments, truncation and the signature against
//! its own buffer. Without this the signatures of messages received this
//! way stayed behind, and later receives of the same source, tag and
//! size compared them.

use crate::args;
use crate::gate::gate;
use crate::origin::Origin;
use crate::p2p::{self, empty_status, give, receive_matched, recv_waits};
use crate::p2psig;
use crate::registry::{key, RequestInfo};
use crate::requests;
use crate::sig::Sig;
use crate::site::Here;
use crate::wait::block_on;
use parking_lot::Mutex;
use pnmpi_sdk::constants as mpi;
use pnmpi_sdk::raw::{self as x, routine};
use pnmpi_sdk::sys::ffi::{self, MPI_Comm, MPI_Datatype, MPI_Message, MPI_Request, MPI_Status};
use pnmpi_sdk::sys::Handle;
use std::collections::BTreeMap;
use std::ffi::{c_int, c_void};

/// A message a probe matched: its status, communicator and signature.
struct Matched {
    status: MPI_Status,
    comm: u64,
    sig: Option<Sig>,
}

// SAFETY: plain integers (the status, a communicator handle's bits, the
// signature's words); the mutex serializes every use.
unsafe impl Send for Matched {}

/// Matched messages not yet received, by message handle.
static MESSAGES: Mutex<BTreeMap<u64, Matched>> = Mutex::new(BTreeMap::new());

/// Keeps the message a probe on `comm` just matched (`status`), with its
/// signature, for its receive. A probe of `MPI_PROC_NULL` matches no
/// message.
fn matched(message: MPI_Message, status: &MPI_Status, comm: MPI_Comm) {
    if status.MPI_SOURCE == mpi::PROC_NULL() || key(message) == key(crate::consts::message_null()) {
        return;
    }
    let sig = p2psig::claim(status, comm);
    MESSAGES.lock().insert(
        key(message),
        Matched {
            status: *status,
            comm: comm.bits(),
            sig,
        },
    );
}

/// The probe's arguments.
fn probe_args(source: c_int, tag: c_int, comm: MPI_Comm) -> args::Checked {
    args::comm(comm)
        .and_then(|()| args::rank(source, comm, true))
        .and_then(|()| args::tag(tag, true))
}

/// The message a receive names, if a probe the checker saw matched it,
/// with the receive's arguments checked against it.
fn receiving(
    message: MPI_Message,
    buf: *const std::ffi::c_void,
    count: c_int,
    dt: pnmpi_sdk::sys::ffi::MPI_Datatype,
) -> Option<Result<Matched, args::Refusal>> {
    let m = MESSAGES.lock().remove(&key(message))?;
    let comm = MPI_Comm::from_bits(m.comm);
    Some(args::p2p(buf, count, dt, m.status.MPI_SOURCE, m.status.MPI_TAG, comm, true).map(|()| m))
}

/// `MPI_Mrecv` of `(buf, count, dt)`: checked against its matched
/// message if a probe the checker saw matched it, else passed on
/// (`call`).
pub fn mrecv(
    here: &Here,
    (buf, count, dt): (*mut c_void, c_int, MPI_Datatype),
    message: *mut MPI_Message,
    status: *mut MPI_Status,
    call: impl FnOnce() -> c_int,
) -> c_int {
    // SAFETY: the caller's message variable.
    match receiving(unsafe { *message }, buf, count, dt) {
        None => call(),
        Some(Err(r)) => r.report(here),
        Some(Ok(m)) => {
            let signature = p2psig::compare(m.sig, &m.status, count, dt);
            // SAFETY: the caller's message variable, which MPI sets to
            // MPI_MESSAGE_NULL.
            receive_matched(
                here,
                (buf, count, dt),
                unsafe { &mut *message },
                &m.status,
                signature,
                status,
            )
        }
    }
}

/// `MPI_Imrecv` of `(buf, count, dt)` (`call`): checked against its
/// matched message if a probe the checker saw matched it, and
/// registered.
pub fn imrecv(
    here: &Here,
    (buf, count, dt): (*mut c_void, c_int, MPI_Datatype),
    message: *mut MPI_Message,
    request: *mut MPI_Request,
    call: impl FnOnce() -> c_int,
) -> c_int {
    // SAFETY: the caller's message variable.
    let m = match receiving(unsafe { *message }, buf, count, dt) {
        None => return call(),
        Some(Err(r)) => return r.report(here),
        Some(Ok(m)) => m,
    };
    let mut bytes: c_int = 0;
    // SAFETY: the status the probe filled; a local out-parameter.
    unsafe { ffi::PMPI_Get_count(&m.status, mpi::BYTE(), &mut bytes) };
    if p2p::truncation(bytes as i64, count, dt).is_err() {
        // Received at once elsewhere, so that MPI does not end the job at
        // its completion: its request is complete already.
        // SAFETY: the caller's message variable.
        let rc = receive_matched(
            here,
            (buf, count, dt),
            unsafe { &mut *message },
            &m.status,
            Ok(()),
            mpi::STATUS_IGNORE(),
        );
        // SAFETY: the caller's request variable.
        unsafe { *request = mpi::REQUEST_NULL() };
        return rc;
    }
    requests::check_reuse(here, request);
    let rc = call();
    if rc != mpi::SUCCESS() {
        return rc;
    }
    let info = RequestInfo {
        origin: Origin::default(),
        persistent: false,
        active: true,
        recv: true,
        checksum: None,
        args: None,
        env: Some((m.status.MPI_SOURCE, m.status.MPI_TAG, m.comm)),
        coll: None,
        span: None,
    };
    requests::started(here, request, info);
    match p2psig::compare(m.sig, &m.status, count, dt) {
        Ok(()) => rc,
        Err(r) => r.report(here),
    }
}

pnmpi_sdk::wrap! {
    /// Checked, as an `MPI_Improbe` loop; the matched message's signature
    /// taken.
    fn MPI_Mprobe(source, tag, comm, message, status) {
        let here = Here::new(routine::MPI_Mprobe);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        if let Err(r) = probe_args(source, tag, comm) {
            return r.report(&here);
        }
        let mut own = empty_status();
        let rc = block_on(&here, || recv_waits(source, tag, comm), || {
            // SAFETY: the application's envelope and message variable; our status.
            crate::wait::flagged(|flag| unsafe { x::XMPI_Improbe(source, tag, comm, flag, message, &mut own) })
        });
        give(status, &own);
        if rc == mpi::SUCCESS() {
            // SAFETY: the caller's message variable, which MPI just set.
            matched(unsafe { *message }, &own, comm);
        }
        rc
    }

    /// Checked; a matched message's signature taken.
    fn MPI_Improbe(source, tag, comm, flag, message, status) {
        let here = Here::new(routine::MPI_Improbe);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        if let Err(r) = probe_args(source, tag, comm) {
            return r.report(&here);
        }
        // The application's status, which MPI leaves as it was if nothing
        // matched, else ours.
        let mut own = empty_status();
        let status = if status.is_null() || status == mpi::STATUS_IGNORE() { &raw mut own } else { status };
        // SAFETY: the application's envelope, flag and message variables;
        // its status or ours.
        let rc = unsafe { x::XMPI_Improbe(source, tag, comm, flag, message, status) };
        // SAFETY: the caller's flag and message variables, which MPI just
        // set, and the status it filled.
        if rc == mpi::SUCCESS() && unsafe { *flag } != 0 {
            // SAFETY: as above.
            matched(unsafe { *message }, unsafe { &*status }, comm);
        }
        rc
    }

    /// Checked against its matched message: truncation, type signature.
    fn MPI_Mrecv(buf, count, datatype, message, status) {
        let here = Here::new(routine::MPI_Mrecv);
        gate(&here).unwrap_or_else(|| mrecv(&here, (buf, count, datatype), message, status, || next!()))
    }

    /// Checked against its matched message (truncation, type signature)
    /// and registered.
    fn MPI_Imrecv(buf, count, datatype, message, request) {
        let here = Here::new(routine::MPI_Imrecv);
        gate(&here).unwrap_or_else(|| imrecv(&here, (buf, count, datatype), message, request, || next!()))
    }
}
