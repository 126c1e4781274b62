//! The schedule engine: LogGOPSim's discrete-event execution of GOAL
//! schedules, with the resources a rank's ops need behind [`DagModel`].
//!
//! An op is *free* once every op it requires has ended and every op it
//! irequires has started. Free ops are queued at the time their resources
//! allow, in one queue ordered by time and then by queueing order (the ops
//! a single event frees are queued sends first, then receives, then
//! computations, in the order C++'s `std::sort` leaves them). When an op's
//! time comes and its resources are still busy, it is queued again at the
//! time they free, keeping its place among equal times. A send becomes a
//! message event at the receiver; messages and receives match in posting
//! order on (source, tag), `-1` matching any. An eager send ends when it
//! starts; a larger one when its message meets its receive. That is the
//! order LogGOPSim keeps, so both compute the same times.

use super::edges::release;
use super::parse::{Kind, Op, Schedule, ANY};
use rustc_hash::FxHashMap;

/// The resources of a schedule's ranks: when each kind of op may start,
/// and what starting it occupies. The engine never names a model.
pub trait DagModel {
    /// When rank `host`'s CPU `cpu` is free (a computation or a receive
    /// may start).
    fn cpu_free(&self, host: u32, cpu: u8) -> u64;
    /// When a send of `host` on `cpu` and `nic` may start.
    fn send_free(&self, host: u32, cpu: u8, nic: u8) -> u64;
    /// When a message arriving at `host` for `cpu` and `nic` may be taken in.
    fn recv_free(&self, host: u32, cpu: u8, nic: u8) -> u64;
    /// `host` computes `ns` from `t` on `cpu`.
    fn calc(&mut self, host: u32, cpu: u8, t: u64, ns: u64);
    /// `host` starts sending `size` bytes at `t`: when its message's first
    /// byte reaches the receiver.
    fn send(&mut self, host: u32, cpu: u8, nic: u8, t: u64, size: u64) -> u64;
    /// Whether a message of `size` bytes is eager (its send ends when it
    /// starts) rather than a rendezvous (it ends when matched).
    fn eager(&self, size: u64) -> bool;
    /// A message of `size` bytes is taken in by `host` at `t`.
    fn take_in(&mut self, host: u32, cpu: u8, nic: u8, t: u64, size: u64);
    /// A rendezvous send of `host` was matched at `t`: its resources are
    /// busy until then at least.
    fn matched(&mut self, host: u32, cpu: u8, nic: u8, t: u64);
    /// When `host` finished its last op.
    fn finish(&self, host: u32) -> u64;
}

/// A queued event: ordered by time, then by the order it was first queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Event {
    time: u64,
    /// Below 2^32: a schedule has fewer than 2^31 ops, and as many
    /// messages at most.
    seq: u32,
    /// The op, free; or with [`MSG`] set, the message of that send, at
    /// its receiver.
    op: u32,
    /// The op's rank (for a message, the sender's).
    rank: u32,
}

/// An event as its time's queue holds it: 12 bytes (every receive of a
/// collective may be queued at once: a million ranks queue tens of
/// millions).
#[derive(Clone, Copy, Debug)]
struct Slot {
    seq: u32,
    op: u32,
    rank: u32,
}

/// The events by time, each time's in queueing order. A schedule's events
/// bunch on few times (a collective's round starts everywhere at once), so
/// a pop or a push is a lookup among the times pending and a queue
/// operation, where a heap of every event sifted 16 levels at 65,536
/// ranks; and the earliest time and the time last pushed to are kept at
/// hand, so that most pops and pushes look nothing up. An event queued
/// again keeps its first place among its new time's; an event may be
/// queued at a time before the last one popped (LogGOPSim frees ops at
/// their resources' times, which may have passed), and is popped next.
#[derive(Default)]
struct TimeQueue {
    /// Each pending time's queue in `queues`.
    times: std::collections::BTreeMap<u64, u32>,
    queues: Vec<std::collections::VecDeque<Slot>>,
    /// Emptied queues, for new times.
    spare: Vec<u32>,
    /// The earliest pending time, and its queue.
    first: Option<(u64, u32)>,
    /// The time last pushed to, and its queue, while it is pending.
    last: Option<(u64, u32)>,
}

impl TimeQueue {
    #[inline]
    fn push(&mut self, e: Event) {
        let at = match self.last {
            Some((time, at)) if time == e.time => at,
            _ => {
                let (queues, spare) = (&mut self.queues, &mut self.spare);
                let at = *self.times.entry(e.time).or_insert_with(|| {
                    spare.pop().unwrap_or_else(|| {
                        queues.push(Default::default());
                        (queues.len() - 1) as u32
                    })
                });
                if self.first.is_none_or(|(first, _)| e.time < first) {
                    self.first = Some((e.time, at));
                }
                self.last = Some((e.time, at));
                at
            }
        };
        let q = &mut self.queues[at as usize];
        let slot = Slot {
            seq: e.seq,
            op: e.op,
            rank: e.rank,
        };
        // A quarter more at a time, not double: a ring buffer's pops and
        // pushes touch its whole capacity, and a collective's first
        // receives fill one time's queue with tens of millions.
        if q.len() == q.capacity() {
            q.reserve_exact(q.capacity() / 4 + 16);
        }
        if q.back().is_none_or(|b| b.seq < slot.seq) {
            q.push_back(slot);
        } else {
            let at = q.partition_point(|s| s.seq < slot.seq);
            q.insert(at, slot);
        }
    }

    #[inline]
    fn pop(&mut self) -> Option<Event> {
        let (time, at) = self.first?;
        let q = &mut self.queues[at as usize];
        let s = q.pop_front()?;
        if q.is_empty() {
            self.times.remove(&time);
            self.spare.push(at);
            if self.last.is_some_and(|(_, last)| last == at) {
                self.last = None;
            }
            self.first = self.times.first_key_value().map(|(&t, &q)| (t, q));
        }
        Some(Event {
            time,
            seq: s.seq,
            op: s.op,
            rank: s.rank,
        })
    }
}

/// [`Event::op`]'s bit for a message (a schedule has fewer than 2^31 ops).
const MSG: u32 = 1 << 31;

/// A message arrived and not received: its send, the sending rank and
/// the tag (so that a receive's scan reads no op: a cache miss each).
#[derive(Clone, Copy, Debug)]
struct Arrived {
    op: u32,
    src: u32,
    tag: u32,
}

/// A receive posted and not matched, and a digest of whom it takes, so
/// that a message's scan reads the op (a cache miss) only where it may
/// match: LogGOPSim posts a rank's receives in the order its sort leaves
/// them, and a message passes several before its own.
#[derive(Clone, Copy, Debug)]
struct Posted {
    op: u32,
    key: u32,
}

/// The digest of a wildcard (or a collision): its receive must be read.
const WILD: u32 = u32::MAX;

/// A digest of (source, tag): equal pairs have equal digests; a pair with
/// a wildcard has [`WILD`].
#[inline]
fn key(src: u32, tag: u32) -> u32 {
    if src == ANY || tag == ANY {
        return WILD;
    }
    (src.wrapping_mul(0x9e37_79b1) ^ tag).wrapping_mul(0x85eb_ca6b)
}

/// "No node": an empty queue's head, a queue's last node's next.
const NIL: u32 = u32::MAX;

/// Per rank, a queue in posting order, taken from in the middle: lists in
/// one shared slab, 8 bytes a rank (a list per rank held 64 at least, 128
/// MB at a million ranks), and a node the item and 4 bytes; the nodes
/// taken out are a list of their own, for the next pushes.
struct Queues<T> {
    head: Vec<u32>,
    tail: Vec<u32>,
    nodes: Vec<(T, u32)>,
    free: u32,
}

impl<T: Copy> Queues<T> {
    fn new(ranks: u32) -> Queues<T> {
        Queues {
            head: vec![NIL; ranks as usize],
            tail: vec![NIL; ranks as usize],
            nodes: Vec::new(),
            free: NIL,
        }
    }

    fn push(&mut self, rank: u32, item: T) {
        let at = match self.free {
            NIL => {
                self.nodes.push((item, NIL));
                (self.nodes.len() - 1) as u32
            }
            at => {
                self.free = self.nodes[at as usize].1;
                self.nodes[at as usize] = (item, NIL);
                at
            }
        };
        let r = rank as usize;
        match self.tail[r] {
            NIL => self.head[r] = at,
            last => self.nodes[last as usize].1 = at,
        }
        self.tail[r] = at;
    }

    /// The first of `rank`'s queue that `fits`, taken out.
    fn take(&mut self, rank: u32, mut fits: impl FnMut(T) -> bool) -> Option<T> {
        let r = rank as usize;
        let (mut prev, mut at) = (NIL, self.head[r]);
        while at != NIL {
            let (item, next) = self.nodes[at as usize];
            if fits(item) {
                match prev {
                    NIL => self.head[r] = next,
                    prev => self.nodes[prev as usize].1 = next,
                }
                if self.tail[r] == at {
                    self.tail[r] = prev;
                }
                self.nodes[at as usize].1 = self.free;
                self.free = at;
                return Some(item);
            }
            (prev, at) = (at, next);
        }
        None
    }

    /// `rank`'s queue, in order.
    fn of(&self, rank: u32) -> impl Iterator<Item = T> + '_ {
        let mut at = self.head[rank as usize];
        std::iter::from_fn(move || {
            let (item, next) = *self.nodes.get(at as usize)?;
            at = next;
            Some(item)
        })
    }
}

/// Whether a message from `src` with `tag` and a receive posted from
/// `from` with `want` match (`-1`, [`ANY`], on either side matches all).
#[inline]
fn matches(src: u32, tag: u32, from: u32, want: u32) -> bool {
    (src == ANY || from == ANY || src == from) && (tag == ANY || want == ANY || tag == want)
}

/// What a run gives.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// Per rank, when it finished, ns.
    pub finish: Vec<u64>,
    /// Ops and messages executed: LogGOPSim's event count.
    pub events: u64,
}

impl Outcome {
    /// The latest finish, and its rank (the lowest of equal ones).
    pub fn latest(&self) -> (u32, u64) {
        self.finish.iter().enumerate().fold(
            (0, 0),
            |(h, m), (i, &t)| if t > m { (i as u32, t) } else { (h, m) },
        )
    }
}

/// Runs `s` on `model`, counting its ops' waits down (a schedule runs
/// once). An op that can never run (a receive no message matches, a
/// dependency cycle) is an error that names the ranks.
pub fn run<M: DagModel + ?Sized>(s: &mut Schedule, model: &mut M) -> Result<Outcome, String> {
    let ops = std::mem::take(&mut s.ops);
    let many_waits = std::mem::take(&mut s.many_waits);
    let mut e = Engine {
        s,
        scratch: Vec::new(),
        ops,
        many_waits,
        queue: TimeQueue::default(),
        seq: 0,
        posted: Queues::new(s.ranks()),
        arrived: Queues::new(s.ranks()),
        freed: Vec::new(),
        hosts: Vec::new(),
        done: 0,
    };
    for host in 0..s.ranks() {
        let (a, b) = (s.first[host as usize], s.first[host as usize + 1]);
        e.freed.extend(
            (a..b)
                .filter(|&i| e.ops[i as usize].waits == 0)
                .map(|i| (host, i)),
        );
        e.queue_freed(model);
    }
    while let Some(ev) = e.queue.pop() {
        e.step(model, ev);
        e.queue_freed(model);
    }
    let (done, events) = (e.done, u64::from(e.seq));
    let stuck = (done < e.ops.len() as u64).then(|| e.stuck());
    s.ops = e.ops;
    if let Some(why) = stuck {
        return Err(why);
    }
    Ok(Outcome {
        finish: (0..s.ranks()).map(|h| model.finish(h)).collect(),
        events,
    })
}

struct Engine<'a> {
    s: &'a Schedule,
    /// One rank's freed ops and their kinds, reused.
    scratch: Vec<(Kind, u32)>,
    /// The schedule's ops (taken from it for the run), whose wait
    /// counters count down.
    ops: Vec<Op>,
    many_waits: FxHashMap<u32, u32>,
    queue: TimeQueue,
    /// Events queued so far (each one's place among equal times).
    seq: u32,
    /// Per rank: receives posted, unmatched, in posting order.
    posted: Queues<Posted>,
    /// Per rank: messages arrived, unreceived, in arrival order.
    arrived: Queues<Arrived>,
    /// Ops freed by the current event, in order, and their ranks.
    freed: Vec<(u32, u32)>,
    /// The ranks of the ops freed by the current event (the ranks whose
    /// ops it started or ended and that have ops freed), reused.
    hosts: Vec<u32>,
    /// Ops ended.
    done: u64,
}

impl Engine<'_> {
    #[inline]
    fn push(&mut self, ev: Event) {
        self.queue.push(ev);
    }

    /// Queues the ops freed since the last call, rank by rank (the ranks
    /// the event touched, in order), each rank's sends, then receives, then
    /// computations, at the time their resources free.
    fn queue_freed<M: DagModel + ?Sized>(&mut self, model: &M) {
        // One op freed (most events): nothing to order.
        if let [(host, op)] = self.freed[..] {
            self.queue_op(model, host, op);
            self.freed.clear();
        }
        if self.freed.is_empty() {
            return;
        }
        // The ranks the event freed ops of, in order.
        let mut hosts = std::mem::take(&mut self.hosts);
        hosts.extend(self.freed.iter().map(|f| f.0));
        hosts.sort_unstable();
        hosts.dedup();
        let mut freed = std::mem::take(&mut self.freed);
        let mut mine = std::mem::take(&mut self.scratch);
        for &host in &hosts {
            mine.clear();
            let ops = &self.ops;
            let of_host = |f: &&(u32, u32)| hosts.len() == 1 || f.0 == host;
            mine.extend(
                freed
                    .iter()
                    .filter(of_host)
                    .map(|f| (ops[f.1 as usize].kind, f.1)),
            );
            // By kind, as LogGOPSim's std::sort leaves them.
            super::cxx_sort::sort(&mut mine, |a, b| a.0 < b.0);
            for &(_, op) in &mine {
                self.queue_op(model, host, op);
            }
        }
        self.scratch = mine;
        freed.clear();
        self.freed = freed;
        hosts.clear();
        self.hosts = hosts;
    }

    /// Queues free op `op` of rank `host` at the time its resources free.
    #[inline]
    fn queue_op<M: DagModel + ?Sized>(&mut self, model: &M, host: u32, op: u32) {
        let o = self.ops[op as usize];
        let time = match o.kind {
            Kind::Send => model.send_free(host, o.cpu, o.nic),
            Kind::Recv | Kind::Calc => model.cpu_free(host, o.cpu),
        };
        let seq = self.seq;
        self.seq += 1;
        self.push(Event {
            time,
            seq,
            op,
            rank: host,
        });
    }

    /// Op `op` of rank `host` started: the ops that irequire it are freed
    /// when it was the last they waited for.
    #[inline]
    fn started(&mut self, host: u32, op: u32) {
        for &d in self.s.after_start.of(op) {
            self.release(host, d);
        }
    }

    /// Op `op` of rank `host` ended.
    #[inline]
    fn ended(&mut self, host: u32, op: u32) {
        self.done += 1;
        for &d in self.s.after_end.of(op) {
            self.release(host, d);
        }
    }

    #[inline]
    fn release(&mut self, host: u32, d: u32) {
        if release(&mut self.ops[d as usize].waits, &mut self.many_waits, d) {
            self.freed.push((host, d));
        }
    }

    fn step<M: DagModel + ?Sized>(&mut self, model: &mut M, mut ev: Event) {
        let t = ev.time;
        let (msg, op) = (ev.op & MSG != 0, ev.op & !MSG);
        let o = self.ops[op as usize];
        let size = self.s.size_of(o, op);
        match (msg, o.kind) {
            (false, Kind::Calc) => {
                let free = model.cpu_free(ev.rank, o.cpu);
                if free > t {
                    ev.time = free;
                    return self.push(ev);
                }
                model.calc(ev.rank, o.cpu, t, size);
                self.started(ev.rank, op);
                self.ended(ev.rank, op);
            }
            (false, Kind::Send) => {
                let free = model.send_free(ev.rank, o.cpu, o.nic);
                if free > t {
                    ev.time = free;
                    return self.push(ev);
                }
                self.started(ev.rank, op);
                let arrival = model.send(ev.rank, o.cpu, o.nic, t, size);
                let seq = self.seq;
                self.seq += 1;
                self.push(Event {
                    time: arrival,
                    seq,
                    op: op | MSG,
                    rank: ev.rank,
                });
                if model.eager(size) {
                    self.ended(ev.rank, op);
                }
            }
            (false, Kind::Recv) => {
                self.started(ev.rank, op);
                match self
                    .arrived
                    .take(ev.rank, |m| matches(m.src, m.tag, o.peer, o.tag))
                {
                    Some(m) => {
                        // LogGOPSim sizes this rendezvous by the receive.
                        if !model.eager(size) {
                            self.ended(m.src, m.op);
                            model.matched(m.src, o.cpu, o.nic, t);
                        }
                        self.ended(ev.rank, op);
                    }
                    None => self.posted.push(
                        ev.rank,
                        Posted {
                            op,
                            key: key(o.peer, o.tag),
                        },
                    ),
                }
            }
            (true, _) => {
                // `o` is the send, `ev.rank` its rank.
                let (src, host) = (ev.rank, o.peer);
                let free = model.recv_free(host, o.cpu, o.nic);
                if free > t {
                    ev.time = free;
                    return self.push(ev);
                }
                model.take_in(host, o.cpu, o.nic, t, size);
                let (ops, want) = (&self.ops, key(src, o.tag));
                match self.posted.take(host, |r| {
                    (r.key == want || r.key == WILD || want == WILD) && {
                        let r = ops[r.op as usize];
                        matches(src, o.tag, r.peer, r.tag)
                    }
                }) {
                    Some(Posted { op: r, .. }) => {
                        if !model.eager(size) {
                            self.ended(src, op);
                            model.matched(src, o.cpu, o.nic, t);
                        }
                        self.ended(host, r);
                    }
                    None => self.arrived.push(host, Arrived { op, src, tag: o.tag }),
                }
            }
        }
    }

    /// Why the schedule cannot finish: the first ranks with receives or
    /// messages left, or ops never freed.
    fn stuck(&self) -> String {
        let mut lines = Vec::new();
        let tag = |t: u32| match t {
            ANY => "any".to_string(),
            t => t.to_string(),
        };
        for h in 0..self.s.ranks() {
            for r in self.posted.of(h) {
                let r = self.ops[r.op as usize];
                let from = match r.peer {
                    ANY => "any rank".to_string(),
                    p => format!("rank {p}"),
                };
                lines.push(format!(
                    "rank {h}: a receive from {from} (tag {}) that no message matches",
                    tag(r.tag)
                ));
            }
            for m in self.arrived.of(h) {
                lines.push(format!(
                    "rank {h}: a message from rank {} (tag {}) that no receive takes",
                    m.src,
                    tag(m.tag)
                ));
            }
            if lines.len() >= 16 {
                break;
            }
        }
        if lines.is_empty() {
            lines.push("some ops wait on each other in a cycle of requires".into());
        }
        format!("the schedule cannot finish:\n{}", lines.join("\n"))
    }
}
