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
use pnmpi_sim::kernel::p2p::DEPENDS_ON_BUFFERING;
use std::ffi::c_int;
use std::time::Duration;

/// Tag of the probes on the module's world duplicate.
const PROBE_TAG: c_int = 1;

/// How long a rank waits for an acknowledgement before it probes: long
/// beside a message's real time, short beside a user's patience.
pub const PROBE_AFTER: Duration = Duration::from_millis(500);

/// The most hops a probe carries (a longer cycle is not reported).
const HOPS: usize = 64;

/// Words of one hop on the wire.
const WORDS: usize = 4;

/// A rank waiting in a rendezvous send: it sent `bytes` to `dst` as its
/// send number `seq`, and waits for `dst` to receive it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hop {
    /// The sender (world rank).
    pub rank: u32,
    /// The receiver (world rank).
    pub dst: u32,
    /// The message's size.
    pub bytes: u64,
    /// The sender's number of the send (its acknowledgement names it).
    pub seq: u64,
    /// An `MPI_Ssend`: a rendezvous at any size, so no buffering would
    /// have let it return.
    pub synchronous: bool,
}

impl Hop {
    fn words(&self) -> [u64; WORDS] {
        [
            u64::from(self.rank) << 32 | u64::from(self.dst),
            self.bytes,
            self.seq,
            u64::from(self.synchronous),
        ]
    }

    fn of(w: &[u64]) -> Hop {
        Hop {
            rank: (w[0] >> 32) as u32,
            dst: w[0] as u32,
            bytes: w[1],
            seq: w[2],
            synchronous: w[3] == 1,
        }
    }
}

/// `me` has waited long: its probe goes to the rank it waits for.
pub fn start(me: Hop, comm: Comm) {
    send(&[me], comm);
}

fn send(hops: &[Hop], comm: Comm) {
    let Some(last) = hops.last() else { return };
    let words: Vec<u64> = hops.iter().flat_map(Hop::words).collect();
    // A few hundred bytes at most: eager in every MPI, so this returns.
    if let Err(e) = native::send(&words, last.dst as c_int, PROBE_TAG, comm) {
        eprintln!("pnmpi vtime: cannot pass on a deadlock probe ({e})");
    }
}

/// The probes that reached this rank while `me` waits: each is passed on
/// with `me`'s hop, or, come back round, reported (which ends the run).
pub fn handle(me: Hop, comm: Comm) {
    loop {
        let mut flag: c_int = 0;
        let mut status = crate::p2p::blank_status();
        // SAFETY: the module's own communicator; `flag` and `status` are
        // local out-parameters.
        let rc = unsafe { ffi::PMPI_Iprobe(constants::ANY_SOURCE(), PROBE_TAG, comm, &mut flag, &mut status) };
        if rc != constants::SUCCESS() || flag == 0 {
            return;
        }
        let mut words = [0u64; HOPS * WORDS];
        let Ok(r) = native::recv(&mut words, status.MPI_SOURCE, PROBE_TAG, comm) else {
            return;
        };
        let hops: Vec<Hop> = words[..r.len - r.len % WORDS].chunks(WORDS).map(Hop::of).collect();
        match next(&hops, me) {
            Step::Cycle => report(&hops),
            Step::Forward => send(&[&hops[..], &[me]].concat(), comm),
            Step::Drop => {}
        }
    }
}

/// What a rank waiting as `me` does with a probe that went through `hops`.
#[derive(Debug, PartialEq, Eq)]
enum Step {
    /// It came back to the rank that sent it, which still waits for the
    /// same send: every rank of the cycle is blocked.
    Cycle,
    /// Pass it on, with `me`.
    Forward,
    /// A stale probe (its sender's wait is over), one round a cycle this
    /// rank is on but did not start (its own probe tells that one), or
    /// one grown too long.
    Drop,
}

fn next(hops: &[Hop], me: Hop) -> Step {
    match hops.first() {
        Some(first) if first.rank == me.rank => {
            if *first == me {
                Step::Cycle
            } else {
                Step::Drop
            }
        }
        Some(_) if hops.iter().all(|h| h.rank != me.rank) && hops.len() < HOPS => Step::Forward,
        _ => Step::Drop,
    }
}

/// The report of the cycle `hops`: the ranks, each send, and whether the
/// program depends on MPI buffering (none of them an `MPI_Ssend`), in the
/// words of virtual ranks and `pnmpi sim replay`.
fn describe(hops: &[Hop]) -> String {
    let ranks: Vec<String> = hops.iter().map(|h| h.rank.to_string()).collect();
    let sends: Vec<String> = hops
        .iter()
        .map(|h| format!("rank {} to rank {} ({} bytes)", h.rank, h.dst, h.bytes))
        .collect();
    let why = if hops.iter().any(|h| h.synchronous) {
        "synchronous sends among them wait for their receives in every MPI".to_string()
    } else {
        DEPENDS_ON_BUFFERING.to_string()
    };
    format!(
        "pnmpi vtime: error: deadlock: rank(s) {} wait in sends above the eager threshold for receives never posted ({}): {why}",
        ranks.join(", "),
        sends.join(", ")
    )
}

fn report(hops: &[Hop]) -> ! {
    eprintln!("{}", describe(hops));
    // SAFETY: aborting the job; nothing runs after it.
    unsafe { ffi::PMPI_Abort(constants::COMM_WORLD(), 1) };
    std::process::exit(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hop(rank: u32, dst: u32, seq: u64) -> Hop {
        Hop {
            rank,
            dst,
            bytes: 1 << 20,
            seq,
            synchronous: false,
        }
    }

    #[test]
    fn a_hop_travels_as_words() {
        let h = Hop {
            synchronous: true,
            ..hop(70000, 3, 9)
        };
        assert_eq!(Hop::of(&h.words()), h);
    }

    #[test]
    fn a_probe_back_at_its_waiting_sender_is_a_cycle() {
        let (a, b, c) = (hop(0, 1, 4), hop(1, 2, 7), hop(2, 0, 1));
        assert_eq!(next(&[a], b), Step::Forward);
        assert_eq!(next(&[a, b], c), Step::Forward);
        assert_eq!(next(&[a, b, c], a), Step::Cycle);
        // The sender's send completed since: a later send is another wait.
        assert_eq!(next(&[a, b, c], hop(0, 1, 5)), Step::Drop);
        // A cycle this rank is on but did not start.
        assert_eq!(next(&[c, a, b], a), Step::Drop);
    }

    #[test]
    fn the_report_names_the_ranks_their_sends_and_the_buffering() {
        let said = describe(&[hop(0, 1, 1), hop(1, 0, 1)]);
        assert!(said.contains("rank(s) 0, 1 wait in sends above the eager threshold"), "{said}");
        assert!(said.contains("rank 0 to rank 1 (1048576 bytes), rank 1 to rank 0 (1048576 bytes)"));
        assert!(said.ends_with(DEPENDS_ON_BUFFERING));
        let s = Hop {
            synchronous: true,
            ..hop(1, 0, 1)
        };
        assert!(!describe(&[hop(0, 1, 1), s]).contains(DEPENDS_ON_BUFFERING));
    }
}
