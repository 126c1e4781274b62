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
    /// The oldest unmatched receive for `key`, taken.
    pub fn take_recv(&mut self, key: &Key) -> Option<PendingRecv> {
        let r = self.queues.get_mut(key)?.recvs.pop_front();
        self.in_flight -= usize::from(r.is_some());
        r
    }

    /// The oldest unmatched send for `key`, taken.
    pub fn take_send(&mut self, key: &Key) -> Option<PendingSend> {
        let s = self.queues.get_mut(key)?.sends.pop_front();
        self.in_flight -= usize::from(s.is_some());
        s
    }

    /// Queues a send nobody receives yet.
    pub fn push_send(&mut self, key: Key, s: PendingSend) {
        self.queues.entry(key).or_default().sends.push_back(s);
        self.in_flight += 1;
    }

    /// Queues a receive nobody sent to yet.
    pub fn push_recv(&mut self, key: Key, r: PendingRecv) {
        self.queues.entry(key).or_default().recvs.push_back(r);
        self.in_flight += 1;
    }

    /// Unmatched sends and receives now.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }
}
