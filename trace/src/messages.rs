//! Matching sends to receives. MPI delivers the messages of one channel
//! (source, destination, communicator, tag) in order, so the k-th send on
//! a channel matches the k-th receive posted on it; each side can number
//! its own messages without looking at the other.
//!
//! Receives posted with a wildcard join their channel when they complete,
//! in completion order: exact for programs that do not mix wildcard and
//! specific receives on one channel.

use crate::fields::{ANY_TAG, V};
use crate::routine::{classify, Kind};
use crate::trace::{Event, ReqRef, Trace};
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
}

type Channel = (i64, i64, i64, i64);

#[derive(Default)]
struct Matcher {
    sends: HashMap<(Channel, u64), (At, i64)>,
    recvs: HashMap<(Channel, u64), At>,
    sent: HashMap<Channel, u64>,
    posted: HashMap<Channel, u64>,
}

impl Matcher {
    fn send(&mut self, ch: Channel, at: At, bytes: i64) {
        let k = self.sent.entry(ch).or_insert(0);
        self.sends.insert((ch, *k), (at, bytes));
        *k += 1;
    }

    fn post(&mut self, ch: Channel) -> (Channel, u64) {
        let k = self.posted.entry(ch).or_insert(0);
        *k += 1;
        (ch, *k - 1)
    }
}

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

/// Every message whose send and receive are both in the trace.
pub fn messages(trace: &Trace) -> Vec<Message> {
    let kinds: Vec<Kind> = trace.routines.iter().map(|n| classify(n)).collect();
    let mut persistent: HashMap<ReqRef, Persistent> = HashMap::new();
    for (si, s) in trace.streams.iter().enumerate() {
        for e in &s.events {
            if let Kind::Send { blocking: false } | Kind::Recv { blocking: false } = kinds[e.routine as usize]
            {
                if trace.routine(e).contains("_init") {
                    let p = Persistent {
                        send: matches!(kinds[e.routine as usize], Kind::Send { .. }),
                        peer: e.get(V::Peer).unwrap_or(-1),
                        tag: e.get(V::Tag).unwrap_or(ANY_TAG),
                        comm: e.get(V::Comm).unwrap_or(-1),
                        bytes: e.get(V::Bytes).unwrap_or(0),
                    };
                    persistent.insert(
                        ReqRef {
                            stream: si as u32,
                            index: e.first_req,
                        },
                        p,
                    );
                }
            }
        }
    }
    let mut m = Matcher::default();
    // Receive requests waiting for their completion: the channel slot, or
    // the communicator of a wildcard receive.
    let mut pending: HashMap<ReqRef, Result<(Channel, u64), i64>> = HashMap::new();
    for (si, s) in trace.streams.iter().enumerate() {
        let me = i64::from(s.rank);
        for (ei, e) in s.events.iter().enumerate() {
            let at = (si, ei);
            let comm = e.get(V::Comm).unwrap_or(-1);
            let req = ReqRef {
                stream: si as u32,
                index: e.first_req,
            };
            let name = trace.routine(e);
            match kinds[e.routine as usize] {
                Kind::Send { .. } if !name.contains("_init") => {
                    if let (Some(p), Some(t)) = (e.get(V::Peer), e.get(V::Tag)) {
                        m.send((me, p, comm, t), at, e.get(V::Bytes).unwrap_or(0));
                    }
                }
                Kind::Recv { blocking } if !name.contains("_init") => {
                    let (p, t) = (e.get(V::Peer).unwrap_or(-1), e.get(V::Tag).unwrap_or(ANY_TAG));
                    let wild = e.get(V::Wild).unwrap_or(0) != 0;
                    if blocking {
                        let slot = m.post((p, me, comm, t));
                        m.recvs.insert(slot, at);
                    } else if wild {
                        pending.insert(req, Err(comm));
                    } else {
                        pending.insert(req, Ok(m.post((p, me, comm, t))));
                    }
                }
                Kind::Sendrecv => {
                    if let (Some(p), Some(t)) = (e.get(V::Peer), e.get(V::Tag)) {
                        m.send((me, p, comm, t), at, e.get(V::Bytes).unwrap_or(0));
                    }
                    let (p, t) = (e.get(V::Src).unwrap_or(-1), e.get(V::Rtag).unwrap_or(ANY_TAG));
                    let slot = m.post((p, me, comm, t));
                    m.recvs.insert(slot, at);
                }
                Kind::Start => start(&mut m, &mut pending, &persistent, e, at, me),
                _ => {}
            }
        }
    }
    for (si, s) in trace.streams.iter().enumerate() {
        let me = i64::from(s.rank);
        for (ei, e) in s.events.iter().enumerate() {
            for d in &e.done {
                let Some(slot) = d.req.and_then(|r| pending.remove(&r)) else {
                    continue;
                };
                let slot = match (slot, d.status) {
                    (Ok(slot), _) => slot,
                    (Err(comm), Some((src, tag))) => m.post((src, me, comm, tag)),
                    (Err(_), None) => continue,
                };
                m.recvs.insert(slot, (si, ei));
            }
        }
    }
    let mut out: Vec<Message> = m
        .sends
        .iter()
        .filter_map(|(slot, &(send, bytes))| m.recvs.get(slot).map(|&recv| Message { send, recv, bytes }))
        .collect();
    out.sort_by_key(|msg| (msg.send, msg.recv));
    out
}

fn start(
    m: &mut Matcher,
    pending: &mut HashMap<ReqRef, Result<(Channel, u64), i64>>,
    persistent: &HashMap<ReqRef, Persistent>,
    e: &Event,
    at: At,
    me: i64,
) {
    for (i, init) in e.init.iter().enumerate() {
        let Some(p) = init.and_then(|r| persistent.get(&r)) else {
            continue;
        };
        if p.send {
            m.send((me, p.peer, p.comm, p.tag), at, p.bytes);
        } else {
            let activation = ReqRef {
                stream: at.0 as u32,
                index: e.first_req + i as u32,
            };
            pending.insert(activation, Ok(m.post((p.peer, me, p.comm, p.tag))));
        }
    }
}
