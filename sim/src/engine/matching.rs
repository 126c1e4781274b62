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
    fn key(&self) -> PostKey {
        (self.src, self.tag, self.comm, self.is_send)
    }
}

/// The rest of a post's key, and whether it is a send: posts match when
/// these agree but for the kind.
type PostKey = (u32, i64, i64, bool);

/// A receiver's unmatched sends and receives: a short list in posting
/// order, searched in order, while it has few (a halo's half dozen); by
/// key once it has more than [`LONG`] (a master receiving from thousands
/// of workers, where a list made every match a scan of them all). Posts
/// match only on their exact key, so only the order among posts of one key
/// matters, and each key's queue keeps it.
enum Mailbox {
    Short(Vec<Post>),
    Long(Box<FxHashMap<PostKey, VecDeque<Post>>>),
}

/// The most posts a mailbox keeps in a short list.
const LONG: usize = 48;

impl Default for Mailbox {
    fn default() -> Mailbox {
        Mailbox::Short(Vec::new())
    }
}

impl Mailbox {
    /// The oldest post of `key`, taken.
    #[inline]
    fn take(&mut self, key: PostKey) -> Option<Post> {
        match self {
            Mailbox::Short(list) => {
                let i = list.iter().position(|p| p.key() == key)?;
                Some(list.remove(i))
            }
            Mailbox::Long(_) => self.take_by_key(key),
        }
    }

    /// [`take`](Self::take) from a crowded mailbox: an emptied key goes,
    /// and an emptied mailbox is a short list again.
    #[cold]
    fn take_by_key(&mut self, key: PostKey) -> Option<Post> {
        let Mailbox::Long(by_key) = self else {
            return None;
        };
        let queue = by_key.get_mut(&key)?;
        let p = queue.pop_front();
        if queue.is_empty() {
            by_key.remove(&key);
            if by_key.is_empty() {
                *self = Mailbox::default();
            }
        }
        p
    }

    /// Queues `p`, the newest post of its key.
    #[inline]
    fn push(&mut self, p: Post) {
        match self {
            Mailbox::Short(list) if list.len() < LONG => list.push(p),
            _ => self.push_by_key(p),
        }
    }

    /// [`push`](Self::push) to a crowded mailbox: by key from now on.
    #[cold]
    fn push_by_key(&mut self, p: Post) {
        if let Mailbox::Short(list) = self {
            let mut by_key: FxHashMap<PostKey, VecDeque<Post>> = FxHashMap::default();
            for q in list.drain(..) {
                by_key.entry(q.key()).or_default().push_back(q);
            }
            *self = Mailbox::Long(Box::new(by_key));
        }
        if let Mailbox::Long(by_key) = self {
            by_key.entry(p.key()).or_default().push_back(p);
        }
    }
}

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
            self.by_rank.resize_with(r + 1, Mailbox::default);
        }
        &mut self.by_rank[r]
    }

    /// Send `s` on `key`: the oldest receive waiting for it, taken, or
    /// `None` and the send queued.
    pub fn send(&mut self, key: Key, s: PendingSend) -> Option<PendingRecv> {
        let (src, tag, comm) = (key.0, key.2, key.3);
        if let Some(p) = self.mailbox(key.1).take((src, tag, comm, false)) {
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
        if let Some(p) = mb.take((src, tag, comm, true)) {
            let at = p.what as u32;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn send(req: ReqId) -> PendingSend {
        PendingSend {
            req,
            msg: Msg {
                src: 0,
                dst: 0,
                src_node: 0,
                dst_node: 0,
                bytes: req,
            },
            post: req as f64,
            free: 0.0,
            arrival: None,
        }
    }

    /// Posts matched in any order give the same pairs with short lists
    /// and with queues by key, across the switch and back.
    #[test]
    fn a_crowded_mailbox_matches_as_a_short_one() {
        let mut mail = Mailboxes::default();
        // The model: per key, the unmatched sends and receives in order.
        let mut model: FxHashMap<(u32, i64), (VecDeque<u64>, VecDeque<u64>)> = FxHashMap::default();
        let mut x = 9u64;
        let mut long = false;
        for id in 0..30_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Up to a few hundred unmatched at once, from 40 sources, 3 tags.
            let (src, tag) = ((x >> 20) as u32 % 40, (x >> 30) as i64 % 3);
            let key: Key = (src, 7, tag, 0);
            let (sends, recvs) = model.entry((src, tag)).or_default();
            if (x >> 60).is_multiple_of(2) {
                let got = mail.send(key, send(id)).map(|r| r.req);
                assert_eq!(got, recvs.pop_front(), "send {id}");
                if got.is_none() {
                    sends.push_back(id);
                }
            } else {
                let got = mail.recv(key, PendingRecv { req: id, post: 0.0 }).map(|s| s.req);
                assert_eq!(got, sends.pop_front(), "receive {id}");
                if got.is_none() {
                    recvs.push_back(id);
                }
            }
            long |= matches!(mail.by_rank[7], Mailbox::Long(_));
            let waiting: usize = model.values().map(|(s, r)| s.len() + r.len()).sum();
            assert_eq!(mail.in_flight(), waiting);
        }
        assert!(long, "the mailbox never went by key");
    }
}
