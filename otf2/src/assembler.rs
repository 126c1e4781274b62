//! One stream's calls built from its OTF2 records, as libotf2 hands them
//! to the callbacks: each outermost MPI region is one call, the MPI
//! records inside it give its fields, and a call whose receive's fields
//! come with a later completion is held back until then.

use pnmpi_trace::fields::{ANY_SOURCE, ANY_TAG, COMM_SELF, COMM_WORLD, UNKNOWN_RANK, V};
use pnmpi_trace::rma::RmaRole;
use pnmpi_trace::routine::RoutineKind;
use pnmpi_trace::trace::{Done, Event, ReqRef};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use std::rc::Rc;

/// Calls held back waiting for a receive's completion, at most, per
/// stream; beyond it the oldest is released with the receive unresolved.
const LOOKAHEAD: usize = 1 << 20;

/// How OTF2 references map to the trace's, shared by the streams.
pub(crate) struct Shared {
    /// Ticks per second, and the time stamp of the trace's start.
    pub(crate) resolution: u64,
    pub(crate) offset: u64,
    /// Region reference to routine index (MPI regions only).
    pub(crate) routines: FxHashMap<u32, u32>,
    pub(crate) kinds: Vec<RoutineKind>,
    pub(crate) comms: CommMap,
    /// Communicator reference to the reference of its parent.
    pub(crate) parents: FxHashMap<u32, u32>,
    /// Each routine's one-sided role, by routine index.
    pub(crate) rma: Vec<Option<RmaRole>>,
    /// Whether each routine is a request form of a data operation
    /// (`MPI_Rput` ...), by routine index.
    pub(crate) request_forms: Vec<bool>,
    /// Window reference to the trace's window and its members.
    pub(crate) wins: WinMap,
    /// The communicator id of each window of the trace's table.
    pub(crate) win_comms: Vec<i64>,
    /// Group reference to its members (ranks), for PSCW's groups.
    pub(crate) groups: FxHashMap<u32, Vec<i64>>,
}

/// Communicator reference to (pnmpi id, world ranks of its members;
/// `None` for world and self).
pub(crate) type CommMap = FxHashMap<u32, (i64, Option<Vec<i64>>)>;

/// OTF2 window reference to the trace's window id and its members (world
/// ranks, in window rank order).
pub(crate) type WinMap = FxHashMap<u32, (u32, Vec<i64>)>;

impl Shared {
    fn ns(&self, t: u64) -> u64 {
        (u128::from(t.saturating_sub(self.offset)) * 1_000_000_000 / u128::from(self.resolution)) as u64
    }
}

/// One call being assembled or waiting in the look-ahead.
struct Slot {
    ev: Event,
    /// Its region has not been left yet.
    open: bool,
    /// Requests it created whose fields come with their completion.
    waiting: u32,
}

/// Builds one stream's calls from its records (the callbacks' target).
pub(crate) struct Assembler {
    shared: Rc<Shared>,
    stream: u32,
    rank: u32,
    queue: VecDeque<Slot>,
    /// Position in the stream of `queue[0]`.
    base: u64,
    /// Position of the open call, and the depth of regions inside it.
    open: Option<u64>,
    depth: u32,
    next_req: u32,
    /// Live requests: OTF2 id to (pnmpi index, position of the call that
    /// waits for its completion's fields).
    reqs: FxHashMap<u64, (u32, Option<u64>)>,
    /// One-sided operations not completed yet: OTF2 matching id to the
    /// target (a world rank), which the flush completing one names.
    pub(crate) rma_targets: FxHashMap<u64, i64>,
    /// Set when the end of the location's events was read.
    pub(crate) ended: bool,
    error: Option<String>,
    /// Unusable records: (record, category) to count.
    pub(crate) unusable: FxHashMap<(&'static str, &'static str), u64>,
    /// MPI records that could not be attached, by reason.
    pub(crate) lost: FxHashMap<&'static str, u64>,
}

impl Assembler {
    pub(crate) fn new(shared: Rc<Shared>, stream: u32, rank: u32) -> Assembler {
        Assembler {
            shared,
            stream,
            rank,
            queue: VecDeque::new(),
            base: 0,
            open: None,
            depth: 0,
            next_req: 0,
            reqs: FxHashMap::default(),
            rma_targets: FxHashMap::default(),
            ended: false,
            error: None,
            unusable: FxHashMap::default(),
            lost: FxHashMap::default(),
        }
    }

    /// Forgets everything read, to start over.
    pub(crate) fn reset(&mut self) {
        *self = Assembler::new(self.shared.clone(), self.stream, self.rank);
    }

    pub(crate) fn fail(&mut self, what: String) {
        self.error.get_or_insert(what);
    }

    pub(crate) fn take_error(&mut self) -> Option<String> {
        self.error.take()
    }

    /// What the streams share.
    pub(crate) fn shared(&self) -> Rc<Shared> {
        self.shared.clone()
    }

    pub(crate) fn unusable(&mut self, record: &'static str, category: &'static str) {
        *self.unusable.entry((record, category)).or_insert(0) += 1;
    }

    pub(crate) fn lose(&mut self, why: &'static str) {
        *self.lost.entry(why).or_insert(0) += 1;
    }

    fn slot(&mut self, at: u64) -> Option<&mut Slot> {
        let i = at.checked_sub(self.base)?;
        self.queue.get_mut(i as usize)
    }

    /// The open call, or `None` (counted) for an MPI record outside one.
    pub(crate) fn current(&mut self) -> Option<&mut Event> {
        match self.open {
            Some(at) => self.slot(at).map(|s| &mut s.ev),
            None => {
                self.lose("MPI records outside any MPI region");
                None
            }
        }
    }

    pub(crate) fn enter(&mut self, t: u64, region: u32) {
        if self.open.is_some() {
            self.depth += 1;
            return;
        }
        // Non-MPI regions outside MPI calls are computation.
        let Some(&routine) = self.shared.routines.get(&region) else {
            return;
        };
        let start = self.shared.ns(t);
        self.queue.push_back(Slot {
            ev: Event {
                routine,
                start,
                end: start,
                ..Event::default()
            },
            open: true,
            waiting: 0,
        });
        self.open = Some(self.base + self.queue.len() as u64 - 1);
        self.depth = 1;
    }

    pub(crate) fn leave(&mut self, t: u64) {
        let Some(at) = self.open else { return };
        self.depth -= 1;
        if self.depth == 0 {
            let end = self.shared.ns(t);
            if let Some(s) = self.slot(at) {
                s.ev.end = end.max(s.ev.start);
                s.open = false;
            }
            self.open = None;
        }
    }

    /// World rank of rank `local` of communicator `comm`, and its pnmpi id.
    fn world(&self, comm: u32, local: u32) -> (i64, i64) {
        match self.shared.comms.get(&comm) {
            Some(&(COMM_WORLD, _)) => (COMM_WORLD, i64::from(local)),
            Some(&(COMM_SELF, _)) => (COMM_SELF, i64::from(self.rank)),
            Some((id, Some(m))) => (*id, m.get(local as usize).copied().unwrap_or(UNKNOWN_RANK)),
            _ => (i64::MIN, UNKNOWN_RANK),
        }
    }

    /// The comm id of `comm`, counting undefined ones.
    fn comm_id(&mut self, comm: u32, local: u32) -> (i64, i64) {
        let (id, w) = self.world(comm, local);
        if id == i64::MIN {
            self.lose("MPI records on communicators without a definition");
            return (UNKNOWN_RANK, UNKNOWN_RANK);
        }
        (id, w)
    }

    /// A request created by the open call; `waits`: its fields come with
    /// its completion.
    pub(crate) fn create(&mut self, req: u64, waits: bool) {
        let (stream_req, at) = (self.next_req, self.open);
        let shared = self.shared.clone();
        let Some(ev) = self.current() else { return };
        if shared.kinds[ev.routine as usize] == RoutineKind::Start {
            // OTF2 has no record of the `*_init` call's arguments.
            self.lose("messages of persistent requests started with MPI_Start");
            return;
        }
        if ev.created() == 0 {
            ev.first_req = stream_req;
        }
        ev.set(V::Req, Some(i64::from(ev.created()) + 1));
        if waits {
            ev.set(V::Peer, Some(ANY_SOURCE));
            ev.set(V::Tag, Some(ANY_TAG));
        }
        self.next_req += 1;
        let wait_at = if waits { at } else { None };
        if let Some(at) = wait_at {
            if let Some(s) = self.slot(at) {
                s.waiting += 1;
            }
        }
        self.reqs.insert(req, (stream_req, wait_at));
    }

    /// Whether OTF2 request `req` is live (created, not completed).
    pub(crate) fn has_request(&self, req: u64) -> bool {
        self.reqs.contains_key(&req)
    }

    /// The completion of OTF2 request `req` by the open call; returns the
    /// call waiting for its fields, if any.
    pub(crate) fn finish(&mut self, req: u64) -> Option<u64> {
        let stream = self.stream;
        let Some((index, wait_at)) = self.reqs.remove(&req) else {
            self.lose("completions of requests never created");
            return None;
        };
        if let Some(ev) = self.current() {
            ev.done.push(Done {
                req: Some(ReqRef { stream, index }),
                status: None,
            });
        }
        let at = wait_at?;
        let s = self.slot(at)?;
        s.waiting -= 1;
        Some(at)
    }

    pub(crate) fn send(&mut self, to: u32, comm: u32, tag: u32, len: u64, req: Option<u64>) {
        let (id, peer) = self.comm_id(comm, to);
        if let Some(r) = req {
            self.create(r, false);
        }
        let Some(ev) = self.current() else { return };
        ev.set(V::Peer, Some(peer));
        ev.set(V::Tag, Some(i64::from(tag)));
        ev.set(V::Comm, Some(id));
        ev.set(V::Bytes, Some(len as i64));
    }

    pub(crate) fn post(&mut self, req: u64) {
        self.create(req, true);
    }

    pub(crate) fn complete(&mut self, req: u64) {
        self.finish(req);
    }

    pub(crate) fn recv(&mut self, from: u32, comm: u32, tag: u32, len: u64, req: Option<u64>) {
        let (id, peer) = self.comm_id(comm, from);
        let fill = |ev: &mut Event, sendrecv: bool| {
            let (p, t, b) = if sendrecv {
                (V::Src, V::Rtag, V::Rbytes)
            } else {
                (V::Peer, V::Tag, V::Bytes)
            };
            ev.set(p, Some(peer));
            ev.set(t, Some(i64::from(tag)));
            ev.set(V::Comm, Some(id));
            ev.set(b, Some(len as i64));
        };
        match req {
            None => {
                let kinds = self.shared.clone();
                if let Some(ev) = self.current() {
                    let sendrecv = kinds.kinds[ev.routine as usize] == RoutineKind::Sendrecv;
                    fill(ev, sendrecv);
                }
            }
            Some(r) => {
                if let Some(at) = self.finish(r) {
                    if let Some(s) = self.slot(at) {
                        fill(&mut s.ev, false);
                    }
                }
            }
        }
    }

    pub(crate) fn collective(&mut self, comm: u32, root: u32, sent: u64, recvd: u64, req: Option<u64>) {
        let (id, root) = if root == crate::writer::UNDEFINED_U32 {
            (self.comm_id(comm, 0).0, None)
        } else {
            let (id, w) = self.comm_id(comm, root);
            (id, Some(w))
        };
        let fill = |ev: &mut Event| {
            ev.set(V::Comm, Some(id));
            ev.set(V::Bytes, Some(sent as i64));
            ev.set(V::Rbytes, Some(recvd as i64));
            ev.set(V::Root, root);
        };
        match req {
            None => {
                if let Some(ev) = self.current() {
                    fill(ev);
                }
            }
            Some(r) => {
                if let Some(at) = self.finish(r) {
                    if let Some(s) = self.slot(at) {
                        fill(&mut s.ev);
                        // Posted with placeholders for a receive's fields.
                        s.ev.set(V::Peer, None);
                        s.ev.set(V::Tag, None);
                    }
                }
            }
        }
    }

    /// A communicator the open call created (from its parent).
    pub(crate) fn comm_created(&mut self, comm: u32) {
        let shared = self.shared.clone();
        let id = shared.comms.get(&comm).map(|c| c.0);
        let parent = shared
            .parents
            .get(&comm)
            .and_then(|p| shared.comms.get(p))
            .map(|c| c.0);
        if let (Some(id), Some(ev)) = (id, self.current()) {
            ev.newcomm = Some(u32::try_from(id).ok());
            if ev.get(V::Comm).is_none() {
                ev.set(V::Comm, parent);
            }
        }
    }

    /// Whether the first call can be handed out.
    pub(crate) fn ready(&self) -> bool {
        self.queue
            .front()
            .is_some_and(|s| (!s.open && s.waiting == 0) || self.ended || self.queue.len() > LOOKAHEAD)
    }

    /// Hands out the first call.
    pub(crate) fn pop(&mut self, ev: &mut Event) {
        if let Some(s) = self.queue.pop_front() {
            if s.waiting > 0 {
                self.lose("receives and nonblocking collectives whose completion was not found");
            }
            *ev = s.ev;
            self.base += 1;
            if self.open == Some(self.base - 1) {
                self.open = None;
                self.depth = 0;
            }
        }
    }
}
