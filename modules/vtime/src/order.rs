//! `MPI_Waitany` in virtual-time order. The real call returns the request
//! that completes first in real time, but the rank's clock only moves
//! forward: a receive whose data really lands first but completes late
//! in virtual time would hold every later completion behind it. So the
//! module picks the request that completes first in *virtual* time, and
//! the real call is made for that one alone.
//!
//! A receive's virtual completion is known once its timestamp is read:
//! when MPI has completed it, or earlier, when its timestamp has come and
//! it is the first receive of its source and tag still without one (MPI
//! matches those in posting order, and their timestamps come in that
//! order too). A send's is known at once if eager. The pick waits until
//! every request of the call is known; a request whose timestamp has
//! not come within [`PATIENCE`] of a real completion (its sender may wait
//! for this rank) is taken as later, and the known ones are chosen from.
//! Calls with a rendezvous send, a collective, or a request the module
//! does not time go to MPI as they are, and so does every call when the
//! replay module is below (its record says which request completes) or
//! threads call MPI at once (`MPI_THREAD_MULTIPLE`).

use crate::p2p;
use crate::state::{self, Req};
use pnmpi_mpi_sys::ffi::{self, MPI_Request};
use pnmpi_mpi_sys::Handle;
use pnmpi_sdk::constants;
use pnmpi_sim::units::Ns;
use std::ffi::c_int;
use std::time::{Duration, Instant};

/// How long a pick waits for unknown timestamps once a request of the
/// call has really completed.
const PATIENCE: Duration = Duration::from_millis(20);

/// What the module knows of one request of the call.
enum Known {
    /// Nothing to wait for (`MPI_REQUEST_NULL`, an inactive persistent request).
    Inactive,
    /// It completes at this virtual time.
    At(Ns),
    /// A receive whose timestamp has not been read.
    Unknown,
}

/// The index of the request among `handles` that completes first in
/// virtual time (the first of equals), or `None` when the real call is
/// to choose.
pub fn first(handles: &[u64]) -> Option<usize> {
    // A replay module below forces (or records) which request completes:
    // the recorded order wins, and narrowing the call would hide from it
    // the request its record names.
    // Under `MPI_THREAD_MULTIPLE` the timestamps are read in the rank's
    // turns (`turns`), which looking ahead here would bypass.
    if state::multiple() || state::with(|st| st.recorded.is_some()).unwrap_or(false) {
        return None;
    }
    let mut waited: Option<Instant> = None;
    loop {
        p2p::settle_receives();
        take_stamps(handles);
        let known = known(handles)?;
        let best = known
            .iter()
            .enumerate()
            .filter_map(|(i, k)| match k {
                Known::At(t) => Some((i, *t)),
                _ => None,
            })
            .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        if !known.iter().any(|k| matches!(k, Known::Unknown)) {
            return best.map(|b| b.0);
        }
        if waited.is_none() && any_really_done(handles) {
            waited = Some(Instant::now());
        }
        if waited.is_some_and(|w| w.elapsed() >= PATIENCE) {
            return best.map(|b| b.0);
        }
        std::thread::yield_now();
    }
}

/// What is known of each request, or `None` if the call has one the
/// module cannot time ahead (see the module doc).
fn known(handles: &[u64]) -> Option<Vec<Known>> {
    let null = constants::REQUEST_NULL().bits();
    state::with(|st| {
        let mut receives = 0;
        let known: Option<Vec<Known>> = handles
            .iter()
            .map(|h| match st.reqs.get(h) {
                _ if *h == null => Some(Known::Inactive),
                Some(Req::Recv { active: false, .. }) | Some(Req::Send { active: false, .. }) => {
                    Some(Known::Inactive)
                }
                Some(Req::Recv { early, .. }) => {
                    receives += 1;
                    Some(early.map_or(Known::Unknown, |e| Known::At(e.0)))
                }
                Some(Req::Send { posted, .. }) if posted.ack.is_none() => Some(Known::At(posted.free)),
                _ => None,
            })
            .collect();
        known.filter(|_| receives > 0)
    })
    .flatten()
}

/// Reads the timestamps that have come for receives of `handles` that
/// are the first of their source and tag without one.
fn take_stamps(handles: &[u64]) {
    let firsts: Vec<(u64, u64, u64, c_int, c_int, Ns)> = state::with(|st| {
        if !st.messages.is_empty() {
            // A matched message (`MPI_Mprobe`) took its place in a stream.
            return Vec::new();
        }
        handles
            .iter()
            .filter_map(|h| match *st.reqs.get(h)? {
                Req::Recv {
                    comm,
                    posted,
                    active: true,
                    cancelled: false,
                    early: None,
                    from: Some((source, tag)),
                    seq,
                    ..
                } => {
                    let before = st.reqs.values().any(|r| {
                        matches!(*r, Req::Recv { comm: c, active: true, early: None, from, seq: s, .. }
                            if c == comm && s < seq && from.is_none_or(|f| f == (source, tag)))
                    });
                    let shadow = st.comms.get(&comm)?.shadow;
                    (!before).then_some((*h, comm, shadow, source, tag, posted))
                }
                _ => None,
            })
            .collect()
    })
    .unwrap_or_default();
    for (handle, comm, shadow, source, tag, posted) in firsts {
        let mut flag: c_int = 0;
        let mut status = state::blank_status();
        // SAFETY: the module's shadow communicator; `flag` and `status`
        // are local out-parameters.
        let rc = unsafe {
            ffi::PMPI_Iprobe(
                source,
                tag,
                pnmpi_sdk::Comm::from_bits(shadow),
                &mut flag,
                &mut status,
            )
        };
        if rc == constants::SUCCESS() && flag != 0 {
            if let Some(t) = p2p::stamp_of(comm, source, tag, posted) {
                p2p::keep_early(handle, t);
            }
        }
    }
}

/// Whether MPI has completed a request of `handles` (without freeing it).
fn any_really_done(handles: &[u64]) -> bool {
    let null = constants::REQUEST_NULL().bits();
    handles.iter().filter(|&&h| h != null).any(|&h| {
        let mut flag: c_int = 0;
        let mut status = state::blank_status();
        // SAFETY: an active request of the application's; MPI only
        // reports its state and frees nothing.
        let rc = unsafe { ffi::PMPI_Request_get_status(MPI_Request::from_bits(h), &mut flag, &mut status) };
        rc == constants::SUCCESS() && flag != 0
    })
}
