//! `pnmpi trace export --format otf2`: a pnmpi trace (merged `.pnt` or
//! tracer folder, streamed) as an OTF2 archive that Vampir, Scalasca and
//! the otf2 tools read. Events are written a location at a time (one
//! location's buffer in memory), then the definitions; the archive is
//! built in `DIR.part` and renamed to `DIR` once complete.
//!
//! Each call becomes `Enter`, its MPI records, `Leave`; times are the
//! merged trace's (ns on rank 0's clock, the tracer's alignment), with a
//! 1 GHz OTF2 clock. `docs/trace-format.md` has the mapping table.

use crate::ffi;
use crate::metrics::Metrics;
use crate::names::{collective_op, role};
use crate::rma_export::RmaExport;
use crate::writer::{ArchiveWriter, EventWriter, Record, UNDEFINED_U32};
use pnmpi_trace::chrome::Mark;
use pnmpi_trace::fields::{COMM_SELF, COMM_WORLD, FIRST_TABLE_COMM, V};
use pnmpi_trace::routine::{classify, RoutineKind};
use pnmpi_trace::source::StreamedTrace;
use pnmpi_trace::trace::{Comm, Event, ReqRef};
use pnmpi_trace::{Error, Result};
use rustc_hash::FxHashMap;
use std::path::{Path, PathBuf};

/// The archive's name inside its folder: `DIR/traces.otf2`, as Score-P.
pub const ARCHIVE: &str = "traces";

/// What an export wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exported {
    /// The anchor file (`DIR/traces.otf2`).
    pub anchor: PathBuf,
    /// Locations (threads of ranks).
    pub locations: usize,
    /// Event records written.
    pub records: u64,
    /// What had no OTF2 record, by what, with counts.
    pub lost: Vec<(String, u64)>,
}

/// A request created by a call, until a later call completes it.
#[derive(Clone, Copy)]
enum Pending {
    /// A nonblocking send.
    Send,
    /// A nonblocking receive: its posted source (comm rank), comm, tag, bytes.
    Recv(Option<u32>, u32, i64, u64),
    /// A nonblocking collective: operation, comm, root, sent, received.
    Coll(ffi::OTF2_CollectiveOp, u32, u32, u64, u64),
    /// A persistent request (`*_init`): send?, peer (world), tag, comm, bytes.
    Persistent(bool, i64, i64, i64, u64),
}

/// World ranks to ranks of a communicator, per communicator.
struct Ranks {
    world_size: u32,
    table: Vec<FxHashMap<i64, u32>>,
}

impl Ranks {
    fn new(world_size: u32, comms: &[Comm]) -> Ranks {
        let table = comms
            .iter()
            .map(|c| {
                c.members
                    .iter()
                    .enumerate()
                    .map(|(i, &w)| (w, i as u32))
                    .collect()
            })
            .collect();
        Ranks { world_size, table }
    }

    /// The rank in communicator `comm` of world rank `world`, seen from
    /// `me`; `None` for special or unknown ranks.
    fn local(&self, comm: i64, world: i64, me: u32) -> Option<u32> {
        if world < 0 {
            return None;
        }
        match comm {
            COMM_WORLD => (world < i64::from(self.world_size)).then_some(world as u32),
            COMM_SELF => (world == i64::from(me)).then_some(0),
            _ => self
                .table
                .get(usize::try_from(comm - FIRST_TABLE_COMM).ok()?)?
                .get(&world)
                .copied(),
        }
    }

    /// Whether `comm` is a communicator the archive defines.
    fn known(&self, comm: i64) -> bool {
        comm >= 0 && comm < FIRST_TABLE_COMM + self.table.len() as i64
    }
}

/// The export of the events, a location at a time.
struct Events<'a> {
    kinds: Vec<RoutineKind>,
    ops: Vec<Option<ffi::OTF2_CollectiveOp>>,
    persistent: Vec<bool>,
    ranks: Ranks,
    pending: FxHashMap<ReqRef, Pending>,
    parents: &'a mut [Option<i64>],
    lost: FxHashMap<&'static str, u64>,
    end: u64,
    /// Whether the trace has call sites, exported as `SourceCodeLocation`s.
    sites: bool,
    /// One-sided calls.
    rma: RmaExport,
}

/// OTF2's request id of a pnmpi request: unique in the archive.
fn request(r: ReqRef) -> u64 {
    (u64::from(r.stream) << 32) | u64::from(r.index)
}

impl Events<'_> {
    fn lose(&mut self, what: &'static str) {
        *self.lost.entry(what).or_insert(0) += 1;
    }

    /// Writes one call of stream `si` (rank `me`).
    fn write(&mut self, w: &mut EventWriter, si: u32, me: u32, ev: &Event) -> Result<()> {
        let r = ev.routine as usize;
        let (start, end) = (ev.start, ev.end.max(ev.start));
        self.end = self.end.max(end);
        let enter = match ev.get(V::Site).and_then(|s| u32::try_from(s).ok()) {
            Some(site) if self.sites => Record::EnterAt(ev.routine, site),
            _ => Record::Enter(ev.routine),
        };
        w.write(start, enter)?;
        let comm = ev.get(V::Comm).unwrap_or(COMM_WORLD);
        let tag = ev.get(V::Tag).unwrap_or(0);
        let bytes = ev.get(V::Bytes).unwrap_or(0).max(0) as u64;
        let peer = ev.get(V::Peer).and_then(|p| self.ranks.local(comm, p, me));
        let known = self.ranks.known(comm);
        let c = comm as u32;
        let req = |k: u32| ReqRef {
            stream: si,
            index: ev.first_req + k,
        };
        let mut at_end: Vec<Record> = Vec::new();
        let mut at_start: Vec<Record> = Vec::new();
        if let Some(lost) = self.rma.records((si, req(0)), ev, &mut at_start, &mut at_end) {
            self.lose(lost);
        }
        for rec in at_start {
            w.write(start, rec)?;
        }
        match self.kinds[r] {
            RoutineKind::Send { .. } | RoutineKind::Recv { .. } if self.persistent[r] => {
                let send = matches!(self.kinds[r], RoutineKind::Send { .. });
                let p = ev.get(V::Peer).unwrap_or(-3);
                self.pending
                    .insert(req(0), Pending::Persistent(send, p, tag, comm, bytes));
            }
            RoutineKind::Send { blocking } => match (peer, known) {
                (Some(to), true) if blocking => w.write(start, Record::Send(to, c, tag as u32, bytes))?,
                (Some(to), true) => {
                    w.write(start, Record::Isend(to, c, tag as u32, bytes, request(req(0))))?;
                    self.pending.insert(req(0), Pending::Send);
                }
                _ => self.lose("sends to MPI_PROC_NULL or to ranks outside the known communicators"),
            },
            RoutineKind::Recv { blocking: true } => match (peer, known) {
                (Some(from), true) => at_end.push(Record::Recv(from, c, tag as u32, bytes)),
                _ => self.lose("receives from MPI_PROC_NULL or from ranks outside the known communicators"),
            },
            RoutineKind::Recv { blocking: false } if known => {
                w.write(start, Record::IrecvRequest(request(req(0))))?;
                self.pending.insert(req(0), Pending::Recv(peer, c, tag, bytes));
            }
            RoutineKind::Recv { blocking: false } => {
                self.lose("receives from MPI_PROC_NULL or from ranks outside the known communicators")
            }
            RoutineKind::Sendrecv => {
                let src = ev.get(V::Src).and_then(|p| self.ranks.local(comm, p, me));
                let rtag = ev.get(V::Rtag).unwrap_or(0) as u32;
                let rbytes = ev.get(V::Rbytes).unwrap_or(bytes as i64).max(0) as u64;
                match (peer, known) {
                    (Some(to), true) => w.write(start, Record::Send(to, c, tag as u32, bytes))?,
                    _ => self.lose("sends to MPI_PROC_NULL or to ranks outside the known communicators"),
                }
                match (src, known) {
                    (Some(from), true) => at_end.push(Record::Recv(from, c, rtag, rbytes)),
                    _ => {
                        self.lose("receives from MPI_PROC_NULL or from ranks outside the known communicators")
                    }
                }
            }
            RoutineKind::Start => {
                for (k, init) in ev.init.iter().enumerate() {
                    let Some(&Pending::Persistent(send, p, ptag, pcomm, pbytes)) =
                        init.as_ref().and_then(|i| self.pending.get(i))
                    else {
                        self.lose("starts of persistent requests the trace did not see created");
                        continue;
                    };
                    let id = req(k as u32);
                    let local = self.ranks.local(pcomm, p, me);
                    if send {
                        let Some(to) = local else { continue };
                        w.write(
                            start,
                            Record::Isend(to, pcomm as u32, ptag as u32, pbytes, request(id)),
                        )?;
                        self.pending.insert(id, Pending::Send);
                    } else {
                        w.write(start, Record::IrecvRequest(request(id)))?;
                        self.pending
                            .insert(id, Pending::Recv(local, pcomm as u32, ptag, pbytes));
                    }
                }
            }
            RoutineKind::Complete => {
                for d in &ev.done {
                    let Some(r) = d.req else {
                        self.lose("completions of requests the trace did not see created");
                        continue;
                    };
                    let id = request(r);
                    match self.pending.get(&r).copied() {
                        Some(Pending::Send) => at_end.push(Record::IsendComplete(id)),
                        Some(Pending::Recv(posted, rc, rtag, rbytes)) => {
                            // A wildcard receive's status names the actual source and tag.
                            let (from, rtag) = match d.status {
                                Some((s, t)) => (self.ranks.local(i64::from(rc), s, me), t),
                                None => (posted, rtag),
                            };
                            match from {
                                Some(from) => at_end.push(Record::Irecv(from, rc, rtag as u32, rbytes, id)),
                                None => at_end.push(Record::Cancelled(id)),
                            }
                        }
                        Some(Pending::Coll(op, cc, root, sent, recvd)) => {
                            at_end.push(Record::NbCollComplete(op, cc, root, sent, recvd, id))
                        }
                        // Freeing a persistent request: nothing to record.
                        Some(Pending::Persistent(..)) => {}
                        None => match self.rma.completed(r) {
                            Some(rec) => at_end.push(rec),
                            None => self.lose("completions of requests the trace did not see created"),
                        },
                    }
                    self.pending.remove(&r);
                }
            }
            RoutineKind::Collective { blocking, .. } => {
                let op = self.ops[r].unwrap_or(ffi::OTF2_COLLECTIVE_OP_BARRIER as _);
                let root = ev
                    .get(V::Root)
                    .and_then(|p| self.ranks.local(comm, p, me))
                    .unwrap_or(UNDEFINED_U32);
                let rbytes = ev.get(V::Rbytes).unwrap_or(bytes as i64).max(0) as u64;
                if !known {
                    self.lose("collectives on communicators the trace does not describe");
                } else if blocking {
                    w.write(start, Record::CollBegin)?;
                    at_end.push(Record::CollEnd(op, c, root, bytes, rbytes));
                } else {
                    w.write(start, Record::NbCollRequest(request(req(0))))?;
                    self.pending
                        .insert(req(0), Pending::Coll(op, c, root, bytes, rbytes));
                }
            }
            _ => {}
        }
        if let Some(Some(id)) = ev.newcomm {
            let id = i64::from(id);
            if let Some(p) = usize::try_from(id - FIRST_TABLE_COMM)
                .ok()
                .and_then(|i| self.parents.get_mut(i))
            {
                *p = Some(comm);
                at_end.push(Record::CommCreate(id as u32));
            }
        }
        for rec in at_end {
            w.write(end, rec)?;
        }
        w.write(end, Record::Leave(ev.routine))
    }
}

/// `DIR.part`: where the archive is built.
fn part_of(dir: &Path) -> PathBuf {
    let mut p = dir.as_os_str().to_owned();
    p.push(".part");
    PathBuf::from(p)
}

/// Exports `src` as the OTF2 archive `dir/traces.otf2`; `progress` is told
/// of the events read. An existing `dir` is replaced only if it is empty
/// or an OTF2 archive; nothing is left under `dir` if the export fails.
pub fn export(src: &mut dyn StreamedTrace, dir: &Path, progress: &dyn Fn(u64)) -> Result<Exported> {
    export_marked(src, dir, progress, &[])
}

/// [`export`], with the analysis's `marks` (wait states, critical path)
/// as metrics accumulated on each rank (see [`crate::metrics`]).
pub fn export_marked(
    src: &mut dyn StreamedTrace,
    dir: &Path,
    progress: &dyn Fn(u64),
    marks: &[Mark],
) -> Result<Exported> {
    let replaces = dir.exists();
    if replaces && !dir.join(format!("{ARCHIVE}.otf2")).is_file() && !is_empty_dir(dir) {
        return Err(Error::Invalid(format!(
            "{} exists and is not an OTF2 archive: remove it or choose another folder",
            dir.display()
        )));
    }
    let part = part_of(dir);
    let io = |p: &Path, e| Error::io(p.display(), e);
    if part.exists() {
        std::fs::remove_dir_all(&part).map_err(|e| io(&part, e))?;
    }
    std::fs::create_dir_all(&part).map_err(|e| io(&part, e))?;
    let written = write_archive(src, &part, progress, marks);
    let mut done = match written {
        Ok(done) => done,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&part);
            return Err(e);
        }
    };
    if replaces {
        std::fs::remove_dir_all(dir).map_err(|e| io(dir, e))?;
    }
    std::fs::rename(&part, dir).map_err(|e| io(dir, e))?;
    done.anchor = dir.join(format!("{ARCHIVE}.otf2"));
    Ok(done)
}

fn is_empty_dir(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_none())
}

/// Writes the archive into `dir` (which exists).
fn write_archive(
    src: &mut dyn StreamedTrace,
    dir: &Path,
    progress: &dyn Fn(u64),
    marks: &[Mark],
) -> Result<Exported> {
    // A folder's communicator table is complete only once read through.
    src.count_events(progress)?;
    let routines = src.routines().to_vec();
    let comms = src.comms().to_vec();
    let world_size = src.world_size();
    let streams = src.stream_list();
    let nodes = Nodes::of(src, world_size);
    let mut w = ArchiveWriter::create(dir, ARCHIVE, "pnmpi trace export")?;
    let mut parents = vec![None; comms.len()];
    let mut events = Events {
        kinds: routines.iter().map(|n| classify(n)).collect(),
        ops: routines.iter().map(|n| collective_op(n)).collect(),
        persistent: routines
            .iter()
            .map(|r| r.ends_with("_init") || r.ends_with("_init_c"))
            .collect(),
        ranks: Ranks::new(world_size, &comms),
        pending: FxHashMap::default(),
        parents: &mut parents,
        lost: FxHashMap::default(),
        end: 0,
        sites: !src.sites().is_empty(),
        // Groups 0 to 2, then one per communicator of the table.
        rma: RmaExport::new(&routines, src.wins(), comms.len() as u32 + 3),
    };
    let mut metrics = Metrics::of(marks, &streams);
    let mut records = Vec::with_capacity(streams.len());
    let mut ev = Event::default();
    for (i, &(rank, _)) in streams.iter().enumerate() {
        src.restart(i)?;
        let mut ew = w.events(i as u64)?;
        let mut n = 0u64;
        while src.next_into(i, &mut ev)? {
            metrics.write_until(&mut ew, i, Some(ev.start))?;
            events.write(&mut ew, i as u32, rank, &ev)?;
            metrics.written(i, ev.start.max(ev.end));
            n += 1;
            if n.is_multiple_of(1 << 16) {
                progress(1 << 16);
            }
        }
        progress(n % (1 << 16));
        metrics.write_until(&mut ew, i, None)?;
        records.push(ew.records());
        ew.close()?;
    }
    let (end, mut lost, sites, groups) = (events.end, events.lost, events.sites, events.rma.groups);
    w.finish_events(0..streams.len() as u64)?;
    definitions(
        &mut w, &nodes, &routines, &comms, &parents, &streams, &records, end,
    )?;
    let first_group = comms.len() as u32 + 3;
    for (i, g) in groups.iter().enumerate() {
        let members: Vec<u64> = g.iter().map(|&m| m.max(0) as u64).collect();
        let id = first_group + i as u32;
        w.group(
            id,
            &format!("group {i}"),
            ffi::OTF2_GROUP_TYPE_COMM_GROUP as _,
            &members,
        )?;
    }
    for (i, win) in src.wins().iter().enumerate() {
        let comm = u32::try_from(win.comm).unwrap_or(COMM_WORLD as u32);
        w.rma_win(i as u32, &crate::rma_import::win_name(i, win.kind), comm)?;
    }
    metrics.define(&mut w)?;
    if sites {
        // A site without a file is named by its object and offset.
        let sites: Vec<(String, u32)> = src
            .sites()
            .iter()
            .map(|s| match (&s.file, s.line) {
                (Some(file), Some(line)) => (file.clone(), line),
                _ => (s.place(), 0),
            })
            .collect();
        w.sites(&sites)?;
    }
    w.close()?;
    let mut lost: Vec<(String, u64)> = lost.drain().map(|(k, v)| (k.to_owned(), v)).collect();
    lost.sort();
    Ok(Exported {
        anchor: dir.join(format!("{ARCHIVE}.otf2")),
        locations: streams.len(),
        records: records.iter().sum(),
        lost,
    })
}

/// The system tree's nodes below the machine: one per host the rank
/// headers name, and one "host (not recorded)" for the ranks whose host
/// the trace does not record.
struct Nodes {
    /// Node names; node `i` is the system tree node `i + 1`.
    names: Vec<String>,
    /// The node of each world rank (an index into `names`).
    of_rank: Vec<u32>,
}

impl Nodes {
    fn of(src: &dyn StreamedTrace, world_size: u32) -> Nodes {
        let mut names: Vec<String> = Vec::new();
        let mut index: FxHashMap<&str, u32> = FxHashMap::default();
        let of_rank = (0..world_size)
            .map(|rank| {
                let host = src.host(rank).unwrap_or(UNRECORDED);
                *index.entry(host).or_insert_with(|| {
                    names.push(host.to_owned());
                    names.len() as u32 - 1
                })
            })
            .collect();
        Nodes { names, of_rank }
    }
}

/// The node of the ranks whose host the trace does not record.
const UNRECORDED: &str = "host (not recorded)";

/// The global definitions: clock, system tree, processes and threads,
/// regions, groups and communicators.
#[allow(clippy::too_many_arguments)]
fn definitions(
    w: &mut ArchiveWriter,
    nodes: &Nodes,
    routines: &[String],
    comms: &[Comm],
    parents: &[Option<i64>],
    streams: &[(u32, u32)],
    records: &[u64],
    end: u64,
) -> Result<()> {
    w.clock(end)?;
    // The machine, then a node per host, each rank under its host's.
    let world_size = nodes.of_rank.len() as u32;
    w.system_tree_node(0, "pnmpi trace", "machine", UNDEFINED_U32)?;
    for (i, name) in nodes.names.iter().enumerate() {
        w.system_tree_node(i as u32 + 1, name, "node", 0)?;
    }
    for (rank, &node) in nodes.of_rank.iter().enumerate() {
        w.process(rank as u32, &format!("MPI Rank {rank}"), node + 1)?;
    }
    for (i, &(rank, thread)) in streams.iter().enumerate() {
        let name = if thread == 0 {
            "Master thread".to_owned()
        } else {
            format!("Thread {thread}")
        };
        w.thread(i as u64, &name, records[i], rank)?;
    }
    for (i, name) in routines.iter().enumerate() {
        w.mpi_region(i as u32, name, role(name))?;
    }
    // Group 0: the location of each rank (its first thread); group 1:
    // world; 2: self; 3 on: the table's communicators, as world ranks
    // (indices into group 0).
    let mut first = vec![None; world_size as usize];
    for (i, &(rank, _)) in streams.iter().enumerate().rev() {
        if let Some(f) = first.get_mut(rank as usize) {
            *f = Some(i as u64);
        }
    }
    if let Some(rank) = first.iter().position(Option::is_none) {
        return Err(Error::Invalid(format!(
            "rank {rank} has no events: OTF2 needs a location for every MPI rank"
        )));
    }
    let locations: Vec<u64> = first.into_iter().flatten().collect();
    w.group(
        0,
        "MPI ranks",
        ffi::OTF2_GROUP_TYPE_COMM_LOCATIONS as _,
        &locations,
    )?;
    let all: Vec<u64> = (0..u64::from(world_size)).collect();
    w.group(1, "MPI_COMM_WORLD", ffi::OTF2_GROUP_TYPE_COMM_GROUP as _, &all)?;
    w.group(2, "MPI_COMM_SELF", ffi::OTF2_GROUP_TYPE_COMM_SELF as _, &[])?;
    w.comm(0, "MPI_COMM_WORLD", 1, UNDEFINED_U32)?;
    w.comm(1, "MPI_COMM_SELF", 2, UNDEFINED_U32)?;
    for (k, c) in comms.iter().enumerate() {
        // An intercommunicator keeps its local group only (see docs).
        let members: Vec<u64> = c.members.iter().map(|&m| m.max(0) as u64).collect();
        let id = k as u32 + FIRST_TABLE_COMM as u32;
        let name = format!("comm {id}");
        w.group(id + 1, &name, ffi::OTF2_GROUP_TYPE_COMM_GROUP as _, &members)?;
        let parent = parents[k].map_or(UNDEFINED_U32, |p| p as u32);
        w.comm(id, &name, id + 1, parent)?;
    }
    Ok(())
}
