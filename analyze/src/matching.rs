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
use pnmpi_sim::input::{OpKind, ReqId};
use pnmpi_trace::routine::Coll;
use rustc_hash::FxHashMap;

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

/// The happens-before edges between actors.
pub struct Links {
    /// Messages, in no particular order.
    pub messages: Vec<Message>,
    /// Blocking collectives whose every member is in the trace.
    pub collectives: Vec<Collective>,
}

/// A send waiting for its receive on (source, destination, communicator).
struct Posted {
    tag: i64,
    at: OpRef,
    bytes: u64,
    synchronous: bool,
    taken: bool,
}

/// The sends of each (source, destination, communicator), in posting
/// order, and the first not yet taken.
#[derive(Default)]
struct Channel {
    sends: Vec<Posted>,
    first_free: usize,
}

impl Channel {
    /// The first untaken send with a tag `tag` accepts (negative: any).
    fn take(&mut self, tag: i64) -> Option<&Posted> {
        while self.sends.get(self.first_free).is_some_and(|s| s.taken) {
            self.first_free += 1;
        }
        let i = (self.first_free..self.sends.len())
            .find(|&i| !self.sends[i].taken && (tag < 0 || self.sends[i].tag == tag))?;
        self.sends[i].taken = true;
        Some(&self.sends[i])
    }
}

/// The call of each actor that completed each of its requests.
fn completions(run: &Run) -> FxHashMap<ReqId, OpRef> {
    let mut done = FxHashMap::default();
    for a in 0..run.ops.len() {
        for (at, op) in run.calls_of(a) {
            if let OpKind::Wait(list) = &op.kind {
                for c in list {
                    done.entry(c.req).or_insert(at);
                }
            }
        }
    }
    done
}

/// Matches the run's messages and collectives. A send is synchronous if
/// its routine is `MPI_Ssend`/`MPI_Issend`, or it carries more than
/// `eager` bytes.
pub fn link(run: &Run, eager: u64) -> Links {
    let done = completions(run);
    let finish = |req: Option<ReqId>, at: OpRef| match req {
        None => Some(at),
        Some(r) => done.get(&r).copied(),
    };
    let ssend: Vec<bool> = run.routines.iter().map(|r| r.contains("Ssend")).collect();
    let mut channels: FxHashMap<(u32, u32, i64), Channel> = FxHashMap::default();
    for a in 0..run.ops.len() {
        let me = run.actors[a].rank;
        for (at, op) in run.calls_of(a) {
            let (to, tag, comm, bytes) = match op.kind {
                OpKind::Send {
                    to, tag, comm, bytes, ..
                } => (to, tag, comm, bytes),
                OpKind::Sendrecv {
                    to,
                    stag,
                    sbytes,
                    comm,
                    ..
                } => (to, stag, comm, sbytes),
                _ => continue,
            };
            let synchronous = ssend.get(op.routine as usize) == Some(&true) || bytes > eager;
            channels.entry((me, to, comm)).or_default().sends.push(Posted {
                tag,
                at,
                bytes,
                synchronous,
                taken: false,
            });
        }
    }
    let mut messages = Vec::new();
    for a in 0..run.ops.len() {
        let me = run.actors[a].rank;
        for (at, op) in run.calls_of(a) {
            let (from, tag, comm, req) = match op.kind {
                OpKind::Recv {
                    from: Some(from),
                    tag,
                    comm,
                    req,
                    ..
                } => (from, tag, comm, req),
                OpKind::Sendrecv { from, rtag, comm, .. } => (from, rtag, comm, None),
                _ => continue,
            };
            let Some(s) = channels.get_mut(&(from, me, comm)).and_then(|c| c.take(tag)) else {
                continue;
            };
            let send_req = match &run.op(s.at).kind {
                OpKind::Send { req, .. } => *req,
                _ => None,
            };
            if let (Some(send_done), Some(recv_done)) = (finish(send_req, s.at), finish(req, at)) {
                messages.push(Message {
                    send: s.at,
                    send_done,
                    recv: at,
                    recv_done,
                    bytes: s.bytes,
                    synchronous: s.synchronous,
                });
            }
        }
    }
    Links {
        messages,
        collectives: collectives(run),
    }
}

/// The blocking collectives, grouped by (communicator, sequence number).
fn collectives(run: &Run) -> Vec<Collective> {
    let mut open: FxHashMap<(i64, u64), Collective> = FxHashMap::default();
    let mut out = Vec::new();
    let mut sizes: FxHashMap<(i64, u32), usize> = FxHashMap::default();
    for a in 0..run.ops.len() {
        let me = run.actors[a].rank;
        let mut seq: FxHashMap<i64, u64> = FxHashMap::default();
        for (at, op) in run.calls_of(a) {
            let OpKind::Coll {
                op: c,
                comm,
                root,
                req: None,
                ..
            } = op.kind
            else {
                continue;
            };
            let k = seq.entry(comm).or_insert(0);
            let key = (comm, *k);
            *k += 1;
            let size = *sizes
                .entry((comm, me))
                .or_insert_with(|| run.members(comm, me).map_or(0, |m| m.len()));
            if size < 2 {
                continue;
            }
            let inst = open.entry(key).or_insert_with(|| Collective {
                op: c,
                root: None,
                calls: Vec::with_capacity(size),
            });
            if root == Some(me) {
                inst.root = Some(at);
            }
            inst.calls.push(at);
            if inst.calls.len() == size {
                if let Some(done) = open.remove(&key) {
                    out.push(done);
                }
            }
        }
    }
    out
}
