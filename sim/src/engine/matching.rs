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
    /// Where its data is.
    pub data: Data,
}

/// Where a send's data is, as its receive finds it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Data {
    /// An eager message's: arrived at `.0`, after waiting `.1` for network
    /// resources before its transfer.
    Arrived(Ns, Ns),
    /// An eager message's, still moving as a flow over shared links: its
    /// transit (the engine's number for it), which knows when it lands.
    Moving(u64),
    /// A rendezvous's: it moves once the receive is posted.
    Waiting,
}

impl Data {
    /// An eager message's arrival and wait, as a record to another
    /// process carries it: `None` for a rendezvous. A parallel replay
    /// refuses models whose messages share links, so no data is moving.
    pub fn arrived(&self) -> Option<(Ns, Ns)> {
        match *self {
            Data::Arrived(at, wait) => Some((at, wait)),
            Data::Moving(_) | Data::Waiting => None,
        }
    }
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

/// "No node": the end of a list, an empty mailbox.
const NIL: u32 = u32::MAX;

/// A mailbox kept by key in [`Mailboxes::crowded`].
const CROWDED: u32 = u32::MAX - 1;

/// The most posts a mailbox keeps in a list: a master receiving from
/// thousands of workers, where a list made every match a scan of them
/// all, goes by key.
const LONG: usize = 48;

/// A post in the shared slab, and the next of its mailbox.
#[derive(Clone, Copy, Debug)]
struct Node {
    post: Post,
    next: u32,
}

/// Where [`Mailboxes::take`] found no match: the mailbox's length and
/// last node ([`NIL`] if empty, [`CROWDED`] if by key).
#[derive(Clone, Copy, Debug)]
struct Miss {
    len: usize,
    last: u32,
}

/// Values in places that are used again once freed: the posts of all
/// mailboxes, and the sends they name. (The `slab` crate tags every place
/// and checks the tag on each access: 1.2 % more instructions for a
/// replay of 1,024 ranks, whose speed bar has little room.)
struct Slots<T> {
    items: Vec<T>,
    free: Vec<u32>,
}

impl<T> Default for Slots<T> {
    fn default() -> Slots<T> {
        Slots {
            items: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T: Copy> Slots<T> {
    /// Stores `v`; its place.
    fn insert(&mut self, v: T) -> u32 {
        match self.free.pop() {
            Some(at) => {
                self.items[at as usize] = v;
                at
            }
            None => {
                self.items.push(v);
                (self.items.len() - 1) as u32
            }
        }
    }

    /// The value at `at`, whose place is free from now on.
    fn remove(&mut self, at: u32) -> T {
        self.free.push(at);
        self.items[at as usize]
    }
}

impl<T> std::ops::Index<u32> for Slots<T> {
    type Output = T;

    fn index(&self, at: u32) -> &T {
        &self.items[at as usize]
    }
}

impl<T> std::ops::IndexMut<u32> for Slots<T> {
    fn index_mut(&mut self, at: u32) -> &mut T {
        &mut self.items[at as usize]
    }
}

/// A crowded mailbox: per key, its posts in order.
type ByKey = FxHashMap<PostKey, VecDeque<Post>>;

/// All unmatched sends and receives, per receiving rank. A rank has a
/// handful at a time (a halo's half dozen), kept as a list in posting
/// order, searched in order; its nodes live in one slab that all ranks
/// share, so that a rank holds the 4 bytes of its first node's index
/// ([`NIL`] when empty, [`CROWDED`] when by key), not a list's capacity
/// (a million ranks kept 184 bytes each that way). A post is appended
/// after the last node, which the search that found no match for it has
/// just reached. A mailbox with more than [`LONG`] posts goes by key.
/// Posts match only on their exact key, so only the order among posts of
/// one key matters, and each key's queue keeps it. Memory grows with
/// messages in flight, not with the trace.
#[derive(Default)]
pub struct Mailboxes {
    /// The world rank of mailbox 0: a process of a parallel replay keeps
    /// its own ranks' mailboxes only.
    first: u32,
    /// Per mailbox (world rank minus `first`), its first node.
    by_rank: Vec<u32>,
    /// The posts of every list.
    nodes: Slots<Node>,
    /// The mailboxes kept by key.
    crowded: FxHashMap<u32, ByKey>,
    /// The unmatched sends, where their posts point.
    sends: Slots<PendingSend>,
    in_flight: usize,
}

impl Mailboxes {
    /// The mailboxes of world ranks `first` and on.
    pub fn new(first: u32) -> Mailboxes {
        Mailboxes {
            first,
            ..Mailboxes::default()
        }
    }

    /// The oldest post of `key` in `rank`'s mailbox, taken; or where a
    /// new post goes.
    #[inline]
    fn take(&mut self, rank: u32, key: PostKey) -> Result<Post, Miss> {
        let r = rank as usize;
        if r >= self.by_rank.len() {
            self.by_rank.resize(r + 1, NIL);
        }
        let head = self.by_rank[r];
        if head >= CROWDED {
            let miss = Miss { len: 0, last: head };
            return match head {
                CROWDED => self.take_by_key(rank, key).ok_or(miss),
                _ => Err(miss),
            };
        }
        let (mut prev, mut at, mut seen) = (NIL, head, 0);
        let next = loop {
            let node = &self.nodes[at];
            if node.post.key() == key {
                break node.next;
            }
            (prev, at, seen) = (at, node.next, seen + 1);
            if at == NIL {
                return Err(Miss {
                    len: seen,
                    last: prev,
                });
            }
        };
        if prev == NIL {
            self.by_rank[r] = next;
        } else {
            self.nodes[prev].next = next;
        }
        Ok(self.nodes.remove(at).post)
    }

    /// [`take`](Self::take) from a crowded mailbox: an emptied key goes,
    /// and an emptied mailbox is a list again.
    #[cold]
    fn take_by_key(&mut self, rank: u32, key: PostKey) -> Option<Post> {
        let by_key = self.crowded.get_mut(&rank)?;
        let queue = by_key.get_mut(&key)?;
        let p = queue.pop_front();
        if queue.is_empty() {
            by_key.remove(&key);
            if by_key.is_empty() {
                self.crowded.remove(&rank);
                self.by_rank[rank as usize] = NIL;
            }
        }
        p
    }

    /// Queues `p` in `rank`'s mailbox where [`take`](Self::take) found
    /// no match for it, the newest post of its key.
    #[inline]
    fn push(&mut self, rank: u32, p: Post, miss: Miss) {
        if miss.len >= LONG || miss.last == CROWDED {
            return self.push_by_key(rank, p);
        }
        let at = self.nodes.insert(Node { post: p, next: NIL });
        if miss.last == NIL {
            self.by_rank[rank as usize] = at;
        } else {
            self.nodes[miss.last].next = at;
        }
    }

    /// [`push`](Self::push) to a crowded mailbox: by key from now on.
    #[cold]
    fn push_by_key(&mut self, rank: u32, p: Post) {
        let head = self.by_rank[rank as usize];
        if head != CROWDED {
            let mut by_key = ByKey::default();
            let mut at = head;
            while at != NIL {
                let node = self.nodes.remove(at);
                by_key.entry(node.post.key()).or_default().push_back(node.post);
                at = node.next;
            }
            self.crowded.insert(rank, by_key);
            self.by_rank[rank as usize] = CROWDED;
        }
        if let Some(by_key) = self.crowded.get_mut(&rank) {
            by_key.entry(p.key()).or_default().push_back(p);
        }
    }

    /// Send `s` on `key`: the oldest receive waiting for it, taken, or
    /// `None` and the send queued.
    pub fn send(&mut self, key: Key, s: PendingSend) -> Option<PendingRecv> {
        let (src, dst, tag, comm) = key;
        let dst = dst.wrapping_sub(self.first);
        let miss = match self.take(dst, (src, tag, comm, false)) {
            Ok(p) => {
                self.in_flight -= 1;
                return Some(PendingRecv {
                    req: p.what,
                    post: p.post,
                });
            }
            Err(miss) => miss,
        };
        let at = self.sends.insert(s);
        let post = Post {
            src,
            is_send: true,
            tag,
            comm,
            what: u64::from(at),
            post: s.post,
        };
        self.push(dst, post, miss);
        self.in_flight += 1;
        None
    }

    /// Receive `r` on `key`: the oldest send waiting for it, taken, or
    /// `None` and the receive queued.
    pub fn recv(&mut self, key: Key, r: PendingRecv) -> Option<PendingSend> {
        let (src, dst, tag, comm) = key;
        let dst = dst.wrapping_sub(self.first);
        let miss = match self.take(dst, (src, tag, comm, true)) {
            Ok(p) => {
                self.in_flight -= 1;
                return Some(self.sends.remove(p.what as u32));
            }
            Err(miss) => miss,
        };
        let post = Post {
            src,
            is_send: false,
            tag,
            comm,
            what: r.req,
            post: r.post,
        };
        self.push(dst, post, miss);
        self.in_flight += 1;
        None
    }

    /// Takes receive `req` out of `rank`'s mailbox if it is still
    /// unmatched there (`MPI_Cancel`): whether it was. Cancels are rare: a
    /// scan of the mailbox.
    #[cold]
    pub fn cancel_recv(&mut self, rank: u32, req: ReqId) -> bool {
        let rank = rank.wrapping_sub(self.first);
        let r = rank as usize;
        let head = self.by_rank.get(r).copied().unwrap_or(NIL);
        let is_it = |p: &Post| !p.is_send && p.what == req;
        let found = if head == CROWDED {
            let Some(by_key) = self.crowded.get_mut(&rank) else {
                return false;
            };
            let hit = by_key
                .iter()
                .find_map(|(k, q)| q.iter().position(is_it).map(|i| (*k, i)));
            if let Some((k, i)) = hit {
                let q = by_key.get_mut(&k).expect("the key just found");
                q.remove(i);
                if q.is_empty() {
                    by_key.remove(&k);
                    if by_key.is_empty() {
                        self.crowded.remove(&rank);
                        self.by_rank[r] = NIL;
                    }
                }
            }
            hit.is_some()
        } else {
            let (mut prev, mut at) = (NIL, head);
            loop {
                if at == NIL {
                    break false;
                }
                let node = self.nodes[at];
                if is_it(&node.post) {
                    if prev == NIL {
                        self.by_rank[r] = node.next;
                    } else {
                        self.nodes[prev].next = node.next;
                    }
                    self.nodes.remove(at);
                    break true;
                }
                (prev, at) = (at, node.next);
            }
        };
        if found {
            self.in_flight -= 1;
        }
        found
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
            data: Data::Waiting,
        }
    }

    /// A cancelled receive leaves its mailbox, list or by key, and only
    /// it: the sends that come later match the receives around it.
    #[test]
    fn a_cancelled_receive_leaves_its_mailbox_and_only_it() {
        for crowd in [3u64, 60] {
            let mut mail = Mailboxes::default();
            for id in 0..crowd {
                assert!(mail
                    .recv((1, 5, 0, 0), PendingRecv { req: id, post: 0.0 })
                    .is_none());
            }
            assert!(mail.cancel_recv(5, 1));
            assert!(!mail.cancel_recv(5, 1), "cancelled twice");
            assert!(!mail.cancel_recv(4, 0), "another rank's mailbox");
            assert_eq!(mail.in_flight() as u64, crowd - 1);
            let matched: Vec<u64> = (0..crowd - 1)
                .map(|i| mail.send((1, 5, 0, 0), send(100 + i)).expect("a receive").req)
                .collect();
            let want: Vec<u64> = (0..crowd).filter(|&id| id != 1).collect();
            assert_eq!(matched, want);
            assert_eq!(mail.in_flight(), 0);
            // A send is no receive to cancel.
            assert!(mail.send((1, 5, 0, 0), send(7)).is_none());
            assert!(!mail.cancel_recv(5, 0));
        }
    }

    /// Posts matched in any order give the same pairs with lists and with
    /// queues by key, across the switch and back, while other mailboxes
    /// share the slab.
    #[test]
    fn a_crowded_mailbox_matches_as_a_short_one() {
        let mut mail = Mailboxes::default();
        // The model: per (receiver, source, tag), the unmatched sends and
        // receives in order.
        type Model = FxHashMap<(u32, u32, i64), (VecDeque<u64>, VecDeque<u64>)>;
        let mut model: Model = FxHashMap::default();
        let mut rng = fastrand::Rng::with_seed(9);
        let mut long = false;
        let post = |mail: &mut Mailboxes, model: &mut Model, key: Key, id: u64, is_send: bool| {
            let (sends, recvs) = model.entry((key.1, key.0, key.2)).or_default();
            if is_send {
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
            let waiting: usize = model.values().map(|(s, r)| s.len() + r.len()).sum();
            assert_eq!(mail.in_flight(), waiting);
        };
        for id in 0..30_000u64 {
            let x = rng.u64(..);
            // Rank 7: up to a few hundred unmatched at once, from 40
            // sources, 3 tags; ranks 3 and 11, from 2 sources, a few.
            let dst = [7, 7, 3, 11][(x >> 10) as usize % 4];
            let sources = if dst == 7 { 40 } else { 2 };
            let key: Key = ((x >> 20) as u32 % sources, dst, (x >> 30) as i64 % 3, 0);
            post(&mut mail, &mut model, key, id, (x >> 60).is_multiple_of(2));
            long |= mail.by_rank.get(7) == Some(&CROWDED);
        }
        assert!(long, "the mailbox never went by key");
        // Everything matched: rank 7 is a list again, and lists work on.
        let open: Vec<((u32, u32, i64), usize, bool)> = model
            .iter()
            .map(|(k, (s, r))| (*k, s.len().max(r.len()), s.is_empty()))
            .collect();
        let mut id = 1 << 40;
        for ((dst, src, tag), n, is_send) in open {
            for _ in 0..n {
                post(&mut mail, &mut model, (src, dst, tag, 0), id, is_send);
                id += 1;
            }
        }
        assert_eq!(mail.in_flight(), 0);
        assert_eq!(mail.by_rank[7], NIL);
        assert!(mail.crowded.is_empty());
        for i in 0..100 {
            post(&mut mail, &mut model, (i % 5, 7, 0, 0), id + i as u64, i % 3 == 0);
        }
    }
}
