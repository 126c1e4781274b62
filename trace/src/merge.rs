//! Consolidating rank files into one [`Trace`], as PSINS's `mpi2psins`
//! does: times go onto rank 0's clock, communicator handles become
//! run-wide communicator ids, ranks become world ranks, and request
//! handles become references to the call that created the request.
//!
//! Communicators are matched across ranks by their members and by how
//! many communicators with those members the rank had created before: the
//! k-th communicator of members M on one rank is the k-th on every member.
//! (Two communicators of identical members created in opposite orders on
//! different ranks, legal but rare, would be swapped.) One-sided windows
//! are matched the same way, and a one-sided call's target, a rank of its
//! window, becomes a world rank through the window's members.

use crate::divisor::Divisor;
use crate::error::Malformed;
use crate::error::{Error, Result};
use crate::fields::*;
use crate::live_requests::LiveRequests;
use crate::rank::{Clock, ClockPair, MpiValues, RankFile, RankHeader, RawRecord, Sync};
use crate::rma::{Win, WinKind};
use crate::sites::SiteTable;
use crate::trace::{Comm, Done, Event, RankClock, ReqRef, Stream, Trace, WinCreated};
use rustc_hash::FxHashMap;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

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

/// Checks that rank files, sorted by rank, belong to one run and do not
/// repeat a rank; returns the warnings about them (truncated or
/// unfinished files, missing ranks). Each file is given as its name in
/// messages, its header, its truncation and whether it has its `END` chunk.
pub(crate) fn check_ranks<'a>(
    files: impl IntoIterator<Item = (&'a str, &'a RankHeader, Option<&'a Malformed>, bool)>,
) -> Result<Vec<String>> {
    let files: Vec<_> = files.into_iter().collect();
    let (first_name, first, _, _) = files
        .first()
        .ok_or_else(|| Error::Invalid("no rank files to merge".into()))?;
    let (world, run) = (first.world_size, first.run_id);
    for pair in files.windows(2) {
        if pair[0].1.rank == pair[1].1.rank {
            return Err(Error::Invalid(format!(
                "{} and {} are both rank {}",
                pair[0].0, pair[1].0, pair[0].1.rank
            )));
        }
    }
    let mut warnings = Vec::new();
    for &(name, h, truncated, finished) in &files {
        if h.run_id != run || h.world_size != world {
            return Err(Error::Invalid(format!(
                "{name} is from another run (run id {:#x}, {} ranks; {first_name} has run id {run:#x}, {world} ranks)",
                h.run_id, h.world_size
            )));
        }
        if let Some(t) = truncated {
            warnings.push(format!("{name}: byte {}: {}", t.offset, t.what));
        }
        if !finished {
            warnings.push(format!(
                "{name}: rank {} did not reach MPI_Finalize; its complete chunks are used",
                h.rank
            ));
        }
    }
    if files.len() < world as usize {
        let have: Vec<u32> = files.iter().map(|f| f.1.rank).collect();
        let missing: Vec<String> = (0..world)
            .filter(|r| !have.contains(r))
            .map(|r| r.to_string())
            .collect();
        warnings.push(format!("ranks without a rank file: {}", missing.join(", ")));
    }
    Ok(warnings)
}

/// A rank's raw records, thread by thread: slot `i` is the `i`-th thread
/// stream to appear in the rank file. Implemented by a decoded
/// [`RankFile`] and by the streaming [`crate::rank_reader::RankReader`].
pub(crate) trait RecordSource {
    /// Number of thread streams.
    fn slots(&self) -> usize;
    /// The next record of stream `slot`, left in place; `None` at its end.
    fn peek(&mut self, slot: usize) -> Result<Option<&RawRecord>>;
    /// Moves stream `slot` past the record [`peek`](Self::peek) returned.
    fn advance(&mut self, slot: usize);
}

/// A decoded rank file's records.
struct FileRecords<'a> {
    file: &'a RankFile,
    next: Vec<usize>,
}

impl RecordSource for FileRecords<'_> {
    fn slots(&self) -> usize {
        self.file.streams.len()
    }

    fn peek(&mut self, slot: usize) -> Result<Option<&RawRecord>> {
        Ok(self.file.streams[slot].records.get(self.next[slot]))
    }

    fn advance(&mut self, slot: usize) {
        self.next[slot] += 1;
    }
}

/// Converts a rank's next call into `ev` and returns its slot, `None` when
/// every stream is done. The calls of a rank's threads are converted in
/// time order (the earliest start first; on a tie, the stream that came
/// first in the file), because they share the rank's communicator and
/// request handles. Each stream's own records keep their order.
pub(crate) fn next_call(
    src: &mut impl RecordSource,
    conv: &mut RankConverter,
    run: &mut RunTables,
    ev: &mut Event,
) -> Result<Option<usize>> {
    // A single stream is read without comparing (or peeking twice).
    let mut best = (src.slots() == 1).then_some(0);
    if best.is_none() {
        let mut earliest = 0;
        for slot in 0..src.slots() {
            if let Some(r) = src.peek(slot)? {
                if best.is_none() || r.start < earliest {
                    (earliest, best) = (r.start, Some(slot));
                }
            }
        }
    }
    let Some(slot) = best else {
        return Ok(None);
    };
    let Some(r) = src.peek(slot)? else {
        return Ok(None);
    };
    conv.convert(run, slot, r, ev);
    src.advance(slot);
    Ok(Some(slot))
}

/// Where each of a rank's thread streams goes in the merged trace: streams
/// are ordered by rank, then thread. `threads` are the stream ids in file
/// order, `base` the index of the rank's first stream; returns the index
/// of each, in file order.
pub(crate) fn stream_indices(threads: &[u32], base: u32) -> Vec<u32> {
    let mut by_thread: Vec<usize> = (0..threads.len()).collect();
    by_thread.sort_by_key(|&si| threads[si]);
    let mut pos = vec![0u32; threads.len()];
    for (p, &si) in by_thread.iter().enumerate() {
        pos[si] = base + p as u32;
    }
    pos
}

/// Merges decoded rank files, each with the name to use in messages.
pub fn merge(mut files: Vec<(String, RankFile)>) -> Result<(Trace, Vec<String>)> {
    files.sort_by_key(|(_, f)| f.header.rank);
    let mut warnings = check_ranks(
        files
            .iter()
            .map(|(n, f)| (n.as_str(), &f.header, f.truncated.as_ref(), f.end.is_some())),
    )?;
    let (world, mpi) = (files[0].1.header.world_size, files[0].1.header.mpi.clone());
    let rank0_host = files
        .iter()
        .find(|(_, f)| f.header.rank == 0)
        .map_or("", |(_, f)| f.header.host.as_str());
    let mut times = Vec::new();
    for (name, f) in &files {
        let has_events = f.streams.iter().any(|s| !s.records.is_empty());
        let t = TimeMap::new(
            &f.header,
            &f.pairs,
            &f.syncs,
            f.end.is_some(),
            has_events,
            rank0_host,
        )
        .map_err(|e| Error::Invalid(format!("{name}: {e}")))?;
        if let Some(w) = &t.warning {
            warnings.push(format!("{name}: {w}"));
        }
        times.push(t);
    }
    let origin = origin(files.iter().zip(&times).flat_map(|((_, f), t)| {
        f.streams
            .iter()
            .filter_map(move |s| s.records.first().map(|r| t.ns(r.start)))
    }));
    let mut run = RunTables::new(world);
    let mut streams: Vec<Stream> = Vec::new();
    let mut clocks = Vec::new();
    for ((_, f), times) in files.iter().zip(times) {
        clocks.push(times.clock);
        let threads: Vec<u32> = f.streams.iter().map(|s| s.id).collect();
        let index = stream_indices(&threads, streams.len() as u32);
        let mut rank: Vec<Stream> = f
            .streams
            .iter()
            .map(|s| Stream {
                rank: f.header.rank,
                thread: s.id,
                events: Vec::with_capacity(s.records.len()),
            })
            .collect();
        let sites = run.sites.map_rank(&f.sites);
        let mut conv = RankConverter::new(&mut run, &f.header, sites, index.clone(), times, origin);
        let mut src = FileRecords {
            file: f,
            next: vec![0; f.streams.len()],
        };
        let mut ev = Event::default();
        while let Some(slot) = next_call(&mut src, &mut conv, &mut run, &mut ev)? {
            rank[slot].events.push(std::mem::take(&mut ev));
        }
        let mut placed: Vec<(u32, Stream)> = index.into_iter().zip(rank).collect();
        placed.sort_by_key(|(i, _)| *i);
        streams.extend(placed.into_iter().map(|(_, s)| s));
    }
    warnings.extend(run.warnings());
    let mut counts = vec![0u64; run.routine_names.len()];
    for e in streams.iter().flat_map(|s| &s.events) {
        counts[e.routine as usize] += 1;
    }
    let (routines, remap) = routine_order(&counts, &run.routine_names);
    for e in streams.iter_mut().flat_map(|s| &mut s.events) {
        e.routine = remap[e.routine as usize];
    }
    let trace = Trace {
        world_size: world,
        mpi,
        routines,
        comms: run.comms,
        streams,
        clocks,
        sites: run.sites.sites,
        wins: run.wins,
    };
    Ok((trace, warnings))
}

/// The merged routine table: the routines called (`counts` per run
/// routine id), by decreasing call count so that the most common take
/// one-byte codes, then by name; and each run id's place in it.
pub(crate) fn routine_order(counts: &[u64], names: &[String]) -> (Vec<String>, Vec<u32>) {
    let mut order: Vec<u32> = (0..names.len() as u32).collect();
    order.retain(|&i| counts[i as usize] > 0);
    order.sort_by(|&a, &b| {
        counts[b as usize]
            .cmp(&counts[a as usize])
            .then_with(|| names[a as usize].cmp(&names[b as usize]))
    });
    let mut remap = vec![0u32; names.len()];
    for (new, &old) in order.iter().enumerate() {
        remap[old as usize] = new as u32;
    }
    (order.iter().map(|&i| names[i as usize].clone()).collect(), remap)
}

/// The run's origin: the earliest of the streams' first starts (ns on
/// rank 0's clock, from [`TimeMap::ns`]), as a rebased time; 0 for a run
/// without events.
pub(crate) fn origin(first_starts: impl IntoIterator<Item = i128>) -> u64 {
    first_starts.into_iter().map(rebase).min().unwrap_or(0)
}

/// Converts one rank's clock ticks to ns on rank 0's clock.
#[derive(Clone)]
pub(crate) struct TimeMap {
    tick0: i128,
    ns0: i128,
    num: i128,
    den: i128,
    t_i: i128,
    o_i: i128,
    drift_num: i128,
    drift_den: i128,
    /// How the rank's clock was aligned.
    pub clock: RankClock,
    /// Why the alignment may be off.
    pub warning: Option<String>,
    /// The same map in 64 bits, when its parameters fit.
    fast: Option<Map64>,
}

/// A [`TimeMap`]'s parameters in 64 bits, its divisors prepared: where
/// no step overflows, the same arithmetic as the 128-bit one, without its
/// library calls and divisions, twice per event.
#[derive(Clone, Copy)]
struct Map64 {
    tick0: i64,
    ns0: i64,
    num: i64,
    den: Divisor,
    t_i: i64,
    o_i: i64,
    drift_num: i64,
    drift_den: Divisor,
}

impl Map64 {
    /// `m`'s parameters, if they fit and both divisors are positive.
    fn of(m: &TimeMap) -> Option<Map64> {
        let n = |v: i128| i64::try_from(v).ok();
        Some(Map64 {
            tick0: n(m.tick0)?,
            ns0: n(m.ns0)?,
            num: n(m.num)?,
            den: Divisor::new(n(m.den)?)?,
            t_i: n(m.t_i)?,
            o_i: n(m.o_i)?,
            drift_num: n(m.drift_num)?,
            drift_den: Divisor::new(n(m.drift_den)?)?,
        })
    }

    /// [`TimeMap::ns`], or `None` where a step overflows 64 bits.
    #[inline]
    fn ns(&self, tick: u64) -> Option<i64> {
        let scaled = i64::try_from(tick)
            .ok()?
            .checked_sub(self.tick0)?
            .checked_mul(self.num)?;
        let local = self.ns0.checked_add(self.den.div_euclid(scaled))?;
        let drift = if self.drift_num == 0 {
            0
        } else {
            let skew = local.checked_sub(self.t_i)?.checked_mul(self.drift_num)?;
            self.drift_den.div_euclid(skew)
        };
        local.checked_add(self.o_i)?.checked_add(drift)
    }
}

impl TimeMap {
    /// The map of a rank file with this header, calibration pairs and
    /// syncs; `complete` when it has its `END` chunk, `has_events` when it
    /// holds any event; `rank0_host` is rank 0's host name.
    ///
    /// A rank on rank 0's host reads the same kernel clock
    /// (`CLOCK_MONOTONIC`): its offsets are only measurement error, so
    /// none is applied. Elsewhere the offset at `MPI_Init` is applied,
    /// and the drift to the one at `MPI_Finalize` only where it exceeds
    /// what the two round trips can explain (each offset is off by at
    /// most half its round trip): a drift within that bound is noise,
    /// and the mean of the two offsets is applied instead.
    pub(crate) fn new(
        h: &RankHeader,
        pairs: &[ClockPair],
        syncs: &[Sync],
        complete: bool,
        has_events: bool,
        rank0_host: &str,
    ) -> std::result::Result<TimeMap, String> {
        let mut warning = None;
        let (tick0, ns0, num, den) = match h.clock {
            Clock::Monotonic => (0, 0, 1, 1),
            Clock::Tsc => {
                let lo = pairs.iter().min_by_key(|p| p.tick).unwrap_or(&h.start);
                let hi = pairs.iter().max_by_key(|p| p.tick).unwrap_or(&h.start);
                if hi.tick <= lo.tick || hi.ns <= lo.ns {
                    if has_events {
                        return Err("cannot convert its clock ticks to ns: one calibration pair".into());
                    }
                    (0, 0, 1, 1)
                } else {
                    let (t0, n0) = (i128::from(lo.tick), i128::from(lo.ns));
                    (t0, n0, i128::from(hi.ns) - n0, i128::from(hi.tick) - t0)
                }
            }
        };
        let init = syncs.iter().find(|s| s.phase == 0);
        let fin = syncs.iter().rev().find(|s| s.phase == 1);
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
                rtt: syncs.iter().map(|s| s.rtt).max().unwrap_or(0),
                complete,
            },
            warning: None,
            fast: None,
        };
        let one_clock = h.rank == 0 || (!h.host.is_empty() && h.host == rank0_host);
        match (init, fin) {
            _ if one_clock => {}
            (None, None) => {
                warning = Some("no clock measurement: its times are not aligned to rank 0".to_string());
            }
            (Some(i), Some(f)) => {
                let span = i128::from(f.pair.ns) - i128::from(i.pair.ns);
                let drift = i128::from(f.offset) - i128::from(i.offset);
                let noise = (i128::from(i.rtt) + i128::from(f.rtt)) / 2;
                map.t_i = i128::from(i.pair.ns);
                map.o_i = i128::from(i.offset);
                if drift.abs() <= noise {
                    map.o_i = (i128::from(i.offset) + i128::from(f.offset)) / 2;
                } else if span > 0 && 2 * drift.abs() < span {
                    map.drift_num = drift;
                    map.drift_den = span;
                } else {
                    // A correction steeper than half the elapsed time is a
                    // bad measurement, and would reorder events.
                    warning = Some(format!(
                        "clock offsets {} ns at MPI_Init and {} ns at MPI_Finalize are inconsistent; using the first",
                        i.offset, f.offset
                    ));
                }
            }
            (Some(one), None) | (None, Some(one)) => {
                map.t_i = i128::from(one.pair.ns);
                map.o_i = i128::from(one.offset);
            }
        }
        map.warning = warning;
        map.fast = Map64::of(&map);
        Ok(map)
    }

    /// The time of `tick` in ns on rank 0's clock.
    #[inline]
    pub(crate) fn ns(&self, tick: u64) -> i128 {
        if let Some(ns) = self.fast.and_then(|f| f.ns(tick)) {
            return i128::from(ns);
        }
        // The 128-bit divisions are skipped where they are identities
        // (ns clocks, no drift).
        let scaled = (i128::from(tick) - self.tick0) * self.num;
        let local = self.ns0
            + if self.den == 1 {
                scaled
            } else {
                scaled.div_euclid(self.den)
            };
        let drift = if self.drift_num == 0 {
            0
        } else {
            ((local - self.t_i) * self.drift_num).div_euclid(self.drift_den)
        };
        local + self.o_i + drift
    }
}

/// A communicator as a rank knows it.
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
    comm: Option<Rc<CommInfo>>,
    wild: i64,
    persistent: bool,
}

/// A communicator's identity across ranks: members, remote group, and how
/// many communicators of the same groups the rank created before.
type CommKey = (Vec<i64>, Option<Vec<i64>>, u32);

/// A window as a rank knows it: its id and members.
struct WinInfo {
    id: i64,
    members: Vec<i64>,
}

impl WinInfo {
    /// World rank of `r`, a rank of this window's group.
    fn world(&self, r: i64) -> i64 {
        usize::try_from(r)
            .ok()
            .and_then(|i| self.members.get(i))
            .copied()
            .unwrap_or(UNKNOWN_RANK)
    }
}

/// A window's identity across ranks: members and how many windows of the
/// same members the rank created before.
type WinKey = (Vec<i64>, u32);

/// What the ranks of a run share while they are converted: the routine
/// names and the communicator table. Communicator ids depend only on what
/// each rank created (members, remote group, occurrence), so ranks may be
/// converted in any order, or interleaved, and still agree on them; the
/// order only decides which id a communicator gets.
pub(crate) struct RunTables {
    names: HashMap<String, u32>,
    /// Routine names by run id (the union of the ranks' tables, in the
    /// order the ranks' converters were made).
    pub routine_names: Vec<String>,
    comm_ids: HashMap<CommKey, i64>,
    /// The communicator table (id = index + [`FIRST_TABLE_COMM`]).
    pub comms: Vec<Comm>,
    /// Calls on communicators no converter saw created.
    pub unknown_comms: u64,
    /// Completions of requests no converter saw created.
    pub unknown_reqs: u64,
    win_ids: HashMap<WinKey, i64>,
    /// The window table (id = index).
    pub wins: Vec<Win>,
    /// Calls on windows no converter saw created.
    pub unknown_wins: u64,
    /// The run's call sites, each rank's interned in rank order.
    pub sites: SiteTable,
    /// `MPI_COMM_WORLD`, which every rank's converter shares (its members
    /// are the whole world: one copy per rank would grow with the square
    /// of the ranks).
    world_comm: Rc<CommInfo>,
}

impl RunTables {
    /// Empty tables for a world of `world` ranks.
    pub(crate) fn new(world: u32) -> RunTables {
        RunTables {
            names: HashMap::new(),
            routine_names: Vec::new(),
            comm_ids: HashMap::new(),
            comms: Vec::new(),
            unknown_comms: 0,
            unknown_reqs: 0,
            win_ids: HashMap::new(),
            wins: Vec::new(),
            unknown_wins: 0,
            sites: SiteTable::default(),
            world_comm: Rc::new(CommInfo {
                id: COMM_WORLD,
                members: (0..i64::from(world)).collect(),
                remote: None,
            }),
        }
    }

    /// The run id of routine `name`, added when first seen.
    pub(crate) fn routine(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.names.get(name) {
            return id;
        }
        let id = self.routine_names.len() as u32;
        self.routine_names.push(name.to_owned());
        self.names.insert(name.to_owned(), id);
        id
    }

    /// The id of the `occurrence`-th communicator of these groups that a
    /// rank created, added to the table when first seen.
    fn comm_id(&mut self, members: &[i64], remote: Option<&[i64]>, occurrence: u32) -> i64 {
        let key = (members.to_vec(), remote.map(<[i64]>::to_vec), occurrence);
        let next = FIRST_TABLE_COMM + self.comms.len() as i64;
        let id = *self.comm_ids.entry(key).or_insert(next);
        if id == next {
            self.comms.push(Comm {
                members: members.to_vec(),
                remote: remote.map(<[i64]>::to_vec),
            });
        }
        id
    }

    /// The id of the `occurrence`-th window of these members that a rank
    /// created (of `kind`, over communicator id `comm`), added to the
    /// table when first seen.
    fn win_id(&mut self, kind: WinKind, comm: i64, members: &[i64], occurrence: u32) -> i64 {
        let next = self.wins.len() as i64;
        let id = *self.win_ids.entry((members.to_vec(), occurrence)).or_insert(next);
        if id == next {
            self.wins.push(Win {
                kind,
                comm,
                members: members.to_vec(),
            });
        }
        id
    }

    /// Warnings about handles that could not be resolved (so far).
    pub(crate) fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        if self.unknown_comms > 0 {
            warnings.push(format!(
                "{} calls on communicators the tracer did not see created; their ranks are left unresolved",
                self.unknown_comms
            ));
        }
        if self.unknown_reqs > 0 {
            warnings.push(format!(
                "{} completions of requests the tracer did not see created",
                self.unknown_reqs
            ));
        }
        if self.unknown_wins > 0 {
            warnings.push(format!(
                "{} one-sided calls on windows the tracer did not see created; their targets are left unresolved",
                self.unknown_wins
            ));
        }
        warnings
    }
}

/// What a routine does to requests and communicators, by name.
#[derive(Clone, Copy, Default)]
struct RoutineRole {
    /// `MPI_Start`, `MPI_Startall`.
    start: bool,
    /// `MPI_Send_init` and the other persistent `*_init`.
    persistent_init: bool,
    /// `MPI_Comm_free`, `MPI_Comm_disconnect`.
    comm_free: bool,
    /// `MPI_Request_free`.
    request_free: bool,
    /// `MPI_Cancel`: names a request that stays live until its wait.
    cancel: bool,
    /// `MPI_Win_free`.
    win_free: bool,
}

impl RoutineRole {
    fn of(name: &str) -> RoutineRole {
        RoutineRole {
            start: name == "MPI_Start" || name == "MPI_Startall",
            persistent_init: name.ends_with("_init") || name.ends_with("_init_c"),
            comm_free: matches!(name, "MPI_Comm_free" | "MPI_Comm_disconnect"),
            request_free: name == "MPI_Request_free",
            cancel: name == "MPI_Cancel",
            win_free: name == "MPI_Win_free",
        }
    }
}

/// Converts one rank's raw records into merged events, one call at a time:
/// times onto rank 0's clock from the run's origin, communicator handles to
/// run-wide ids, ranks to world ranks, request handles to references to
/// the creating call. It holds the rank's live communicators and requests,
/// so its calls must come in time order across the rank's threads (see
/// [`next_call`]); its memory grows with them, not with the calls.
pub(crate) struct RankConverter {
    values: MpiValues,
    /// Merged routine id and role, by the rank file's routine code.
    routines: Vec<(u32, RoutineRole)>,
    /// Merged stream index, by slot (thread stream in file order).
    stream_index: Vec<u32>,
    next_req: Vec<u32>,
    /// The run's id of each of the rank's site ids.
    sites: Vec<Option<u32>>,
    comms: FxHashMap<u64, Rc<CommInfo>>,
    seen: HashMap<(Vec<i64>, Option<Vec<i64>>), u32>,
    /// Live windows by handle.
    wins: FxHashMap<u64, Rc<WinInfo>>,
    /// How many windows of each member list the rank created.
    seen_wins: HashMap<Vec<i64>, u32>,
    /// Live requests by handle. Open MPI hands out one shared handle for
    /// sends that completed at once, so a handle may stand for several
    /// live requests: they complete in creation order.
    reqs: LiveRequests<ReqInfo>,
    times: TimeMap,
    origin: u64,
    /// The slot whose unresolved handles count in the run's warnings
    /// (`None`: every slot's).
    counted: Option<usize>,
}

impl RankConverter {
    /// The converter of the rank with header `h`, whose thread streams (in
    /// file order) become merged streams `stream_index`; `origin` is the
    /// run's (from [`origin`]); `sites` maps the rank's site ids to the
    /// run's ([`SiteTable::map_rank`]). Registers the rank's routines in `run`.
    pub(crate) fn new(
        run: &mut RunTables,
        h: &RankHeader,
        sites: Vec<Option<u32>>,
        stream_index: Vec<u32>,
        times: TimeMap,
        origin: u64,
    ) -> RankConverter {
        let v = &h.values;
        let mut comms = FxHashMap::default();
        comms.insert(v.comm_world, run.world_comm.clone());
        comms.insert(
            v.comm_self,
            Rc::new(CommInfo {
                id: COMM_SELF,
                members: vec![i64::from(h.rank)],
                remote: None,
            }),
        );
        RankConverter {
            values: v.clone(),
            routines: h
                .routines
                .iter()
                .map(|n| (run.routine(n), RoutineRole::of(n)))
                .collect(),
            next_req: vec![0; stream_index.len()],
            sites,
            stream_index,
            comms,
            seen: HashMap::new(),
            wins: FxHashMap::default(),
            seen_wins: HashMap::new(),
            reqs: LiveRequests::default(),
            times,
            origin,
            counted: None,
        }
    }

    /// The same converter, counting in the run's warnings only the
    /// unresolved handles of slot `slot`'s calls: for a rank whose threads
    /// are each converted by a converter of their own.
    pub(crate) fn counting_only(self, slot: usize) -> RankConverter {
        RankConverter {
            counted: Some(slot),
            ..self
        }
    }

    /// Converts record `r` of thread stream `slot` into `ev` (overwriting
    /// all of it, reusing its lists' memory).
    pub(crate) fn convert(&mut self, run: &mut RunTables, slot: usize, r: &RawRecord, ev: &mut Event) {
        let v = &self.values;
        let counts = self.counted.is_none_or(|c| c == slot);
        let (routine, role) = self.routines[r.routine as usize];
        ev.routine = routine;
        // Stored as offsets from i64::MIN, then from the run's origin.
        let start = rebase(self.times.ns(r.start));
        ev.start = start.saturating_sub(self.origin);
        ev.end = rebase(self.times.ns(r.end))
            .max(start)
            .saturating_sub(self.origin);
        ev.vals = [None; NV];
        ev.first_req = self.next_req[slot];
        ev.done.clear();
        ev.init.clear();
        ev.newcomm = None;
        ev.newwin = None;
        ev.group.clone_from(&r.group);
        ev.vals[V::Bytes as usize] = r.bytes;
        ev.vals[V::Op as usize] = r.op;
        ev.vals[V::Assert as usize] = r.assert;
        ev.vals[V::Lock as usize] = r.lock;
        ev.vals[V::Rbytes as usize] = r.rbytes;
        ev.vals[V::Site as usize] = r
            .site
            .and_then(|s| self.sites.get(s as usize).copied().flatten())
            .map(i64::from);
        // Per-peer counts stay in communicator rank order.
        ev.counts.clone_from(&r.counts);
        let comm = r.comm.and_then(|c| {
            let found = self.comms.get(&c).cloned();
            if found.is_none() && counts {
                run.unknown_comms += 1;
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
            let stream = self.stream_index[slot];
            ev.set(V::Req, Some(r.reqs.len() as i64));
            for &handle in &r.reqs {
                let current = ReqRef {
                    stream,
                    index: self.next_req[slot],
                };
                self.next_req[slot] += 1;
                if role.start {
                    let found = self.reqs.front_mut(handle);
                    ev.init.push(found.as_ref().and_then(|i| i.origin));
                    match found {
                        Some(info) => info.current = current,
                        None => run.unknown_reqs += u64::from(counts),
                    }
                } else {
                    let persistent = role.persistent_init;
                    let info = ReqInfo {
                        current,
                        origin: persistent.then_some(current),
                        // Only a wildcard receive's status needs it.
                        comm: if wild != 0 { comm.clone() } else { None },
                        wild,
                        persistent,
                    };
                    self.reqs.push(handle, info);
                }
            }
        }
        for d in &r.done {
            let Some(info) = self.reqs.front(d.handle) else {
                run.unknown_reqs += u64::from(counts);
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
            if (!info.persistent || role.request_free) && !role.cancel {
                self.reqs.pop_front(d.handle);
            }
        }
        if let Some(nc) = &r.newcomm {
            if nc.handle == v.comm_null {
                ev.newcomm = Some(None);
            } else {
                let k = self
                    .seen
                    .entry((nc.members.clone(), nc.remote.clone()))
                    .or_insert(0);
                let occurrence = *k;
                *k += 1;
                let id = run.comm_id(&nc.members, nc.remote.as_deref(), occurrence);
                ev.newcomm = Some(Some(id as u32));
                self.comms.insert(
                    nc.handle,
                    Rc::new(CommInfo {
                        id,
                        members: nc.members.clone(),
                        remote: nc.remote.clone(),
                    }),
                );
            }
        }
        if let Some(w) = r.win {
            let found = self.wins.get(&w).cloned();
            if found.is_none() && counts {
                run.unknown_wins += 1;
            }
            ev.set(V::Win, found.as_ref().map(|w| w.id));
            // A target is a rank of the window's group.
            ev.set(
                V::Peer,
                r.peer.map(|p| match &found {
                    _ if p == v.proc_null => PROC_NULL,
                    Some(w) => w.world(p),
                    None => UNKNOWN_RANK,
                }),
            );
            if role.win_free {
                self.wins.remove(&w);
            }
        }
        if let Some(nw) = &r.newwin {
            let k = self.seen_wins.entry(nw.members.clone()).or_insert(0);
            let occurrence = *k;
            *k += 1;
            let comm = ev.get(V::Comm).unwrap_or(UNKNOWN_RANK);
            let id = run.win_id(nw.kind, comm, &nw.members, occurrence);
            ev.newwin = Some(WinCreated {
                id: id as u32,
                disp_unit: nw.disp_unit,
            });
            self.wins.insert(
                nw.handle,
                Rc::new(WinInfo {
                    id,
                    members: nw.members.clone(),
                }),
            );
        }
        if role.comm_free {
            if let Some(c) = r.comm {
                if c != v.comm_world && c != v.comm_self {
                    self.comms.remove(&c);
                }
            }
        }
    }
}

/// Maps an i128 ns value (within i64's range in practice) onto u64 keeping order.
fn rebase(ns: i128) -> u64 {
    let clamped = ns.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
    (clamped as u64) ^ (1 << 63)
}
