//! Matching sends to receives. MPI delivers the messages of one channel
//! (source, destination, communicator, tag) in order, so the k-th send on
//! a channel matches the k-th receive posted on it; each side can number
//! its own messages without looking at the other.
//!
//! Receives posted with a wildcard join their channel when they complete,
//! after the channel's specific receives and in completion order: exact
//! for programs that do not mix wildcard and specific receives on one
//! channel.
//!
//! The trace is streamed twice, stream by stream: the first pass numbers
//! the receives and notes where each completed ([`Matcher::receives`]),
//! the second numbers the sends and gives each its receive
//! ([`Matcher::sends`]), so messages come out in the order of their sends.
//! Memory is what matching needs, about 24 bytes per received message
//! (the receive's stream, call and time), not the events.

use crate::fields::{ANY_TAG, V};
use crate::routine::{classify, RoutineKind};
use crate::source::{for_each_event, StreamedTrace};
use crate::trace::{Event, ReqRef};
use crate::Result;
use std::collections::HashMap;

/// A call, as (stream index, event index).
pub type At = (usize, usize);

/// One matched message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message {
    /// Sending call (for persistent sends, the `MPI_Start`).
    pub send: At,
    /// Where the receive completed: the receive itself, or the wait or
    /// test that completed it.
    pub recv: At,
    /// Bytes sent.
    pub bytes: i64,
    /// The middle of the sending call, ns (where an arrow starts).
    pub send_mid: u64,
    /// The middle of the completing call, ns.
    pub recv_mid: u64,
}

type Channel = (i64, i64, i64, i64);

/// Where a receive completed; `stream == NONE` while it has not.
#[derive(Clone, Copy)]
struct End {
    stream: u32,
    event: u64,
    mid: u64,
}

const NONE: u32 = u32::MAX;

impl End {
    fn of(si: usize, ei: usize, e: &Event) -> End {
        End {
            stream: si as u32,
            event: ei as u64,
            mid: e.start + e.duration() / 2,
        }
    }
}

/// A completion's place in (stream, event, entry) order.
type CompletionOrder = (usize, usize, usize);

/// A completion read before its request was created (on a stream read
/// later): where, and the status (source, tag).
type Early = (CompletionOrder, End, Option<(i64, i64)>);

/// A receive request waiting for its completion: its channel slot, or the
/// communicator of a wildcard receive.
type Pending = std::result::Result<(Channel, usize), i64>;

/// A persistent request's fixed arguments (from its `MPI_*_init`), which
/// every `MPI_Start` of it reuses: readers of a merged trace keep them by
/// the request that the init call created.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Persistent {
    /// A send (`MPI_Send_init` ...), else a receive.
    pub send: bool,
    /// Peer, world rank.
    pub peer: i64,
    /// Tag.
    pub tag: i64,
    /// Communicator id.
    pub comm: i64,
    /// Bytes.
    pub bytes: i64,
}

/// The matching state of the two passes.
pub struct Matcher {
    kinds: Vec<RoutineKind>,
    init: Vec<bool>,
    persistent: HashMap<ReqRef, Persistent>,
    /// A start named a persistent request of a stream not read yet: the
    /// receives are numbered again once every init is known.
    missed: bool,
    /// The first pass was made again (once is enough: every init is known).
    again: bool,
    /// Per channel, its specific receives in posting order; after the
    /// first pass, followed by its wildcard receives.
    slots: HashMap<Channel, Vec<End>>,
    wild: HashMap<Channel, Vec<(CompletionOrder, End)>>,
    pending: HashMap<ReqRef, Pending>,
    /// Completions of requests of streams not read yet (another thread's).
    early: HashMap<ReqRef, Early>,
    sent: HashMap<Channel, usize>,
}

impl Matcher {
    /// A matcher for a trace of these routines.
    pub fn new(routines: &[String]) -> Matcher {
        Matcher {
            kinds: routines.iter().map(|n| classify(n)).collect(),
            init: routines.iter().map(|n| n.contains("_init")).collect(),
            persistent: HashMap::new(),
            missed: false,
            again: false,
            slots: HashMap::new(),
            wild: HashMap::new(),
            pending: HashMap::new(),
            early: HashMap::new(),
            sent: HashMap::new(),
        }
    }

    fn post(&mut self, ch: Channel, end: End) -> (Channel, usize) {
        let v = self.slots.entry(ch).or_default();
        v.push(end);
        (ch, v.len() - 1)
    }

    fn pend(&mut self, req: ReqRef, p: Pending, me: i64) {
        match self.early.remove(&req) {
            Some((key, end, status)) => self.complete(p, key, end, status, me),
            None => {
                self.pending.insert(req, p);
            }
        }
    }

    fn complete(&mut self, p: Pending, key: CompletionOrder, end: End, status: Option<(i64, i64)>, me: i64) {
        match (p, status) {
            (Ok((ch, k)), _) => {
                if let Some(slot) = self.slots.get_mut(&ch).and_then(|v| v.get_mut(k)) {
                    *slot = end;
                }
            }
            (Err(comm), Some((src, tag))) => self
                .wild
                .entry((src, me, comm, tag))
                .or_default()
                .push((key, end)),
            (Err(_), None) => {}
        }
    }

    /// First pass: event `ei` of stream `si` (of rank `rank`), streams
    /// read in order.
    pub fn receives(&mut self, si: usize, rank: u32, ei: usize, e: &Event) {
        let me = i64::from(rank);
        let r = e.routine as usize;
        let (kind, init) = (self.kinds.get(r).copied(), self.init.get(r) == Some(&true));
        let comm = e.get(V::Comm).unwrap_or(-1);
        let req = ReqRef {
            stream: si as u32,
            index: e.first_req,
        };
        let none = End {
            stream: NONE,
            event: 0,
            mid: 0,
        };
        match kind {
            Some(k @ (RoutineKind::Send { blocking: false } | RoutineKind::Recv { blocking: false }))
                if init =>
            {
                let p = Persistent {
                    send: matches!(k, RoutineKind::Send { .. }),
                    peer: e.get(V::Peer).unwrap_or(-1),
                    tag: e.get(V::Tag).unwrap_or(ANY_TAG),
                    comm,
                    bytes: e.get(V::Bytes).unwrap_or(0),
                };
                self.persistent.insert(req, p);
            }
            Some(RoutineKind::Recv { blocking }) if !init => {
                let (p, t) = (e.get(V::Peer).unwrap_or(-1), e.get(V::Tag).unwrap_or(ANY_TAG));
                if blocking {
                    self.post((p, me, comm, t), End::of(si, ei, e));
                } else if e.get(V::Wild).unwrap_or(0) != 0 {
                    self.pend(req, Err(comm), me);
                } else {
                    let slot = self.post((p, me, comm, t), none);
                    self.pend(req, Ok(slot), me);
                }
            }
            Some(RoutineKind::Sendrecv) => {
                let (p, t) = (e.get(V::Src).unwrap_or(-1), e.get(V::Rtag).unwrap_or(ANY_TAG));
                self.post((p, me, comm, t), End::of(si, ei, e));
            }
            Some(RoutineKind::Start) => {
                for (i, init) in e.init.iter().enumerate() {
                    let Some(r) = *init else { continue };
                    let Some(p) = self.persistent.get(&r).copied() else {
                        self.missed |= !self.again && r.stream as usize > si;
                        continue;
                    };
                    if !p.send {
                        let activation = ReqRef {
                            stream: si as u32,
                            index: e.first_req + i as u32,
                        };
                        let slot = self.post((p.peer, me, p.comm, p.tag), none);
                        self.pend(activation, Ok(slot), me);
                    }
                }
            }
            _ => {}
        }
        for (di, d) in e.done.iter().enumerate() {
            let Some(r) = d.req else { continue };
            let (key, end) = ((si, ei, di), End::of(si, ei, e));
            match self.pending.remove(&r) {
                Some(p) => self.complete(p, key, end, d.status, me),
                None if r.stream as usize > si => {
                    self.early.entry(r).or_insert((key, end, d.status));
                }
                None => {}
            }
        }
    }

    /// Whether the first pass must be made again: a start named a
    /// persistent request that a later stream created (another thread's),
    /// which the second reading knows.
    pub fn read_again(&mut self) -> bool {
        if !self.missed {
            return false;
        }
        self.missed = false;
        self.again = true;
        self.slots.clear();
        self.wild.clear();
        self.pending.clear();
        self.early.clear();
        true
    }

    /// Ends the first pass: wildcard receives take the slots after their
    /// channel's specific ones, in completion order.
    pub fn end_receives(&mut self) {
        for (ch, mut w) in std::mem::take(&mut self.wild) {
            w.sort_unstable_by_key(|&(key, _)| key);
            self.slots
                .entry(ch)
                .or_default()
                .extend(w.into_iter().map(|(_, end)| end));
        }
        self.pending.clear();
        self.early.clear();
    }

    fn send(&mut self, ch: Channel, at: At, bytes: i64, send_mid: u64, out: &mut Vec<Message>) {
        let k = self.sent.entry(ch).or_insert(0);
        let end = self.slots.get(&ch).and_then(|v| v.get(*k)).copied();
        *k += 1;
        if let Some(end) = end.filter(|end| end.stream != NONE) {
            out.push(Message {
                send: at,
                recv: (end.stream as usize, end.event as usize),
                bytes,
                send_mid,
                recv_mid: end.mid,
            });
        }
    }

    /// Second pass (after [`end_receives`](Self::end_receives)), streams
    /// read in order again: the messages sent by event `ei` of stream
    /// `si`, into `out` (cleared first), ordered by their receives.
    pub fn sends(&mut self, si: usize, rank: u32, ei: usize, e: &Event, out: &mut Vec<Message>) {
        out.clear();
        let me = i64::from(rank);
        let r = e.routine as usize;
        let (kind, init) = (self.kinds.get(r).copied(), self.init.get(r) == Some(&true));
        let comm = e.get(V::Comm).unwrap_or(-1);
        let mid = e.start + e.duration() / 2;
        let bytes = e.get(V::Bytes).unwrap_or(0);
        match kind {
            Some(RoutineKind::Send { .. }) if !init => {
                if let (Some(p), Some(t)) = (e.get(V::Peer), e.get(V::Tag)) {
                    self.send((me, p, comm, t), (si, ei), bytes, mid, out);
                }
            }
            Some(RoutineKind::Sendrecv) => {
                if let (Some(p), Some(t)) = (e.get(V::Peer), e.get(V::Tag)) {
                    self.send((me, p, comm, t), (si, ei), bytes, mid, out);
                }
            }
            Some(RoutineKind::Start) => {
                for init in &e.init {
                    let Some(p) = init.and_then(|r| self.persistent.get(&r)).copied() else {
                        continue;
                    };
                    if p.send {
                        self.send((me, p.peer, p.comm, p.tag), (si, ei), p.bytes, mid, out);
                    }
                }
                out.sort_by_key(|m| m.recv);
            }
            _ => {}
        }
    }
}

/// Every message whose send and receive are both in the trace, in the
/// order of their sends (then receives).
pub fn messages(src: &mut dyn StreamedTrace) -> Result<Vec<Message>> {
    let mut m = Matcher::new(src.routines());
    loop {
        for_each_event(src, &|_| {}, |_, si, (rank, _), ei, e| {
            m.receives(si, rank, ei, e);
            Ok(())
        })?;
        if !m.read_again() {
            break;
        }
    }
    m.end_receives();
    let (mut out, mut one) = (Vec::new(), Vec::new());
    for_each_event(src, &|_| {}, |_, si, (rank, _), ei, e| {
        m.sends(si, rank, ei, e, &mut one);
        out.append(&mut one);
        Ok(())
    })?;
    Ok(out)
}
