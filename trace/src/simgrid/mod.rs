//! Export to SimGrid's time-independent trace format, which
//! `smpirun -replay` simulates: one action file per rank, an index listing
//! them, a platform and a host file.
//!
//! CPU bursts become `compute` actions at 1 flop per ns on hosts of 1
//! Gflop/s, so that a replay on the generated platform keeps the traced
//! compute times. SimGrid replays blocking collectives on `MPI_COMM_WORLD`
//! only: a barrier, broadcast, reduction, allreduce, gather or scatter on
//! a smaller communicator is replayed as messages through its root
//! (gather to the root, then broadcast from it), with tags from
//! [`SUBCOMM_TAG`] up; what has no exact action of SimGrid's, nonblocking
//! collectives included, as the messages of a direct algorithm ([`coll`]).
//! Only what the trace cannot describe (intercommunicators, communicators
//! never seen created, neighbourhood collectives, `v` collectives of
//! version 1 traces) is approximated, and listed.

pub mod coll;
mod rank;

use crate::error::{Error, Result};
use crate::fields::{ANY_SOURCE, ANY_TAG, V, WILD_SOURCE, WILD_TAG};
use crate::messages::Persistent;
use crate::routine::{classify, Coll, RoutineKind};
use crate::source::{for_each_event_of, StreamedTrace};
use crate::trace::{members, Comm, Event, ReqRef};
use rank::{Known, Rank, SimgridKey};
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Tags of the messages that stand for sub-communicator collectives:
/// this plus the communicator id.
pub const SUBCOMM_TAG: i64 = 1 << 28;

/// What an export wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimgridExport {
    /// The index file to pass to `-replay`.
    pub index: PathBuf,
    /// The platform file.
    pub platform: PathBuf,
    /// The host file.
    pub hostfile: PathBuf,
    /// The same platform for `pnmpi sim replay`.
    pub machine: PathBuf,
    /// Actions written.
    pub actions: u64,
    /// Calls replayed only approximately, by routine, with their counts.
    pub approximated: Vec<(String, u64)>,
}

/// SimGrid options under which `smpirun -replay` computes what
/// `pnmpi sim replay` does with the export's `machine.toml`: a message
/// costs latency + size / bandwidth (CM02 without SMPI's piecewise
/// factors or cross-traffic), messages below 64 KiB leave at once
/// (eager: detached and sent to the receiver's mailbox before it posts),
/// larger ones wait for their receive.
pub const SMPIRUN_OPTIONS: &str = "--cfg=network/model:CM02 --cfg=smpi/bw-factor:1 \
    --cfg=smpi/lat-factor:1 --cfg=network/crosstraffic:0 \
    --cfg=smpi/send-is-detached-thresh:65536 --cfg=smpi/async-small-thresh:65536";

/// A message from a rank to itself: a copy in memory, with no network
/// latency, as MPI libraries make it (Open MPI's `self` transport, MPICH's
/// shared-memory path). The platform's loopback route and machine.toml's
/// `[network.intra]` (within a single-core node: only to self) both say
/// it, so that the two simulators charge the same.
const LOOPBACK_LATENCY: &str = "0us";
/// The copy's bandwidth in GB/s, a memory copy's on a current core.
const LOOPBACK_GBPS: u32 = 20;

/// The export's machine, as `pnmpi sim replay` reads it: one rank per
/// node, 5 us and 10 GB/s between nodes (the platform's two 2.5 us cluster
/// links), a message to self as a memory copy, eager up to 65535 bytes,
/// collectives expanded into SimGrid's default algorithms.
fn machine_toml(ranks: u32) -> String {
    format!(
        "# The platform of platform.xml, for `pnmpi sim replay index.txt -m machine.toml`:\n\
         # with README.txt's smpirun options, both simulators compute the same times.\n\
         [machine]\nname = \"SimGrid export: {ranks} single-core hosts\"\nnodes = {ranks}\ncores_per_node = 1\n\n\
         [network]\nlatency = \"5us\"\nbandwidth = \"10GB/s\"\n\
         eager_threshold = \"65535B\"   # SimGrid: sizes below smpi/send-is-detached-thresh (65536)\n\
         envelope = \"16B\"   # SimGrid sends each payload with a 16-byte MPI envelope\n\n\
         # A message to self: a copy in memory (platform.xml's loopback routes).\n\
         [network.intra]\nlatency = \"{LOOPBACK_LATENCY}\"\nbandwidth = \"{LOOPBACK_GBPS}GB/s\"\n\n\
         [collectives]\nmode = \"algorithmic\"   # SimGrid's default selector's algorithms\n"
    )
}

/// SimGrid's platform for `hosts` ranks: one host of 1 Gflop/s per rank
/// (a `compute F` action lasts F ns, as traced), each with a private
/// 2.5 us, 10 GB/s link that is never shared (`FATPIPE`), in a zone with
/// `Cluster` routing, so that a message crosses its sender's link and its
/// receiver's: 5 us and 10 GB/s, whatever else is in flight, as the
/// simple model's infinite resources. (SimGrid 3.32's `<cluster>` tag
/// creates its private links `SHARED` whatever its `sharing_policy`
/// says: two messages crossing one host then split its bandwidth, which
/// is why the links are written out one by one.) A message from a host to
/// itself takes its own loopback route, a memory copy: without it, a
/// `Cluster` zone routes it through the host's link once (2.5 us, half
/// the network's latency), where MPI copies in memory.
fn platform_xml(hosts: u32) -> String {
    let mut xml = String::with_capacity(200 + 160 * hosts as usize);
    xml.push_str(
        "<?xml version='1.0'?>\n\
         <!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n\
         <!-- One host of 1 Gflop/s per rank: a compute action of F flops lasts F ns, as traced.\n     \
         A message crosses its sender's and its receiver's private link (2.5 us, 10 GB/s each,\n     \
         never shared: FATPIPE): 5 us and 10 GB/s whatever else is in flight, as machine.toml says.\n     \
         A message to self takes the host's loopback route: a copy in memory. -->\n\
         <platform version=\"4.1\">\n  <zone id=\"world\" routing=\"Cluster\">\n",
    );
    for i in 0..hosts {
        let _ = write!(
            xml,
            "    <host id=\"node-{i}\" speed=\"1Gf\"/>\n    \
             <link id=\"link-{i}\" bandwidth=\"10GBps\" latency=\"2.5us\" sharing_policy=\"FATPIPE\"/>\n    \
             <host_link id=\"node-{i}\" up=\"link-{i}\" down=\"link-{i}\"/>\n    \
             <link id=\"loop-{i}\" bandwidth=\"{LOOPBACK_GBPS}GBps\" latency=\"{LOOPBACK_LATENCY}\" \
             sharing_policy=\"FATPIPE\"/>\n"
        );
    }
    // Routes follow every host and link of the zone.
    for i in 0..hosts {
        let _ = writeln!(
            xml,
            "    <route src=\"node-{i}\" dst=\"node-{i}\"><link_ctn id=\"loop-{i}\"/></route>"
        );
    }
    xml.push_str("  </zone>\n</platform>\n");
    xml
}

impl SimgridExport {
    /// The command that replays the export, to run in its folder.
    pub fn command(&self, ranks: u32) -> String {
        let name = |p: &Path| {
            p.file_name()
                .map_or(String::new(), |n| n.to_string_lossy().into_owned())
        };
        format!(
            "smpirun -np {ranks} -platform {} -hostfile {} -replay {} {}",
            name(&self.platform),
            name(&self.hostfile),
            name(&self.index),
            SMPIRUN_OPTIONS
        )
    }
}

impl Rank<'_> {
    fn routine(&self, e: &Event) -> &str {
        self.routines.get(e.routine as usize).map_or("?", String::as_str)
    }

    /// The persistent request behind a start's activation, if known.
    fn persistent(&mut self, init: Option<ReqRef>) -> Option<Persistent> {
        let r = init?;
        match &self.known {
            Known::Collected { persistent, .. } => persistent.get(&r).copied(),
            Known::SoFar(persistent) => {
                let p = persistent.get(&r).copied();
                self.lookahead |= p.is_none();
                p
            }
        }
    }

    fn approx(&mut self, e: &Event) {
        *self.approximated.entry(self.routine(e).to_owned()).or_insert(0) += 1;
    }

    /// A nonblocking send or receive with SimGrid key `key`.
    fn post(&mut self, action: &str, req: ReqRef, key: SimgridKey) {
        self.act(action);
        self.keys.insert(req, key);
        self.stored.entry(key).or_insert(req);
    }

    /// The source and tag receive `req` is written with, posted with
    /// `posted`: a wildcard's from its completion, which only the collected
    /// lookahead knows (else it asks for it); `None` for a receive that is
    /// not written (cancelled, or from no rank).
    fn received(&mut self, req: ReqRef, wild: bool, posted: (i64, i64)) -> Option<(i64, i64)> {
        let (src, tag) = match &self.known {
            Known::Collected { cancelled, .. } if cancelled.contains(&req) => return None,
            Known::Collected { wild: known, .. } if wild => {
                known.get(&req).copied().unwrap_or((-1, posted.1))
            }
            Known::SoFar(_) if wild => {
                self.lookahead = true;
                return None;
            }
            _ => posted,
        };
        (src >= 0).then_some((src, tag))
    }

    fn wait(&mut self, req: ReqRef) {
        if let Some(keys) = self.nbc.remove(&req) {
            for k in keys {
                self.act(&format!("wait {} {} {}", k.0, k.1, k.2));
            }
            return;
        }
        let Some(key) = self.keys.remove(&req) else {
            return;
        };
        // A request SimGrid did not store (another of the same key was
        // outstanding) completes without a wait.
        if self.stored.get(&key) == Some(&req) {
            self.stored.remove(&key);
            self.act(&format!("wait {} {} {}", key.0, key.1, key.2));
        }
    }

    fn event(&mut self, si: usize, e: &Event, comms: &[Comm]) {
        let me = self.me;
        let req = ReqRef {
            stream: si as u32,
            index: e.first_req,
        };
        let peer = e.get(V::Peer).unwrap_or(-1);
        let tag = e.get(V::Tag).unwrap_or(0);
        let bytes = e.get(V::Bytes).unwrap_or(0).max(0);
        let routines = self.routines;
        let name = routines.get(e.routine as usize).map_or("?", String::as_str);
        if let Known::SoFar(persistent) = &mut self.known {
            if let Some(p) = persistent_init(name, self.kinds[e.routine as usize], e) {
                persistent.insert(req, p);
            }
        }
        match self.kinds[e.routine as usize] {
            RoutineKind::Send { blocking: true } if peer >= 0 => {
                self.act(&format!("send {peer} {tag} {bytes}"))
            }
            RoutineKind::Send { blocking: false } if peer >= 0 && !name.contains("_init") => {
                self.post(&format!("isend {peer} {tag} {bytes}"), req, (me, peer, tag))
            }
            RoutineKind::Recv { blocking: true } if peer >= 0 => {
                self.act(&format!("recv {peer} {tag} {bytes}"))
            }
            RoutineKind::Recv { blocking: false } if !name.contains("_init") => {
                let wild = e.get(V::Wild).unwrap_or(0) & (WILD_SOURCE | WILD_TAG) != 0;
                if let Some((src, tag)) = self.received(req, wild, (peer, tag)) {
                    self.post(&format!("irecv {src} {tag} {bytes}"), req, (src, me, tag));
                }
            }
            // A cancelled receive is not written (SimGrid's replay has no
            // cancel), which the collected lookahead tells.
            RoutineKind::Cancel => {
                if matches!(self.known, Known::SoFar(_)) {
                    self.lookahead = true;
                }
                self.compute += e.duration();
            }
            RoutineKind::Sendrecv => {
                let (src, rtag) = (e.get(V::Src).unwrap_or(-1), e.get(V::Rtag).unwrap_or(0));
                let rbytes = e.get(V::Rbytes).unwrap_or(bytes).max(0);
                let key = (me, peer, tag);
                let shadowed = peer >= 0 && self.stored.contains_key(&key);
                if peer >= 0 {
                    self.act(&format!("isend {peer} {tag} {bytes}"));
                    self.stored.entry(key).or_insert(req);
                }
                if src >= 0 {
                    self.act(&format!("recv {src} {rtag} {rbytes}"));
                }
                if peer >= 0 && !shadowed {
                    self.stored.remove(&key);
                    self.act(&format!("wait {me} {peer} {tag}"));
                }
            }
            RoutineKind::Start => {
                for (i, init) in e.init.iter().enumerate() {
                    let Some(p) = self.persistent(*init) else {
                        continue;
                    };
                    let activation = ReqRef {
                        stream: si as u32,
                        index: e.first_req + i as u32,
                    };
                    if p.send {
                        if p.peer >= 0 {
                            self.post(
                                &format!("isend {} {} {}", p.peer, p.tag, p.bytes),
                                activation,
                                (me, p.peer, p.tag),
                            );
                        }
                    } else {
                        let wild = p.peer == ANY_SOURCE || p.tag == ANY_TAG;
                        match self.received(activation, wild, (p.peer, p.tag)) {
                            Some((src, tag)) => self.post(
                                &format!("irecv {src} {tag} {}", p.bytes),
                                activation,
                                (src, me, tag),
                            ),
                            None if self.lookahead => return,
                            None => {}
                        }
                    }
                }
            }
            RoutineKind::Complete => {
                let before = self.actions;
                for d in &e.done {
                    if let Some(r) = d.req {
                        if name == "MPI_Request_free" {
                            self.keys.remove(&r);
                        } else {
                            self.wait(r);
                        }
                    }
                }
                if self.actions == before {
                    self.compute += e.duration();
                }
            }
            // MPI-4 persistent collectives (`MPI_Bcast_init` ...): not replayed.
            RoutineKind::Collective { .. } if name.contains("_init") => {
                self.approx(e);
                self.compute += e.duration();
            }
            RoutineKind::Collective { op, blocking, vector } => {
                self.collective(e, op, vector, (!blocking).then_some(req), comms);
            }
            _ => {
                if name.contains("_neighbor_") {
                    self.approx(e);
                }
                if !matches!(name, "MPI_Init" | "MPI_Init_thread" | "MPI_Finalize") {
                    self.compute += e.duration();
                }
            }
        }
    }

    /// A collective: SimGrid's own action where it has an exact one,
    /// messages otherwise (`req`: the request of a nonblocking call).
    fn collective(&mut self, e: &Event, op: Coll, vector: bool, req: Option<ReqRef>, comms: &[Comm]) {
        let comm = e.get(V::Comm).unwrap_or(-1);
        let inter = usize::try_from(comm - crate::fields::FIRST_TABLE_COMM)
            .ok()
            .and_then(|i| comms.get(i))
            .is_some_and(|c| c.remote.is_some());
        let members = members(self.world_size, comms, comm, self.me as u32).filter(|_| !inter);
        let Some((members, me)) = members.and_then(|m| {
            let me = m.iter().position(|&x| x == self.me)?;
            Some((m, me))
        }) else {
            self.approx(e);
            return;
        };
        let bytes = e.get(V::Bytes).unwrap_or(0).max(0);
        let rbytes = e.get(V::Rbytes).unwrap_or(bytes).max(0);
        let root_world = e.get(V::Root).unwrap_or(members[0]);
        let call = coll::Call {
            op,
            vector,
            members: &members,
            me,
            root: members.iter().position(|&m| m == root_world).unwrap_or(0),
            bytes,
            rbytes,
            counts: e.counts.as_ref(),
        };
        let is_world = comm >= 0 && members.iter().copied().eq(0..i64::from(self.world_size));
        if call.lacks_counts() {
            // A version 1 trace: the average per process.
            self.approx(e);
        } else if req.is_none() && is_world && (vector || op == Coll::ReduceScatter) {
            match call.world_action() {
                Ok(Some(action)) => self.act(&action),
                Ok(None) => self.direct(&call, comm, None),
                Err(why) => {
                    self.error = Some(format!(
                        "rank {}, event {} ({}): {why}",
                        self.me,
                        self.index,
                        self.routine(e)
                    ))
                }
            }
            return;
        }
        let root = root_world;
        let action = match op {
            _ if req.is_some() || vector || !is_world => None,
            Coll::Barrier => Some("barrier".to_string()),
            Coll::Bcast => Some(format!("bcast {bytes} {root}")),
            Coll::Reduce => Some(format!("reduce {bytes} 0 {root}")),
            Coll::Allreduce => Some(format!("allreduce {bytes} 0")),
            Coll::Gather => Some(format!("gather {bytes} {rbytes} {root}")),
            Coll::Scatter => Some(format!("scatter {bytes} {rbytes} {root}")),
            Coll::Allgather => Some(format!("allgather {bytes} {rbytes}")),
            Coll::Alltoall => Some(format!("alltoall {bytes} {rbytes}")),
            Coll::ReduceScatter | Coll::Scan => None,
        };
        if let Some(action) = action {
            self.act(&action);
            return;
        }
        let through_root = matches!(
            op,
            Coll::Barrier | Coll::Bcast | Coll::Reduce | Coll::Allreduce | Coll::Gather | Coll::Scatter
        );
        if req.is_some() || vector || !through_root {
            self.direct(&call, comm, req);
            return;
        }
        let me = self.me;
        let tag = SUBCOMM_TAG + comm;
        let size = bytes.max(1);
        let others = |root: i64| members.iter().copied().filter(move |&m| m != root);
        let fan_out = |s: &mut Self, root: i64| {
            if me == root {
                for m in others(root) {
                    s.act(&format!("send {m} {tag} {size}"));
                }
            } else {
                s.act(&format!("recv {root} {tag} {size}"));
            }
        };
        let fan_in = |s: &mut Self, root: i64| {
            if me == root {
                for m in others(root) {
                    s.act(&format!("recv {m} {tag} {size}"));
                }
            } else {
                s.act(&format!("send {root} {tag} {size}"));
            }
        };
        match op {
            Coll::Bcast | Coll::Scatter => fan_out(self, root_world),
            Coll::Reduce | Coll::Gather => fan_in(self, root_world),
            _ => {
                fan_in(self, members[0]);
                fan_out(self, members[0]);
            }
        }
    }
}

/// The persistent request an `MPI_*_init` call (`name`, of kind `kind`)
/// creates.
fn persistent_init(name: &str, kind: RoutineKind, e: &Event) -> Option<Persistent> {
    if !name.contains("_init") || !matches!(kind, RoutineKind::Send { .. } | RoutineKind::Recv { .. }) {
        return None;
    }
    Some(Persistent {
        send: matches!(kind, RoutineKind::Send { .. }),
        peer: e.get(V::Peer).unwrap_or(-1),
        tag: e.get(V::Tag).unwrap_or(0),
        comm: e.get(V::Comm).unwrap_or(0),
        bytes: e.get(V::Bytes).unwrap_or(0).max(0),
    })
}

/// Reads rank `rank`'s streams through for what its export
/// needs ahead of time: wildcard receives' sources and tags, and the
/// persistent requests.
fn collect(src: &mut dyn StreamedTrace, rank: u32, kinds: &[RoutineKind]) -> Result<Known> {
    let mut wild = HashMap::new();
    let mut persistent = HashMap::new();
    let mut cancelled = HashSet::new();
    let routines = src.routines().to_vec();
    for_each_event_of(src, &|(r, _)| r == rank, &|_| {}, |_, si, _, _, e| {
        for d in &e.done {
            if let (Some(r), Some(st)) = (d.req, d.status) {
                wild.insert(r, st);
            }
        }
        let name = routines.get(e.routine as usize).map_or("?", String::as_str);
        if kinds[e.routine as usize] == RoutineKind::Cancel {
            cancelled.extend(e.done.iter().filter_map(|d| d.req));
        }
        if let Some(p) = persistent_init(name, kinds[e.routine as usize], e) {
            let req = ReqRef {
                stream: si as u32,
                index: e.first_req,
            };
            persistent.insert(req, p);
        }
        Ok(())
    })?;
    Ok(Known::Collected {
        wild,
        persistent,
        cancelled,
    })
}

/// Writes `r`'s rank from its streams `mine` into its file `path`, the
/// calls of its threads interleaved by start time (one event per stream
/// in memory); stops early if `r` finds it needs lookahead. Returns the
/// events read.
fn interleave(src: &mut dyn StreamedTrace, mine: &[usize], r: &mut Rank<'_>, path: &Path) -> Result<u64> {
    let io = |e| Error::io(path.display(), e);
    r.act("init");
    // Per stream its next call, in (start, stream) order as they are read.
    let mut heads: Vec<(usize, Event, bool)> = Vec::with_capacity(mine.len());
    for &si in mine {
        src.restart(si)?;
        let mut e = Event::default();
        let live = src.next_into(si, &mut e)?;
        heads.push((si, e, live));
    }
    let mut prev_end = heads.iter().filter(|h| h.2).map(|h| h.1.start).min().unwrap_or(0);
    let mut events = 0u64;
    while let Some(h) = (0..heads.len())
        .filter(|&h| heads[h].2)
        .min_by_key(|&h| (heads[h].1.start, heads[h].0))
    {
        let (si, e, _) = &heads[h];
        r.compute += e.start.saturating_sub(prev_end);
        prev_end = prev_end.max(e.end);
        r.index = events;
        r.event(*si, e, src.comms());
        if let Some(why) = r.error.take() {
            return Err(Error::Invalid(format!(
                "cannot export for SimGrid: {why}; SimGrid would misread it"
            )));
        }
        events += 1;
        if r.lookahead {
            return Ok(events);
        }
        if r.out.len() >= 1 << 16 {
            r.flush().map_err(io)?;
        }
        let (si, e, live) = &mut heads[h];
        *live = src.next_into(*si, e)?;
    }
    // The burst before MPI_Finalize is part of the run (the replay's
    // runtime ends at Finalize's start): `act` writes it first.
    r.act("finalize");
    r.flush().map_err(io)?;
    std::io::Write::flush(&mut r.file).map_err(io)?;
    Ok(events)
}

/// Writes the SimGrid replay files of `src` into `dir` (created if
/// needed), rank by rank, streamed: one event per stream and one rank's
/// pending requests in memory, plus, for a rank with wildcard receives or
/// persistent requests, what a first reading of its streams collects of
/// them. `progress` is told of each event done.
///
/// Every file is written as `NAME.part` and renamed only once all are
/// complete, `index.txt` last; an error removes the `.part` files, so a
/// failed export leaves no replayable half.
pub fn export(src: &mut dyn StreamedTrace, dir: &Path, progress: &dyn Fn(u64)) -> Result<SimgridExport> {
    export_on(src, dir, progress, None)
}

/// A machine to export for, instead of the export's own flat platform:
/// what `pnmpi trace export --format simgrid --machine m.toml` gives, so
/// that the README's `smpirun` line simulates that machine.
pub struct Target<'a> {
    /// The platform (a SimGrid `<cluster>` of hosts `node-0`, ...).
    pub platform: &'a str,
    /// The node of each rank, in rank order (the host file's lines).
    pub node_of: &'a [u32],
    /// The machine file, copied as `machine.toml`.
    pub machine: &'a str,
    /// Where it came from, for the README.
    pub file: &'a str,
}

/// [`export`] for `target`'s platform and placement when given.
pub fn export_on(
    src: &mut dyn StreamedTrace,
    dir: &Path,
    progress: &dyn Fn(u64),
    target: Option<&Target>,
) -> Result<SimgridExport> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display(), e))?;
    let mut parts = Vec::new();
    let written = write_parts(src, dir, progress, target, &mut parts);
    if written.is_err() {
        for (part, _) in &parts {
            let _ = std::fs::remove_file(part);
        }
        return written;
    }
    // The index, which `smpirun -replay` and `pnmpi sim replay` open
    // first, appears last.
    parts.sort_by_key(|(_, path)| path.ends_with("index.txt"));
    for (part, path) in &parts {
        std::fs::rename(part, path).map_err(|e| Error::io(path.display(), e))?;
    }
    written
}

/// [`export`]'s files, each as `NAME.part`; `parts` gets each (part, final
/// path) as it is created.
fn write_parts(
    src: &mut dyn StreamedTrace,
    dir: &Path,
    progress: &dyn Fn(u64),
    target: Option<&Target>,
    parts: &mut Vec<(PathBuf, PathBuf)>,
) -> Result<SimgridExport> {
    let mut part_of = |path: PathBuf| -> PathBuf {
        let mut part = path.clone().into_os_string();
        part.push(".part");
        let part = PathBuf::from(part);
        if !parts.iter().any(|(p, _)| *p == part) {
            parts.push((part.clone(), path));
        }
        part
    };
    let routines = src.routines().to_vec();
    let kinds: Vec<RoutineKind> = routines.iter().map(|n| classify(n)).collect();
    let world_size = src.world_size();
    let streams = src.stream_list();
    let mut approximated = HashMap::new();
    let mut actions = 0;
    let mut index = String::new();
    for rank in 0..world_size {
        let mine: Vec<usize> = (0..streams.len()).filter(|&i| streams[i].0 == rank).collect();
        let name = format!("rank-{rank:05}.txt");
        let path = part_of(dir.join(&name));
        let mut known = Known::SoFar(HashMap::new());
        let (r, events) = loop {
            let file = std::fs::File::create(&path).map_err(|e| Error::io(path.display(), e))?;
            let mut r = Rank {
                routines: &routines,
                kinds: &kinds,
                world_size,
                me: i64::from(rank),
                out: String::new(),
                file: std::io::BufWriter::with_capacity(1 << 16, file),
                actions: 0,
                compute: 0,
                keys: HashMap::new(),
                stored: HashMap::new(),
                approximated: HashMap::new(),
                known,
                lookahead: false,
                nbc: HashMap::new(),
                direct_seq: HashMap::new(),
                index: 0,
                error: None,
            };
            let events = interleave(src, &mine, &mut r, &path)?;
            if !r.lookahead {
                break (r, events);
            }
            known = collect(src, rank, &kinds)?;
        };
        actions += r.actions;
        for (routine, n) in r.approximated {
            *approximated.entry(routine).or_insert(0) += n;
        }
        index.push_str(&name);
        index.push('\n');
        progress(events);
    }
    let mut write = |name: &str, text: String| -> Result<PathBuf> {
        let path = dir.join(name);
        let part = part_of(path.clone());
        std::fs::write(&part, text).map_err(|e| Error::io(part.display(), e))?;
        Ok(path)
    };
    let n = world_size.max(1);
    let (platform, hosts, machine) = match target {
        Some(t) => (
            t.platform.to_owned(),
            t.node_of.iter().map(|i| format!("node-{i}\n")).collect(),
            t.machine.to_owned(),
        ),
        None => (
            platform_xml(n),
            (0..n).map(|i| format!("node-{i}\n")).collect(),
            machine_toml(n),
        ),
    };
    let mut approximated: Vec<(String, u64)> = approximated.into_iter().collect();
    approximated.sort();
    let out = SimgridExport {
        index: write("index.txt", index)?,
        platform: write("platform.xml", platform)?,
        hostfile: write("hostfile.txt", hosts)?,
        machine: write("machine.toml", machine)?,
        actions,
        approximated,
    };
    write(
        "README.txt",
        format!(
            "SimGrid time-independent trace written by `pnmpi trace export --format simgrid`.\n\
             Replay it from this folder (paths in index.txt are relative to it):\n\n\
             {}\n\n\
             {}",
            out.command(n),
            match target {
                Some(t) => format!(
                    "platform.xml is the machine of {} as a SimGrid <cluster>, and machine.toml\n\
                     a copy of it. pnmpi replays the same machine with the command below; its\n\
                     models do not share links yet, so the two agree where no two messages\n\
                     cross one link at once:\n\n\
                     pnmpi sim replay index.txt -m machine.toml\n",
                    t.file
                ),
                None => "The same prediction with pnmpi (machine.toml describes platform.xml; with the\n\
                         options above, both compute latency + size / bandwidth, eager below 64 KiB,\n\
                         and SimGrid's default collective algorithms):\n\n\
                         pnmpi sim replay index.txt -m machine.toml\n"
                    .to_owned(),
            }
        ),
    )?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::tests::sample_reader;

    /// The sample, failing once `left` events have been read.
    struct Failing {
        inner: crate::stream::MergedReader,
        left: u32,
    }

    impl StreamedTrace for Failing {
        fn world_size(&self) -> u32 {
            self.inner.world_size()
        }
        fn mpi(&self) -> &str {
            self.inner.mpi()
        }
        fn routines(&self) -> &[String] {
            self.inner.routines()
        }
        fn comms(&self) -> &[crate::trace::Comm] {
            self.inner.comms()
        }
        fn stream_list(&self) -> Vec<(u32, u32)> {
            self.inner.stream_list()
        }
        fn next_into(&mut self, i: usize, ev: &mut Event) -> Result<bool> {
            if self.left == 0 {
                return Err(Error::Invalid("damaged on purpose".into()));
            }
            self.left -= 1;
            self.inner.next_into(i, ev)
        }
        fn restart(&mut self, i: usize) -> Result<()> {
            StreamedTrace::restart(&mut self.inner, i)
        }
        fn count_events(&mut self, progress: &dyn Fn(u64)) -> Result<u64> {
            self.inner.count_events(progress)
        }
        fn warnings(&self) -> Vec<String> {
            self.inner.warnings()
        }
    }

    #[test]
    fn a_failed_export_leaves_no_file_and_a_complete_one_no_part() {
        let (inner, _sample) = sample_reader();
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("sg");
        // Rank 0's file is complete and rank 1's begun when it fails.
        let mut src = Failing { inner, left: 5 };
        let Err(e) = export(&mut src, &out, &|_| {}) else {
            panic!("the export should fail");
        };
        assert!(e.to_string().contains("damaged on purpose"), "{e}");
        let left: Vec<_> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "{left:?}");

        let (mut t, _sample) = sample_reader();
        export(&mut t, &out, &|_| {}).unwrap();
        let mut names: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                "README.txt",
                "hostfile.txt",
                "index.txt",
                "machine.toml",
                "platform.xml",
                "rank-00000.txt",
                "rank-00001.txt"
            ]
        );
    }

    #[test]
    fn actions_of_the_sample() {
        let dir = tempfile::tempdir().unwrap();
        let (mut t, _sample) = sample_reader();
        let x = export(&mut t, dir.path(), &|_| {}).unwrap();
        let r0 = std::fs::read_to_string(dir.path().join("rank-00000.txt")).unwrap();
        let r1 = std::fs::read_to_string(dir.path().join("rank-00001.txt")).unwrap();
        assert_eq!(
            r0.lines().collect::<Vec<_>>(),
            [
                "0 init",
                "0 isend 1 5 800",
                "0 compute 50",
                "0 isend 1 5 800",
                "0 compute 40",
                "0 wait 0 1 5",
                "0 compute 200",
                "0 finalize"
            ]
        );
        assert_eq!(
            r1.lines().collect::<Vec<_>>(),
            ["1 init", "1 recv 0 5 0", "1 compute 800", "1 finalize"]
        );
        let index = std::fs::read_to_string(&x.index).unwrap();
        assert_eq!(index, "rank-00000.txt\nrank-00001.txt\n");
        assert!(x.command(2).starts_with(
            "smpirun -np 2 -platform platform.xml -hostfile hostfile.txt -replay index.txt --cfg="
        ));
        assert!(!x.command(2).contains('\\'), "{}", x.command(2));
        let readme = std::fs::read_to_string(dir.path().join("README.txt")).unwrap();
        assert!(readme.lines().any(|l| l == x.command(2)), "{readme}");
        let machine = std::fs::read_to_string(&x.machine).unwrap();
        assert!(machine.contains("nodes = 2\n") && machine.contains("eager_threshold = \"65535B\""));
    }
}
