//! Message matching: per (source, destination, tag, communicator), the
//! sends not yet received and the receives not yet matched, in posting
//! order, which is MPI's non-overtaking rule.

use crate::input::ReqId;
use crate::model::Msg;
use crate::units::Ns;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// A matching key: world source, world destination, tag, communicator.
pub type Key = (u32, u32, i64, i64);

/// A send waiting for its receive.
#[derive(Clone, Copy, Debug)]
pub struct PendingSend {
    /// The sender's request.
    pub req: ReqId,
    /// The message.
    pub msg: Msg,
    /// When the send was posted.
    pub post: Ns,
    /// When the sender's overhead ended.
    pub free: Ns,
    /// For an eager message, when it arrived and how long it waited for
    /// network resources before its transfer.
    pub arrival: Option<(Ns, Ns)>,
}

/// A receive waiting for its send.
#[derive(Clone, Copy, Debug)]
pub struct PendingRecv {
    /// The receiver's request.
    pub req: ReqId,
    /// When it was posted.
    pub post: Ns,
}

#[derive(Default)]
struct Queues {
    sends: VecDeque<PendingSend>,
    recvs: VecDeque<PendingRecv>,
}

/// All unmatched sends and receives. Memory grows with messages in
/// flight, not with the trace.
#[derive(Default)]
pub struct Mailboxes {
    queues: FxHashMap<Key, Queues>,
    in_flight: usize,
}

impl Mailboxes {
    /// Send `s` on `key`: the oldest receive waiting for it, taken, or
    /// `None` and the send queued. One lookup for both.
    pub fn send(&mut self, key: Key, s: PendingSend) -> Option<PendingRecv> {
        let q = self.queues.entry(key).or_default();
        let r = q.recvs.pop_front();
        if r.is_some() {
            self.in_flight -= 1;
        } else {
            q.sends.push_back(s);
            self.in_flight += 1;
        }
        r
    }

    /// Receive `r` on `key`: the oldest send waiting for it, taken, or
    /// `None` and the receive queued. One lookup for both.
    pub fn recv(&mut self, key: Key, r: PendingRecv) -> Option<PendingSend> {
        let q = self.queues.entry(key).or_default();
        let s = q.sends.pop_front();
        if s.is_some() {
            self.in_flight -= 1;
        } else {
            q.recvs.push_back(r);
            self.in_flight += 1;
        }
        s
    }

    /// Unmatched sends and receives now.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }
}
