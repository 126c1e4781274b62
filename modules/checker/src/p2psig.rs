//! Point-to-point type signatures: each checked send also sends, first,
//! its signature (32 bytes) to the same rank with the same tag on the
//! checker's duplicate of the communicator; each checked receive, once
//! its message is matched (its source and tag known), receives that
//! signature and compares it with its own. MPI keeps messages of one
//! source, tag and communicator in order on both communicators, so the
//! n-th signature is the n-th message's.
//!
//! A message sent by a routine the checker does not wrap has no
//! signature: its receive waits `4 x deadlock_timeout` for one, then
//! goes on unchecked.
//!
//! Nonblocking receives of one source and tag may complete out of order:
//! a receive takes, among the signatures of its source and tag in their
//! order, the first of as many bytes as it received, and keeps the ones
//! before it for the receives that complete later.
//!
//! A message matched by `MPI_Mprobe`/`MPI_Improbe` gets its signature at
//! the probe, in its order; its `MPI_Mrecv`/`MPI_Imrecv` compares it
//! (`matched`).
//!
//! Limit: two nonblocking receives of messages of equal sizes but other
//! type signatures, completed out of order, compare each other's.
//! Cost: one 32-byte message more per message.

use crate::args::{refuse, Checked};
use crate::config;
use crate::consts::Err;
use crate::registry;
use crate::registry::HandleHasher;
use crate::report::Class;
use crate::sig::Sig;
use crate::types;
use parking_lot::Mutex;
use pnmpi_sdk::constants as mpi;
use pnmpi_sdk::sys::ffi::{self, MPI_Comm, MPI_Datatype, MPI_Request, MPI_Status};
use pnmpi_sdk::sys::Handle;
use std::collections::{HashMap, VecDeque};
use std::ffi::c_int;
use std::hash::BuildHasherDefault;

/// Signature sends in flight, with their buffers, and the buffers of
/// completed ones, kept for the next sends (no allocation per message).
struct SignatureSends {
    sends: Vec<(MPI_Request, Box<[u64; 4]>)>,
    // Boxed: a buffer moves between the two lists while MPI may read
    // it, so it keeps its own heap address (no allocation once warm).
    #[allow(clippy::vec_box)]
    spare: Vec<Box<[u64; 4]>>,
}

// SAFETY: request handles name the same requests in every thread; the
// buffers are owned; the mutex serializes every use.
unsafe impl Send for SignatureSends {}

static PENDING: Mutex<SignatureSends> = Mutex::new(SignatureSends {
    sends: Vec::new(),
    spare: Vec::new(),
});

/// Signatures received ahead of their receive's completion, by duplicate
/// communicator, source and tag, in their order (looked up at every
/// checked receive: hashed as handles are).
type Early = HashMap<(u64, c_int, c_int), VecDeque<Sig>, BuildHasherDefault<HandleHasher>>;

static EARLY: Mutex<Option<Early>> = Mutex::new(None);

fn words(sig: Sig) -> [u64; 4] {
    [sig.hash, sig.len, sig.bytes, sig.loose as u64]
}

/// Sends the signature of a send of `count` elements of `dt` to `dest`
/// with `tag` on `comm` (before the send itself).
pub fn announce(count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) {
    if dest == mpi::PROC_NULL() {
        return;
    }
    let Some(shadow) = registry::shadow(comm) else {
        return;
    };
    let sig = types::signature(dt).times(count.max(0) as u64);
    let mut pending = PENDING.lock();
    let SignatureSends { sends, spare } = &mut *pending;
    // Completed sends give their buffers back first.
    let mut i = 0;
    while i < sends.len() {
        let mut done: c_int = 0;
        // SAFETY: a request of ours; its status is ignored.
        unsafe { ffi::PMPI_Test(&mut sends[i].0, &mut done, mpi::STATUS_IGNORE()) };
        if done != 0 {
            spare.push(sends.swap_remove(i).1);
        } else {
            i += 1;
        }
    }
    let mut buf = spare.pop().unwrap_or_default();
    *buf = words(sig);
    let mut req = mpi::REQUEST_NULL();
    // SAFETY: the boxed buffer moves into PENDING with its request and
    // stays at its heap address until the send completes.
    unsafe {
        ffi::PMPI_Isend(
            buf.as_ptr().cast(),
            4,
            mpi::UINT64_T(),
            dest,
            tag,
            shadow,
            &mut req,
        )
    };
    sends.push((req, buf));
}

/// Whether the signature from `source` with `tag` is there, or comes
/// within a bound: it was sent before its message, so it comes at once,
/// unless a routine the checker does not wrap sent the message (then the
/// receive is not compared, rather than waiting forever).
fn arrives(source: c_int, tag: c_int, shadow: MPI_Comm) -> bool {
    let there = || {
        // SAFETY: a local out-parameter; the status is ignored.
        crate::wait::flagged(|flag| unsafe {
            ffi::PMPI_Iprobe(source, tag, shadow, flag, mpi::STATUS_IGNORE())
        })
    };
    // Almost always there at once: no clock read then.
    if let Ok(true) = there() {
        return true;
    }
    let bound = std::time::Duration::from_secs_f64(4.0 * config::get().timeout);
    let start = std::time::Instant::now();
    loop {
        match there() {
            Ok(true) => return true,
            Err(_) => return false,
            Ok(false) if start.elapsed() > bound => return false,
            Ok(false) => std::thread::yield_now(),
        }
    }
}

/// Receives the signature of the message that a receive of `count`
/// elements of `dt` on `comm` just got (`status`), and checks that it
/// fits.
pub fn verify(status: &MPI_Status, comm: MPI_Comm, count: c_int, dt: MPI_Datatype) -> Checked {
    compare(claim(status, comm), status, count, dt)
}

/// Receives the signature of the message `status` describes, just
/// matched on `comm` (by a receive, or by `MPI_Mprobe` for a later
/// `MPI_Mrecv`): `None` if it has none (from `MPI_PROC_NULL`, on a
/// communicator the checker does not know, or sent by a routine it does
/// not wrap).
pub fn claim(status: &MPI_Status, comm: MPI_Comm) -> Option<Sig> {
    let (source, tag) = (status.MPI_SOURCE, status.MPI_TAG);
    if source == mpi::PROC_NULL() || source < 0 {
        return None;
    }
    let shadow = registry::shadow(comm)?;
    let mut got: c_int = 0;
    // SAFETY: the receive's status; a local out-parameter.
    unsafe { ffi::PMPI_Get_count(status, mpi::BYTE(), &mut got) };
    take(shadow, source, tag, got.max(0) as u64)
}

/// Checks that the message `status` describes, of signature `sent`
/// (`None`: not compared), fits a receive of `count` elements of `dt`.
pub fn compare(sent: Option<Sig>, status: &MPI_Status, count: c_int, dt: MPI_Datatype) -> Checked {
    let Some(sent) = sent else {
        return Ok(());
    };
    let unit = types::signature(dt);
    if sent.fits(unit, count.max(0) as u64) {
        return Ok(());
    }
    let (source, tag) = (status.MPI_SOURCE, status.MPI_TAG);
    let mut r = refuse(
        Err::Type,
        "type-mismatch",
        format!(
            "the message from rank {source} (tag {tag}) has another type signature ({} elements, {} bytes) than this receive ({count} elements of {} bytes each{})",
            sent.len,
            sent.bytes,
            unit.bytes,
            match types::name(dt) {
                n if n.is_empty() => String::new(),
                n => format!(", {n}"),
            }
        ),
    );
    r.class = Class::P2p;
    Err(r)
}

/// The first signature from `source` with `tag` on `shadow` of `bytes`
/// bytes: one kept from before, or received now (the ones of other sizes
/// before it are kept, for receives that complete later). `None` if it
/// does not come (a routine the checker does not wrap sent the message).
fn take(shadow: MPI_Comm, source: c_int, tag: c_int, bytes: u64) -> Option<Sig> {
    let at = (shadow.bits(), source, tag);
    loop {
        {
            let mut early = EARLY.lock();
            let queue = early.as_mut().and_then(|e| e.get_mut(&at));
            if let Some(queue) = queue {
                if let Some(i) = queue.iter().position(|s| s.bytes == bytes) {
                    return queue.remove(i);
                }
            }
        }
        if !arrives(source, tag, shadow) {
            return None;
        }
        let mut w = [0u64; 4];
        // SAFETY: room for the 4 words the sender sent.
        unsafe {
            ffi::PMPI_Recv(
                w.as_mut_ptr().cast(),
                4,
                mpi::UINT64_T(),
                source,
                tag,
                shadow,
                mpi::STATUS_IGNORE(),
            )
        };
        let sig = Sig {
            hash: w[0],
            len: w[1],
            bytes: w[2],
            loose: w[3] != 0,
        };
        if sig.bytes == bytes {
            return Some(sig);
        }
        EARLY
            .lock()
            .get_or_insert_with(Early::default)
            .entry(at)
            .or_default()
            .push_back(sig);
    }
}

/// At `MPI_Finalize`: gives up the signature sends still in flight.
pub fn stop() {
    let mut pending = PENDING.lock();
    pending.spare.clear();
    for (req, buf) in pending.sends.drain(..) {
        let mut req = req;
        // SAFETY: an active send request of ours: freed, MPI completes it;
        // its buffer must outlive it, so it is leaked.
        unsafe { ffi::PMPI_Request_free(&mut req) };
        std::mem::forget(buf);
    }
}
