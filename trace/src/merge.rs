//! Consolidating rank files into one [`Trace`], as PSINS's `mpi2psins`
//! does: times go onto rank 0's clock, communicator handles become
//! run-wide communicator ids, ranks become world ranks, and request
//! handles become references to the call that created the request.
//!
//! Communicators are matched across ranks by their members and by how
//! many communicators with those members the rank had created before: the
//! k-th communicator of members M on one rank is the k-th on every member.
//! (Two communicators of identical members created in opposite orders on
//! different ranks, legal but rare, would be swapped.)

use crate::error::{Error, Result};
use crate::fields::*;
use crate::rank::{Clock, RankFile, RawRecord};
use crate::trace::{Comm, Done, Event, RankClock, ReqRef, Stream, Trace};
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};

/// The rank files of a trace folder: `rank-*.pnr`, and `rank-*.pnr.part`
/// left by ranks that did not finish, sorted by name.
pub fn rank_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir.display(), e))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| Error::io(dir.display(), e))?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let rank_file = name.starts_with("rank-") && (name.ends_with(".pnr") || name.ends_with(".pnr.part"));
        if rank_file && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(Error::Invalid(format!(
            "{}: no rank files (rank-NNNNN.pnr); is this the tracer's output folder?",
            dir.display()
        )));
    }
    Ok(files)
}

/// Reads every rank file of `dir` and merges them. `progress` is told of
/// the bytes of each file read. Returns the trace and warnings (truncated
/// or unfinished rank files, missing ranks, unresolved handles).
pub fn merge_dir(dir: &Path, progress: &dyn Fn(u64)) -> Result<(Trace, Vec<String>)> {
    let mut ranks = Vec::new();
    for path in rank_files(dir)? {
        let file = RankFile::read(&path)?;
        progress(std::fs::metadata(&path).map_or(0, |m| m.len()));
        ranks.push((path.display().to_string(), file));
    }
    merge(ranks)
}

/// Merges decoded rank files, each with the name to use in messages.
pub fn merge(mut files: Vec<(String, RankFile)>) -> Result<(Trace, Vec<String>)> {
    let mut warnings = Vec::new();
    files.sort_by_key(|(_, f)| f.header.rank);
    let first = &files
        .first()
        .ok_or_else(|| Error::Invalid("no rank files to merge".into()))?
        .1;
    let (world, run, mpi) = (
        first.header.world_size,
        first.header.run_id,
        first.header.mpi.clone(),
    );
    for pair in files.windows(2) {
        if pair[0].1.header.rank == pair[1].1.header.rank {
            return Err(Error::Invalid(format!(
                "{} and {} are both rank {}",
                pair[0].0, pair[1].0, pair[0].1.header.rank
            )));
        }
    }
    for (name, f) in &files {
        let h = &f.header;
        if h.run_id != run || h.world_size != world {
            return Err(Error::Invalid(format!(
                "{name} is from another run (run id {:#x}, {} ranks; {} has run id {run:#x}, {world} ranks)",
                h.run_id, h.world_size, files[0].0
            )));
        }
        if let Some(t) = &f.truncated {
            warnings.push(format!("{name}: byte {}: {}", t.offset, t.what));
        }
        if f.end.is_none() {
            warnings.push(format!(
                "{name}: rank {} did not reach MPI_Finalize; its complete chunks are used",
                h.rank
            ));
        }
    }
    if files.len() < world as usize {
        let have: Vec<u32> = files.iter().map(|(_, f)| f.header.rank).collect();
        let missing: Vec<String> = (0..world)
            .filter(|r| !have.contains(r))
            .map(|r| r.to_string())
            .collect();
        warnings.push(format!("ranks without a rank file: {}", missing.join(", ")));
    }

    let mut m = Merger {
        world,
        names: HashMap::new(),
        routine_names: Vec::new(),
        comm_ids: HashMap::new(),
        comms: Vec::new(),
        streams: Vec::new(),
        unknown_comms: 0,
        unknown_reqs: 0,
    };
    let mut clocks = Vec::new();
    for (name, f) in &files {
        let times = TimeMap::new(f).map_err(|e| Error::Invalid(format!("{name}: {e}")))?;
        if let Some(w) = &times.warning {
            warnings.push(format!("{name}: {w}"));
        }
        clocks.push(times.clock);
        m.rank(f, &times);
    }
    if m.unknown_comms > 0 {
        warnings.push(format!(
            "{} calls on communicators the tracer did not see created; their ranks are left unresolved",
            m.unknown_comms
        ));
    }
    if m.unknown_reqs > 0 {
        warnings.push(format!(
            "{} completions of requests the tracer did not see created",
            m.unknown_reqs
        ));
    }
    Ok((m.finish(world, mpi, clocks), warnings))
}

/// Converts one rank's clock ticks to ns on rank 0's clock.
struct TimeMap {
    tick0: i128,
    ns0: i128,
    num: i128,
    den: i128,
    t_i: i128,
    o_i: i128,
    drift_num: i128,
    drift_den: i128,
    clock: RankClock,
    warning: Option<String>,
}

impl TimeMap {
    fn new(f: &RankFile) -> std::result::Result<TimeMap, String> {
        let h = &f.header;
        let mut warning = None;
        let (tick0, ns0, num, den) = match h.clock {
            Clock::Monotonic => (0, 0, 1, 1),
            Clock::Tsc => {
                let lo = f.pairs.iter().min_by_key(|p| p.tick).expect("the header's pair");
                let hi = f.pairs.iter().max_by_key(|p| p.tick).expect("the header's pair");
                if hi.tick <= lo.tick || hi.ns <= lo.ns {
                    if f.streams.iter().any(|s| !s.records.is_empty()) {
                        return Err("cannot convert its clock ticks to ns: one calibration pair".into());
                    }
                    (0, 0, 1, 1)
                } else {
                    let (t0, n0) = (i128::from(lo.tick), i128::from(lo.ns));
                    (t0, n0, i128::from(hi.ns) - n0, i128::from(hi.tick) - t0)
                }
            }
        };
        let init = f.syncs.iter().find(|s| s.phase == 0);
        let fin = f.syncs.iter().rev().find(|s| s.phase == 1);
        let mut map = TimeMap {
            tick0,
            ns0,
            num,
            den,
            t_i: 0,
            o_i: 0,
            drift_num: 0,
            drift_den: 1,
            clock: RankClock {
                rank: h.rank,
                init_offset: init.map(|s| s.offset),
                fin_offset: fin.map(|s| s.offset),
                rtt: f.syncs.iter().map(|s| s.rtt).max().unwrap_or(0),
                complete: f.end.is_some(),
            },
            warning: None,
        };
        if let Some(i) = init.or(fin) {
            map.t_i = i128::from(i.pair.ns);
            map.o_i = i128::from(i.offset);
        } else if h.rank != 0 {
            warning = Some("no clock measurement: its times are not aligned to rank 0".to_string());
        }
        if let (Some(i), Some(f)) = (init, fin) {
            let span = i128::from(f.pair.ns) - i128::from(i.pair.ns);
            let drift = i128::from(f.offset) - i128::from(i.offset);
            // A correction steeper than half the elapsed time is a bad
            // measurement, and would reorder events: keep the init offset.
            if span > 0 && 2 * drift.abs() < span {
                map.drift_num = drift;
                map.drift_den = span;
            } else {
                warning = Some(format!(
                    "clock offsets {} ns at MPI_Init and {} ns at MPI_Finalize are inconsistent; using the first",
                    i.offset, f.offset
                ));
            }
        }
        map.warning = warning;
        Ok(map)
    }

    fn ns(&self, tick: u64) -> i128 {
        let local = self.ns0 + ((i128::from(tick) - self.tick0) * self.num).div_euclid(self.den);
        local + self.o_i + ((local - self.t_i) * self.drift_num).div_euclid(self.drift_den)
    }
}

#[derive(Clone)]
struct CommInfo {
    id: i64,
    members: Vec<i64>,
    remote: Option<Vec<i64>>,
}

impl CommInfo {
    /// World rank of `r`, a rank of this communicator's (remote, for an
    /// intercommunicator's peers) group.
    fn world(&self, r: i64) -> i64 {
        let group = self.remote.as_ref().unwrap_or(&self.members);
        usize::try_from(r)
            .ok()
            .and_then(|i| group.get(i))
            .copied()
            .unwrap_or(UNKNOWN_RANK)
    }
}

#[derive(Clone)]
struct ReqInfo {
    current: ReqRef,
    origin: Option<ReqRef>,
    comm: Option<CommInfo>,
    wild: i64,
    persistent: bool,
}

/// A communicator's identity across ranks: members, remote group, and how
/// many communicators of the same groups the rank created before.
type CommKey = (Vec<i64>, Option<Vec<i64>>, u32);

struct Merger {
    world: u32,
    names: HashMap<String, u32>,
    routine_names: Vec<String>,
    comm_ids: HashMap<CommKey, i64>,
    comms: Vec<Comm>,
    streams: Vec<Stream>,
    unknown_comms: u64,
    unknown_reqs: u64,
}

/// What kind of request-related call a routine is, by name.
fn is_start(name: &str) -> bool {
    name == "MPI_Start" || name == "MPI_Startall"
}

fn is_persistent_init(name: &str) -> bool {
    name.ends_with("_init") || name.ends_with("_init_c")
}

fn is_free(name: &str) -> bool {
    matches!(name, "MPI_Comm_free" | "MPI_Comm_disconnect")
}

impl Merger {
    fn routine(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.names.get(name) {
            return id;
        }
        let id = self.routine_names.len() as u32;
        self.routine_names.push(name.to_owned());
        self.names.insert(name.to_owned(), id);
        id
    }

    fn rank(&mut self, f: &RankFile, times: &TimeMap) {
        let h = &f.header;
        let v = &h.values;
        let rank = i64::from(h.rank);
        let base = self.streams.len() as u32;
        // Streams go in thread order; `pos[si]` is file stream si's place.
        let mut by_thread: Vec<usize> = (0..f.streams.len()).collect();
        by_thread.sort_by_key(|&si| f.streams[si].id);
        let mut pos = vec![0u32; f.streams.len()];
        for (p, &si) in by_thread.iter().enumerate() {
            pos[si] = p as u32;
        }
        let mut order: Vec<(u64, usize, usize)> = Vec::new();
        for (si, s) in f.streams.iter().enumerate() {
            order.extend(s.records.iter().enumerate().map(|(ri, r)| (r.start, si, ri)));
        }
        order.sort_unstable();
        let mut streams: Vec<Stream> = f
            .streams
            .iter()
            .map(|s| Stream {
                rank: h.rank,
                thread: s.id,
                events: Vec::with_capacity(s.records.len()),
            })
            .collect();
        let mut slots: Vec<Vec<Option<Event>>> =
            f.streams.iter().map(|s| vec![None; s.records.len()]).collect();
        let mut next_req = vec![0u32; f.streams.len()];
        let mut comms: HashMap<u64, CommInfo> = HashMap::new();
        let world_members: Vec<i64> = (0..i64::from(self.world)).collect();
        comms.insert(
            v.comm_world,
            CommInfo {
                id: COMM_WORLD,
                members: world_members,
                remote: None,
            },
        );
        comms.insert(
            v.comm_self,
            CommInfo {
                id: COMM_SELF,
                members: vec![rank],
                remote: None,
            },
        );
        let mut seen: HashMap<(Vec<i64>, Option<Vec<i64>>), u32> = HashMap::new();
        // Live requests by handle. Open MPI hands out one shared handle for
        // sends that completed at once, so a handle may stand for several
        // live requests: they complete in creation order.
        let mut reqs: HashMap<u64, VecDeque<ReqInfo>> = HashMap::new();
        let routines: Vec<u32> = h.routines.iter().map(|n| self.routine(n)).collect();

        for (_, si, ri) in order {
            let r: &RawRecord = &f.streams[si].records[ri];
            let name = h.routines[r.routine as usize].as_str();
            let mut ev = Event {
                routine: routines[r.routine as usize],
                start: 0,
                end: 0,
                first_req: next_req[si],
                ..Event::default()
            };
            // Times are placed later, relative to the run's origin.
            ev.vals[V::Bytes as usize] = r.bytes;
            ev.vals[V::Rbytes as usize] = r.rbytes;
            let comm = r.comm.and_then(|c| {
                let found = comms.get(&c).cloned();
                if found.is_none() {
                    self.unknown_comms += 1;
                }
                found
            });
            ev.set(V::Comm, comm.as_ref().map(|c| c.id));
            let rank_of = |p: i64| -> i64 {
                if p == v.any_source {
                    ANY_SOURCE
                } else if p == v.proc_null {
                    PROC_NULL
                } else {
                    comm.as_ref().map_or(UNKNOWN_RANK, |c| c.world(p))
                }
            };
            let tag_of = |t: i64| if t == v.any_tag { ANY_TAG } else { t };
            ev.set(V::Peer, r.peer.map(rank_of));
            ev.set(V::Tag, r.tag.map(tag_of));
            ev.set(V::Src, r.src.map(rank_of));
            ev.set(V::Rtag, r.rtag.map(tag_of));
            ev.set(
                V::Root,
                r.root.map(|p| {
                    if p == v.root {
                        ROOT_SELF
                    } else if p == v.proc_null {
                        PROC_NULL
                    } else {
                        comm.as_ref().map_or(UNKNOWN_RANK, |c| {
                            // Intracommunicator roots are ranks of the group itself.
                            if c.remote.is_some() {
                                c.world(p)
                            } else {
                                usize::try_from(p)
                                    .ok()
                                    .and_then(|i| c.members.get(i))
                                    .copied()
                                    .unwrap_or(UNKNOWN_RANK)
                            }
                        })
                    }
                }),
            );
            // The posted source and tag of a receive: wildcards are
            // replaced by the status's values and flagged.
            let (posted_src, posted_tag, src_v, tag_v) = if r.src.is_some() {
                (r.src, r.rtag, V::Src, V::Rtag)
            } else {
                (r.peer, r.tag, V::Peer, V::Tag)
            };
            let wild = i64::from(posted_src == Some(v.any_source)) * WILD_SOURCE
                + i64::from(posted_tag == Some(v.any_tag)) * WILD_TAG;
            if wild != 0 {
                ev.set(V::Wild, Some(wild));
                if let Some((s, t)) = r.status {
                    if wild & WILD_SOURCE != 0 {
                        ev.set(src_v, Some(comm.as_ref().map_or(UNKNOWN_RANK, |c| c.world(s))));
                    }
                    if wild & WILD_TAG != 0 {
                        ev.set(tag_v, Some(t));
                    }
                }
            }
            if !r.reqs.is_empty() {
                let stream = base + pos[si];
                ev.set(V::Req, Some(r.reqs.len() as i64));
                for &handle in &r.reqs {
                    let current = ReqRef {
                        stream,
                        index: next_req[si],
                    };
                    next_req[si] += 1;
                    if is_start(name) {
                        let found = reqs.get_mut(&handle).and_then(|q| q.front_mut());
                        ev.init.push(found.as_ref().and_then(|i| i.origin));
                        match found {
                            Some(info) => info.current = current,
                            None => self.unknown_reqs += 1,
                        }
                    } else {
                        let persistent = is_persistent_init(name);
                        reqs.entry(handle).or_default().push_back(ReqInfo {
                            current,
                            origin: persistent.then_some(current),
                            comm: comm.clone(),
                            wild,
                            persistent,
                        });
                    }
                }
            }
            for d in &r.done {
                let Some(info) = reqs.get(&d.handle).and_then(|q| q.front()).cloned() else {
                    self.unknown_reqs += 1;
                    ev.done.push(Done {
                        req: None,
                        status: None,
                    });
                    continue;
                };
                let status = match (info.wild, d.status) {
                    (0, _) | (_, None) => None,
                    (_, Some((s, t))) => Some((info.comm.as_ref().map_or(UNKNOWN_RANK, |c| c.world(s)), t)),
                };
                ev.done.push(Done {
                    req: Some(info.current),
                    status,
                });
                if !info.persistent || name == "MPI_Request_free" {
                    if let Some(q) = reqs.get_mut(&d.handle) {
                        q.pop_front();
                    }
                }
            }
            if let Some(nc) = &r.newcomm {
                if nc.handle == v.comm_null {
                    ev.newcomm = Some(None);
                } else {
                    let key = (nc.members.clone(), nc.remote.clone());
                    let k = seen.entry(key.clone()).or_insert(0);
                    let occurrence = *k;
                    *k += 1;
                    let next = FIRST_TABLE_COMM + self.comms.len() as i64;
                    let id = *self.comm_ids.entry((key.0, key.1, occurrence)).or_insert(next);
                    if id == next {
                        self.comms.push(Comm {
                            members: nc.members.clone(),
                            remote: nc.remote.clone(),
                        });
                    }
                    ev.newcomm = Some(Some(id as u32));
                    comms.insert(
                        nc.handle,
                        CommInfo {
                            id,
                            members: nc.members.clone(),
                            remote: nc.remote.clone(),
                        },
                    );
                }
            }
            if is_free(name) {
                if let Some(c) = r.comm {
                    if c != v.comm_world && c != v.comm_self {
                        comms.remove(&c);
                    }
                }
            }
            ev.start = 0;
            ev.end = 0;
            slots[si][ri] = Some(ev);
        }
        for (si, s) in f.streams.iter().enumerate() {
            for (ri, r) in s.records.iter().enumerate() {
                let mut ev = slots[si][ri].take().expect("every record was converted");
                // Stored as offsets from i64::MIN for now; `finish` rebases.
                ev.start = rebase(times.ns(r.start));
                ev.end = rebase(times.ns(r.end)).max(ev.start);
                streams[si].events.push(ev);
            }
        }
        let mut streams: Vec<Option<Stream>> = streams.into_iter().map(Some).collect();
        self.streams.extend(
            by_thread
                .iter()
                .map(|&si| streams[si].take().expect("each stream once")),
        );
    }

    fn finish(mut self, world: u32, mpi: String, clocks: Vec<RankClock>) -> Trace {
        // Routine codes by decreasing frequency: the most common take one byte.
        let mut counts = vec![0u64; self.routine_names.len()];
        for s in &self.streams {
            for e in &s.events {
                counts[e.routine as usize] += 1;
            }
        }
        let mut order: Vec<u32> = (0..self.routine_names.len() as u32).collect();
        order.retain(|&i| counts[i as usize] > 0);
        order.sort_by(|&a, &b| {
            counts[b as usize]
                .cmp(&counts[a as usize])
                .then_with(|| self.routine_names[a as usize].cmp(&self.routine_names[b as usize]))
        });
        let mut remap = vec![0u32; self.routine_names.len()];
        for (new, &old) in order.iter().enumerate() {
            remap[old as usize] = new as u32;
        }
        let origin = self
            .streams
            .iter()
            .filter_map(|s| s.events.first().map(|e| e.start))
            .min()
            .unwrap_or(0);
        for s in &mut self.streams {
            for e in &mut s.events {
                e.routine = remap[e.routine as usize];
                e.start -= origin;
                e.end -= origin;
            }
        }
        Trace {
            world_size: world,
            mpi,
            routines: order
                .iter()
                .map(|&i| self.routine_names[i as usize].clone())
                .collect(),
            comms: self.comms,
            streams: self.streams,
            clocks,
        }
    }
}

/// Maps an i128 ns value (within i64's range in practice) onto u64 keeping order.
fn rebase(ns: i128) -> u64 {
    let clamped = ns.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
    (clamped as u64) ^ (1 << 63)
}
