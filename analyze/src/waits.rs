//! Wait states as Scalasca defines them: time a call spends blocked
//! because another rank was late.
//!
//! - **Late Sender**: a receive (or the wait completing it) entered
//!   before the matching send was posted; it waits from its entry until
//!   the send's entry.
//! - **Late Receiver**: a synchronous send (`MPI_Ssend`, or one above the
//!   eager threshold, which waits for a rendezvous) entered before the
//!   matching receive was posted.
//! - **Wait at N x N**: in `MPI_Allreduce`, `MPI_Allgather`,
//!   `MPI_Alltoall` and `MPI_Reduce_scatter`, each rank waits from its
//!   entry until the last member enters.
//! - **Wait at Barrier**: the same in `MPI_Barrier`.
//! - **Late Broadcast**: in `MPI_Bcast` and `MPI_Scatter`, a rank that
//!   enters before the root waits until the root enters.
//! - **Early Reduce**: in `MPI_Reduce` and `MPI_Gather`, a root that
//!   enters before every other member waits until the first enters.
//!
//! A wait never exceeds its call's duration. A call that waits for
//! several partners (an `MPI_Waitall` over receives, an `MPI_Sendrecv`)
//! gets one wait, its longest, so that no time is counted twice. The
//! cause is the call waited for: its rank, routine and entry.

use crate::load::{OpRef, Run};
use crate::matching::Links;
use pnmpi_sim::units::Ns;
use pnmpi_trace::routine::Coll;
use rustc_hash::FxHashMap;
use serde::Serialize;

/// A wait-state pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Pattern {
    /// A receive waits for its send.
    LateSender,
    /// A synchronous send waits for its receive.
    LateReceiver,
    /// An all-to-all collective waits for its last member.
    WaitNxN,
    /// A barrier waits for its last member.
    WaitBarrier,
    /// A one-to-all collective waits for its root.
    LateBroadcast,
    /// An all-to-one collective's root waits for its first member.
    EarlyReduce,
}

impl Pattern {
    /// Every pattern, in report order.
    pub const ALL: [Pattern; 6] = [
        Pattern::LateSender,
        Pattern::LateReceiver,
        Pattern::WaitNxN,
        Pattern::WaitBarrier,
        Pattern::LateBroadcast,
        Pattern::EarlyReduce,
    ];

    /// Scalasca's name.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::LateSender => "Late Sender",
            Pattern::LateReceiver => "Late Receiver",
            Pattern::WaitNxN => "Wait at N x N",
            Pattern::WaitBarrier => "Wait at Barrier",
            Pattern::LateBroadcast => "Late Broadcast",
            Pattern::EarlyReduce => "Early Reduce",
        }
    }

    /// The pattern of a collective's waits.
    fn of_collective(c: Coll) -> Option<Pattern> {
        Some(match c {
            Coll::Barrier => Pattern::WaitBarrier,
            Coll::Allreduce | Coll::Allgather | Coll::Alltoall | Coll::ReduceScatter => Pattern::WaitNxN,
            Coll::Bcast | Coll::Scatter => Pattern::LateBroadcast,
            Coll::Reduce | Coll::Gather => Pattern::EarlyReduce,
            Coll::Scan => return None,
        })
    }
}

/// One call's wait.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Wait {
    /// The waiting call.
    pub at: OpRef,
    /// Which pattern.
    pub pattern: Pattern,
    /// How long, ns.
    pub time: Ns,
    /// The call it waited for.
    pub cause: OpRef,
}

/// Every wait of the run, one per waiting call, ordered by call.
pub fn find(run: &Run, links: &Links) -> Vec<Wait> {
    let mut best: FxHashMap<OpRef, Wait> = FxHashMap::default();
    let mut offer = |at: OpRef, pattern, until: Ns, cause: OpRef| {
        let s = run.span(at);
        let time = until.min(s.end) - s.start;
        if time <= 0.0 {
            return;
        }
        let w = Wait {
            at,
            pattern,
            time,
            cause,
        };
        best.entry(at)
            .and_modify(|old| {
                if time > old.time {
                    *old = w;
                }
            })
            .or_insert(w);
    };
    for m in links.messages() {
        offer(m.recv_done, Pattern::LateSender, run.span(m.send).start, m.send);
        if m.synchronous {
            offer(m.send_done, Pattern::LateReceiver, run.span(m.recv).start, m.recv);
        }
    }
    for c in links.collectives {
        let Some(pattern) = Pattern::of_collective(c.op) else {
            continue;
        };
        let entry = |at: &OpRef| run.span(*at).start;
        match pattern {
            Pattern::LateBroadcast => {
                let Some(root) = c.root else { continue };
                for &m in c.calls.iter().filter(|&&m| m != root) {
                    offer(m, pattern, entry(&root), root);
                }
            }
            Pattern::EarlyReduce => {
                let Some(root) = c.root else { continue };
                let first = c
                    .calls
                    .iter()
                    .filter(|&&m| m != root)
                    .min_by(|a, b| entry(a).total_cmp(&entry(b)));
                if let Some(&first) = first {
                    offer(root, pattern, entry(&first), first);
                }
            }
            _ => {
                let Some(&last) = c.calls.iter().max_by(|a, b| entry(a).total_cmp(&entry(b))) else {
                    continue;
                };
                for &m in c.calls.iter().filter(|&&m| m != last) {
                    offer(m, pattern, entry(&last), last);
                }
            }
        }
    }
    let mut out: Vec<Wait> = best.into_values().collect();
    out.sort_unstable_by_key(|w| w.at);
    out
}
