//! Our traces as ops: a merged `.pnt` or a tracer output folder, read
//! stream by stream through `pnmpi-trace`'s [`EventSource`], each event
//! turned into one op (or several, for `MPI_Startall`).

use super::events::EventSource;
use super::{Actor, Completion, Measured, Op, OpKind, OpSource, ReqId, VCounts};
use crate::units::Ns;
use crate::SimError;
use pnmpi_trace::fields::*;
use pnmpi_trace::messages::Persistent;
use pnmpi_trace::routine::{classify, Coll, Kind};
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
    /// Ops converted but not yet handed out: the second and later of an
    /// `MPI_Startall`, and those read ahead for a wildcard receive. Few
    /// streams have any: boxed, 8 bytes a stream instead of 32.
    #[allow(clippy::box_collection)]
    queue: Option<Box<VecDeque<Op>>>,
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
            queue: None,
        }
    }
}

impl StreamState {
    fn init_end(&self) -> Option<u64> {
        (self.init_end != NOT_YET).then_some(self.init_end)
    }

    fn queue(&mut self) -> &mut VecDeque<Op> {
        self.queue.get_or_insert_with(Box::default)
    }

    fn queued(&self) -> usize {
        self.queue.as_ref().map_or(0, |q| q.len())
    }
}

/// Ops from an [`EventSource`].
pub struct TraceOps<S: EventSource> {
    src: S,
    actors: Vec<Actor>,
    kinds: Vec<Kind>,
    init_routine: Vec<bool>,
    finalize_routine: Vec<bool>,
    persistent_init: Vec<bool>,
    request_free: Vec<bool>,
    streams: Vec<StreamState>,
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
            routine_time: vec![0.0; names.len()],
            streams: (0..n).map(|_| StreamState::default()).collect(),
            persistent: FxHashMap::default(),
            actors,
            src,
            ev: Event::default(),
            skipped: FxHashMap::default(),
            spare: Vec::new(),
        }
    }

    fn skip(&mut self, why: &str) {
        *self.skipped.entry(why.to_owned()).or_insert(0) += 1;
    }

    /// Converts `self.ev` of stream `si` into ops: the op, or `None` when
    /// it made several (`MPI_Startall`), which it pushed on the stream's
    /// queue. Most events make one op, which goes to the engine without
    /// passing through the queue.
    fn convert(&mut self, si: usize) -> Option<Op> {
        let ev = &self.ev;
        let r = ev.routine as usize;
        let st = &mut self.streams[si];
        let gap = ev.start.saturating_sub(st.prev_end) as f64;
        let dur = ev.duration() as f64;
        st.prev_end = ev.end;
        // The op is made once its kind is known, not assigned a kind
        // over a placeholder (each such assignment drops the old kind, a
        // call on every event).
        let mut gap = gap;
        let routine = ev.routine;
        let op = |gap, kind| {
            Some(Op {
                gap,
                dur,
                routine,
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
            let base = main.and_then(|m| self.streams[m].init_end()).unwrap_or(ev.start);
            let st = &mut self.streams[si];
            st.init_end = base;
            gap = ev.start.saturating_sub(base) as f64;
        }
        let st = &mut self.streams[si];
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
        let kind = self.kinds[r];
        let kind = match kind {
            Kind::Send { .. } | Kind::Recv { .. } if self.persistent_init[r] => {
                let send = matches!(kind, Kind::Send { .. });
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
            Kind::Send { blocking } => match rank_of(peer) {
                Some(to) => OpKind::Send {
                    to,
                    tag,
                    comm,
                    bytes,
                    req: (!blocking).then(|| req_id(first)),
                },
                None => OpKind::Local,
            },
            Kind::Recv { blocking } => {
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
            Kind::Sendrecv => {
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
            Kind::Start => {
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
                    let Some(peer) = rank_of(p.peer) else { continue };
                    let kind = if p.send {
                        OpKind::Send {
                            to: peer,
                            tag: p.tag,
                            comm: p.comm,
                            bytes: p.bytes.max(0) as u64,
                            req,
                        }
                    } else {
                        OpKind::Recv {
                            from: Some(peer),
                            tag: p.tag,
                            comm: p.comm,
                            bytes: p.bytes.max(0) as u64,
                            req,
                        }
                    };
                    let (gap, dur) = if first_op { (gap, dur) } else { (0.0, 0.0) };
                    first_op = false;
                    self.streams[si].queue().push_back(Op {
                        gap,
                        dur,
                        routine,
                        kind,
                    });
                }
                if !first_op {
                    return None;
                }
                OpKind::Local
            }
            Kind::Complete if !self.request_free[r] => {
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
            Kind::Collective {
                op: c,
                blocking,
                vector,
            } => {
                let members = self
                    .src
                    .members(comm, self.actors[si].rank)
                    .map_or(0, |m| m.len()) as u64;
                let root = ev.get(V::Root);
                let rooted = matches!(c, Coll::Bcast | Coll::Reduce | Coll::Gather | Coll::Scatter);
                if members == 0 || (rooted && root.and_then(rank_of).is_none()) {
                    self.skip("collectives on communicators the trace does not describe, or intercommunicator collectives");
                    OpKind::Local
                } else {
                    let rbytes = ev.get(V::Rbytes).unwrap_or(bytes as i64).max(0) as u64;
                    let counts = ev.counts.as_ref().map(|v| {
                        let side = |x: &[i64]| x.iter().map(|&b| b.max(0) as u64).collect();
                        Box::new(VCounts {
                            send: side(&v.send),
                            recv: side(&v.recv),
                        })
                    });
                    let per = match (vector, c) {
                        (true, Coll::Alltoall) => bytes / members,
                        (true, Coll::Scatter) => rbytes,
                        // Reduce_scatter_block: one block per process.
                        (false, Coll::ReduceScatter) => bytes * members,
                        _ => bytes,
                    };
                    OpKind::Coll {
                        op: c,
                        comm,
                        bytes: per,
                        root: if rooted { root.and_then(rank_of) } else { None },
                        req: (!blocking).then(|| req_id(first)),
                        counts,
                    }
                }
            }
            _ => OpKind::Local,
        };
        op(gap, kind)
    }

    /// Converts `self.ev` of stream `si` onto its queue.
    fn enqueue(&mut self, si: usize) {
        if let Some(op) = self.convert(si) {
            self.streams[si].queue().push_back(op);
        }
    }
}

/// How far ahead in its stream a wildcard receive's completion is looked
/// for, in ops.
const WILDCARD_LOOKAHEAD: usize = 4096;

/// The queue's front is a receive posted with a wildcard: if an op of the
/// queue completes its request with a status, the front gets that source
/// (and tag, for `MPI_ANY_TAG`): `Some(true)`. `Some(false)`: not in the
/// queue yet. `None`: completed without a status (it stays a wildcard).
fn resolve_wildcard(queue: &mut VecDeque<Op>) -> Option<bool> {
    let OpKind::Recv { req: Some(r), .. } = queue.front()?.kind else {
        return None;
    };
    let found = queue.iter().skip(1).find_map(|o| match &o.kind {
        OpKind::Wait(done) => done.iter().find(|c| c.req == r).map(|c| c.status()),
        _ => None,
    });
    match found {
        None => Some(false),
        Some(None) => None,
        Some(Some((src, stag))) => {
            if let Some(Op {
                kind: OpKind::Recv { from, tag, .. },
                ..
            }) = queue.front_mut()
            {
                *from = Some(src);
                if *tag < 0 {
                    *tag = stag;
                }
            }
            Some(true)
        }
    }
}

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
        loop {
            let st = &mut self.streams[actor];
            let queued = st.queued();
            if let Some(front) = st.queue.as_deref_mut().and_then(VecDeque::front_mut) {
                // A receive posted with a wildcard is posted from the source
                // its completion names, when the stream says it within
                // WILDCARD_LOOKAHEAD events: as the real run matched it,
                // and at its post, so that a send the receiver makes before
                // its wait (a blocking rendezvous) finds it posted.
                let unresolved = matches!(front.kind, OpKind::Recv { from: None, .. });
                if unresolved && !st.finished && queued < WILDCARD_LOOKAHEAD {
                    match resolve_wildcard(st.queue()) {
                        Some(true) | None => {}
                        Some(false) => {
                            if !self.src.next(actor, &mut self.ev).map_err(SimError::Trace)? {
                                self.streams[actor].finished = true;
                            } else {
                                self.enqueue(actor);
                            }
                            continue;
                        }
                    }
                }
                *op = self.streams[actor].queue().pop_front().expect("a front");
                return Ok(true);
            }
            if self.streams[actor].finished {
                return Ok(false);
            }
            if !self.src.next(actor, &mut self.ev).map_err(SimError::Trace)? {
                self.streams[actor].finished = true;
                return Ok(false);
            }
            if let Some(o) = self.convert(actor) {
                // A wildcard receive waits in the queue for its completion.
                let st = &mut self.streams[actor];
                if st.queued() == 0 && !matches!(o.kind, OpKind::Recv { from: None, .. }) {
                    *op = o;
                    return Ok(true);
                }
                st.queue().push_back(o);
            }
        }
    }

    fn members(&self, comm: i64, rank: u32) -> Option<Vec<u32>> {
        self.src
            .members(comm, rank)
            .map(|m| m.iter().map(|&r| r.max(0) as u32).collect())
    }

    fn measured(&self) -> Option<Measured> {
        let of = |f: fn(&StreamState) -> Ns| self.streams.iter().map(f).collect();
        Some(Measured {
            compute: of(|s| s.compute),
            mpi: of(|s| s.mpi),
            span: of(|s| s.span),
            routine_time: self.routine_time.clone(),
        })
    }

    fn warnings(&self) -> Vec<String> {
        let mut w = self.src.warnings();
        for (why, n) in &self.skipped {
            w.push(format!("{n} calls replayed as local work: {why}"));
        }
        w
    }
}
