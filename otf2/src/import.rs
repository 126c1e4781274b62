//! Reading OTF2: an archive (Score-P's or anyone's) as a pnmpi
//! [`StreamedTrace`], so that every command reads it as it reads a `.pnt`:
//! `pnmpi sim replay`, `trace stats`, `dump` and the exports.
//!
//! Each CPU thread of an MPI rank is a stream; each outermost MPI region
//! (`Enter` ... `Leave`) is one call, and the MPI records inside it give
//! its fields. Time outside MPI regions (non-MPI regions included) is the
//! CPU burst. A nonblocking receive's source, tag and size come from its
//! completion (`MpiIrecv`), later in the stream: the call is held back
//! until then (a bounded look-ahead). Records replay cannot use are
//! counted and reported in [`StreamedTrace::warnings`].

use crate::reader::{Defs, Reader};
use pnmpi_trace::fields::{ANY_SOURCE, ANY_TAG, COMM_SELF, COMM_WORLD, FIRST_TABLE_COMM, UNKNOWN_RANK, V};
use pnmpi_trace::routine::{classify, Kind};
use pnmpi_trace::source::{count_by_reading, StreamedTrace};
use pnmpi_trace::trace::{Comm, Done, Event, ReqRef};
use pnmpi_trace::{Error, Result};
use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::ffi;

/// Records read per call into libotf2.
const BATCH: u64 = 256;
/// Calls held back waiting for a receive's completion, at most, per
/// stream; beyond it the oldest is released with the receive unresolved.
const LOOKAHEAD: usize = 1 << 20;

/// How OTF2 references map to the trace's, shared by the streams.
struct Shared {
    /// Ticks per second, and the time stamp of the trace's start.
    resolution: u64,
    offset: u64,
    /// Region reference to routine index (MPI regions only).
    routines: FxHashMap<u32, u32>,
    kinds: Vec<Kind>,
    comms: CommMap,
    /// Communicator reference to the reference of its parent.
    parents: FxHashMap<u32, u32>,
}

/// Communicator reference to (pnmpi id, world ranks of its members;
/// `None` for world and self).
type CommMap = FxHashMap<u32, (i64, Option<Vec<i64>>)>;

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
    /// Set when the end of the location's events was read.
    ended: bool,
    error: Option<String>,
    /// Unusable records: (record, category) to count.
    unusable: FxHashMap<(&'static str, &'static str), u64>,
    /// MPI records that could not be attached, by reason.
    lost: FxHashMap<&'static str, u64>,
}

impl Assembler {
    fn new(shared: Rc<Shared>, stream: u32, rank: u32) -> Assembler {
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
            ended: false,
            error: None,
            unusable: FxHashMap::default(),
            lost: FxHashMap::default(),
        }
    }

    /// Forgets everything read, to start over.
    fn reset(&mut self) {
        *self = Assembler::new(self.shared.clone(), self.stream, self.rank);
    }

    pub(crate) fn fail(&mut self, what: String) {
        self.error.get_or_insert(what);
    }

    pub(crate) fn take_error(&mut self) -> Option<String> {
        self.error.take()
    }

    pub(crate) fn unusable(&mut self, record: &'static str, category: &'static str) {
        *self.unusable.entry((record, category)).or_insert(0) += 1;
    }

    fn lose(&mut self, why: &'static str) {
        *self.lost.entry(why).or_insert(0) += 1;
    }

    fn slot(&mut self, at: u64) -> Option<&mut Slot> {
        let i = at.checked_sub(self.base)?;
        self.queue.get_mut(i as usize)
    }

    /// The open call, or `None` (counted) for an MPI record outside one.
    fn current(&mut self) -> Option<&mut Event> {
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
    fn create(&mut self, req: u64, waits: bool) {
        let (stream_req, at) = (self.next_req, self.open);
        let shared = self.shared.clone();
        let Some(ev) = self.current() else { return };
        if shared.kinds[ev.routine as usize] == Kind::Start {
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

    /// The completion of OTF2 request `req` by the open call; returns the
    /// call waiting for its fields, if any.
    fn finish(&mut self, req: u64) -> Option<u64> {
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
                    let sendrecv = kinds.kinds[ev.routine as usize] == Kind::Sendrecv;
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
    fn ready(&self) -> bool {
        self.queue
            .front()
            .is_some_and(|s| (!s.open && s.waiting == 0) || self.ended || self.queue.len() > LOOKAHEAD)
    }

    /// Hands out the first call.
    fn pop(&mut self, ev: &mut Event) {
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

/// An OTF2 archive read as a pnmpi trace, stream by stream.
pub struct Otf2Trace {
    reader: Reader,
    world_size: u32,
    routines: Vec<String>,
    comms: Vec<Comm>,
    streams: Vec<(u32, u32)>,
    assemblers: Vec<Assembler>,
    /// Records in the archive's locations (from their definitions).
    records: u64,
    /// Definition-level warnings.
    notes: Vec<String>,
}

/// The anchor file of `path`: itself, or `path/traces.otf2` for a folder.
pub fn anchor(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join(format!("{}.otf2", crate::export::ARCHIVE))
    } else {
        path.to_path_buf()
    }
}

/// Whether `path` is an OTF2 anchor file (or a folder holding `traces.otf2`).
pub fn is_otf2(path: &Path) -> bool {
    let a = anchor(path);
    a.extension().is_some_and(|e| e == "otf2") && a.is_file()
}

impl Otf2Trace {
    /// Opens the archive at `path` (its `.otf2` anchor file, or the folder
    /// holding `traces.otf2`) and reads its definitions.
    pub fn open(path: &Path) -> Result<Otf2Trace> {
        let anchor = anchor(path);
        let name = anchor.display().to_string();
        let (mut reader, defs) = Reader::open(&anchor)?;
        let mut notes = Vec::new();
        // Ranks: the MPI locations group lists each rank's location.
        let mpi_locations = defs
            .groups
            .values()
            .filter(|g| g.ty == ffi::OTF2_GROUP_TYPE_COMM_LOCATIONS as ffi::OTF2_GroupType)
            .find(|g| g.paradigm == ffi::OTF2_PARADIGM_MPI as ffi::OTF2_Paradigm)
            .map(|g| g.members.clone());
        let loc_group: FxHashMap<u64, u32> = defs.locations.iter().map(|l| (l.id, l.group)).collect();
        let mut rank_of_group: FxHashMap<u32, u32> = FxHashMap::default();
        let mut main: FxHashMap<u32, u64> = FxHashMap::default();
        match &mpi_locations {
            Some(members) => {
                for (rank, loc) in members.iter().enumerate() {
                    if let Some(&g) = loc_group.get(loc) {
                        rank_of_group.insert(g, rank as u32);
                        main.insert(g, *loc);
                    }
                }
            }
            None => {
                let mut processes: Vec<u32> = defs
                    .location_groups
                    .iter()
                    .filter(|(_, ty)| {
                        *ty == ffi::OTF2_LOCATION_GROUP_TYPE_PROCESS as ffi::OTF2_LocationGroupType
                    })
                    .map(|(id, _)| *id)
                    .collect();
                processes.sort_unstable();
                for (rank, g) in processes.into_iter().enumerate() {
                    rank_of_group.insert(g, rank as u32);
                }
            }
        }
        let world_size = mpi_locations.as_ref().map_or(rank_of_group.len(), Vec::len) as u32;
        // Streams: the CPU threads of ranks, the rank's MPI location first.
        let mut by_rank: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
        let (mut others, mut other_records) = (0u64, 0u64);
        let mut records = 0;
        for l in &defs.locations {
            let rank = rank_of_group.get(&l.group).copied();
            match rank {
                Some(r) if l.ty == ffi::OTF2_LOCATION_TYPE_CPU_THREAD as ffi::OTF2_LocationType => {
                    by_rank.entry(r).or_default().push(l.id);
                    records += l.events;
                }
                _ => {
                    others += 1;
                    other_records += l.events;
                }
            }
        }
        if others > 0 {
            notes.push(format!(
                "{others} locations that are not CPU threads of MPI ranks (GPU streams, metric locations ...), \
                 {other_records} records: not replayed"
            ));
        }
        let mut streams = Vec::new();
        let mut locations = Vec::new();
        for (rank, mut locs) in by_rank {
            let first = rank_group_main(&rank_of_group, &main, rank);
            locs.sort_by_key(|&l| (Some(l) != first, l));
            for (thread, l) in locs.into_iter().enumerate() {
                streams.push((rank, thread as u32));
                locations.push(l);
            }
        }
        // Routines: the MPI regions.
        let mut region_ids: Vec<u32> = defs.regions.keys().copied().collect();
        region_ids.sort_unstable();
        let mut routines: Vec<String> = Vec::new();
        let mut index: FxHashMap<String, u32> = FxHashMap::default();
        let mut region_routine = FxHashMap::default();
        for id in region_ids {
            let r = &defs.regions[&id];
            let n = defs.string(r.name);
            if r.paradigm != ffi::OTF2_PARADIGM_MPI as ffi::OTF2_Paradigm && !n.starts_with("MPI_") {
                continue;
            }
            let next = routines.len() as u32;
            let i = *index.entry(n.to_owned()).or_insert_with(|| {
                routines.push(n.to_owned());
                next
            });
            region_routine.insert(id, i);
        }
        let (comm_map, comms) = communicators(&defs, world_size, &mut notes);
        let shared = Rc::new(Shared {
            resolution: defs.resolution,
            offset: defs.offset,
            routines: region_routine,
            kinds: routines.iter().map(|n| classify(n)).collect(),
            comms: comm_map,
            parents: defs.comms.iter().map(|c| (c.id, c.parent)).collect(),
        });
        if streams.is_empty() {
            return Err(Error::Invalid(format!(
                "{name}: the archive has no CPU thread of an MPI rank"
            )));
        }
        reader.open_events(&locations)?;
        let assemblers = streams
            .iter()
            .enumerate()
            .map(|(i, &(rank, _))| Assembler::new(shared.clone(), i as u32, rank))
            .collect();
        Ok(Otf2Trace {
            reader,
            world_size,
            routines,
            comms,
            streams,
            assemblers,
            records,
            notes,
        })
    }

    /// Records in the archive's replayed locations (an estimate of the
    /// work, for progress bars: each call takes two or more).
    pub fn records(&self) -> u64 {
        self.records
    }
}

/// The MPI location of a rank's process, if the archive names it.
fn rank_group_main(
    rank_of_group: &FxHashMap<u32, u32>,
    main: &FxHashMap<u32, u64>,
    rank: u32,
) -> Option<u64> {
    rank_of_group
        .iter()
        .find(|(_, &r)| r == rank)
        .and_then(|(g, _)| main.get(g).copied())
}

/// The communicators: OTF2 reference to pnmpi id and members, and the
/// pnmpi table (ids from 2). The first communicator whose group is every
/// rank in order is `MPI_COMM_WORLD` (or the one of that name).
fn communicators(defs: &Defs, world_size: u32, notes: &mut Vec<String>) -> (CommMap, Vec<Comm>) {
    let mut map = FxHashMap::default();
    let mut table = Vec::new();
    let all: Vec<u64> = (0..u64::from(world_size)).collect();
    let mut comms = defs.comms.clone();
    // The world first, wherever it is defined.
    comms.sort_by_key(|c| (defs.string(c.name) != "MPI_COMM_WORLD", c.id));
    let mut world = false;
    for c in comms {
        let Some(g) = defs.groups.get(&c.group) else {
            notes.push(format!(
                "communicator {} has no group definition: its records are not replayed",
                c.id
            ));
            continue;
        };
        if g.ty == ffi::OTF2_GROUP_TYPE_COMM_SELF as ffi::OTF2_GroupType {
            map.insert(c.id, (COMM_SELF, None));
        } else if !world && g.members == all {
            world = true;
            map.insert(c.id, (COMM_WORLD, None));
        } else {
            let members: Vec<i64> = g.members.iter().map(|&m| m as i64).collect();
            map.insert(
                c.id,
                (FIRST_TABLE_COMM + table.len() as i64, Some(members.clone())),
            );
            table.push(Comm {
                members,
                remote: None,
            });
        }
    }
    if defs.intercomms > 0 {
        notes.push(format!(
            "{} intercommunicators: their records are not replayed",
            defs.intercomms
        ));
    }
    (map, table)
}

impl StreamedTrace for Otf2Trace {
    fn world_size(&self) -> u32 {
        self.world_size
    }

    fn mpi(&self) -> &str {
        "otf2"
    }

    fn routines(&self) -> &[String] {
        &self.routines
    }

    fn comms(&self) -> &[Comm] {
        &self.comms
    }

    fn stream_list(&self) -> Vec<(u32, u32)> {
        self.streams.clone()
    }

    fn next_into(&mut self, i: usize, ev: &mut Event) -> Result<bool> {
        let a = &mut self.assemblers[i];
        loop {
            if a.ready() {
                a.pop(ev);
                return Ok(true);
            }
            if a.ended {
                return Ok(false);
            }
            // A short read is the end: libotf2 fails a read past it.
            if self.reader.read(i, a, BATCH)? < BATCH {
                a.ended = true;
            }
        }
    }

    fn restart(&mut self, i: usize) -> Result<()> {
        self.reader.restart(i)?;
        self.assemblers[i].reset();
        Ok(())
    }

    fn count_events(&mut self, progress: &dyn Fn(u64)) -> Result<u64> {
        count_by_reading(self, progress)
    }

    fn warnings(&self) -> Vec<String> {
        let mut w = self.notes.clone();
        let mut unusable: BTreeMap<&str, BTreeMap<&str, u64>> = BTreeMap::new();
        let mut lost: BTreeMap<&str, u64> = BTreeMap::new();
        for a in &self.assemblers {
            for (&(record, category), &n) in &a.unusable {
                *unusable.entry(category).or_default().entry(record).or_insert(0) += n;
            }
            for (&why, &n) in &a.lost {
                *lost.entry(why).or_insert(0) += n;
            }
        }
        for (category, records) in unusable {
            let total: u64 = records.values().sum();
            let list: Vec<String> = records.iter().map(|(r, n)| format!("{r} {n}")).collect();
            w.push(format!(
                "{total} {category} records not replayed ({})",
                list.join(", ")
            ));
        }
        for (why, n) in lost {
            w.push(format!("{n} {why}: not replayed"));
        }
        w
    }
}
