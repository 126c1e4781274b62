//! Point-to-point between virtual ranks, in virtual-time order.
//!
//! A send packs its data at once (in the sender's context) and becomes a
//! message that *arrives* at its receiver at the time the kernel's
//! point-to-point rule gives ([`pnmpi_sim::kernel::p2p`], which vtime and
//! `pnmpi sim replay` call too): an eager message (a standard send up to
//! the model's eager threshold, a buffered send) arrives at
//! `transfer(free).end` and its send completes at `free`; a rendezvous
//! message's envelope arrives one lookahead (the model's least latency)
//! after its send is posted, its data moves once the receive is posted
//! too, and its send completes when the data has arrived: a blocking
//! sender waits until then, as in MPI libraries (a program that only runs
//! if MPI buffers such sends deadlocks, and the report says so). A message to a rank of another process travels as
//! a record ([`crate::dist`]) and arrives there at the same time. Arrivals are engine events, so they
//! happen in virtual-time order: an arriving message matches the
//! receiver's first posted receive that fits, else waits in its
//! unexpected queue; a receive posted at time `t` takes the first message
//! of that queue that fits (all of which arrived before `t`, since the
//! engine only runs a rank at the least pending time). So a wildcard
//! receive takes the message that arrived first in *virtual* time. The
//! messages of one sender to one receiver arrive in the order they were
//! sent (MPI's non-overtaking rule): a later one never arrives before an
//! earlier one.

use crate::engine::{Engine, Event};
pub use pnmpi_sim::kernel::p2p::Mode;
use pnmpi_sim::kernel::p2p::{self as rule, unstretched};
use pnmpi_sim::model::Msg;
use pnmpi_sim::units::Ns;
use serde::{Deserialize, Serialize};
use slab::Slab;
use std::collections::{HashMap, VecDeque};
use std::ffi::{c_int, c_void};

/// A message in flight or waiting to be received (or crossing to
/// another process, [`crate::dist`]).
#[derive(Serialize, Deserialize)]
pub struct Message {
    /// World ranks of the two ends.
    pub src: u32,
    pub dst: u32,
    /// The communicator and the sender's rank in it.
    pub comm: u32,
    pub from: c_int,
    pub tag: c_int,
    pub data: Vec<u8>,
    /// When the sender's CPU was free (the data ready to move).
    pub free: Ns,
    /// When the eager data arrived (`None` for a rendezvous).
    pub arrived: Option<Ns>,
    /// A rendezvous's send request, completed when its data has arrived.
    pub sync: Option<usize>,
    /// Sent with `MPI_Ssend`: complete once matched.
    pub synchronous: bool,
}

/// What a receive wants and where its data goes.
#[derive(Clone, Copy)]
pub struct RecvSpec {
    pub buf: *mut c_void,
    pub count: c_int,
    pub dtype: pnmpi_mpi_sys::ffi::MPI_Datatype,
    pub comm: u32,
    /// Source rank in the communicator, or `MPI_ANY_SOURCE`.
    pub from: c_int,
    /// Tag or `MPI_ANY_TAG`.
    pub tag: c_int,
}

/// What a request stands for.
pub enum Work {
    /// A send: complete when posted (eager sends), or when its data has
    /// arrived (rendezvous).
    Send,
    /// A receive, and the message it got.
    Recv(RecvSpec, Option<Message>),
    /// A member's part in a collective.
    Coll(crate::coll::Part),
    /// An inactive persistent request and what each start posts.
    Persistent(crate::api::persistent::Template),
}

/// A request: the application's handle names it.
pub struct Request {
    pub owner: u32,
    pub done: bool,
    /// Virtual time of completion.
    pub at: Ns,
    /// When it was posted.
    pub posted: Ns,
    /// The owner is blocked waiting for it.
    pub waited: bool,
    pub work: Work,
    /// Source (rank in the communicator), tag and bytes, for the status;
    /// for a send, its destination (world rank), tag and bytes, for a
    /// deadlock report.
    pub status: (c_int, c_int, usize),
    /// A persistent request's handle stays after completion.
    pub persistent: bool,
}

/// Point-to-point state of all ranks.
pub struct State {
    pub reqs: Slab<Request>,
    inflight: Slab<Message>,
    unexpected: Vec<VecDeque<Message>>,
    posted: Vec<VecDeque<usize>>,
    /// Latest arrival (or rendezvous envelope) on each (sender,
    /// receiver) channel.
    channel: HashMap<(u32, u32), Ns>,
    /// Ranks blocked in `MPI_Probe`, and what they wait for: the first
    /// message that fits wakes them.
    probes: HashMap<u32, RecvSpec>,
}

impl State {
    /// The earliest completion after `after` that requests `ids` already
    /// know of (a collective whose members all joined): when a rank that
    /// polls them will find one done.
    pub fn next_completion(&self, ids: impl Iterator<Item = usize>, after: Ns) -> Option<Ns> {
        ids.filter_map(|id| self.reqs.get(id))
            .filter(|q| q.done && q.at > after)
            .map(|q| q.at)
            .min_by(f64::total_cmp)
    }

    pub fn new(n: u32) -> State {
        State {
            reqs: Slab::new(),
            inflight: Slab::new(),
            unexpected: (0..n).map(|_| VecDeque::new()).collect(),
            posted: (0..n).map(|_| VecDeque::new()).collect(),
            channel: HashMap::new(),
            probes: HashMap::new(),
        }
    }
}

/// Whether a message fits a receive.
fn fits(m: &Message, s: &RecvSpec, any_source: c_int, any_tag: c_int) -> bool {
    m.comm == s.comm && (s.from == any_source || s.from == m.from) && (s.tag == any_tag || s.tag == m.tag)
}

impl Engine {
    /// The rendezvous sends of ranks `stuck` whose receives were never
    /// posted, as `rank S to rank D (N bytes)`: what makes a deadlock one
    /// that MPI buffering would have hidden.
    pub fn held_sends(&self, stuck: &[u32]) -> Vec<String> {
        let mut held: Vec<(u32, c_int, usize)> = self
            .p2p
            .reqs
            .iter()
            .filter(|(_, q)| !q.done && matches!(q.work, Work::Send) && stuck.contains(&q.owner))
            .map(|(_, q)| (q.owner, q.status.0, q.status.2))
            .collect();
        held.sort_unstable();
        held.iter()
            .map(|(s, d, n)| format!("rank {s} to rank {d} ({n} bytes)"))
            .collect()
    }

    /// A new request of the running rank.
    pub fn request(&mut self, work: Work, done: bool) -> usize {
        let owner = self.current;
        let t = self.ranks[owner as usize].clock;
        self.p2p.reqs.insert(Request {
            owner,
            done,
            at: t,
            posted: t,
            waited: false,
            work,
            status: (0, 0, 0),
            persistent: false,
        })
    }

    /// Completes request `id` at virtual time `at`, waking its owner if
    /// it was the last one the owner waits for.
    pub fn complete(&mut self, id: usize, at: Ns) {
        let r = &mut self.p2p.reqs[id];
        r.done = true;
        r.at = at;
        if r.waited {
            r.waited = false;
            let owner = r.owner;
            let rank = &mut self.ranks[owner as usize];
            rank.need = rank.need.saturating_sub(1);
            if rank.need == 0 {
                self.wake(owner, at);
            }
        }
    }

    /// The running rank sends `data` to world rank `dst` (rank `from` in
    /// communicator `comm`); returns the request.
    pub fn send(&mut self, data: Vec<u8>, dst: u32, comm: u32, from: c_int, tag: c_int, mode: Mode) -> usize {
        let src = self.current;
        let t = self.ranks[src as usize].clock;
        let node_of = &self.node_of;
        let msg = Msg::between(src, dst, data.len() as u64, |r| node_of[r as usize]);
        let posted = rule::post(&mut *self.model, &msg, mode, t, &mut unstretched);
        let free = posted.free;
        // An eager message arrives with its data, a rendezvous's envelope
        // one lookahead after the post; neither before an earlier message
        // of the channel (a rendezvous envelope would otherwise overtake
        // an eager message sent before it, and match its receive).
        let earliest = posted.eager.map_or(free + self.lookahead, |x| x.end);
        let last = self.p2p.channel.entry((src, dst)).or_insert(0.0);
        *last = last.max(earliest);
        let at = *last;
        let arrived = posted.eager.map(|_| at);
        let stats = &mut self.ranks[src as usize].stats;
        stats.sent += 1;
        stats.sent_bytes += data.len() as u64;
        let req = self.request(Work::Send, arrived.is_some());
        self.p2p.reqs[req].at = free;
        self.p2p.reqs[req].status = (dst as c_int, tag, data.len());
        let sync = arrived.is_none().then_some(req);
        let m = Message {
            src,
            dst,
            comm,
            from,
            tag,
            data,
            free,
            arrived,
            sync,
            synchronous: mode == Mode::Synchronous,
        };
        if self.comms.blocks.local(dst) {
            self.inbound(m, at);
        } else {
            let gid = self.comms.comms[comm as usize].gid;
            let owner = self.comms.blocks.owner(dst);
            self.dist_send(owner, &crate::dist::Record::Message { message: m, gid, at });
        }
        req
    }

    /// Message `m` will arrive at its receiver, a rank of this process,
    /// at `at`.
    pub fn inbound(&mut self, m: Message, at: Ns) {
        let id = self.p2p.inflight.insert(m);
        self.push(at, Event::Arrive(id as u32));
    }

    /// Message `id` arrives at its receiver: the first posted receive that
    /// fits takes it, else it waits in the unexpected queue.
    pub fn arrive(&mut self, id: u32) {
        let m = self.p2p.inflight.remove(id as usize);
        let (any_source, any_tag) = (
            pnmpi_mpi_sys::constants::ANY_SOURCE(),
            pnmpi_mpi_sys::constants::ANY_TAG(),
        );
        let dst = m.dst as usize;
        let found = self.p2p.posted[dst]
            .iter()
            .position(|&r| match &self.p2p.reqs[r].work {
                Work::Recv(s, _) => fits(&m, s, any_source, any_tag),
                _ => false,
            });
        match found {
            Some(i) => {
                let r = self.p2p.posted[dst].remove(i).expect("found above");
                self.deliver(m, r);
            }
            None => {
                let probed = self.p2p.probes.get(&m.dst);
                if probed.is_some_and(|s| fits(&m, s, any_source, any_tag)) {
                    self.p2p.probes.remove(&m.dst);
                    self.wake(m.dst, self.now);
                }
                self.p2p.unexpected[dst].push_back(m);
            }
        }
    }

    /// The running rank posts a receive; returns the request.
    pub fn recv(&mut self, spec: RecvSpec) -> usize {
        let me = self.current as usize;
        let (any_source, any_tag) = (
            pnmpi_mpi_sys::constants::ANY_SOURCE(),
            pnmpi_mpi_sys::constants::ANY_TAG(),
        );
        let req = self.request(Work::Recv(spec, None), false);
        let found = self.p2p.unexpected[me]
            .iter()
            .position(|m| fits(m, &spec, any_source, any_tag));
        match found {
            Some(i) => {
                let m = self.p2p.unexpected[me].remove(i).expect("found above");
                self.deliver(m, req);
            }
            None => self.p2p.posted[me].push_back(req),
        }
        req
    }

    /// Message `m` is matched with receive `req`: the receive completes
    /// at the kernel's time, and a rendezvous's sender when the data has
    /// arrived.
    fn deliver(&mut self, m: Message, req: usize) {
        let posted = self.p2p.reqs[req].posted;
        let node_of = &self.node_of;
        let msg = Msg::between(m.src, m.dst, m.data.len() as u64, |r| node_of[r as usize]);
        let mode = if m.synchronous {
            Mode::Synchronous
        } else {
            Mode::Standard
        };
        let k = rule::matched(
            &mut *self.model,
            &msg,
            mode,
            m.free,
            m.arrived,
            posted,
            &mut unstretched,
        );
        if let Some(s) = m.sync {
            if self.comms.blocks.local(m.src) {
                self.complete(s, k.send_done);
            } else {
                let owner = self.comms.blocks.owner(m.src);
                self.dist_send(
                    owner,
                    &crate::dist::Record::Matched {
                        req: s as u64,
                        at: k.send_done,
                    },
                );
            }
        }
        let done = k.recv_done;
        let r = &mut self.p2p.reqs[req];
        r.status = (m.from, m.tag, m.data.len());
        // The wait starts counting once the sender posted.
        r.posted = posted.max(m.free);
        if let Work::Recv(_, slot) = &mut r.work {
            *slot = Some(m);
        }
        self.complete(req, done);
    }

    /// The running rank is about to block in `MPI_Probe` for a message
    /// that fits `spec` ([`crate::engine::block_until_woken`]).
    pub fn await_probe(&mut self, spec: RecvSpec) {
        self.p2p.probes.insert(self.current, spec);
    }

    /// Whether a message that fits has arrived at the running rank (for
    /// `MPI_Iprobe` and `MPI_Probe`): its source, tag and size.
    pub fn probe(&self, spec: &RecvSpec) -> Option<(c_int, c_int, usize)> {
        let (any_source, any_tag) = (
            pnmpi_mpi_sys::constants::ANY_SOURCE(),
            pnmpi_mpi_sys::constants::ANY_TAG(),
        );
        self.p2p.unexpected[self.current as usize]
            .iter()
            .find(|m| fits(m, spec, any_source, any_tag))
            .map(|m| (m.from, m.tag, m.data.len()))
    }
}
