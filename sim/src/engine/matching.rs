//! Message matching: per (source, destination, tag, communicator), the
//! sends not yet received and the receives not yet matched, in posting
//! order, which is MPI's non-overtaking rule.

use crate::input::ReqId;
use crate::model::Msg;
use crate::units::Ns;

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

/// An unmatched post in a receiver's mailbox.
#[derive(Clone, Copy, Debug)]
enum Waiting {
    Send(PendingSend),
    Recv(PendingRecv),
}

/// A receiver's unmatched sends and receives, in posting order, with the
/// rest of their key (source, tag, communicator).
type Mailbox = Vec<((u32, i64, i64), Waiting)>;

/// All unmatched sends and receives, per receiving rank: a rank has a
/// handful at a time, so a short list beside the others of its rank beats
/// a run-wide hash table of queues. Memory grows with messages in flight,
/// not with the trace.
#[derive(Default)]
pub struct Mailboxes {
    by_rank: Vec<Mailbox>,
    in_flight: usize,
}

impl Mailboxes {
    fn mailbox(&mut self, rank: u32) -> &mut Mailbox {
        let r = rank as usize;
        if r >= self.by_rank.len() {
            self.by_rank.resize_with(r + 1, Vec::new);
        }
        &mut self.by_rank[r]
    }

    /// Send `s` on `key`: the oldest receive waiting for it, taken, or
    /// `None` and the send queued.
    pub fn send(&mut self, key: Key, s: PendingSend) -> Option<PendingRecv> {
        let rest = (key.0, key.2, key.3);
        let mb = self.mailbox(key.1);
        match mb
            .iter()
            .position(|(k, w)| *k == rest && matches!(w, Waiting::Recv(_)))
        {
            Some(i) => {
                let Waiting::Recv(r) = mb.remove(i).1 else {
                    unreachable!("found a receive")
                };
                self.in_flight -= 1;
                Some(r)
            }
            None => {
                mb.push((rest, Waiting::Send(s)));
                self.in_flight += 1;
                None
            }
        }
    }

    /// Receive `r` on `key`: the oldest send waiting for it, taken, or
    /// `None` and the receive queued.
    pub fn recv(&mut self, key: Key, r: PendingRecv) -> Option<PendingSend> {
        let rest = (key.0, key.2, key.3);
        let mb = self.mailbox(key.1);
        match mb
            .iter()
            .position(|(k, w)| *k == rest && matches!(w, Waiting::Send(_)))
        {
            Some(i) => {
                let Waiting::Send(s) = mb.remove(i).1 else {
                    unreachable!("found a send")
                };
                self.in_flight -= 1;
                Some(s)
            }
            None => {
                mb.push((rest, Waiting::Recv(r)));
                self.in_flight += 1;
                None
            }
        }
    }

    /// Unmatched sends and receives now.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }
}
