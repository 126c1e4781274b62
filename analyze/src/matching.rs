//! Who waits for whom: the messages (each send with its receive, and the
//! calls that posted and completed each side) and the collective
//! instances (the calls of all members of one collective), from the ops
//! of a [`Run`].
//!
//! MPI delivers a channel's messages in order, so a receive takes the
//! first unmatched send from its source on its communicator whose tag it
//! accepts. Collectives on one communicator happen in the same order on
//! every member: the k-th blocking collective a rank enters on a
//! communicator is instance k.

use crate::load::{OpRef, Run};
use pnmpi_sim::input::{Op, OpKind, OpSource, ReqId};
use pnmpi_trace::routine::Coll;
use rustc_hash::{FxHashMap, FxHashSet};

/// One matched message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message {
    /// The call that posted the send.
    pub send: OpRef,
    /// The call that completed the send (itself if blocking, else the wait).
    pub send_done: OpRef,
    /// The call that posted the receive.
    pub recv: OpRef,
    /// The call that completed the receive.
    pub recv_done: OpRef,
    /// Payload.
    pub bytes: u64,
    /// Whether the sender waits for the receive (a synchronous send, or
    /// one above the eager threshold): only then can a receiver be late.
    pub synchronous: bool,
}

/// One blocking collective: its members' calls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Collective {
    /// Which.
    pub op: Coll,
    /// The root's call, for rooted collectives.
    pub root: Option<OpRef>,
    /// Every member's call, the root's included.
    pub calls: Vec<OpRef>,
}

/// The happens-before edges between actors: the messages, matched as
/// they are asked for ([`Links::messages`]: a message takes 48 bytes, as
/// much as its two sides' records, and the analysis reads them twice at
/// most), and the collectives.
pub struct Links<'r> {
    run: &'r Run,
    eager: u64,
    /// Blocking collectives whose every member is in the trace.
    pub collectives: &'r [Collective],
}

/// A send, as matching needs it: on (source, destination, communicator),
/// in posting order.
struct SendSide {
    tag: i32,
    at: OpRef,
    bytes: u64,
    /// The call that completed it: itself if blocking, else the wait
    /// ([`UNDONE`] if none did).
    done: OpRef,
    /// `MPI_Ssend`/`MPI_Issend`.
    ssend: bool,
}

/// A receive with a known source, as matching needs it.
struct RecvSide {
    at: OpRef,
    from: u32,
    tag: i32,
    comm: i64,
    /// The call that completed it, as for [`SendSide::done`].
    done: OpRef,
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
/// the call that completes its request.
enum Pending {
    Send((u32, u32, i64), usize),
    Recv(usize),
}

/// What matching needs of a run's ops, gathered as the trace is read
/// ([`Sides::see`]), so that the ops need not stay in memory: the sends
/// per channel and the receives, each with the call that completed it
/// (found as the actor's calls are read: requests do not outlive their
/// actor), and the blocking collectives' members.
#[derive(Default)]
pub struct Sides {
    /// Per routine: whether it is a synchronous send.
    ssend: Vec<bool>,
    sends: FxHashMap<(u32, u32, i64), Vec<SendSide>>,
    /// The channels the actor being read sent on (trimmed when the next comes).
    sent_on: FxHashSet<(u32, u32, i64)>,
    /// Per actor read (one allocation each, trimmed when the next comes).
    recvs: Vec<Vec<RecvSide>>,
    /// The actor's requests not completed yet.
    pending: FxHashMap<ReqId, Pending>,
    collectives: Vec<Collective>,
    /// Collectives some member has not entered yet, by (communicator, sequence number).
    open: FxHashMap<(i64, u64), Collective>,
    /// The actor being read, and its count of blocking collectives per communicator.
    actor: Option<u32>,
    seq: FxHashMap<i64, u64>,
    sizes: FxHashMap<(i64, u32), usize>,
}

impl Sides {
    /// Tables for a run whose routines are `routines`.
    pub fn new(routines: &[String]) -> Sides {
        Sides {
            ssend: routines.iter().map(|r| r.contains("Ssend")).collect(),
            ..Sides::default()
        }
    }

    /// Takes in call `at` of rank `me`, whose op is `op`; `src` knows the
    /// communicators' members. Each actor's calls come in program order,
    /// one actor after the other.
    pub fn see(&mut self, at: OpRef, me: u32, op: &Op, src: &dyn OpSource) {
        if self.actor != Some(at.actor) {
            self.actor = Some(at.actor);
            self.seq.clear();
            self.pending.clear();
            if let Some(last) = self.recvs.last_mut() {
                last.shrink_to_fit();
            }
            for key in self.sent_on.drain() {
                if let Some(channel) = self.sends.get_mut(&key) {
                    channel.shrink_to_fit();
                }
            }
            self.recvs.push(Vec::new());
        }
        let ssend = self.ssend.get(op.routine as usize) == Some(&true);
        let Some(mine) = self.recvs.last_mut() else {
            return;
        };
        let (pending, sent_on) = (&mut self.pending, &mut self.sent_on);
        let mut send = |to: u32, tag: i64, comm: i64, bytes: u64, req: Option<ReqId>| {
            let key = (me, to, comm);
            sent_on.insert(key);
            let channel = self.sends.entry(key).or_default();
            if let Some(r) = req {
                pending.insert(r, Pending::Send(key, channel.len()));
            }
            channel.push(SendSide {
                tag: tag32(tag),
                at,
                bytes,
                done: if req.is_some() { UNDONE } else { at },
                ssend,
            });
        };
        match &op.kind {
            &OpKind::Send {
                to,
                tag,
                comm,
                bytes,
                req,
            } => send(to, tag, comm, bytes, req),
            &OpKind::Sendrecv {
                to,
                stag,
                sbytes,
                from,
                rtag,
                comm,
                ..
            } => {
                send(to, stag, comm, sbytes, None);
                mine.push(RecvSide {
                    at,
                    from,
                    tag: tag32(rtag),
                    comm,
                    done: at,
                });
            }
            &OpKind::Recv {
                from: Some(from),
                tag,
                comm,
                req,
                ..
            } => {
                if let Some(r) = req {
                    self.pending.insert(r, Pending::Recv(mine.len()));
                }
                mine.push(RecvSide {
                    at,
                    from,
                    tag: tag32(tag),
                    comm,
                    done: if req.is_some() { UNDONE } else { at },
                });
            }
            OpKind::Wait(list) => {
                for c in list {
                    match self.pending.remove(&c.req) {
                        Some(Pending::Send(key, i)) => {
                            if let Some(s) = self.sends.get_mut(&key).and_then(|ch| ch.get_mut(i)) {
                                s.done = at;
                            }
                        }
                        Some(Pending::Recv(i)) => mine[i].done = at,
                        None => {}
                    }
                }
            }
            &OpKind::Coll {
                op: c,
                comm,
                root,
                req: None,
                ..
            } => self.collective(at, me, c, comm, root, src),
            _ => {}
        }
    }

    /// Adds a member's call to its collective instance: the k-th blocking
    /// collective a rank enters on a communicator is instance k.
    fn collective(&mut self, at: OpRef, me: u32, c: Coll, comm: i64, root: Option<u32>, src: &dyn OpSource) {
        let k = self.seq.entry(comm).or_insert(0);
        let key = (comm, *k);
        *k += 1;
        let size = *self
            .sizes
            .entry((comm, me))
            .or_insert_with(|| src.members(comm, me).map_or(0, |m| m.len()));
        if size < 2 {
            return;
        }
        let inst = self.open.entry(key).or_insert_with(|| Collective {
            op: c,
            root: None,
            calls: Vec::with_capacity(size),
        });
        if root == Some(me) {
            inst.root = Some(at);
        }
        inst.calls.push(at);
        if inst.calls.len() == size {
            if let Some(done) = self.open.remove(&key) {
                self.collectives.push(done);
            }
        }
    }
}

/// The sends of one channel taken so far, and the first not yet taken.
#[derive(Default)]
struct Taken {
    taken: Vec<bool>,
    first_free: usize,
}

impl Taken {
    /// The first untaken send of `sends` with a tag `tag` accepts
    /// (negative: any).
    fn take<'s>(&mut self, sends: &'s [SendSide], tag: i32) -> Option<&'s SendSide> {
        if self.taken.is_empty() {
            self.taken = vec![false; sends.len()];
        }
        while self.taken.get(self.first_free) == Some(&true) {
            self.first_free += 1;
        }
        let i =
            (self.first_free..sends.len()).find(|&i| !self.taken[i] && (tag < 0 || sends[i].tag == tag))?;
        self.taken[i] = true;
        Some(&sends[i])
    }
}

/// The run's messages and collectives. A send is synchronous if its
/// routine is `MPI_Ssend`/`MPI_Issend`, or it carries more than `eager`
/// bytes.
pub fn link(run: &Run, eager: u64) -> Links<'_> {
    Links {
        run,
        eager,
        collectives: &run.sides.collectives,
    }
}

impl Links<'_> {
    /// The matched messages, in the receivers' order: a receive takes
    /// the first send not yet taken on its channel whose tag it accepts.
    pub fn messages(&self) -> impl Iterator<Item = Message> + '_ {
        let sides = &self.run.sides;
        let mut taken: FxHashMap<(u32, u32, i64), Taken> = FxHashMap::default();
        sides.recvs.iter().flatten().filter_map(move |r| {
            let key = (r.from, self.run.rank(r.at.actor), r.comm);
            let sends = sides.sends.get(&key)?;
            let s = taken.entry(key).or_default().take(sends, r.tag)?;
            (s.done != UNDONE && r.done != UNDONE).then_some(Message {
                send: s.at,
                send_done: s.done,
                recv: r.at,
                recv_done: r.done,
                bytes: s.bytes,
                synchronous: s.ssend || s.bytes > self.eager,
            })
        })
    }
}
