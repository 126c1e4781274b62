//! The replay engine: a discrete-event simulation over the actors' op
//! streams (PSINS's simulator).
//!
//! Each actor has a clock. The engine always advances the actor with the
//! earliest clock, one op at a time, so the model sees messages in
//! simulated-time order; an actor keeps going without touching the queue
//! while it stays the earliest. A CPU burst moves the clock by the burst
//! over the node's CPU ratio. A call that must wait (a receive before its
//! send, a rendezvous send before its receive, a wait on requests, a
//! collective before its last member) blocks the actor until the other
//! side's post resolves it; the engine then knows the completion time
//! from the model and puts the actor back in the queue at that time.
//!
//! Memory holds the actors, the unmatched messages and the open requests:
//! it grows with ranks and messages in flight, never with the trace.

mod coll_seq;
mod collective;
mod deadlock;
mod epochs;
mod landing;
mod matching;
mod members;
mod one_sided;
pub mod parallel;
mod ready;
mod requests;
pub mod stats;
mod transit;
mod windows;

use crate::algorithms::{Shape, Step};
use crate::input::{Op, OpKind, OpSource, ReqId, VCounts};
use crate::kernel::coll;
use crate::kernel::{self, p2p};
use crate::machine::Machine;
use crate::model::{Model, Msg, Transfer};
use crate::units::Ns;
use crate::SimError;
use coll_seq::CollSeq;
use matching::{Data, Key, Mailboxes, PendingRecv, PendingSend};
use members::Members;
use parallel::{Exchange, Part, Record};
use pnmpi_trace::routine::Coll;
use ready::ReadyQueue;
use requests::Requests;
use rustc_hash::{FxHashMap, FxHashSet};
use stats::{ActorStats, RoutineStats, Stats};
use std::collections::VecDeque;
use std::rc::Rc;
use transit::{Transit, Transits};

/// Tag of the messages of expanded collectives: no application tag is
/// negative except `MPI_ANY_TAG`, which never reaches matching.
const COLL_TAG: i64 = -1000;

/// Requests the engine makes for blocking calls and collective steps:
/// above the indices a trace uses.
const TEMP_REQ: u64 = 1 << 31;

/// Stretches CPU bursts by operating-system noise (jitter); `None`
/// replays noise-free.
pub trait Noise {
    /// Wall time at which `work` ns of CPU, started at `start` on
    /// `actor`, is done.
    fn run(&mut self, actor: usize, start: Ns, work: Ns) -> Ns;
}

/// Watches the replay as it goes (the timeline writer).
pub trait Observer {
    /// A call of `actor` ran ([`CallSpan`]).
    fn call(&mut self, actor: usize, call: &CallSpan);
    /// A message left `src` at `sent` and completed at `dst` at
    /// `received`, after waiting `resource_wait` of it for network
    /// resources (contention models) before its transfer.
    fn message(&mut self, src: usize, dst: usize, sent: Ns, received: Ns, bytes: u64, resource_wait: Ns);
}

/// One MPI call as the replay timed it, for an [`Observer`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CallSpan {
    /// Its routine, an index into the source's routines.
    pub routine: u32,
    /// Its call site, an index into the trace's site table
    /// ([`crate::input::NO_SITE`] where the source keeps none).
    pub site: u32,
    /// When it began and ended, ns.
    pub start: Ns,
    pub end: Ns,
    /// How much of it was waiting, ns.
    pub wait: Ns,
}

/// What a replay can be told besides the trace, machine and model.
#[derive(Default)]
pub struct Options<'a> {
    /// CPU noise.
    pub noise: Option<&'a mut dyn Noise>,
    /// A timeline writer.
    pub observer: Option<&'a mut dyn Observer>,
    /// Told of the ops replayed so far and the simulated time reached
    /// (ns), every million ops or so.
    pub progress: Option<&'a dyn Fn(u64, Ns)>,
}

/// A replay's outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// End of `MPI_Init` to the start of the last `MPI_Finalize`, ns.
    pub runtime: Ns,
    /// The statistics.
    pub stats: Stats,
    /// A parallel replay's protocol, as process 0 saw it.
    pub protocol: Option<parallel::ProtocolCost>,
}

/// The MPI call an actor is in: its routine ([`NO_CALL`] when in none),
/// call site and start, 16 bytes where an `Option` took 24.
#[derive(Clone, Copy)]
struct Call {
    routine: u32,
    site: u32,
    start: Ns,
}

/// "In no call": no routine table has `u32::MAX` entries.
const NO_CALL: u32 = u32::MAX;

impl Default for Call {
    fn default() -> Call {
        Call {
            routine: NO_CALL,
            site: crate::input::NO_SITE,
            start: 0.0,
        }
    }
}

impl Call {
    /// Whether the actor is in a call.
    fn is_open(&self) -> bool {
        self.routine != NO_CALL
    }
}

#[derive(Default)]
struct ActorState {
    node: u32,
    clock: Ns,
    started: bool,
    done: bool,
    /// Unresolved items the current call waits for.
    blocked: u32,
    resume_at: Ns,
    /// The latest partner post among the resolved items of the call.
    late: Ns,
    call: Call,
    /// Its op is read but not run yet (it yielded).
    pending: bool,
    /// The algorithmic collective under way, if any: boxed, since most
    /// actors are in none most of the time.
    steps: Option<Box<Steps>>,
    next_temp: u32,
    /// Per communicator, the collectives entered so far.
    coll_seq: CollSeq,
    /// Its one-sided epochs, if it made any one-sided call.
    rma: Option<Box<epochs::Epochs>>,
    /// The rest of a closing one-sided call waiting for its operations'
    /// flows: its window and what it does once they end.
    then: Option<Box<(u32, epochs::Rest)>>,
    /// Its current op, read into and run in place (a source reuses what
    /// it holds, a wait's completion list, instead of allocating per op),
    /// beside the rest of its state, which every event reads too: at a
    /// million actors, one place that misses the cache, not two.
    op: Op,
}

/// An algorithmic collective's expansion, being run by one actor.
struct Steps {
    queue: VecDeque<Step>,
    members: Rc<Members>,
    comm: i64,
    /// The requests of the steps since the last wait.
    reqs: Vec<ReqId>,
}

struct Rendezvous {
    arrived: u32,
    ready: Ns,
    reqs: Vec<ReqId>,
    /// The largest size any member brought (a `v` collective's members
    /// bring their largest per-peer message).
    bytes: u64,
}

/// The simulation state.
struct Engine<'m, 'o> {
    machine: &'m Machine,
    model: &'m mut dyn Model,
    noise: Option<&'o mut dyn Noise>,
    observer: Option<&'o mut dyn Observer>,
    /// The actors replayed here, by their index here (local): the
    /// source's actors from `first` on. A parallel replay's process
    /// keeps its own ranks' state only, so that its memory follows them;
    /// global ids (the source's actor indices, which request ids carry,
    /// and world ranks) are used at the edges: the source, records to
    /// other processes, reports.
    actors: Vec<ActorState>,
    /// The source's index of local actor 0.
    first: usize,
    /// The world rank of `rank_actor[0]`.
    first_rank: u32,
    /// The local actor of each local rank's first thread, from `first_rank`.
    rank_actor: Vec<u32>,
    /// Each rank's node (0 for a rank with no actor): a message's ends
    /// are looked up here, 4 bytes a rank, not in the receiver's state.
    rank_node: Vec<u32>,
    /// The actors ready to run, by (clock, actor).
    heap: ReadyQueue,
    mail: Mailboxes,
    /// Open requests; wildcard receives keep their post in `wildcards`.
    reqs: Requests,
    /// Wildcard receives matched when their completion names the source:
    /// (post, tag, communicator), while their request is open.
    wildcards: FxHashMap<ReqId, (Ns, i64, i64)>,
    colls: FxHashMap<(i64, u64), Rendezvous>,
    members: FxHashMap<(i64, u32), Rc<Members>>,
    /// Each routine's send mode ([`p2p::Mode::of`] its name).
    modes: Vec<p2p::Mode>,
    /// The synchronous sends (sender, request) not matched yet: few, so
    /// a set beside the pending sends rather than a field in each.
    synchronous: FxHashSet<(u32, ReqId)>,
    /// Each channel's latest envelope (sender, receiver, communicator):
    /// the kernel's channel order.
    channels: p2p::Channels<(u32, u32, i64)>,
    /// The model's lookahead, which a rendezvous envelope travels.
    lookahead: Ns,
    /// Whether the model moves messages as flows over shared links.
    has_flows: bool,
    /// The messages whose data moves as flows, and what their ends
    /// complete.
    transits: Transits,
    stats: Stats,
    /// Per routine, time and wait in picoseconds: exact sums, the same
    /// in whatever order the calls close (a parallel replay's processes
    /// add theirs up).
    routine_ps: Vec<(i128, i128)>,
    /// The messages' wait for resources, ps.
    resource_wait_ps: i128,
    /// A parallel replay's part: which ranks are replayed here, what is
    /// owed to other processes.
    part: Option<Part<'o>>,
}

/// A rank without an actor in `Engine::rank_actor` (actors are indexed
/// by `u32` throughout: a request id keeps its actor in 32 bits).
const NO_ACTOR: u32 = u32::MAX;

/// Picoseconds per ns: the resolution of the engine's exact sums.
const PS: f64 = 1e3;

/// `t` ns (not negative) in picoseconds, rounded, for an exact sum. One
/// value fits an `i64` up to 106 days, the sums are `i128`; the float to
/// `i64` cast is one instruction where `round` and an `i128` cast are
/// calls.
fn ps(t: Ns) -> i128 {
    i128::from((t * PS + 0.5) as i64)
}

/// CPU from `start` for `work` ns on actor `a` (a model's overhead):
/// when it ends, stretched by `noise` if any.
fn stretch(noise: &mut Option<&mut dyn Noise>, a: usize, start: Ns, work: Ns) -> Ns {
    match noise.as_deref_mut() {
        Some(n) if work > 0.0 => n.run(a, start, work),
        _ => start + work,
    }
}

/// Simulated times are non-negative, so their bits order like the values.
fn key(t: Ns) -> u64 {
    t.max(0.0).to_bits()
}

/// Replays `src` on `machine` with `model`.
pub fn replay(
    src: &mut dyn OpSource,
    machine: &Machine,
    model: &mut dyn Model,
    opts: Options<'_>,
) -> Result<Outcome, SimError> {
    let all = 0..src.actors().len();
    let mut e = Engine::new(src, machine, model, opts.noise, opts.observer, None, all)?;
    e.run_serial(src, opts.progress)?;
    e.finish()
}

/// What a run of `procs` processes says when `model` cannot be cut into
/// time windows and process 0 `runs` every rank (virtual ranks, and the
/// replay under `mpirun`): one engine sees every message, the other
/// processes wait.
pub fn one_engine_note(model: &str, procs: u32, runs: &str) -> String {
    let others = match procs {
        2 => "process 1 only waits".to_string(),
        _ => format!("processes 1 to {} only wait", procs - 1),
    };
    format!(
        "model {model} cannot spread the ranks over {procs} processes (its state spans ranks, or its least latency \
         between ranks is 0, so no time window bounds what one process causes in another): process 0 {runs}, one \
         engine that sees every message; {others}"
    )
}

/// The lookahead `model` gives a parallel replay, or why it cannot replay
/// in parallel with the serial answer: checked before a job starts, so
/// that every process refuses alike.
pub fn parallel_lookahead(model: &dyn Model) -> Result<Ns, SimError> {
    let lookahead = model.lookahead();
    if lookahead.is_nan() || lookahead <= 0.0 {
        return Err(SimError::Parallel(format!(
            "the {} model cannot replay in parallel with the serial answer (its state spans ranks, or it bounds no message's time from below): run it without mpirun",
            model.name()
        )));
    }
    Ok(lookahead)
}

/// Replays `src` on `machine` with `model` as one process of a parallel
/// replay ([`parallel`]): this process replays its block of ranks, and
/// process 0 gets the whole run's outcome (`Ok(None)` elsewhere). Every
/// process reads only its own ranks' ops from `src`. `local_comm_ids`:
/// `src` numbers communicators as it meets them (a tracer folder), so
/// only world and self may cross processes.
pub fn replay_parallel(
    src: &mut dyn OpSource,
    machine: &Machine,
    model: &mut dyn Model,
    x: &mut dyn Exchange,
    local_comm_ids: bool,
    progress: Option<&dyn Fn(u64, Ns)>,
) -> Result<Option<Outcome>, SimError> {
    let lookahead = parallel_lookahead(model)?;
    let began = std::time::Instant::now();
    let world = src.world_size();
    let info = src.actors();
    if info.windows(2).any(|w| w[0].rank > w[1].rank) {
        return Err(SimError::Parallel(
            "the source lists its actors out of rank order: replay it without mpirun".into(),
        ));
    }
    // Where each process's block of actors starts, and ends.
    let actor_starts: Vec<usize> = (0..=x.procs())
        .map(|p| info.partition_point(|a| parallel::owner(a.rank, world, x.procs()) < p))
        .collect();
    let mine = actor_starts[x.me() as usize]..actor_starts[x.me() as usize + 1];
    src.keep(mine.clone());
    let part = Part {
        outbox: vec![Vec::new(); x.procs() as usize],
        actor_starts,
        x,
        window_end: lookahead,
        lookahead,
        world,
        local_comm_ids,
        unshared: None,
        cost: parallel::ProtocolCost::default(),
    };
    let mut e = Engine::new(src, machine, model, None, None, Some(part), mine)?;
    if let Some(p) = e.part.as_mut() {
        p.cost.setup_s = began.elapsed().as_secs_f64();
    }
    e.run_windows(src, progress)?;
    let began = std::time::Instant::now();
    let mut out = e.finish_parallel(src)?;
    if let Some(p) = out.as_mut().and_then(|o| o.protocol.as_mut()) {
        p.finish_s = began.elapsed().as_secs_f64();
    }
    Ok(out)
}

impl<'m, 'o> Engine<'m, 'o> {
    fn new(
        src: &dyn OpSource,
        machine: &'m Machine,
        model: &'m mut dyn Model,
        noise: Option<&'o mut dyn Noise>,
        observer: Option<&'o mut dyn Observer>,
        part: Option<Part<'o>>,
        mine: std::ops::Range<usize>,
    ) -> Result<Self, SimError> {
        // Each actor's rank and thread are kept in its statistics, not
        // twice (8 bytes an actor).
        let all = src.actors();
        let info = &all[mine.clone()];
        let n_actors = info.len();
        let world = src.world_size();
        let mut rank_node = machine.place(world).map_err(SimError::Machine)?;
        // A rank with no actor anywhere (a trace of some ranks) sits on node 0.
        let mut has_actor = vec![false; world as usize];
        for a in all {
            if let Some(h) = has_actor.get_mut(a.rank as usize) {
                *h = true;
            }
        }
        rank_node.resize(world as usize, 0);
        for (n, h) in rank_node.iter_mut().zip(has_actor) {
            if !h {
                *n = 0;
            }
        }
        let nodes = &rank_node;
        let first_rank = info.iter().map(|a| a.rank).min().unwrap_or(0);
        let span = info.iter().map(|a| a.rank - first_rank + 1).max().unwrap_or(0);
        let mut rank_actor = vec![NO_ACTOR; span as usize];
        for (i, a) in info.iter().enumerate().rev() {
            rank_actor[(a.rank - first_rank) as usize] = i as u32;
        }
        let lookahead = model.lookahead();
        let has_flows = model.flows().is_some();
        let mut e = Engine {
            machine,
            model,
            noise,
            observer,
            actors: info
                .iter()
                .map(|a| ActorState {
                    node: nodes.get(a.rank as usize).copied().unwrap_or(0),
                    ..ActorState::default()
                })
                .collect(),
            stats: Stats {
                actors: info
                    .iter()
                    .map(|a| ActorStats {
                        rank: a.rank,
                        thread: a.thread,
                        node: nodes.get(a.rank as usize).copied().unwrap_or(0),
                        ..ActorStats::default()
                    })
                    .collect(),
                routines: vec![RoutineStats::default(); src.routines().len()],
                ..Stats::default()
            },
            routine_ps: vec![(0, 0); src.routines().len()],
            resource_wait_ps: 0,
            first: mine.start,
            first_rank,
            rank_actor,
            rank_node,
            heap: ReadyQueue::default(),
            mail: Mailboxes::new(first_rank),
            reqs: Requests::new(mine.start, n_actors),
            wildcards: FxHashMap::default(),
            colls: FxHashMap::default(),
            members: FxHashMap::default(),
            modes: src.routines().iter().map(|r| p2p::Mode::of(r)).collect(),
            synchronous: FxHashSet::default(),
            channels: p2p::Channels::default(),
            lookahead,
            has_flows,
            transits: Transits::default(),
            part,
        };
        for a in 0..e.actors.len() {
            e.heap.push((0, a as u32));
        }
        Ok(e)
    }

    /// The latest end of an actor so far, ns.
    fn latest_end(&self) -> Ns {
        self.stats.actors.iter().map(|s| s.end).fold(0.0, f64::max)
    }

    /// The local actor of world rank `rank`'s first thread, if replayed here.
    fn local_actor(&self, rank: u32) -> Option<usize> {
        match self.rank_actor.get(rank.wrapping_sub(self.first_rank) as usize) {
            Some(&a) if a != NO_ACTOR => Some(a as usize),
            _ => None,
        }
    }

    /// The local actor of request `req` (its id holds the source's actor
    /// index), if replayed here.
    fn req_actor(&self, req: ReqId) -> Option<usize> {
        let a = ((req >> 32) as usize).wrapping_sub(self.first);
        (a < self.actors.len()).then_some(a)
    }

    /// The serial replay: every actor, in simulated-time order.
    fn run_serial(
        &mut self,
        src: &mut dyn OpSource,
        progress: Option<&dyn Fn(u64, Ns)>,
    ) -> Result<(), SimError> {
        let mut next_progress = 1 << 20;
        loop {
            // A flow's event first, up to and including the next actor's
            // time: what it completes may come before that actor's op.
            if self.has_flows {
                if let Some(f) = self.next_flow_event() {
                    if self.heap.peek().is_none_or(|(t, _)| key(f) <= t) {
                        self.step_flows();
                        continue;
                    }
                }
            }
            let Some((t, a)) = self.heap.pop() else {
                break;
            };
            self.advance(a as usize, src)?;
            if let Some(p) = progress {
                if self.stats.events >= next_progress {
                    p(self.stats.events, f64::from_bits(t));
                    next_progress += 1 << 20;
                }
            }
        }
        if let Some(p) = progress {
            p(self.stats.events, self.latest_end());
        }
        Ok(())
    }

    fn msg(&self, src: u32, dst: u32, bytes: u64) -> Msg {
        Msg::between(src, dst, bytes, |r| {
            self.rank_node.get(r as usize).copied().unwrap_or(0)
        })
    }

    fn temp_req(&mut self, a: usize) -> ReqId {
        let st = &mut self.actors[a];
        // Wraps at 2^32, a multiple of TEMP_REQ: the ids a u64 count gave.
        st.next_temp = st.next_temp.wrapping_add(1);
        (((self.first + a) as u64) << 32) | (TEMP_REQ + u64::from(st.next_temp) % TEMP_REQ)
    }

    /// Runs actor `a` until it blocks, ends, or is no longer the earliest.
    fn advance(&mut self, a: usize, src: &mut dyn OpSource) -> Result<(), SimError> {
        loop {
            if self.actors[a].blocked > 0 || self.actors[a].done {
                return Ok(());
            }
            if let Some(rest) = self.actors[a].then.take() {
                let (win, rest) = *rest;
                self.rest(a, win, rest, &*src);
                continue;
            }
            match self.actors[a].steps.as_mut().map(|s| s.queue.pop_front()) {
                Some(Some(step)) => {
                    self.step(a, step);
                    continue;
                }
                Some(None) => self.actors[a].steps = None,
                None => {}
            }
            self.close_call(a);
            if self.actors[a].pending {
                self.actors[a].pending = false;
            } else {
                if !src.next(self.first + a, &mut self.actors[a].op)? {
                    self.end_actor(a);
                    return Ok(());
                }
                self.stats.events += 1;
                // The CPU burst before the call.
                let st = &mut self.actors[a];
                let gap = st.op.gap;
                if st.started && gap > 0.0 {
                    let work = kernel::cpu(self.machine, st.node, gap, 1.0);
                    self.compute(a, work);
                }
                // Stay in simulated-time order: yield if another actor is
                // earlier, or (in parallel) at the window's end. A call that
                // touches nothing but its own actor (local work, a test that
                // completed nothing, the end) needs no order: it runs on, so
                // that a rank polling or computing alone costs neither heap
                // operations nor, in parallel, a window per call.
                let clock = self.actors[a].clock;
                let local = matches!(self.actors[a].op.kind, OpKind::Local | OpKind::Finalize);
                let later = !local
                    && (self.heap.peek().is_some_and(|(t, _)| key(clock) > t)
                        || self.part.as_ref().is_some_and(|p| clock >= p.window_end)
                        || (self.has_flows && self.next_flow_event().is_some_and(|f| clock > f)));
                if later && !self.wait_runs_alone(a) {
                    self.actors[a].pending = true;
                    self.heap.push((key(clock), a as u32));
                    return Ok(());
                }
            }
            let op = std::mem::take(&mut self.actors[a].op);
            self.execute(a, &op, &*src);
            // The placeholder `take` left has nothing to free: forgotten,
            // not dropped (a call on every event).
            std::mem::forget(std::mem::replace(&mut self.actors[a].op, op));
        }
    }

    /// Whether actor `a`'s op is a wait (or a test that completed
    /// something) that touches nothing but its own actor, as local work
    /// does, and so needs no order either: it finds its requests complete
    /// (a test's success after polls, the wait of an eager send) or blocks
    /// on them, and under a model whose calls resume at once
    /// ([`Model::resumes_at_once`]) it ends at the same time either way.
    /// In a parallel replay a rank blocking in a wait then costs no
    /// window. A wildcard receive not yet matched is posted by its wait,
    /// and a request not open yet may be another thread's, posted at an
    /// earlier time: not alone.
    fn wait_runs_alone(&mut self, a: usize) -> bool {
        let OpKind::Wait(done) = &self.actors[a].op.kind else {
            return false;
        };
        let at_once = self.model.resumes_at_once();
        done.iter().all(|c| {
            !self.wildcards.contains_key(&c.req)
                && self
                    .reqs
                    .get_mut(c.req)
                    .is_some_and(|r| at_once || r.done().is_some())
        })
    }

    fn end_actor(&mut self, a: usize) {
        let st = &mut self.actors[a];
        st.done = true;
        self.stats.actors[a].end = st.clock;
    }

    fn open_call(&mut self, a: usize, op: &Op) {
        let st = &mut self.actors[a];
        st.call = Call {
            routine: op.routine,
            site: op.site,
            start: st.clock,
        };
        st.late = f64::NEG_INFINITY;
    }

    /// The kernel's rule for the receive of `m`, posted at `posted`, whose
    /// data arrived at `arrival`: when it completes, the receiver's
    /// overhead stretched by noise.
    fn received(&mut self, m: &Msg, arrival: Ns, posted: Ns) -> Ns {
        let a = self.local_actor(m.dst);
        let noise = &mut self.noise;
        let mut cpu = |start: Ns, work: Ns| match a {
            Some(a) => stretch(noise, a, start, work),
            None => p2p::unstretched(start, work),
        };
        p2p::received(&mut *self.model, m, arrival, posted, &mut cpu)
    }

    /// `work` ns of target CPU on actor `a`, stretched by noise if any.
    fn compute(&mut self, a: usize, work: Ns) {
        let st = &mut self.actors[a];
        let end = match self.noise.as_deref_mut() {
            Some(n) => n.run(a, st.clock, work),
            None => st.clock + work,
        };
        self.stats.actors[a].compute += end - st.clock;
        st.clock = end;
    }

    fn close_call(&mut self, a: usize) {
        let st = &mut self.actors[a];
        let call = std::mem::take(&mut st.call);
        if !call.is_open() {
            return;
        }
        let dur = st.clock - call.start;
        let wait = (st.late - call.start).clamp(0.0, dur);
        let s = &mut self.stats.actors[a];
        s.comm += dur - wait;
        s.wait += wait;
        s.calls += 1;
        self.stats.routines[call.routine as usize].count += 1;
        let r = &mut self.routine_ps[call.routine as usize];
        r.0 += ps(dur);
        r.1 += ps(wait);
        if let Some(o) = self.observer.as_deref_mut() {
            let span = CallSpan {
                routine: call.routine,
                site: call.site,
                start: call.start,
                end: st.clock,
                wait,
            };
            o.call(a, &span);
        }
    }

    fn execute(&mut self, a: usize, op: &Op, src: &dyn OpSource) {
        let rank = self.stats.actors[a].rank;
        match &op.kind {
            OpKind::Init => {
                let st = &mut self.actors[a];
                st.started = true;
                st.clock = 0.0;
            }
            OpKind::Finalize => self.end_actor(a),
            OpKind::Local | OpKind::Cancel(_) => {
                let st = &self.actors[a];
                if st.started {
                    let work = kernel::cpu(self.machine, st.node, op.dur, 1.0);
                    self.compute(a, work);
                }
                if let &OpKind::Cancel(req) = &op.kind {
                    self.cancel(rank, req, self.actors[a].clock);
                }
            }
            &OpKind::Send {
                to,
                tag,
                comm,
                bytes,
                req,
            } => {
                self.open_call(a, op);
                let r = req.unwrap_or_else(|| self.temp_req(a));
                let mode = self.modes[op.routine as usize];
                self.post_send(a, r, self.msg(rank, to, bytes), tag, comm, mode);
                if req.is_none() {
                    self.wait_for(a, r);
                }
            }
            &OpKind::Recv {
                from,
                tag,
                comm,
                bytes: _,
                req,
            } => {
                self.open_call(a, op);
                let r = req.unwrap_or_else(|| self.temp_req(a));
                match from {
                    Some(from) => self.post_recv(a, r, from, tag, comm, self.actors[a].clock),
                    None => {
                        let clock = self.actors[a].clock;
                        self.open_req(r, None);
                        self.wildcards.insert(r, (clock, tag, comm));
                    }
                }
                if req.is_none() {
                    self.wait_for(a, r);
                }
            }
            &OpKind::Sendrecv {
                to,
                stag,
                sbytes,
                from,
                rtag,
                rbytes: _,
                comm,
            } => {
                self.open_call(a, op);
                let rr = self.temp_req(a);
                let sr = self.temp_req(a);
                self.post_recv(a, rr, from, rtag, comm, self.actors[a].clock);
                self.post_send(a, sr, self.msg(rank, to, sbytes), stag, comm, p2p::Mode::Standard);
                self.wait_for(a, rr);
                self.wait_for(a, sr);
            }
            OpKind::Wait(done) => {
                self.open_call(a, op);
                for c in done {
                    let req = c.req;
                    self.resolve_deferred(a, req, c.status());
                    self.wait_for(a, req);
                }
            }
            OpKind::Coll {
                op: c,
                comm,
                bytes,
                root,
                req,
                counts,
            } => {
                self.open_call(a, op);
                self.collective(a, src, (*c, *comm, *bytes, *root), *req, counts.as_deref());
            }
            OpKind::Rma { win, act } => {
                self.open_call(a, op);
                self.one_sided(a, *win, act, src);
            }
        }
    }

    /// A send of `m` in `mode` posted now by actor `a`, completing
    /// request `req`.
    fn post_send(&mut self, a: usize, req: ReqId, m: Msg, tag: i64, comm: i64, mode: p2p::Mode) {
        let post = self.actors[a].clock;
        let noise = &mut self.noise;
        let posted = p2p::post(&mut *self.model, &m, mode, post, &mut |start, work| {
            stretch(noise, a, start, work)
        });
        let free = posted.free;
        let key: Key = (m.src, m.dst, tag, comm);
        let envelope = self.channels.send((m.src, m.dst, comm), &posted, self.lookahead);
        let mut s = PendingSend {
            req,
            msg: m,
            post,
            free,
            data: Data::Waiting,
        };
        match (posted.eager, envelope.arrival) {
            (Some(p2p::Carried::Known(x)), Some(arrival)) => {
                self.count_message(&m, free, x.start, x.end);
                s.data = Data::Arrived(arrival, x.start - free);
            }
            (Some(p2p::Carried::Flow(flow, _)), _) => {
                let t = Transit::Eager {
                    send: s,
                    recv: None,
                    landed: None,
                };
                s.data = Data::Moving(self.transits.start(flow, t));
            }
            _ => {}
        }
        // An eager send completes once its overhead is paid.
        let eager = s.data != Data::Waiting;
        self.open_req(req, eager.then_some((free, f64::NEG_INFINITY)));
        self.route(key, s, mode == p2p::Mode::Synchronous);
    }

    /// Send `s`, of `key`, goes to its receiver: into this process's
    /// mailbox, or as a record to the receiver's process.
    fn route(&mut self, key: Key, s: PendingSend, synchronous: bool) {
        let (dst, comm) = (key.1, key.3);
        match self.part.as_mut() {
            Some(p) if !p.local(dst) && !p.shared_comm(comm) => p.unshared = Some(comm),
            Some(p) if !p.local(dst) => p.send(
                dst,
                Record::Send {
                    key,
                    req: s.req,
                    bytes: s.msg.bytes,
                    post: s.post,
                    free: s.free,
                    arrival: s.data.arrived(),
                    synchronous,
                },
            ),
            _ => {
                if synchronous {
                    self.synchronous.insert((key.0, s.req));
                }
                self.deliver(key, s)
            }
        }
    }

    /// Send `s` reaches its receiver's mailbox (posted here, or a record
    /// from the sender's process): matched with the oldest waiting
    /// receive, or queued.
    fn deliver(&mut self, key: Key, s: PendingSend) {
        if let Some(r) = self.mail.send(key, s) {
            match s.data {
                Data::Arrived(arrival, resource_wait) => self.eager_received(&s, arrival, resource_wait, &r),
                Data::Moving(n) => self.eager_matched(n, &s, &r),
                Data::Waiting => self.rendezvous(&s, &r),
            }
        }
        self.stats.peak_in_flight = self.stats.peak_in_flight.max(self.mail.in_flight());
    }

    /// A receive posted at `post` by actor `a` from world rank `from`.
    fn post_recv(&mut self, a: usize, req: ReqId, from: u32, tag: i64, comm: i64, post: Ns) {
        let key: Key = (from, self.stats.actors[a].rank, tag, comm);
        let r = PendingRecv { req, post };
        match self.mail.recv(key, r) {
            Some(s) => match s.data {
                Data::Arrived(arrival, resource_wait) => {
                    let done = self.received(&s.msg, arrival, post);
                    self.delivered(&s.msg, s.post, done, resource_wait);
                    // Opened and completed in one lookup.
                    self.forget_wildcard(req);
                    let open = self.reqs.get_or_open(req);
                    if open.waiter().is_none() {
                        open.set_done(done, s.post);
                    } else {
                        self.complete(req, done, s.post);
                    }
                }
                Data::Moving(n) => {
                    self.open_recv(req);
                    self.eager_matched(n, &s, &r);
                }
                Data::Waiting => {
                    self.open_recv(req);
                    self.rendezvous(&s, &r);
                }
            },
            None => {
                self.open_recv(req);
                self.stats.peak_in_flight = self.stats.peak_in_flight.max(self.mail.in_flight());
            }
        }
    }

    fn rendezvous(&mut self, s: &PendingSend, r: &PendingRecv) {
        let mode = if !self.synchronous.is_empty() && self.synchronous.remove(&(s.msg.src, s.req)) {
            p2p::Mode::Synchronous
        } else {
            p2p::Mode::Standard
        };
        let ready = self.model.rendezvous_ready(&s.msg, s.free, r.post);
        match p2p::carry(&mut *self.model, &s.msg, ready) {
            p2p::Carried::Known(x) => self.rendezvous_landed(s, r, mode, ready, x, true),
            p2p::Carried::Flow(flow, _) => {
                if mode == p2p::Mode::Synchronous {
                    self.complete(s.req, p2p::send_done(mode, false, ready, ready), r.post);
                }
                let t = Transit::Rendezvous {
                    send: *s,
                    recv: *r,
                    mode,
                    ready,
                };
                self.transits.start(flow, t);
            }
        }
    }

    /// Rendezvous `s`, `r` in `mode`, ready at `ready`, moved as `x`: both
    /// sides complete (the send only if `send_open`, as a synchronous
    /// send whose data was a flow completed when matched).
    fn rendezvous_landed(
        &mut self,
        s: &PendingSend,
        r: &PendingRecv,
        mode: p2p::Mode,
        ready: Ns,
        x: Transfer,
        send_open: bool,
    ) {
        let recv_done = self.received(&s.msg, x.end, r.post);
        self.count_message(&s.msg, ready, x.start, x.end);
        self.delivered(&s.msg, s.post, recv_done, x.start - ready);
        if send_open {
            self.complete(s.req, p2p::send_done(mode, false, ready, x.end), r.post);
        }
        self.complete(r.req, recv_done, s.post);
    }

    /// Eager send `s`, its data arrived at `arrival` after waiting
    /// `resource_wait` for the network, is received by `r`.
    fn eager_received(&mut self, s: &PendingSend, arrival: Ns, resource_wait: Ns, r: &PendingRecv) {
        let done = self.received(&s.msg, arrival, r.post);
        self.delivered(&s.msg, s.post, done, resource_wait);
        self.complete(r.req, done, s.post);
    }

    fn count_message(&mut self, m: &Msg, ready: Ns, start: Ns, end: Ns) {
        self.stats.messages += 1;
        self.stats.sizes.add(m.bytes as f64);
        self.resource_wait_ps += ps(start - ready);
        if m.bytes > 0 && end > start {
            self.stats.bandwidths.add(m.bytes as f64 * 1e9 / (end - start));
        }
    }

    fn delivered(&mut self, m: &Msg, sent: Ns, received: Ns, resource_wait: Ns) {
        if self.observer.is_some() {
            let actor = |r: u32| self.local_actor(r).unwrap_or(0);
            let (src, dst) = (actor(m.src), actor(m.dst));
            if let Some(o) = self.observer.as_deref_mut() {
                o.message(src, dst, sent, received, m.bytes, resource_wait);
            }
        }
    }

    /// Opens request `req` (replacing any of that id), completed at once
    /// if `done` says when.
    fn open_req(&mut self, req: ReqId, done: Option<(Ns, Ns)>) {
        self.forget_wildcard(req);
        self.reqs.open(req, done);
    }

    /// Opens receive request `req`, keeping it if open already (a
    /// wildcard receive being matched).
    fn open_recv(&mut self, req: ReqId) {
        self.forget_wildcard(req);
        self.reqs.get_or_open(req);
    }

    /// `req` is no wildcard receive waiting for its source (any more).
    fn forget_wildcard(&mut self, req: ReqId) {
        if !self.wildcards.is_empty() {
            self.wildcards.remove(&req);
        }
    }

    /// `MPI_Cancel` of `req` by `rank` at `t`: a receive not matched yet
    /// (posted, or a wildcard waiting for its source) leaves its mailbox
    /// and completes now; a matched one, or a send, completes as it would.
    fn cancel(&mut self, rank: u32, req: ReqId, t: Ns) {
        let unmatched = self.wildcards.remove(&req).is_some() || self.mail.cancel_recv(rank, req);
        if unmatched {
            if let Some(r) = self.reqs.get_mut(req) {
                r.set_done(t, f64::NEG_INFINITY);
            }
        }
    }

    /// A wildcard receive's source is known now: match it as posted.
    fn resolve_deferred(&mut self, a: usize, req: ReqId, status: Option<(u32, i64)>) {
        if self.wildcards.is_empty() {
            return;
        }
        if self.reqs.get_mut(req).is_none() {
            return;
        }
        let Some((post, tag, comm)) = self.wildcards.remove(&req) else {
            return;
        };
        match status {
            Some((src, stag)) => self.post_recv(a, req, src, if tag < 0 { stag } else { tag }, comm, post),
            // No status: the trace cannot say what it received; it completes at once.
            None => {
                if let Some(r) = self.reqs.get_mut(req) {
                    r.set_done(post, f64::NEG_INFINITY);
                }
            }
        }
    }

    /// Request `req` completes at `t`; its partner posted at `partner`.
    fn complete(&mut self, req: ReqId, t: Ns, partner: Ns) {
        if self.req_actor(req).is_none() {
            if let Some(p) = self.part.as_mut() {
                p.send_to_actor((req >> 32) as usize, Record::Done { req, t, partner });
                return;
            }
        }
        let Some(r) = self.reqs.get_mut(req) else {
            return;
        };
        match r.waiter() {
            Some(a) => {
                self.reqs.remove(req);
                self.forget_wildcard(req);
                self.resolved(a as usize, t, partner);
            }
            None => r.set_done(t, partner),
        }
    }

    fn resolved(&mut self, a: usize, t: Ns, partner: Ns) {
        let st = &mut self.actors[a];
        st.resume_at = st.resume_at.max(t);
        st.late = st.late.max(partner);
        st.blocked -= 1;
        if st.blocked == 0 {
            st.clock = self.model.resume(st.resume_at.max(st.clock));
            self.heap.push((key(st.clock), a as u32));
        }
    }

    /// The current call of `a` also waits for `req`.
    fn wait_for(&mut self, a: usize, req: ReqId) {
        let Some(r) = self.reqs.get_mut(req) else {
            return; // unknown to the replay (created before the trace): done
        };
        match r.done() {
            Some((t, partner)) => {
                self.reqs.remove(req);
                self.forget_wildcard(req);
                let st = &mut self.actors[a];
                st.clock = st.clock.max(t);
                st.late = st.late.max(partner);
            }
            None => {
                r.set_waiter(a as u32);
                let st = &mut self.actors[a];
                if st.blocked == 0 {
                    st.resume_at = st.clock;
                }
                st.blocked += 1;
            }
        }
    }

    /// The exact sums into the statistics.
    fn settle(&mut self) {
        for (r, &(time, wait)) in self.stats.routines.iter_mut().zip(&self.routine_ps) {
            r.time = time as f64 / PS;
            r.wait = wait as f64 / PS;
        }
        self.stats.resource_wait = self.resource_wait_ps as f64 / PS;
        self.stats.peak_in_flight = self.stats.peak_in_flight.max(self.mail.in_flight());
    }

    fn finish(mut self) -> Result<Outcome, SimError> {
        let stuck: Vec<usize> = (0..self.actors.len()).filter(|&a| !self.actors[a].done).collect();
        if !stuck.is_empty() {
            return Err(SimError::Deadlock(self.deadlock_report(&stuck)));
        }
        self.settle();
        let runtime = self.stats.actors.iter().map(|s| s.end).fold(0.0, f64::max);
        Ok(Outcome {
            runtime,
            stats: self.stats,
            protocol: None,
        })
    }
}
