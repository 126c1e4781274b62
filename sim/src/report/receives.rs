//! Every message's completion at its receiver, for `pnmpi sim replay
//! --receives`: the replay's answer per request, beside the ends per
//! rank, so that the order in which a rank's receives complete can be
//! read and compared with what vtime or virtual ranks gave the program.

use crate::engine::{CallSpan, Observer};
use crate::input::Actor;
use crate::units::Ns;
use serde::Serialize;

/// One message, as its receive completed.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Received {
    /// World ranks of the sender and the receiver.
    pub src: u32,
    pub dst: u32,
    /// Payload.
    pub bytes: u64,
    /// When its send was posted, s.
    pub sent_s: f64,
    /// When its receive completed, s.
    pub received_s: f64,
}

/// Collects [`Received`] as the replay goes, by completion time in the
/// end.
pub struct Receives {
    /// Each actor's world rank.
    ranks: Vec<u32>,
    list: Vec<Received>,
}

impl Receives {
    /// For a replay of `actors`.
    pub fn new(actors: &[Actor]) -> Receives {
        Receives {
            ranks: actors.iter().map(|a| a.rank).collect(),
            list: Vec::new(),
        }
    }

    /// The messages, by completion time (then sender, receiver, size).
    pub fn finish(mut self) -> Vec<Received> {
        self.list.sort_by(|a, b| {
            a.received_s
                .total_cmp(&b.received_s)
                .then(a.dst.cmp(&b.dst))
                .then(a.src.cmp(&b.src))
                .then(a.bytes.cmp(&b.bytes))
        });
        self.list
    }
}

impl Observer for Receives {
    fn call(&mut self, _: usize, _: &CallSpan) {}

    fn message(&mut self, src: usize, dst: usize, sent: Ns, received: Ns, bytes: u64, _: Ns) {
        let rank = |a: usize| self.ranks.get(a).copied().unwrap_or(0);
        self.list.push(Received {
            src: rank(src),
            dst: rank(dst),
            bytes,
            sent_s: sent / 1e9,
            received_s: received / 1e9,
        });
    }
}

/// Several observers at once (a timeline, the receives, the time per
/// call site), each told of every call and message in turn.
pub struct Observers<'a>(pub Vec<&'a mut dyn Observer>);

impl Observer for Observers<'_> {
    fn call(&mut self, actor: usize, call: &CallSpan) {
        for o in &mut self.0 {
            o.call(actor, call);
        }
    }

    fn message(&mut self, src: usize, dst: usize, sent: Ns, received: Ns, bytes: u64, resource_wait: Ns) {
        for o in &mut self.0 {
            o.message(src, dst, sent, received, bytes, resource_wait);
        }
    }
}
