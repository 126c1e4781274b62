//! Who waits for whom, as the trace is read: each send matched with its
//! receive, and the calls of all members of each collective instance;
//! each match is handed at once to what takes it (`Matched`: the wait
//! states and the machine fitted for the replays), and forgotten.
//!
//! MPI delivers a channel's messages in order, so a receive takes the
//! first unmatched send from its source on its communicator whose tag it
//! accepts. A channel (source, destination, communicator) is matched once
//! both its ranks are read (the trace is read actor by actor), so that
//! only the sides of the channels still open are held: at 65,536 ranks of
//! a stencil, the ranks between a rank and its farthest neighbour, not
//! the run. Collectives on one communicator happen in the same order on
//! every member: the k-th blocking collective a rank enters on a
//! communicator is instance k, complete when its last member enters.

use crate::calls::{OpRef, Span};
use pnmpi_sim::input::{Actor, Op, OpKind, OpSource, ReqId};
use pnmpi_sim::units::Ns;
use pnmpi_trace::fields::COMM_WORLD;
use pnmpi_trace::routine::Coll;
use rustc_hash::{FxHashMap, FxHashSet};

/// What takes the matches as they are made.
pub(crate) trait Matched {
    /// A matched message.
    fn message(&mut self, m: &MatchedMessage);
    /// A complete collective instance.
    fn collective(&mut self, c: &Collective);
}

/// One matched message: its calls, and when they ran.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MatchedMessage {
    /// The call that posted the send.
    pub send: OpRef,
    /// The send's entry.
    pub send_start: Ns,
    /// The call that completed the send (itself if blocking, else the wait).
    pub send_done: OpRef,
    /// When that call ran.
    pub send_done_span: Span,
    /// The call that posted the receive.
    pub recv: OpRef,
    /// The receive's entry.
    pub recv_start: Ns,
    /// The call that completed the receive.
    pub recv_done: OpRef,
    /// When that call ran.
    pub recv_done_span: Span,
    /// Payload.
    pub bytes: u64,
    /// Whether the sender waits for the receive (a synchronous send, or
    /// one above the eager threshold): only then can a receiver be late.
    pub synchronous: bool,
}

/// A member's call in a collective instance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MemberCall {
    /// The call.
    pub at: OpRef,
    /// When it ran.
    pub span: Span,
}

/// One blocking collective: its members' calls, in the order read.
#[derive(Clone, Debug, PartialEq)]
pub struct Collective {
    /// Which.
    pub op: Coll,
    /// The root's call, for rooted collectives.
    pub root: Option<MemberCall>,
    /// Every member's call, the root's included.
    pub calls: Vec<MemberCall>,
}

/// A channel: (source rank, destination rank, communicator).
type Key = (u32, u32, i64);

/// One side of a message as matching needs it, in posting order on its
/// channel.
struct Side {
    /// The call that posted it, and its entry.
    at: OpRef,
    start: Ns,
    tag: i32,
    /// The call that completed it: the posting call if blocking, else the
    /// wait ([`UNDONE`] if none did), and when it ran.
    done: OpRef,
    done_span: Span,
}

impl Side {
    /// Posted by call `at`, which ran over `span`; `req`: its request,
    /// if nonblocking.
    fn posted(at: OpRef, span: Span, tag: i64, req: Option<ReqId>) -> Side {
        Side {
            at,
            start: span.start,
            tag: tag32(tag),
            done: if req.is_some() { UNDONE } else { at },
            done_span: span,
        }
    }
}

/// A send.
struct SendSide {
    side: Side,
    /// `MPI_Ssend`/`MPI_Issend`.
    ssend: bool,
    bytes: u64,
}

/// A channel's sides not matched yet.
#[derive(Default)]
struct Channel {
    sends: Vec<SendSide>,
    /// The receives with a known source.
    recvs: Vec<Side>,
}

/// A tag as the tables keep it: an MPI tag is an `int` (negative: any).
fn tag32(tag: i64) -> i32 {
    i32::try_from(tag).unwrap_or(if tag < 0 { -1 } else { i32::MAX })
}

/// Not completed (no actor has 2^32 calls).
const UNDONE: OpRef = OpRef {
    actor: u32::MAX,
    op: u32::MAX,
};

/// A nonblocking send or receive of the actor being read, waiting for
/// the call that completes its request (requests do not outlive their
/// actor).
enum Pending {
    Send(Key, usize),
    Recv(Key, usize),
}

/// The matching state while the trace is read.
pub(crate) struct Matcher {
    eager: u64,
    /// Per routine: whether it is a synchronous send.
    ssend: Vec<bool>,
    channels: FxHashMap<Key, Channel>,
    /// Per rank being read, the channels it posted on.
    touched: FxHashMap<u32, FxHashSet<Key>>,
    /// Per rank, its actors not read to their end yet; a rank is read
    /// when it has none.
    unread: FxHashMap<u32, u32>,
    /// The actor's requests not completed yet.
    pending: FxHashMap<ReqId, Pending>,
    /// The actor being read, and its count of blocking collectives per communicator.
    actor: Option<u32>,
    seq: FxHashMap<i64, u64>,
    sizes: FxHashMap<(i64, u32), usize>,
    /// Collectives some member has not entered yet, by (communicator, sequence number).
    open: FxHashMap<(i64, u64), Collective>,
}

impl Matcher {
    /// The state for a run of `actors` whose routines are `routines`;
    /// a send of more than `eager` bytes waits for its receive.
    pub fn new(actors: &[Actor], routines: &[String], eager: u64) -> Matcher {
        let mut unread: FxHashMap<u32, u32> = FxHashMap::default();
        for a in actors {
            *unread.entry(a.rank).or_default() += 1;
        }
        Matcher {
            eager,
            ssend: routines.iter().map(|r| r.contains("Ssend")).collect(),
            channels: FxHashMap::default(),
            touched: FxHashMap::default(),
            unread,
            pending: FxHashMap::default(),
            actor: None,
            seq: FxHashMap::default(),
            sizes: FxHashMap::default(),
            open: FxHashMap::default(),
        }
    }

    /// Takes in call `at` of rank `me`, whose op is `op` and which ran
    /// over `span`; `src` knows the communicators' members. Each actor's
    /// calls come in program order, one actor after the other.
    pub fn see(
        &mut self,
        at: OpRef,
        me: u32,
        op: &Op,
        span: Span,
        src: &dyn OpSource,
        out: &mut impl Matched,
    ) {
        if self.actor != Some(at.actor) {
            self.actor = Some(at.actor);
            self.seq.clear();
            self.pending.clear();
        }
        let ssend = self.ssend.get(op.routine as usize) == Some(&true);
        match &op.kind {
            &OpKind::Send {
                to,
                tag,
                comm,
                bytes,
                req,
            } => self.send(at, span, (me, to, comm), tag, bytes, ssend, req),
            &OpKind::Sendrecv {
                to,
                stag,
                sbytes,
                from,
                rtag,
                comm,
                ..
            } => {
                self.send(at, span, (me, to, comm), stag, sbytes, ssend, None);
                self.recv(at, span, (from, me, comm), rtag, None);
            }
            &OpKind::Recv {
                from: Some(from),
                tag,
                comm,
                req,
                ..
            } => self.recv(at, span, (from, me, comm), tag, req),
            OpKind::Wait(list) => {
                for c in list {
                    let side = match self.pending.remove(&c.req) {
                        Some(Pending::Send(key, i)) => self
                            .channels
                            .get_mut(&key)
                            .and_then(|ch| ch.sends.get_mut(i))
                            .map(|s| &mut s.side),
                        Some(Pending::Recv(key, i)) => {
                            self.channels.get_mut(&key).and_then(|ch| ch.recvs.get_mut(i))
                        }
                        None => None,
                    };
                    if let Some(side) = side {
                        (side.done, side.done_span) = (at, span);
                    }
                }
            }
            &OpKind::Coll {
                op: c,
                comm,
                root,
                req: None,
                ..
            } => self.collective(MemberCall { at, span }, me, c, comm, root, src, out),
            _ => {}
        }
    }

    fn touch(&mut self, key: Key, me: u32) -> &mut Channel {
        self.touched.entry(me).or_default().insert(key);
        self.channels.entry(key).or_default()
    }

    #[allow(clippy::too_many_arguments)]
    fn send(
        &mut self,
        at: OpRef,
        span: Span,
        key: Key,
        tag: i64,
        bytes: u64,
        ssend: bool,
        req: Option<ReqId>,
    ) {
        let side = Side::posted(at, span, tag, req);
        let sends = &mut self.touch(key, key.0).sends;
        sends.push(SendSide { side, ssend, bytes });
        let pending = Pending::Send(key, sends.len() - 1);
        if let Some(r) = req {
            self.pending.insert(r, pending);
        }
    }

    fn recv(&mut self, at: OpRef, span: Span, key: Key, tag: i64, req: Option<ReqId>) {
        let recvs = &mut self.touch(key, key.1).recvs;
        recvs.push(Side::posted(at, span, tag, req));
        let pending = Pending::Recv(key, recvs.len() - 1);
        if let Some(r) = req {
            self.pending.insert(r, pending);
        }
    }

    /// Adds a member's call to its collective instance; a complete
    /// instance goes to the wait states.
    #[allow(clippy::too_many_arguments)]
    fn collective(
        &mut self,
        m: MemberCall,
        me: u32,
        c: Coll,
        comm: i64,
        root: Option<u32>,
        src: &dyn OpSource,
        out: &mut impl Matched,
    ) {
        let k = self.seq.entry(comm).or_insert(0);
        let key = (comm, *k);
        *k += 1;
        // The world's size is known; another communicator's members are
        // asked once per rank (a list of the world per rank would take
        // time in the square of the ranks).
        let size = if comm == COMM_WORLD {
            src.world_size() as usize
        } else {
            *self
                .sizes
                .entry((comm, me))
                .or_insert_with(|| src.members(comm, me).map_or(0, |m| m.len()))
        };
        if size < 2 {
            return;
        }
        let inst = self.open.entry(key).or_insert_with(|| Collective {
            op: c,
            root: None,
            calls: Vec::with_capacity(size),
        });
        if root == Some(me) {
            inst.root = Some(m);
        }
        inst.calls.push(m);
        if inst.calls.len() == size {
            if let Some(done) = self.open.remove(&key) {
                out.collective(&done);
            }
        }
    }

    /// An actor of rank `rank` was read to its end: once its rank is
    /// read, every channel it shares with a rank read before is matched.
    /// A channel with both sides is in both ranks' lists, so the later
    /// of them matches it; those left when the trace is read have one
    /// side only (sends never received, receives from ranks the trace
    /// lacks), no messages.
    pub fn actor_done(&mut self, rank: u32, out: &mut impl Matched) {
        let left = self.unread.entry(rank).or_insert(1);
        *left = left.saturating_sub(1);
        if *left > 0 {
            return;
        }
        let read = |r: u32, unread: &FxHashMap<u32, u32>| unread.get(&r).is_none_or(|&n| n == 0);
        for key in self.touched.remove(&rank).unwrap_or_default() {
            let other = if key.0 == rank { key.1 } else { key.0 };
            if read(other, &self.unread) {
                if let Some(channel) = self.channels.remove(&key) {
                    self.matched(channel, out);
                }
            }
        }
    }

    /// A channel's messages: each receive, in posting order, takes the
    /// first send not yet taken whose tag it accepts.
    fn matched(&self, channel: Channel, out: &mut impl Matched) {
        let sends = &channel.sends;
        let mut taken = vec![false; sends.len()];
        let mut first_free = 0;
        for r in &channel.recvs {
            while taken.get(first_free) == Some(&true) {
                first_free += 1;
            }
            let Some(i) =
                (first_free..sends.len()).find(|&i| !taken[i] && (r.tag < 0 || sends[i].side.tag == r.tag))
            else {
                continue;
            };
            taken[i] = true;
            let s = &sends[i];
            if s.side.done == UNDONE || r.done == UNDONE {
                continue;
            }
            let m = MatchedMessage {
                send: s.side.at,
                send_start: s.side.start,
                send_done: s.side.done,
                send_done_span: s.side.done_span,
                recv: r.at,
                recv_start: r.start,
                recv_done: r.done,
                recv_done_span: r.done_span,
                bytes: s.bytes,
                synchronous: s.ssend || s.bytes > self.eager,
            };
            out.message(&m);
        }
    }
}
