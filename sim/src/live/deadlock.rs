//! A deadlock among rendezvous sends as vtime finds it (edge chasing:
//! Chandy, Misra and Haas's probes), the logic without MPI: a probe's
//! hops on the wire, what a waiting rank does with one, and the report,
//! in the words virtual ranks and the replay use. vtime sends and
//! receives the probes (`modules/vtime/src/deadlock.rs`).

use crate::kernel::p2p::DEPENDS_ON_BUFFERING;

/// The most hops a probe carries (a longer cycle is not reported).
pub const HOPS: usize = 64;

/// Words of one hop on the wire.
pub const WORDS: usize = 4;

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
    /// The hop on the wire.
    pub fn words(&self) -> [u64; WORDS] {
        [
            u64::from(self.rank) << 32 | u64::from(self.dst),
            self.bytes,
            self.seq,
            u64::from(self.synchronous),
        ]
    }

    /// The hop of `w`, [`WORDS`] words from [`Hop::words`].
    pub fn of(w: &[u64]) -> Hop {
        Hop {
            rank: (w[0] >> 32) as u32,
            dst: w[0] as u32,
            bytes: w[1],
            seq: w[2],
            synchronous: w[3] == 1,
        }
    }
}

/// What a waiting rank does with a probe.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
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

/// What a rank waiting as `me` does with a probe that went through
/// `hops`.
pub fn next(hops: &[Hop], me: Hop) -> Step {
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
/// words of virtual ranks and `pnmpi sim replay`; vtime says it as its
/// error (`pnmpi_sdk::say`), which names the module and the rank.
pub fn describe(hops: &[Hop]) -> String {
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
        "deadlock: rank(s) {} wait in sends above the eager threshold for receives never posted ({}): {why}",
        ranks.join(", "),
        sends.join(", ")
    )
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
        assert!(
            said.starts_with("deadlock: rank(s) 0, 1 wait in sends above the eager threshold"),
            "{said}"
        );
        assert!(said.contains("rank 0 to rank 1 (1048576 bytes), rank 1 to rank 0 (1048576 bytes)"));
        assert!(said.ends_with(DEPENDS_ON_BUFFERING));
        let s = Hop {
            synchronous: true,
            ..hop(1, 0, 1)
        };
        assert!(!describe(&[hop(0, 1, 1), s]).contains(DEPENDS_ON_BUFFERING));
    }
}
