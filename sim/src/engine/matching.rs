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

/// An unmatched post in a receiver's mailbox: the rest of its key
/// (source, tag, communicator) and, for a receive, the receive; a send's
/// 72 bytes wait in [`Mailboxes::sends`] and the post names them. A
/// mailbox is scanned on every match, so its posts are kept small (40
/// bytes, was 96: at a million ranks each post scanned is a cache miss).
#[derive(Clone, Copy, Debug)]
struct Post {
    src: u32,
    is_send: bool,
    tag: i64,
    comm: i64,
    /// A receive's request, or a send's index in [`Mailboxes::sends`].
    what: u64,
    /// When it was posted.
    post: Ns,
}

impl Post {
    fn matches(&self, src: u32, tag: i64, comm: i64, is_send: bool) -> bool {
        self.src == src && self.tag == tag && self.comm == comm && self.is_send == is_send
    }
}

/// A receiver's unmatched sends and receives, in posting order.
type Mailbox = Vec<Post>;

/// All unmatched sends and receives, per receiving rank: a rank has a
/// handful at a time, so a short list beside the others of its rank beats
/// a run-wide hash table of queues. Memory grows with messages in flight,
/// not with the trace.
#[derive(Default)]
pub struct Mailboxes {
    by_rank: Vec<Mailbox>,
    /// The unmatched sends, where their posts point.
    sends: Vec<PendingSend>,
    /// Free places in `sends`.
    free: Vec<u32>,
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
        let (src, tag, comm) = (key.0, key.2, key.3);
        let mb = self.mailbox(key.1);
        if let Some(i) = mb.iter().position(|p| p.matches(src, tag, comm, false)) {
            let p = mb.remove(i);
            self.in_flight -= 1;
            return Some(PendingRecv {
                req: p.what,
                post: p.post,
            });
        }
        let at = match self.free.pop() {
            Some(at) => {
                self.sends[at as usize] = s;
                at
            }
            None => {
                self.sends.push(s);
                (self.sends.len() - 1) as u32
            }
        };
        self.by_rank[key.1 as usize].push(Post {
            src,
            is_send: true,
            tag,
            comm,
            what: u64::from(at),
            post: s.post,
        });
        self.in_flight += 1;
        None
    }

    /// Receive `r` on `key`: the oldest send waiting for it, taken, or
    /// `None` and the receive queued.
    pub fn recv(&mut self, key: Key, r: PendingRecv) -> Option<PendingSend> {
        let (src, tag, comm) = (key.0, key.2, key.3);
        let mb = self.mailbox(key.1);
        if let Some(i) = mb.iter().position(|p| p.matches(src, tag, comm, true)) {
            let at = mb.remove(i).what as u32;
            self.in_flight -= 1;
            self.free.push(at);
            return Some(self.sends[at as usize]);
        }
        mb.push(Post {
            src,
            is_send: false,
            tag,
            comm,
            what: r.req,
            post: r.post,
        });
        self.in_flight += 1;
        None
    }

    /// Unmatched sends and receives now.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }
}
