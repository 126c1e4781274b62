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
//! a record (the `dist` layer) and arrives there at the same time. Arrivals are engine events, so they
//! happen in virtual-time order: an arriving message matches the
//! receiver's first posted receive that fits, else waits in its
//! unexpected queue; a receive posted at time `t` takes the first message
//! of that queue that fits (all of which arrived before `t`, since the
//! engine only runs a rank at the least pending time). So a wildcard
//! receive takes the message that arrived first in *virtual* time. The
//! messages of one channel (sender, receiver, communicator) arrive in the
//! order they were sent (MPI's non-overtaking rule, the kernel's
//! [`rule::Channels`]): a later one never arrives before an earlier
//! one's envelope, while a rendezvous's data does not hold later
//! messages back.
//!
//! A rendezvous between ranks of this process whose receive names its
//! source is matched when the later side posts, as the replay of the
//! trace matches it, not when its envelope arrives: no other message can
//! take that receive first (an earlier one of the channel still on its
//! way, or an earlier posted receive that fits, keeps the envelope's
//! way). Its times are the same either way; what changes is when its
//! data is handed to the model, which under a contention model decides
//! which of the transfers ready at one time takes a resource first.
//! The callers post in virtual-time order ([`crate::engine::catch_up`]),
//! so the model sees the transfers in the replay's order.
//!
//! This layer sits on the scheduler ([`crate::sched`]) and owns the
//! requests (collectives' too, [`Work::Coll`]) and the messages. What
//! goes to a rank of another process waits in its outbox
//! ([`P2p::take_remote`]) for the layer that spreads the ranks.

use crate::comm::Registry;
use crate::sched::{Event, Sched};
use crate::timing::Timing;
pub use pnmpi_sim::kernel::p2p::Mode;
use pnmpi_sim::kernel::p2p::{self as rule, unstretched, Carried};
use pnmpi_sim::units::Ns;
use serde::{Deserialize, Serialize};
use slab::Slab;
use std::collections::{HashMap, VecDeque};
use std::ffi::{c_int, c_void};

mod flows;
mod transits;

/// A message (a parcel: its envelope, data and timing) in flight or waiting to be received (or crossing to
/// another process).
#[derive(Serialize, Deserialize)]
pub struct Parcel {
    /// World ranks of the two ends.
    pub src: u32,
    pub dst: u32,
    /// The communicator and the sender's rank in it.
    pub comm: u32,
    pub from: c_int,
    pub tag: c_int,
    pub data: Vec<u8>,
    /// Its size: the data's, or a collective step's (which carries none).
    pub bytes: u64,
    /// When the sender's CPU was free (the data ready to move).
    pub free: Ns,
    /// When the eager data arrived (`None` for a rendezvous, and for
    /// eager data still moving as a flow).
    pub arrived: Option<Ns>,
    /// The number of the flow that moves its eager data, under a model
    /// whose messages share links (`flows`).
    pub moving: Option<u64>,
    /// A rendezvous's send request, completed when its data has arrived.
    pub sync: Option<usize>,
    /// Sent with `MPI_Ssend`: complete once matched.
    pub synchronous: bool,
}

impl Parcel {
    /// Whether its data moved, or moves, eagerly: its send completed at
    /// its post.
    fn eager(&self) -> bool {
        self.arrived.is_some() || self.moving.is_some()
    }
}

/// The context bit of an algorithmic collective's step messages: set on
/// the communicator index of their parcels and receives (never on an
/// application's), so that they match only each other, as MPI keeps a
/// collective's messages apart from point-to-point ones on the same
/// communicator, while they take the same channels, model and event order.
pub const STEPS: u32 = 1 << 31;

/// What this layer owes a rank of another process.
#[derive(Serialize, Deserialize)]
pub enum Remote {
    /// A message to it, arriving at `at`, on the communicator known
    /// everywhere as `gid` (its `comm` is the sender's handle index,
    /// replaced by the receiver's).
    Message { message: Parcel, gid: u64, at: Ns },
    /// Its rendezvous send `req` was matched: the request completes at
    /// `at`.
    Matched { req: u64, at: Ns },
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

impl RecvSpec {
    /// A receive of a message with no data, from rank `from` of
    /// communicator `comm` with `tag`: an algorithmic collective's step, a
    /// one-sided epoch's notification.
    pub fn empty(comm: u32, from: c_int, tag: c_int) -> RecvSpec {
        RecvSpec {
            buf: std::ptr::null_mut(),
            count: 0,
            dtype: pnmpi_mpi_sys::constants::BYTE(),
            comm,
            from,
            tag,
        }
    }
}

/// Where a collective member's result goes (the member's own buffers,
/// written in its context when its request completes).
#[derive(Clone, Copy, Default)]
pub enum Out {
    /// Nowhere (a send-only member).
    #[default]
    Nothing,
    /// The root's data (broadcast).
    Bcast(*mut c_void, c_int, pnmpi_mpi_sys::ffi::MPI_Datatype),
    /// The root's block for this member (scatter).
    Scatter(*mut c_void, c_int, pnmpi_mpi_sys::ffi::MPI_Datatype),
    /// A reduction's result, or this member's (scan), or a range of it
    /// (reduce-scatter: offset and length in bytes).
    Result {
        buf: *mut c_void,
        dtype: pnmpi_mpi_sys::ffi::MPI_Datatype,
        own: bool,
        range: Option<(usize, usize)>,
    },
    /// Every member's block, at `displs[i]` (or `i * count`) elements.
    Gather(
        *mut c_void,
        c_int,
        pnmpi_mpi_sys::ffi::MPI_Datatype,
        *const c_int,
        *const c_int,
    ),
    /// Every member's block for this member (all-to-all).
    Alltoall(
        *mut c_void,
        c_int,
        pnmpi_mpi_sys::ffi::MPI_Datatype,
        *const c_int,
        *const c_int,
    ),
    /// The new communicator (constructors).
    Comm(*mut pnmpi_mpi_sys::ffi::MPI_Comm),
}

/// A persistent request: what each start posts.
pub struct Template {
    /// A send (with its mode) or a receive.
    pub send: Option<Mode>,
    pub buf: *mut c_void,
    pub count: c_int,
    pub dtype: pnmpi_mpi_sys::ffi::MPI_Datatype,
    pub peer: c_int,
    pub tag: c_int,
    pub comm: pnmpi_mpi_sys::ffi::MPI_Comm,
    /// The request of the current start, until it completes.
    pub active: Option<usize>,
}

/// What a request stands for.
pub enum Work {
    /// A send: complete when posted (eager sends), or when its data has
    /// arrived (rendezvous).
    Send,
    /// A receive, and the message it got.
    Recv(RecvSpec, Option<Parcel>),
    /// Member `me`'s part in collective call `call` (the collectives
    /// layer's), and where its result goes.
    Coll { call: usize, me: u32, out: Out },
    /// An inactive persistent request and what each start posts.
    Persistent(Template),
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
pub struct P2p {
    reqs: Slab<Request>,
    /// Messages on their way (`None`: matched before its envelope
    /// arrived, [`P2p::early`]; its event still comes), and each
    /// receiver's, in the order they were sent.
    inflight: Slab<Option<Parcel>>,
    flying: Vec<VecDeque<usize>>,
    unexpected: Vec<VecDeque<Parcel>>,
    posted: Vec<VecDeque<usize>>,
    /// Each channel's latest envelope (sender, receiver, the sender's
    /// communicator handle).
    channels: rule::Channels<(u32, u32, u32)>,
    /// Ranks blocked in `MPI_Probe`, and what they wait for: the first
    /// message that fits wakes them.
    probes: HashMap<u32, RecvSpec>,
    /// What this layer owes other processes: stamp, process, record.
    out: Vec<(u64, u32, Remote)>,
    /// The next stamp ([`P2p::stamp`]).
    stamps: u64,
    /// Data moving as flows over shared links.
    flowing: transits::Flowing,
}

/// A message to post: its data (none for a collective's step), size,
/// destination (world rank), communicator (with [`STEPS`] for a step),
/// the sender's rank there, tag and mode.
struct Letter {
    data: Vec<u8>,
    bytes: u64,
    dst: u32,
    comm: u32,
    from: c_int,
    tag: c_int,
    mode: Mode,
}

/// Whether a message fits a receive.
fn fits(m: &Parcel, s: &RecvSpec, any_source: c_int, any_tag: c_int) -> bool {
    m.comm == s.comm && (s.from == any_source || s.from == m.from) && (s.tag == any_tag || s.tag == m.tag)
}

/// Takes `id` out of `queue` (near its front, where it usually is).
fn forget(queue: &mut VecDeque<usize>, id: usize) {
    if let Some(i) = queue.iter().position(|&q| q == id) {
        queue.remove(i);
    }
}

/// `MPI_ANY_SOURCE` and `MPI_ANY_TAG`.
fn wildcards() -> (c_int, c_int) {
    (
        pnmpi_mpi_sys::constants::ANY_SOURCE(),
        pnmpi_mpi_sys::constants::ANY_TAG(),
    )
}

impl P2p {
    /// The state of `n` ranks.
    pub fn new(n: u32) -> P2p {
        P2p {
            reqs: Slab::new(),
            inflight: Slab::new(),
            flying: (0..n).map(|_| VecDeque::new()).collect(),
            unexpected: (0..n).map(|_| VecDeque::new()).collect(),
            posted: (0..n).map(|_| VecDeque::new()).collect(),
            channels: rule::Channels::default(),
            probes: HashMap::new(),
            out: Vec::new(),
            stamps: 0,
            flowing: transits::Flowing::default(),
        }
    }

    /// A stamp that orders what any layer owes other processes (this
    /// one's records and the collectives' shares) as it was made: a
    /// receiver applies them in that order.
    pub fn stamp(&mut self) -> u64 {
        self.stamps += 1;
        self.stamps
    }

    /// Owes `r` to process `to`.
    fn owe(&mut self, to: u32, r: Remote) {
        let stamp = self.stamp();
        self.out.push((stamp, to, r));
    }

    /// Request `id`, if it exists.
    pub fn get(&self, id: usize) -> Option<&Request> {
        self.reqs.get(id)
    }

    /// Request `id`, to change, if it exists.
    pub fn get_mut(&mut self, id: usize) -> Option<&mut Request> {
        self.reqs.get_mut(id)
    }

    /// Takes request `id` out (it must exist).
    pub fn remove(&mut self, id: usize) -> Request {
        self.reqs.remove(id)
    }

    /// What this layer owes other processes since last asked: stamp,
    /// process, record.
    pub fn take_remote(&mut self) -> Vec<(u64, u32, Remote)> {
        std::mem::take(&mut self.out)
    }

    /// The earliest completion after `after` that requests `ids` already
    /// know of (a collective whose members all joined): when a rank that
    /// polls them will find one done.
    pub fn next_completion(&self, ids: impl Iterator<Item = usize>, after: Ns) -> Option<Ns> {
        ids.filter_map(|id| self.reqs.get(id))
            .filter(|q| q.done && q.at > after)
            .map(|q| q.at)
            .min_by(f64::total_cmp)
    }

    /// The rendezvous sends of ranks `stuck` whose receives were never
    /// posted, as `rank S to rank D (N bytes)`: what makes a deadlock one
    /// that MPI buffering would have hidden.
    pub fn held_sends(&self, stuck: &[u32]) -> Vec<String> {
        let mut held: Vec<(u32, c_int, usize)> = self
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
    pub fn request(&mut self, s: &Sched, work: Work, done: bool) -> usize {
        let owner = s.current();
        let t = s.rank(owner).clock;
        self.reqs.insert(Request {
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
    pub fn complete(&mut self, s: &mut Sched, id: usize, at: Ns) {
        let r = &mut self.reqs[id];
        r.done = true;
        r.at = at;
        if r.waited {
            r.waited = false;
            let owner = r.owner;
            let rank = s.rank_mut(owner);
            rank.need = rank.need.saturating_sub(1);
            rank.resume_at = rank.resume_at.max(at);
            if rank.need == 0 {
                let at = rank.resume_at;
                s.wake(owner, at);
            }
        }
    }

    /// The running rank sends `data` to world rank `dst` (rank `from` in
    /// communicator `comm`); returns the request.
    #[allow(clippy::too_many_arguments)]
    pub fn send(
        &mut self,
        s: &mut Sched,
        t: &mut Timing,
        comms: &Registry,
        data: Vec<u8>,
        dst: u32,
        comm: u32,
        from: c_int,
        tag: c_int,
        mode: Mode,
    ) -> usize {
        let bytes = data.len() as u64;
        let stats = &mut s.me().stats;
        stats.sent += 1;
        stats.sent_bytes += bytes;
        let letter = Letter {
            data,
            bytes,
            dst,
            comm,
            from,
            tag,
            mode,
        };
        self.post(s, t, comms, letter)
    }

    /// The running rank sends `bytes` of an algorithmic collective's step
    /// to world rank `dst` (rank `from` in communicator `comm`): a
    /// standard send with no data, in the steps' context ([`STEPS`]).
    #[allow(clippy::too_many_arguments)]
    pub fn step_send(
        &mut self,
        s: &mut Sched,
        t: &mut Timing,
        comms: &Registry,
        bytes: u64,
        dst: u32,
        comm: u32,
        from: c_int,
    ) -> usize {
        let letter = Letter {
            data: Vec::new(),
            bytes,
            dst,
            comm: comm | STEPS,
            from,
            tag: 0,
            mode: Mode::Standard,
        };
        self.post(s, t, comms, letter)
    }

    /// Posts `l` from the running rank: the kernel's rule times it, and
    /// it goes to its receiver (an event here, a record to another
    /// process).
    fn post(&mut self, s: &mut Sched, t: &mut Timing, comms: &Registry, l: Letter) -> usize {
        let (bytes, dst, comm, mode) = (l.bytes, l.dst, l.comm, l.mode);
        let src = s.current();
        let clock = s.rank(src).clock;
        let msg = t.msg(src, dst, bytes);
        let posted = rule::post(t.model(), &msg, mode, clock, &mut unstretched);
        let free = posted.free;
        // The kernel's channel order: the envelope reaches the receiver's
        // matching after those sent before it on the channel (a
        // collective's steps and the application's messages on one
        // communicator share it, as in the replay).
        let envelope = self
            .channels
            .send((src, dst, comm & !STEPS), &posted, t.lookahead());
        let (at, arrived) = (envelope.at, envelope.arrival);
        let moving = match posted.eager {
            Some(Carried::Flow(flow, _)) => Some(self.eager_flow(s, t, flow)),
            _ => None,
        };
        if moving.is_some() || (posted.eager.is_none() && t.model().flows().is_some()) {
            self.behind_the_network(s, clock);
        }
        let eager = arrived.is_some() || moving.is_some();
        let req = self.request(s, Work::Send, eager);
        self.reqs[req].at = free;
        self.reqs[req].status = (dst as c_int, l.tag, bytes as usize);
        let sync = (!eager).then_some(req);
        let m = Parcel {
            src,
            dst,
            comm,
            from: l.from,
            tag: l.tag,
            data: l.data,
            bytes,
            free,
            arrived,
            moving,
            sync,
            synchronous: mode == Mode::Synchronous,
        };
        if comms.blocks.local(dst) {
            match self.early_receive(&m) {
                Some(r) => {
                    forget(&mut self.posted[dst as usize], r);
                    self.deliver(s, t, comms, m, r);
                }
                None => self.inbound(s, m, at),
            }
        } else {
            let gid = comms.comms[(comm & !STEPS) as usize].gid;
            let owner = comms.blocks.owner(dst);
            self.owe(owner, Remote::Message { message: m, gid, at });
        }
        req
    }

    /// Message `m` will arrive at its receiver, a rank of this process,
    /// at `at`.
    pub fn inbound(&mut self, s: &mut Sched, m: Parcel, at: Ns) {
        let dst = m.dst as usize;
        let id = self.inflight.insert(Some(m));
        self.flying[dst].push_back(id);
        s.push(at, Event::Deliver(id as u32));
    }

    /// The receive a rendezvous `m` from a rank of this process takes at
    /// its post, as the replay matches it (when the later side posts):
    /// the receiver's first posted receive that fits it names its source
    /// (so no other sender's message can take it first) and no earlier
    /// message of its channel is on its way (which would take it first).
    /// A wildcard receive waits for the envelope, which takes the first
    /// arrival in virtual time.
    fn early_receive(&self, m: &Parcel) -> Option<usize> {
        if m.eager() {
            return None;
        }
        let (any_source, any_tag) = wildcards();
        let dst = m.dst as usize;
        let first = self.posted[dst]
            .iter()
            .copied()
            .find(|&r| match &self.reqs[r].work {
                Work::Recv(spec, _) => fits(m, spec, any_source, any_tag),
                _ => false,
            })?;
        let Work::Recv(spec, _) = &self.reqs[first].work else {
            return None;
        };
        let earlier = self.flying[dst]
            .iter()
            .filter_map(|&id| self.inflight[id].as_ref())
            .any(|q| fits(q, spec, any_source, any_tag));
        (spec.from != any_source && !earlier).then_some(first)
    }

    /// The message on its way that receive `spec`, just posted by rank
    /// `me`, takes at once, as the
    /// replay matches it when the later side posts: a rendezvous from a
    /// rank of this process, the first of its channel on its way that
    /// fits, which no earlier posted receive fits. A wildcard receive
    /// waits for arrivals, which come in virtual-time order.
    fn early(&mut self, comms: &Registry, me: usize, spec: &RecvSpec) -> Option<Parcel> {
        let (any_source, any_tag) = wildcards();
        if spec.from == any_source {
            return None;
        }
        let (i, m) = self.flying[me]
            .iter()
            .enumerate()
            .filter_map(|(i, &id)| Some((i, self.inflight[id].as_ref()?)))
            .find(|(_, m)| fits(m, spec, any_source, any_tag))?;
        let taken = self.posted[me].iter().any(|&r| match &self.reqs[r].work {
            Work::Recv(other, _) => fits(m, other, any_source, any_tag),
            _ => false,
        });
        if m.eager() || taken || !comms.blocks.local(m.src) {
            return None;
        }
        let id = self.flying[me].remove(i)?;
        self.inflight[id].take()
    }

    /// Message `id` arrives at its receiver: the first posted receive that
    /// fits takes it, else it waits in the unexpected queue.
    pub fn arrive(&mut self, s: &mut Sched, t: &mut Timing, comms: &Registry, id: u32) {
        // A message matched at its post has nothing left to arrive.
        let Some(m) = self.inflight.remove(id as usize) else {
            return;
        };
        let (any_source, any_tag) = wildcards();
        let dst = m.dst as usize;
        forget(&mut self.flying[dst], id as usize);
        let found = self.posted[dst].iter().position(|&r| match &self.reqs[r].work {
            Work::Recv(spec, _) => fits(&m, spec, any_source, any_tag),
            _ => false,
        });
        match found {
            Some(i) => {
                let r = self.posted[dst].remove(i).expect("found above");
                self.deliver(s, t, comms, m, r);
            }
            None => {
                let probed = self.probes.get(&m.dst);
                if probed.is_some_and(|spec| fits(&m, spec, any_source, any_tag)) {
                    self.probes.remove(&m.dst);
                    s.wake(m.dst, s.now());
                }
                self.unexpected[dst].push_back(m);
            }
        }
    }

    /// The running rank posts a receive; returns the request.
    pub fn recv(&mut self, s: &mut Sched, t: &mut Timing, comms: &Registry, spec: RecvSpec) -> usize {
        let me = s.current() as usize;
        let (any_source, any_tag) = wildcards();
        let req = self.request(s, Work::Recv(spec, None), false);
        let found = self.unexpected[me]
            .iter()
            .position(|m| fits(m, &spec, any_source, any_tag));
        match found {
            Some(i) => {
                let m = self.unexpected[me].remove(i).expect("found above");
                self.deliver(s, t, comms, m, req);
            }
            None => match self.early(comms, me, &spec) {
                Some(m) => self.deliver(s, t, comms, m, req),
                None => self.posted[me].push_back(req),
            },
        }
        req
    }

    /// The running rank posts the receive of an algorithmic collective's
    /// step from rank `from` of communicator `comm`, in the steps'
    /// context ([`STEPS`]); returns the request.
    pub fn step_recv(
        &mut self,
        s: &mut Sched,
        t: &mut Timing,
        comms: &Registry,
        comm: u32,
        from: c_int,
    ) -> usize {
        self.recv(s, t, comms, RecvSpec::empty(comm | STEPS, from, 0))
    }

    /// Message `m` is matched with receive `req`: the receive completes
    /// at the kernel's time, and a rendezvous's sender when the data has
    /// arrived.
    fn deliver(&mut self, s: &mut Sched, t: &mut Timing, comms: &Registry, m: Parcel, req: usize) {
        let posted = self.reqs[req].posted;
        let msg = t.msg(m.src, m.dst, m.bytes);
        let mode = if m.synchronous {
            Mode::Synchronous
        } else {
            Mode::Standard
        };
        let (moving, free, sync) = (m.moving, m.free, m.sync);
        let flows = t.model().flows().is_some();
        let r = &mut self.reqs[req];
        r.status = (m.from, m.tag, m.bytes as usize);
        // The wait starts counting once the sender posted.
        r.posted = posted.max(m.free);
        let arrived = m.arrived;
        if let Work::Recv(_, slot) = &mut r.work {
            *slot = Some(m);
        }
        if let Some(n) = moving {
            self.eager_flow_matched(s, t, n, msg, req, posted);
            return;
        }
        if flows && arrived.is_none() {
            // One engine runs every rank under such a model (`flows`).
            self.rendezvous_flow(s, t, msg, mode, free, sync, req, posted);
            return;
        }
        let k = rule::matched(t.model(), &msg, mode, free, arrived, posted, &mut unstretched);
        if let Some(sync) = sync {
            if comms.blocks.local(msg.src) {
                self.complete(s, sync, k.send_done);
            } else {
                let owner = comms.blocks.owner(msg.src);
                let at = k.send_done;
                self.owe(owner, Remote::Matched { req: sync as u64, at });
            }
        }
        self.complete(s, req, k.recv_done);
    }

    /// The running rank is about to block in `MPI_Probe` for a message
    /// that fits `spec`.
    pub fn await_probe(&mut self, s: &Sched, spec: RecvSpec) {
        self.probes.insert(s.current(), spec);
    }

    /// Whether a message that fits has arrived at the running rank (for
    /// `MPI_Iprobe` and `MPI_Probe`): its source, tag and size.
    pub fn probe(&self, s: &Sched, spec: &RecvSpec) -> Option<(c_int, c_int, usize)> {
        let (any_source, any_tag) = wildcards();
        self.unexpected[s.current() as usize]
            .iter()
            .find(|m| fits(m, spec, any_source, any_tag))
            .map(|m| (m.from, m.tag, m.bytes as usize))
    }
}
