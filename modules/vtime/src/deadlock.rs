//! A deadlock among rendezvous sends, found by edge chasing (Chandy,
//! Misra and Haas's probes).
//!
//! A send above the eager threshold completes once its receiver has
//! received it (the receiver's acknowledgement, [`crate::p2p`]). A
//! program that only runs because MPI buffers such sends (two ranks that
//! both `MPI_Send` 1 MiB to each other before they receive) waits for
//! ever: virtual ranks and `pnmpi sim replay`, which see every rank, say
//! so; a rank under vtime sees only itself. So a rank that has waited
//! [`PROBE_AFTER`] for an acknowledgement sends a *probe* to the rank it
//! waits for, naming itself and its send (a [`Hop`]). A rank that gets a
//! probe while it waits for an acknowledgement itself adds its own hop
//! and passes it on to the rank it waits for. A probe that comes back to
//! the rank that sent it, which still waits for the same send, went
//! round a cycle of ranks each blocked in a send whose receiver waits in
//! a send too: none of them can post its receive, so none will ever
//! return. That rank reports the cycle, as the other modes do, and
//! aborts the run. A rank that is not waiting reads no probe, so a
//! program that makes progress is never reported.

use pnmpi_mpi_sys::ffi;
use pnmpi_sdk::{constants, native, Comm};
pub use pnmpi_sim::live::deadlock::Hop;
use pnmpi_sim::live::deadlock::{describe, next, Step, HOPS, WORDS};
use std::ffi::c_int;
use std::time::Duration;

/// Tag of the probes on the module's world duplicate.
const PROBE_TAG: c_int = 1;

/// How long a rank waits for an acknowledgement before it probes: long
/// beside a message's real time, short beside a user's patience.
pub const PROBE_AFTER: Duration = Duration::from_millis(500);

/// `me` has waited long: its probe goes to the rank it waits for.
pub fn start(me: Hop, comm: Comm) {
    send(&[me], comm);
}

fn send(hops: &[Hop], comm: Comm) {
    let Some(last) = hops.last() else { return };
    let words: Vec<u64> = hops.iter().flat_map(Hop::words).collect();
    // A few hundred bytes at most: eager in every MPI, so this returns.
    if let Err(e) = native::send(&words, last.dst as c_int, PROBE_TAG, comm) {
        pnmpi_sdk::say::warn("vtime", format_args!("cannot pass on a deadlock probe ({e})"));
    }
}

/// The probes that reached this rank while `me` waits: each is passed on
/// with `me`'s hop, or, come back round, reported (which ends the run).
pub fn handle(me: Hop, comm: Comm) {
    loop {
        let mut flag: c_int = 0;
        let mut status = crate::state::blank_status();
        // SAFETY: the module's own communicator; `flag` and `status` are
        // local out-parameters.
        let rc =
            unsafe { ffi::PMPI_Iprobe(constants::ANY_SOURCE(), PROBE_TAG, comm, &mut flag, &mut status) };
        if rc != constants::SUCCESS() || flag == 0 {
            return;
        }
        let mut words = [0u64; HOPS * WORDS];
        let Ok(r) = native::recv(&mut words, status.MPI_SOURCE, PROBE_TAG, comm) else {
            return;
        };
        let hops: Vec<Hop> = words[..r.len - r.len % WORDS]
            .chunks(WORDS)
            .map(Hop::of)
            .collect();
        match next(&hops, me) {
            Step::Cycle => report(&hops),
            Step::Forward => send(&[&hops[..], &[me]].concat(), comm),
            Step::Drop => {}
        }
    }
}

fn report(hops: &[Hop]) -> ! {
    // MPI runs (a probe came in): the job ends.
    pnmpi_sdk::say::fatal("vtime", describe(hops))
}
