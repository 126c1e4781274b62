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
//! The waits are offered as the trace is read, each message and
//! collective instance once matched ([`crate::matching`]). A wait never
//! exceeds its call's duration. A call that waits for
//! several partners (an `MPI_Waitall` over receives, an `MPI_Sendrecv`)
//! gets one wait, its longest, so that no time is counted twice. The
//! cause is the call waited for: its rank, routine and entry.

use crate::calls::{OpRef, Span};
use crate::matching::{Collective, MatchedMessage, MemberCall};
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

/// Which of two equally long waits of a call is kept: the one offered
/// by the earlier receive (a Late Sender before a Late Receiver of the
/// same message), as if the messages were taken in the receivers' order,
/// whatever order the channels are matched in.
type Precedence = (OpRef, bool);

/// The longest wait offered to each call so far.
#[derive(Default)]
pub(crate) struct Offers {
    best: FxHashMap<OpRef, (Wait, Precedence)>,
}

impl Offers {
    /// Call `at`, which ran over `span`, waited under `pattern` until
    /// `until` (capped at its end) for call `cause`.
    fn offer(&mut self, at: OpRef, span: Span, pattern: Pattern, until: Ns, cause: OpRef, order: Precedence) {
        let time = until.min(span.end) - span.start;
        if time <= 0.0 {
            return;
        }
        let w = Wait {
            at,
            pattern,
            time,
            cause,
        };
        self.best
            .entry(at)
            .and_modify(|old| {
                if time > old.0.time || (time == old.0.time && order < old.1) {
                    *old = (w, order);
                }
            })
            .or_insert((w, order));
    }

    /// A matched message's waits: the receive's for a late send, and the
    /// send's for a late receive when the send is synchronous.
    pub fn message(&mut self, m: &MatchedMessage) {
        self.offer(
            m.recv_done,
            m.recv_done_span,
            Pattern::LateSender,
            m.send_start,
            m.send,
            (m.recv, false),
        );
        if m.synchronous {
            self.offer(
                m.send_done,
                m.send_done_span,
                Pattern::LateReceiver,
                m.recv_start,
                m.recv,
                (m.recv, true),
            );
        }
    }

    /// A complete collective instance's waits.
    pub fn collective(&mut self, c: &Collective) {
        let Some(pattern) = Pattern::of_collective(c.op) else {
            return;
        };
        let entry = |m: &MemberCall| m.span.start;
        let mut offer = |m: &MemberCall, until: &MemberCall| {
            self.offer(m.at, m.span, pattern, until.span.start, until.at, (m.at, false));
        };
        match pattern {
            Pattern::LateBroadcast => {
                let Some(root) = c.root else { return };
                for m in c.calls.iter().filter(|m| m.at != root.at) {
                    offer(m, &root);
                }
            }
            Pattern::EarlyReduce => {
                let Some(root) = c.root else { return };
                let first = c
                    .calls
                    .iter()
                    .filter(|m| m.at != root.at)
                    .min_by(|a, b| entry(a).total_cmp(&entry(b)));
                if let Some(first) = first {
                    offer(&root, first);
                }
            }
            _ => {
                let Some(last) = c.calls.iter().max_by(|a, b| entry(a).total_cmp(&entry(b))) else {
                    return;
                };
                for m in c.calls.iter().filter(|m| m.at != last.at) {
                    offer(m, last);
                }
            }
        }
    }

    /// Every wait, one per waiting call, ordered by call.
    pub fn finish(self) -> Vec<Wait> {
        let mut out: Vec<Wait> = self.best.into_values().map(|(w, _)| w).collect();
        out.sort_unstable_by_key(|w| w.at);
        out
    }
}

/// The wait of call `at`, if it waited.
pub fn of(waits: &[Wait], at: OpRef) -> Option<&Wait> {
    waits.binary_search_by_key(&at, |w| w.at).ok().map(|i| &waits[i])
}
