//! The deadlock report: what each actor that can never go on waits for,
//! and which sends wait only because MPI does not buffer them.

use super::*;
use crate::input::RmaAct;

/// What an actor is blocked on, for deadlock reports.
#[derive(Clone, Debug)]
enum Blocked {
    Send {
        to: u32,
        tag: i64,
        comm: i64,
    },
    Recv {
        from: Option<u32>,
        tag: i64,
        comm: i64,
    },
    Wait(usize),
    Coll {
        op: Coll,
        comm: i64,
    },
    /// A one-sided call of window `win`: a fence, start or wait.
    Epoch {
        win: u32,
        what: &'static str,
    },
}

impl Engine<'_, '_> {
    /// What actor `a` is blocked on, from the op of its open call (kept in
    /// its state while it runs), for deadlock reports: not kept per actor,
    /// since only a deadlock asks.
    fn blocked_on(&self, a: usize) -> Option<Blocked> {
        if !self.actors[a].call.is_open() {
            return None;
        }
        match self.actors[a].op.kind {
            OpKind::Send {
                to,
                tag,
                comm,
                req: None,
                ..
            } => Some(Blocked::Send { to, tag, comm }),
            OpKind::Recv {
                from,
                tag,
                comm,
                req: None,
                ..
            } => Some(Blocked::Recv { from, tag, comm }),
            OpKind::Sendrecv { from, rtag, comm, .. } => Some(Blocked::Recv {
                from: Some(from),
                tag: rtag,
                comm,
            }),
            OpKind::Wait(ref done) => Some(Blocked::Wait(done.len())),
            OpKind::Coll { op, comm, .. } => Some(Blocked::Coll { op, comm }),
            OpKind::Rma { win, ref act } => Some(Blocked::Epoch {
                win,
                what: match act {
                    RmaAct::Fence => "MPI_Win_fence, for members of the window that never enter it",
                    RmaAct::Start(_) => "MPI_Win_start, for an MPI_Win_post of a target that never comes",
                    RmaAct::Wait => "MPI_Win_wait, for an MPI_Win_complete of an origin that never comes",
                    RmaAct::Lock(_) => "MPI_Win_lock, for the unlock of a holder before it that never comes",
                    _ => "a one-sided call",
                },
            }),
            _ => None,
        }
    }

    pub(super) fn deadlock_report(&self, stuck: &[usize]) -> String {
        let mut lines = Vec::new();
        for &a in stuck.iter().take(32) {
            let st = &self.actors[a];
            let who = format!(
                "rank {} (thread {})",
                self.stats.actors[a].rank, self.stats.actors[a].thread
            );
            let what = match self.blocked_on(a) {
                Some(Blocked::Send { to, tag, comm }) => {
                    format!("waits in a send to rank {to} (tag {tag}, communicator {comm}) for its receive")
                }
                Some(Blocked::Recv { from, tag, comm }) => format!(
                    "waits in a receive from {} (tag {tag}, communicator {comm}) for its send",
                    from.map_or("any source".to_string(), |f| format!("rank {f}"))
                ),
                Some(Blocked::Wait(n)) => format!("waits for {n} request(s) whose partners never posted"),
                Some(Blocked::Coll { op, comm }) => {
                    format!("waits in {op:?} on communicator {comm} for members that never enter it")
                }
                Some(Blocked::Epoch { win, what }) => format!("waits in {what} (window {win})"),
                None => "is blocked".to_string(),
            };
            lines.push(format!("{who} at {:.3} us {what}", st.clock / 1e3));
        }
        if stuck.len() > 32 {
            lines.push(format!("... and {} more", stuck.len() - 32));
        }
        // An eager send never blocks: a send that does is a rendezvous.
        let held: Vec<String> = stuck
            .iter()
            .filter(|&&a| matches!(self.blocked_on(a), Some(Blocked::Send { .. })))
            .map(|&a| self.stats.actors[a].rank.to_string())
            .collect();
        if !held.is_empty() {
            lines.push(format!(
                "rank(s) {} wait in sends above the eager threshold for receives never posted: {}",
                held.join(", "),
                p2p::DEPENDS_ON_BUFFERING
            ));
        }
        lines.join("\n")
    }
}
