//! Our traces as ops: a merged `.pnt` or a tracer output folder, read
//! stream by stream through `pnmpi-trace`'s [`EventSource`], each event
//! turned into one op (or several, for `MPI_Startall`).

use super::events::EventSource;
use super::locks::{self, Handover, LockTurns};
use super::ops::{fence_window, Actor, Completion, Measured, Op, OpKind, OpSource, ReqId, RmaAct, NO_SITE};
use crate::algorithms::member_bytes;
use crate::units::Ns;
use crate::SimError;
use pnmpi_trace::fields::*;
use pnmpi_trace::messages::Persistent;
use pnmpi_trace::rma::RmaRole;
use pnmpi_trace::routine::{classify, RoutineKind};
use pnmpi_trace::trace::{Event, ReqRef};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// A stream's conversion state and measured times: one record, since a
/// replay reads it on every event of the stream (a million of them at a
/// million ranks).
struct StreamState {
    prev_end: u64,
    /// When its `MPI_Init` ended, [`NOT_YET`] before.
    init_end: u64,
    /// Its share of [`Measured`].
    compute: Ns,
    mpi: Ns,
    span: Ns,
    finished: bool,
    /// Folding ([`TraceOps::folding`]): whether the stream's first op was
    /// made (it is never folded into another, so that it starts at its
    /// own event).
    started: bool,
    /// Ops converted but not yet handed out: the second and later of an
    /// `MPI_Startall`, and those read ahead for a wildcard receive. Few
    /// streams have any: boxed, 8 bytes a stream.
    queue: Option<Box<Pending>>,
}

/// A stream's ops read but not yet handed out, and the wildcard receives
/// among them whose completion (which names the source) is not read yet.
/// Each op is looked at once, when it is queued: the look-ahead costs the
/// same per op however far a completion lies from its receive (a trace
/// that polls puts thousands of `MPI_Test` calls between them).
#[derive(Default)]
struct Pending {
    ops: VecDeque<Op>,
    /// The number of ops ever handed out of this queue: the sequence
    /// number of `ops`' front.
    head: u64,
    /// Wildcard receives in `ops` still waiting for their completion:
    /// request -> sequence number.
    open: FxHashMap<ReqId, u64>,
    /// The ops `ops` and `held` stand for, folded ones counted: how far
    /// the stream is read ahead.
    depth: usize,
    /// Folding ([`TraceOps::folding`]): the run of local calls being
    /// folded, as its last call with the others' time in its burst.
    held: Option<Op>,
}

impl Pending {
    /// Queues `op`. A completion of a queued wildcard receive gives that
    /// receive its source (and its tag, for `MPI_ANY_TAG`), as the real
    /// run matched it; a completion without a status leaves it a
    /// wildcard.
    fn push(&mut self, op: Op) {
        match &op.kind {
            OpKind::Recv {
                from: None,
                req: Some(r),
                ..
            } => {
                self.open.insert(*r, self.head + self.ops.len() as u64);
            }
            OpKind::Wait(done) if !self.open.is_empty() => {
                for c in done {
                    let Some(seq) = self.open.remove(&c.req) else {
                        continue;
                    };
                    let (Some((src, stag)), Some(recv)) =
                        (c.status(), self.ops.get_mut((seq - self.head) as usize))
                    else {
                        continue;
                    };
                    if let OpKind::Recv { from, tag, .. } = &mut recv.kind {
                        *from = Some(src);
                        if *tag < 0 {
                            *tag = stag;
                        }
                    }
                }
            }
            _ => {}
        }
        self.depth += 1 + op.folded as usize;
        self.ops.push_back(op);
    }

    /// Queues the run of local calls being folded, if any.
    fn flush(&mut self) {
        if let Some(h) = self.held.take() {
            self.depth -= 1 + h.folded as usize;
            self.push(h);
        }
    }

    /// Folds local op `op` into the run being folded: the run becomes
    /// `op`, after the run's time and calls.
    fn fold(&mut self, op: &Op) {
        self.depth += 1;
        match &mut self.held {
            // In place: both are local, only their times and names differ.
            Some(h) => {
                h.gap += h.dur + op.gap;
                h.dur = op.dur;
                h.routine = op.routine;
                h.site = op.site;
                h.folded += 1;
            }
            None => self.held = Some(op.clone()),
        }
    }

    /// The front op, taken off the queue.
    fn pop(&mut self) -> Option<Op> {
        let op = self.ops.pop_front()?;
        self.head += 1;
        self.depth -= 1 + op.folded as usize;
        if let OpKind::Recv {
            from: None,
            req: Some(r),
            ..
        } = op.kind
        {
            self.open.remove(&r);
        }
        Some(op)
    }

    /// Whether the front is a wildcard receive whose completion is not
    /// read yet.
    fn front_waits(&self) -> bool {
        matches!(
            self.ops.front(),
            Some(Op { kind: OpKind::Recv { from: None, req: Some(r), .. }, .. }) if self.open.contains_key(r)
        )
    }
}

/// "Not yet" for [`StreamState::init_end`].
const NOT_YET: u64 = u64::MAX;

impl Default for StreamState {
    fn default() -> StreamState {
        StreamState {
            prev_end: 0,
            init_end: NOT_YET,
            compute: 0.0,
            mpi: 0.0,
            span: 0.0,
            finished: false,
            started: false,
            queue: None,
        }
    }
}

impl StreamState {
    fn init_end(&self) -> Option<u64> {
        (self.init_end != NOT_YET).then_some(self.init_end)
    }

    fn queue(&mut self) -> &mut Pending {
        self.queue.get_or_insert_with(Box::default)
    }

    fn queued(&self) -> usize {
        self.queue.as_ref().map_or(0, |q| q.ops.len())
    }

    /// The stream is read to its end: what is being folded is queued.
    fn finish(&mut self) {
        self.finished = true;
        if let Some(q) = self.queue.as_deref_mut() {
            q.flush();
        }
    }

    /// Folding: takes in `op`, which is handed out unless it is local and
    /// not the stream's first; then it joins the run being folded.
    fn fold(&mut self, op: Op) -> Option<Op> {
        if self.started && matches!(op.kind, OpKind::Local) {
            self.queue().fold(&op);
            return None;
        }
        self.started = true;
        if let Some(q) = self.queue.as_deref_mut() {
            q.flush();
        }
        Some(op)
    }
}

/// Ops from an [`EventSource`].
pub struct TraceOps<S: EventSource> {
    src: S,
    actors: Vec<Actor>,
    kinds: Vec<RoutineKind>,
    init_routine: Vec<bool>,
    finalize_routine: Vec<bool>,
    persistent_init: Vec<bool>,
    request_free: Vec<bool>,
    /// Per routine: its one-sided role, and whether it is a request form
    /// (`MPI_Rput` ...).
    rma: Vec<Option<(RmaRole, bool)>>,
    /// The streams read: `kept` of them from `first` on (all unless
    /// [`OpSource::keep`] said otherwise), made when the first is read.
    streams: Vec<StreamState>,
    /// The index of `streams[0]`.
    first: usize,
    /// See `streams`.
    kept: usize,
    /// Persistent requests' calls, by request (which names its stream):
    /// one table for the run, since few streams have any.
    persistent: FxHashMap<ReqRef, Persistent>,
    ev: Event,
    /// Per routine: measured time in it, ns.
    routine_time: Vec<Ns>,
    skipped: FxHashMap<String, u64>,
    /// Completion lists of waits the engine has handed back, for the next
    /// waits (one allocation per wait otherwise).
    spare: Vec<Vec<Completion>>,
    /// See [`TraceOps::folding`].
    fold: bool,
    /// Per stream, its lock calls' handovers ([`TraceOps::with_lock_order`];
    /// empty when the trace has none to order).
    locks: Vec<LockTurns>,
}

fn req_id(r: ReqRef) -> ReqId {
    (u64::from(r.stream) << 32) | u64::from(r.index)
}

impl<S: EventSource> TraceOps<S> {
    /// Wraps an event source.
    pub fn new(src: S) -> TraceOps<S> {
        let actors: Vec<Actor> = src
            .streams()
            .into_iter()
            .map(|s| Actor {
                rank: s.rank,
                thread: s.thread,
            })
            .collect();
        let names = src.routines();
        let n = actors.len();
        TraceOps {
            kinds: names.iter().map(|r| classify(r)).collect(),
            init_routine: names
                .iter()
                .map(|r| matches!(r.as_str(), "MPI_Init" | "MPI_Init_thread"))
                .collect(),
            finalize_routine: names.iter().map(|r| r == "MPI_Finalize").collect(),
            persistent_init: names
                .iter()
                .map(|r| r.ends_with("_init") || r.ends_with("_init_c"))
                .collect(),
            request_free: names.iter().map(|r| r == "MPI_Request_free").collect(),
            rma: names
                .iter()
                .map(|r| RmaRole::of(r).map(|role| (role, r.starts_with("MPI_R"))))
                .collect(),
            routine_time: vec![0.0; names.len()],
            streams: Vec::new(),
            first: 0,
            kept: n,
            persistent: FxHashMap::default(),
            actors,
            src,
            ev: Event::default(),
            skipped: FxHashMap::default(),
            spare: Vec::new(),
            fold: false,
            locks: Vec::new(),
        }
    }

    /// Folds each run of ops that communicate nothing ([`OpKind::Local`]:
    /// a test or probe that found nothing, `MPI_Wtime`...) after a
    /// stream's first op into one: the run's last, its burst grown by the
    /// others' bursts and durations, [`Op::folded`] counting them. The
    /// analysis, which counts such calls as compute, asks for it, so that
    /// a polling program's millions of polls cost it neither memory nor
    /// time; a replay runs every call. The wildcard look-ahead counts the
    /// folded ops, so that the same receives take their source as
    /// without folding.
    pub fn folding(mut self) -> TraceOps<S> {
        self.fold = true;
        self
    }

    /// Whether the source has lock calls whose holders the replay must
    /// hand the lock over in the trace's order ([`locks`]).
    pub fn needs_lock_order(&self) -> bool {
        locks::needed(self.src.routines())
    }

    /// Hands each target's lock over as `turns` say (by stream: what
    /// [`locks::scan`] read from another reader of the same trace).
    pub fn with_lock_order(mut self, turns: Vec<LockTurns>) -> TraceOps<S> {
        self.locks = turns;
        self
    }

    /// Stream `si`'s next lock or unlock call's handovers (`next` says
    /// which); none when the trace has no order to keep.
    fn lock_turn(&mut self, si: usize, next: fn(&mut LockTurns) -> Box<[Handover]>) -> Box<[Handover]> {
        self.locks.get_mut(si).map(next).unwrap_or_default()
    }

    fn skip(&mut self, why: &str) {
        *self.skipped.entry(why.to_owned()).or_insert(0) += 1;
    }

    /// Converts `self.ev` of stream `si` into ops: the op, or `None` when
    /// it made several (`MPI_Startall`), which it pushed on the stream's
    /// queue. Most events make one op, which goes to the engine without
    /// passing through the queue.
    fn convert(&mut self, si: usize) -> Option<Op> {
        let op = self.convert_event(si)?;
        if !self.fold {
            return Some(op);
        }
        self.streams[si - self.first].fold(op)
    }

    /// Converts `self.ev` of stream `si` into ops, as [`Self::convert`]
    /// says, folding none.
    fn convert_event(&mut self, si: usize) -> Option<Op> {
        let ev = &self.ev;
        let r = ev.routine as usize;
        let st = &mut self.streams[si - self.first];
        let gap = ev.start.saturating_sub(st.prev_end) as f64;
        let dur = ev.duration() as f64;
        st.prev_end = ev.end;
        // The op is made once its kind is known, not assigned a kind
        // over a placeholder (each such assignment drops the old kind, a
        // call on every event).
        let mut gap = gap;
        let routine = ev.routine;
        let site = ev
            .get(V::Site)
            .and_then(|s| u32::try_from(s).ok())
            .unwrap_or(NO_SITE);
        let op = |gap, kind| {
            Some(Op {
                gap,
                dur,
                routine,
                site,
                folded: 0,
                kind,
            })
        };
        if self.init_routine[r] {
            st.init_end = ev.end;
            return op(0.0, OpKind::Init);
        }
        // Threads other than the first start when their rank left MPI_Init.
        if st.init_end().is_none() && self.actors[si].thread > 0 {
            let main = self
                .actors
                .iter()
                .position(|a| a.rank == self.actors[si].rank && a.thread == 0);
            let main = main.and_then(|m| self.streams.get(m.wrapping_sub(self.first)));
            let base = main.and_then(StreamState::init_end).unwrap_or(ev.start);
            let st = &mut self.streams[si - self.first];
            st.init_end = base;
            gap = ev.start.saturating_sub(base) as f64;
        }
        let st = &mut self.streams[si - self.first];
        if self.finalize_routine[r] {
            if let Some(i) = st.init_end() {
                st.span = ev.start.saturating_sub(i) as f64;
            }
            st.compute += gap;
            return op(gap, OpKind::Finalize);
        }
        if st.init_end().is_some() {
            st.compute += gap;
            st.mpi += dur;
            self.routine_time[r] += dur;
        }
        // A poll that found nothing, when folding: nothing else is made
        // of it (most events of a polling program).
        if self.fold
            && st.started
            && matches!(self.kinds[r], RoutineKind::Complete)
            && ev.done.iter().all(|d| d.req.is_none())
        {
            st.queue().fold(&Op {
                gap,
                dur,
                routine,
                site,
                folded: 0,
                kind: OpKind::Local,
            });
            return None;
        }
        let peer = ev.get(V::Peer).unwrap_or(UNKNOWN_RANK);
        let tag = ev.get(V::Tag).unwrap_or(0);
        let comm = ev.get(V::Comm).unwrap_or(COMM_WORLD);
        let bytes = ev.get(V::Bytes).unwrap_or(0).max(0) as u64;
        let first = ReqRef {
            stream: si as u32,
            index: ev.first_req,
        };
        let wild = ev.get(V::Wild).unwrap_or(0);
        let rank_of = |p: i64| u32::try_from(p).ok();
        if let Some((role, request)) = self.rma[r] {
            let req = request.then(|| req_id(first));
            return op(gap, self.rma_op(si, role, req));
        }
        let kind = self.kinds[r];
        let kind = match kind {
            RoutineKind::Send { .. } | RoutineKind::Recv { .. } if self.persistent_init[r] => {
                let send = matches!(kind, RoutineKind::Send { .. });
                self.persistent.insert(
                    first,
                    Persistent {
                        send,
                        peer,
                        tag,
                        comm,
                        bytes: bytes as i64,
                    },
                );
                OpKind::Local
            }
            RoutineKind::Send { blocking } => match rank_of(peer) {
                Some(to) => OpKind::Send {
                    to,
                    tag,
                    comm,
                    bytes,
                    req: (!blocking).then(|| req_id(first)),
                },
                None => OpKind::Local,
            },
            RoutineKind::Recv { blocking } => {
                let deferred = !blocking && wild != 0;
                match (rank_of(peer), deferred) {
                    (_, true) => OpKind::Recv {
                        from: None,
                        tag,
                        comm,
                        bytes,
                        req: Some(req_id(first)),
                    },
                    (Some(from), false) => OpKind::Recv {
                        from: Some(from),
                        tag,
                        comm,
                        bytes,
                        req: (!blocking).then(|| req_id(first)),
                    },
                    (None, false) => OpKind::Local,
                }
            }
            RoutineKind::Sendrecv => {
                let from = ev.get(V::Src).and_then(rank_of);
                let rtag = ev.get(V::Rtag).unwrap_or(0);
                let rbytes = ev.get(V::Rbytes).unwrap_or(bytes as i64).max(0) as u64;
                match (rank_of(peer), from) {
                    (Some(to), Some(from)) => OpKind::Sendrecv {
                        to,
                        stag: tag,
                        sbytes: bytes,
                        from,
                        rtag,
                        rbytes,
                        comm,
                    },
                    (Some(to), None) => OpKind::Send {
                        to,
                        tag,
                        comm,
                        bytes,
                        req: None,
                    },
                    (None, Some(from)) => OpKind::Recv {
                        from: Some(from),
                        tag: rtag,
                        comm,
                        bytes: rbytes,
                        req: None,
                    },
                    (None, None) => OpKind::Local,
                }
            }
            RoutineKind::Start => {
                // One op per started request; the first carries the burst and duration.
                let mut first_op = true;
                for (i, init) in ev.init.iter().enumerate() {
                    let Some(p) = init.and_then(|r| self.persistent.get(&r)).copied() else {
                        continue;
                    };
                    let req = Some(req_id(ReqRef {
                        stream: si as u32,
                        index: ev.first_req + i as u32,
                    }));
                    // A persistent receive posted with a wildcard is
                    // posted from the source its completion names, as
                    // a wildcard `MPI_Irecv` is.
                    let wild = !p.send && (p.peer == ANY_SOURCE || p.tag == ANY_TAG);
                    let peer = rank_of(p.peer);
                    let kind = match (p.send, peer) {
                        (true, Some(to)) => OpKind::Send {
                            to,
                            tag: p.tag,
                            comm: p.comm,
                            bytes: p.bytes.max(0) as u64,
                            req,
                        },
                        (false, from) if wild || from.is_some() => OpKind::Recv {
                            from: if wild { None } else { from },
                            tag: p.tag,
                            comm: p.comm,
                            bytes: p.bytes.max(0) as u64,
                            req,
                        },
                        _ => continue,
                    };
                    let (gap, dur) = if first_op { (gap, dur) } else { (0.0, 0.0) };
                    first_op = false;
                    let q = self.streams[si - self.first].queue();
                    // The run of local calls folded so far goes first.
                    q.flush();
                    q.push(Op {
                        gap,
                        dur,
                        routine,
                        site,
                        folded: 0,
                        kind,
                    });
                }
                if !first_op {
                    return None;
                }
                OpKind::Local
            }
            RoutineKind::Cancel => match ev.done.first().and_then(|d| d.req) {
                Some(req) => OpKind::Cancel(req_id(req)),
                None => OpKind::Local,
            },
            // A test or wait that completed nothing (a poll that found
            // nothing done): no list to make.
            RoutineKind::Complete if ev.done.iter().all(|d| d.req.is_none()) => OpKind::Local,
            RoutineKind::Complete if !self.request_free[r] => {
                let mut done = self.spare.pop().unwrap_or_default();
                done.clear();
                // Exactly: every rank of a large run holds its wait's list.
                done.reserve_exact(ev.done.len());
                done.extend(
                    ev.done
                        .iter()
                        .filter_map(|d| d.req.map(|req| Completion::new(req_id(req), d.status))),
                );
                if done.is_empty() {
                    self.spare.push(done);
                    OpKind::Local
                } else {
                    OpKind::Wait(done)
                }
            }
            RoutineKind::Collective {
                op: c,
                blocking,
                vector,
            } => {
                let members = self
                    .src
                    .members(comm, self.actors[si].rank)
                    .map_or(0, |m| m.len()) as u64;
                let root = ev.get(V::Root);
                let rooted = c.rooted();
                if members == 0 || (rooted && root.and_then(rank_of).is_none()) {
                    self.skip("collectives on communicators the trace does not describe, or intercommunicator collectives");
                    OpKind::Local
                } else {
                    let rbytes = ev.get(V::Rbytes).unwrap_or(bytes as i64).max(0) as u64;
                    OpKind::Coll {
                        op: c,
                        comm,
                        bytes: member_bytes(c, vector, bytes, rbytes, members),
                        root: if rooted { root.and_then(rank_of) } else { None },
                        req: (!blocking).then(|| req_id(first)),
                        counts: ev.counts.as_ref().map(|v| Box::new(v.sizes())),
                    }
                }
            }
            _ => OpKind::Local,
        };
        op(gap, kind)
    }

    /// The op of one-sided call `self.ev`, of `role` (`req`: the request
    /// a request form created). A call on a window the trace does not
    /// describe, or with no target, is local work; so are the calls that
    /// time nothing here (`MPI_Win_sync`, a lock that
    /// waits for no holder: it is taken with the first operation it
    /// covers). Stream `si`'s lock calls take their handovers in turn.
    fn rma_op(&mut self, si: usize, role: RmaRole, req: Option<ReqId>) -> OpKind {
        let ev = &self.ev;
        let win = match role {
            RmaRole::Create(_) => ev.newwin.map(|w| w.id),
            _ => ev.get(V::Win).and_then(|w| u32::try_from(w).ok()),
        };
        let Some(win) = win.filter(|&w| (w as usize) < self.src.wins().len()) else {
            // A creation names the window it made; a sync is local work
            // on any window.
            if !matches!(role, RmaRole::Create(_) | RmaRole::Sync) {
                self.skip("one-sided calls on windows the trace does not describe");
            }
            return OpKind::Local;
        };
        let target = ev.get(V::Peer).and_then(|p| u32::try_from(p).ok());
        let group = || -> Box<[u32]> {
            let g = ev.group.as_deref().unwrap_or_default();
            g.iter().filter_map(|&r| u32::try_from(r).ok()).collect()
        };
        let act = match role {
            RmaRole::Data(op) => {
                let Some(target) = target else {
                    return OpKind::Local; // MPI_PROC_NULL: nothing moves
                };
                let size = |v| ev.get(v).unwrap_or(0).max(0) as u64;
                RmaAct::Data {
                    target,
                    bytes: size(V::Bytes),
                    rbytes: size(V::Rbytes),
                    op,
                    req,
                }
            }
            // A window's creation and free synchronize its group as a
            // fence does (docs/sim.md, "One-sided communication").
            RmaRole::Fence | RmaRole::Create(_) | RmaRole::Free => RmaAct::Fence,
            RmaRole::Flush { .. } => match target {
                Some(t) => RmaAct::Flush(Some(t)),
                None => return OpKind::Local,
            },
            RmaRole::FlushAll { .. } => RmaAct::Flush(None),
            RmaRole::Lock | RmaRole::LockAll => {
                let waits = self.lock_turn(si, LockTurns::next_lock);
                if waits.is_empty() {
                    return OpKind::Local;
                }
                RmaAct::Lock(waits)
            }
            RmaRole::Unlock | RmaRole::UnlockAll => {
                let grants = self.lock_turn(si, LockTurns::next_unlock);
                match (role, target) {
                    (RmaRole::Unlock, None) => return OpKind::Local,
                    (RmaRole::Unlock, t) => RmaAct::Unlock { target: t, grants },
                    _ => RmaAct::Unlock { target: None, grants },
                }
            }
            RmaRole::Post => RmaAct::Post(group()),
            RmaRole::Start => RmaAct::Start(group()),
            RmaRole::Complete => RmaAct::Complete,
            RmaRole::Wait => RmaAct::Wait,
            RmaRole::Sync => return OpKind::Local,
        };
        OpKind::Rma { win, act }
    }

    /// Converts `self.ev` of stream `si` onto its queue.
    fn enqueue(&mut self, si: usize) {
        if let Some(op) = self.convert(si) {
            self.streams[si - self.first].queue().push(op);
        }
    }
}

/// How far ahead in its stream a wildcard receive's completion is looked
/// for, in ops.
const WILDCARD_LOOKAHEAD: usize = 4096;

impl<S: EventSource> OpSource for TraceOps<S> {
    fn actors(&self) -> &[Actor] {
        &self.actors
    }

    fn world_size(&self) -> u32 {
        self.src.world_size()
    }

    fn routines(&self) -> &[String] {
        self.src.routines()
    }

    fn next(&mut self, actor: usize, op: &mut Op) -> Result<bool, SimError> {
        if let OpKind::Wait(v) = &mut op.kind {
            self.spare.push(std::mem::take(v));
        }
        if actor.wrapping_sub(self.first) >= self.kept {
            return Err(SimError::Parallel(format!(
                "actor {actor} is read by another process of the replay"
            )));
        }
        if self.streams.len() < self.kept {
            self.streams.resize_with(self.kept, StreamState::default);
        }
        loop {
            let st = &mut self.streams[actor - self.first];
            if let Some(q) = st.queue.as_deref_mut().filter(|q| !q.ops.is_empty()) {
                // A receive posted with a wildcard is posted from the source
                // its completion names, when the stream says it within
                // WILDCARD_LOOKAHEAD ops: as the real run matched it, and
                // at its post, so that a send the receiver makes before its
                // wait (a blocking rendezvous) finds it posted.
                if q.front_waits() && !st.finished && q.depth < WILDCARD_LOOKAHEAD {
                    // Only an op queued can complete the front: the events
                    // folded on the way (polls) are read without looking.
                    let queued = q.ops.len();
                    loop {
                        if !self.src.next(actor, &mut self.ev).map_err(SimError::Trace)? {
                            self.streams[actor - self.first].finish();
                            break;
                        }
                        self.enqueue(actor);
                        let st = &self.streams[actor - self.first];
                        if st.queued() != queued
                            || st.queue.as_ref().is_none_or(|q| q.depth >= WILDCARD_LOOKAHEAD)
                        {
                            break;
                        }
                    }
                    continue;
                }
                *op = q.pop().expect("a front");
                return Ok(true);
            }
            if self.streams[actor - self.first].finished {
                return Ok(false);
            }
            if !self.src.next(actor, &mut self.ev).map_err(SimError::Trace)? {
                // A run of local calls folded last is the stream's last op.
                self.streams[actor - self.first].finish();
                continue;
            }
            if let Some(o) = self.convert(actor) {
                // A wildcard receive waits in the queue for its completion.
                let st = &mut self.streams[actor - self.first];
                if st.queued() == 0 && !matches!(o.kind, OpKind::Recv { from: None, .. }) {
                    *op = o;
                    return Ok(true);
                }
                st.queue().push(o);
            }
        }
    }

    fn members(&self, comm: i64, rank: u32) -> Option<Vec<u32>> {
        if let Some(w) = fence_window(comm) {
            let win = self.src.wins().get(w as usize)?;
            return win.members.iter().map(|&r| u32::try_from(r).ok()).collect();
        }
        self.src
            .members(comm, rank)
            .map(|m| m.iter().map(|&r| r.max(0) as u32).collect())
    }

    fn measured(&self) -> Option<Measured> {
        if self.kept != self.actors.len() {
            return None; // some streams were not kept
        }
        let of = |f: fn(&StreamState) -> Ns| {
            (0..self.kept)
                .map(|i| self.streams.get(i).map_or(0.0, f))
                .collect()
        };
        Some(Measured {
            compute: of(|s| s.compute),
            mpi: of(|s| s.mpi),
            span: of(|s| s.span),
            routine_time: self.routine_time.clone(),
        })
    }

    fn keep(&mut self, range: std::ops::Range<usize>) {
        let n = self.first + self.kept;
        let (start, end) = (range.start.clamp(self.first, n), range.end.clamp(self.first, n));
        let end = end.max(start);
        if !self.streams.is_empty() {
            self.streams.truncate(end - self.first);
            self.streams.drain(..start - self.first);
            self.streams.shrink_to_fit();
        }
        self.first = start;
        self.kept = end - start;
        self.src.keep(start..end);
    }

    fn warnings(&self) -> Vec<String> {
        let mut w = self.src.warnings();
        for (why, n) in &self.skipped {
            w.push(format!("{n} calls replayed as local work: {why}"));
        }
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recv(from: Option<u32>, tag: i64, req: ReqId) -> Op {
        Op {
            kind: OpKind::Recv {
                from,
                tag,
                comm: 0,
                bytes: 8,
                req: Some(req),
            },
            ..Op::default()
        }
    }

    fn wait(done: &[(ReqId, Option<(i64, i64)>)]) -> Op {
        Op {
            kind: OpKind::Wait(done.iter().map(|&(r, s)| Completion::new(r, s)).collect()),
            ..Op::default()
        }
    }

    /// Wildcard receives take their source and tag from the completion
    /// queued after them, whichever order they complete in; one completed
    /// without a status stays a wildcard and waits no more.
    #[test]
    fn queued_wildcard_receives_take_their_completions_status() {
        let mut q = Pending::default();
        q.push(recv(None, ANY_TAG, 1));
        q.push(recv(None, 5, 2));
        q.push(recv(None, 6, 3));
        assert!(q.front_waits());
        for _ in 0..1000 {
            q.push(Op::default());
        }
        q.push(wait(&[(2, Some((4, 5)))]));
        assert!(q.front_waits(), "request 1 has not completed yet");
        q.push(wait(&[(3, None), (1, Some((7, 42)))]));
        assert!(!q.front_waits());
        let got: Vec<(Option<u32>, i64)> = (0..3)
            .map(|_| match q.pop().expect("an op").kind {
                OpKind::Recv { from, tag, .. } => (from, tag),
                k => panic!("{k:?}"),
            })
            .collect();
        assert_eq!(got, [(Some(7), 42), (Some(4), 5), (None, 6)]);
        assert!(q.open.is_empty());
        assert!(!q.front_waits());
    }
}

#[cfg(test)]
mod folding {
    use super::*;
    use crate::input::events::MemorySource;
    use pnmpi_trace::trace::{Done, Stream, Trace};

    const ROUTINES: [&str; 5] = ["MPI_Init", "MPI_Wtime", "MPI_Irecv", "MPI_Test", "MPI_Finalize"];

    fn ev(routine: &str, start: u64, end: u64) -> Event {
        Event {
            routine: ROUTINES.iter().position(|r| *r == routine).unwrap() as u32,
            start,
            end,
            ..Event::default()
        }
    }

    /// Clock reads before `MPI_Init`, polls, a wildcard `MPI_Irecv`
    /// completed by an `MPI_Test` after `polls` failed ones, and clock
    /// reads around `MPI_Finalize`.
    fn trace(polls: u64) -> Trace {
        let mut events = vec![
            ev("MPI_Wtime", 1, 2),
            ev("MPI_Wtime", 3, 4),
            ev("MPI_Init", 10, 20),
        ];
        events.extend([ev("MPI_Test", 30, 31), ev("MPI_Test", 40, 41)]);
        let mut irecv = ev("MPI_Irecv", 50, 52);
        irecv.set(V::Peer, Some(ANY_SOURCE));
        irecv.set(V::Wild, Some(1));
        irecv.set(V::Req, Some(1));
        events.push(irecv);
        events.extend((0..polls).map(|k| ev("MPI_Test", 60 + 10 * k, 61 + 10 * k)));
        let t = 60 + 10 * polls;
        let mut done = ev("MPI_Test", t, t + 3);
        done.done = vec![Done {
            req: Some(ReqRef { stream: 0, index: 0 }),
            status: Some((1, 5)),
        }];
        events.push(done);
        events.extend([
            ev("MPI_Wtime", t + 10, t + 11),
            ev("MPI_Finalize", t + 20, t + 30),
            ev("MPI_Wtime", t + 40, t + 41),
            ev("MPI_Wtime", t + 50, t + 52),
        ]);
        Trace {
            world_size: 2,
            mpi: "test".into(),
            routines: ROUTINES.map(String::from).to_vec(),
            streams: vec![Stream {
                rank: 0,
                thread: 0,
                events,
            }],
            ..Trace::default()
        }
    }

    /// Every op of stream 0, with its start (the running sum of bursts
    /// and durations).
    fn ops(src: &mut dyn OpSource) -> Vec<(Ns, Op)> {
        let (mut out, mut op, mut t) = (Vec::new(), Op::default(), 0.0);
        while src.next(0, &mut op).unwrap() {
            out.push((t + op.gap, op.clone()));
            t += op.gap + op.dur;
        }
        out
    }

    /// Each run of local calls after the first op comes as its last call,
    /// at its own start, with the run's count; every other op as it is;
    /// the wildcard receive takes its completion's source as far ahead
    /// (4,096 ops, folded ones counted) as without folding.
    #[test]
    fn a_run_of_local_calls_comes_as_its_last_call() {
        for (polls, source) in [(100, Some(1)), (WILDCARD_LOOKAHEAD as u64, None)] {
            let all = ops(&mut TraceOps::new(MemorySource::new(trace(polls))));
            let folded = ops(&mut TraceOps::new(MemorySource::new(trace(polls))).folding());
            assert_eq!(all.len() as u64, polls + 11);
            let mut i = 0;
            for (start, op) in &folded {
                i += op.folded as usize;
                let (s, o) = &all[i];
                assert_eq!(
                    (start, op.dur, op.routine, &op.kind),
                    (s, o.dur, o.routine, &o.kind)
                );
                i += 1;
            }
            assert_eq!(i, all.len(), "every op is one or folded into one");
            let runs: Vec<u32> = folded.iter().map(|(_, o)| o.folded).collect();
            // Clock read, clock read, Init, 2 tests, Irecv, the polls, the
            // test that completed it, clock read, Finalize, 2 clock reads.
            assert_eq!(runs, [0, 0, 0, 1, 0, polls as u32 - 1, 0, 0, 0, 1]);
            let from = |ops: &[(Ns, Op)]| {
                ops.iter().find_map(|(_, o)| match o.kind {
                    OpKind::Recv { from, .. } => Some(from),
                    _ => None,
                })
            };
            assert_eq!(from(&folded), Some(source), "{polls} polls");
            assert_eq!(from(&all), Some(source), "{polls} polls");
        }
    }
}
