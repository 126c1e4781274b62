//! A tracer output folder streamed from disk, as merged events: what
//! [`merge_dir`](crate::merge::merge_dir) computes, made one event at a
//! time from [`RankReader`]s, so that memory grows with the ranks, their
//! threads and their live communicators and requests, not with the events.
//!
//! Opening the folder indexes every rank file (headers, clock
//! measurements, where the chunks are, each thread's first record), which
//! gives every rank's clock conversion and the run's origin (the earliest
//! first record) before any event is converted. Events are then converted
//! by one `RankConverter` per rank, all sharing one run-wide
//! communicator table, so communicator ids agree across ranks in whatever
//! order the ranks are read.
//!
//! A rank's threads share its communicator and request handles, so a
//! rank's calls are converted in time order across its threads (as the
//! in-memory merge does), while [`FolderReader::next_into`] serves one
//! stream (thread) at a time. A single-threaded rank is read once. A rank
//! of several threads gets a *lane* per thread, created when the thread
//! is first read: its own reader of the rank file and its own converter,
//! which converts all of the rank's calls in time order and keeps only
//! its thread's. Memory stays independent of the events however far
//! apart the threads are read; the cost is that such a rank is decoded
//! and converted once per thread.
//!
//! What a folder's reader holds per rank is small and bounded: each
//! thread's window of its rank file is a share of [`WINDOW_BUDGET`] (64
//! MiB for all of them: 4 KiB a thread at 16,384 ranks, never below
//! [`MIN_WINDOW`]; larger only while a record larger than the window is
//! read), a stream read to its end gives its window back, and a
//! converter keeps only the requests live now. Read stream after stream
//! ([`FolderReader::read_in_turn`], as the trace tools and
//! [`save_merged`] read), one lane holds windows at a time, and they are
//! whole ([`WINDOW`]).
//!
//! [`save_merged`] writes the merged trace of a folder in two passes over
//! it: the first converts every event to count the routines (the merged
//! routine table is ordered by call count) and to fill the communicator
//! table, which the file's header holds; the second converts again and
//! writes. The result is byte for byte what `merge_dir` and
//! [`Trace::save`](crate::trace::Trace::save) write.

use crate::error::{Error, Result};
use crate::merge::{
    check_ranks, next_call, origin, rank_files, routine_order, stream_indices, RankConverter, RunTables,
    TimeMap,
};
use crate::rank_reader::{RankReader, MIN_WINDOW, WINDOW};
use crate::rma::Win;
use crate::sites::Site;
use crate::trace::{Comm, Event, MergedWriter, RankClock};
use std::path::Path;

/// Folders of more rank files than this are read without keeping every
/// file open.
const MAX_OPEN: usize = 256;

/// Bytes that the windows of all the rank readers of a folder share (see
/// [`shared_window`]): the folder's replay reads every rank at once. The
/// same as a merged trace's pieces share.
pub const WINDOW_BUDGET: usize = crate::stream::BUDGET;

/// The window of each thread of a folder whose ranks have `threads`
/// threads: `budget` bytes shared by every window that can be read at
/// once, within [`MIN_WINDOW`] and [`WINDOW`]. A rank of `t` threads has a
/// reader per thread read (see the module's documentation), each holding a
/// window of each thread: `t * t` windows.
pub fn shared_window(budget: usize, threads: impl Iterator<Item = usize>) -> usize {
    let windows: usize = threads.map(|t| t * t).sum();
    (budget / windows.max(1)).clamp(MIN_WINDOW, WINDOW)
}

/// A reader of a rank file and the conversion of its calls.
struct Lane {
    reader: Box<RankReader>,
    conv: RankConverter,
}

/// One rank: its indexed file, its clock conversion, and its lanes.
struct RankState {
    /// The indexed file, which the first lane reads; others read a copy.
    /// (Boxed, so that a rank being read, its reader in its lane, does
    /// not keep room for it here.)
    reader: Option<Box<RankReader>>,
    times: TimeMap,
    /// Merged stream index of each slot.
    index: Vec<u32>,
    /// The run's id of each of the rank's site ids.
    sites: Vec<Option<u32>>,
    /// Per slot, the lane that serves it, once read (a single-threaded
    /// rank has one lane, for slot 0).
    lanes: Vec<Option<Lane>>,
    /// Records in the file's complete chunks.
    records: u64,
    /// The file's bytes.
    size: u64,
}

impl RankState {
    /// Slot `slot`'s lane, started if need be.
    fn lane(&mut self, slot: usize, run: &mut RunTables, origin: u64) -> Result<&mut Lane> {
        if self.lanes[slot].is_none() {
            let reader = match self.reader.take() {
                Some(r) => r,
                None => self.lanes.iter().flatten().next().map_or_else(
                    || Err(Error::Invalid("a rank without a reader".into())),
                    |l| l.reader.try_clone().map(Box::new),
                )?,
            };
            let mut conv = RankConverter::new(
                run,
                &reader.header,
                self.sites.clone(),
                self.index.clone(),
                self.times.clone(),
                origin,
            );
            if self.lanes.len() > 1 {
                conv = conv.counting_only(slot);
            }
            let mut reader = reader;
            reader.rewind();
            self.lanes[slot] = Some(Lane { reader, conv });
        }
        self.lanes[slot]
            .as_mut()
            .ok_or_else(|| Error::Invalid("a lane not started".into()))
    }
}

/// A merged stream: which rank (index into the ranks) and slot it is.
#[derive(Clone, Copy)]
struct StreamAt {
    rank_at: usize,
    slot: usize,
    rank: u32,
    thread: u32,
    /// Read to its end: its lane is gone (until a restart).
    ended: bool,
}

/// A tracer output folder read as merged events, stream by stream.
pub struct FolderReader {
    /// Size of `MPI_COMM_WORLD`.
    pub world_size: u32,
    /// The MPI the run used.
    pub mpi: String,
    /// Per rank clock alignment.
    pub clocks: Vec<RankClock>,
    run: RunTables,
    ranks: Vec<RankState>,
    streams: Vec<StreamAt>,
    origin: u64,
    warnings: Vec<String>,
    /// Each thread's share of [`WINDOW_BUDGET`].
    window: usize,
    /// The distinct host names of the rank headers.
    host_names: Vec<String>,
    /// (rank, index into `host_names`) of each rank file that names its
    /// host, by rank.
    hosts: Vec<(u32, u32)>,
}

impl FolderReader {
    /// Opens the rank files of `dir` and indexes them. Fails as
    /// `merge_dir` does on files of different runs, a rank given twice,
    /// or a clock that cannot be converted. Its windows share
    /// [`WINDOW_BUDGET`].
    pub fn open(dir: &Path) -> Result<FolderReader> {
        FolderReader::open_within(dir, WINDOW_BUDGET)
    }

    /// [`open`](Self::open), its windows sharing `budget` bytes (but
    /// never smaller than [`MIN_WINDOW`] each: see [`shared_window`]).
    pub fn open_within(dir: &Path, budget: usize) -> Result<FolderReader> {
        let files = rank_files(dir)?;
        let many = files.len() > MAX_OPEN;
        let mut readers = Vec::with_capacity(files.len());
        for path in &files {
            let mut r = RankReader::open(path)?;
            if many {
                r.close();
            }
            readers.push(r);
        }
        readers.sort_by_key(|r| r.header.rank);
        let window = shared_window(budget, readers.iter().map(|r| r.threads().len()));
        for r in &mut readers {
            r.set_window(window);
        }
        let mut warnings = check_ranks(
            readers
                .iter()
                .map(|r| (r.name(), &r.header, r.truncated.as_ref(), r.end.is_some())),
        )?;
        let (world_size, mpi) = (readers[0].header.world_size, readers[0].header.mpi.clone());
        let mut times = Vec::with_capacity(readers.len());
        let host0 = readers
            .iter()
            .find(|r| r.header.rank == 0)
            .map_or("", |r| r.header.host.as_str());
        for r in &readers {
            let t = TimeMap::new(
                &r.header,
                &r.pairs,
                &r.syncs,
                r.end.is_some(),
                r.has_records(),
                host0,
            )
            .map_err(|e| Error::Invalid(format!("{}: {e}", r.name())))?;
            if let Some(w) = &t.warning {
                warnings.push(format!("{}: {w}", r.name()));
            }
            times.push(t);
        }
        let origin = origin(
            readers
                .iter()
                .zip(&times)
                .flat_map(|(r, t)| r.first_starts().flatten().map(|tick| t.ns(tick))),
        );
        let (mut host_names, mut hosts) = (Vec::<String>::new(), Vec::new());
        let mut known = std::collections::HashMap::new();
        for r in readers.iter().filter(|r| !r.header.host.is_empty()) {
            let at = *known.entry(r.header.host.as_str()).or_insert_with(|| {
                host_names.push(r.header.host.clone());
                host_names.len() as u32 - 1
            });
            hosts.push((r.header.rank, at));
        }
        let mut run = RunTables::new(world_size);
        let mut ranks = Vec::with_capacity(readers.len());
        let mut streams = Vec::new();
        for (reader, times) in readers.into_iter().zip(times) {
            let threads = reader.threads();
            let index = stream_indices(&threads, streams.len() as u32);
            let mut order: Vec<usize> = (0..threads.len()).collect();
            order.sort_by_key(|&slot| index[slot]);
            streams.extend(order.into_iter().map(|slot| StreamAt {
                rank_at: ranks.len(),
                slot,
                rank: reader.header.rank,
                thread: threads[slot],
                ended: false,
            }));
            for name in &reader.header.routines {
                run.routine(name);
            }
            let sites = run.sites.map_rank(&reader.sites);
            ranks.push(RankState {
                sites,
                lanes: (0..threads.len()).map(|_| None).collect(),
                records: reader.records,
                size: reader.size,
                reader: Some(Box::new(reader)),
                times,
                index,
            });
        }
        Ok(FolderReader {
            world_size,
            mpi,
            clocks: ranks.iter().map(|r| r.times.clock).collect(),
            run,
            ranks,
            streams,
            origin,
            warnings,
            window,
            host_names,
            hosts,
        })
    }

    /// The host rank `rank` ran on, as its rank file's header names it;
    /// `None` for a rank without a file or whose header names none.
    pub fn host(&self, rank: u32) -> Option<&str> {
        let at = self.hosts.binary_search_by_key(&rank, |&(r, _)| r).ok()?;
        Some(&self.host_names[self.hosts[at].1 as usize])
    }

    /// The streams: (rank, thread), by rank then thread (the merged
    /// trace's stream order, which [`ReqRef::stream`](crate::trace::ReqRef)
    /// indexes).
    pub fn streams(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.streams.iter().map(|s| (s.rank, s.thread))
    }

    /// Routine names; events index them. Every routine of the rank files'
    /// tables, called or not, in the order of the ranks' tables (not by
    /// call count as in a merged trace).
    pub fn routines(&self) -> &[String] {
        &self.run.routine_names
    }

    /// The communicator table (ids from 2), as far as the events read so
    /// far created communicators: an event's communicator is in it once
    /// the event is read.
    pub fn comms(&self) -> &[Comm] {
        &self.run.comms
    }

    /// The window table, as far as the events read so far created
    /// windows (as [`FolderReader::comms`]).
    pub fn wins(&self) -> &[Win] {
        &self.run.wins
    }

    /// The run's call sites, every rank's interned at opening (events'
    /// [`V::Site`](crate::fields::V::Site) values index them).
    pub fn sites(&self) -> &[Site] {
        &self.run.sites.sites
    }

    /// Records in the rank files' complete chunks: the events to come.
    pub fn event_count(&self) -> u64 {
        self.ranks.iter().map(|r| r.records).sum()
    }

    /// Bytes of the rank files.
    pub fn bytes(&self) -> u64 {
        self.ranks.iter().map(|r| r.size).sum()
    }

    /// Warnings about the folder (truncated or unfinished rank files,
    /// missing ranks, clock alignment), and about handles that could not be
    /// resolved in the events read so far.
    pub fn warnings(&self) -> Vec<String> {
        let mut w = self.warnings.clone();
        w.extend(self.run.warnings());
        w
    }

    /// Bytes its rank readers hold for reading records now (their
    /// windows).
    pub fn buffered(&self) -> usize {
        let lanes = self.ranks.iter().flat_map(|r| r.lanes.iter().flatten());
        let idle = self.ranks.iter().flat_map(|r| r.reader.iter());
        lanes.map(|l| l.reader.buffered()).sum::<usize>() + idle.map(|r| r.buffered()).sum::<usize>()
    }

    /// Reads the streams in turn, each from its start to its end, with
    /// the full window ([`WINDOW`]) per thread (`true`), or in any order,
    /// sharing [`WINDOW_BUDGET`] (`false`, the default): read in turn, one
    /// stream's lane at a time holds windows, so that they may be larger,
    /// and fewer reads (each opening the file, in a folder of more than
    /// `MAX_OPEN` files) bring the events.
    pub fn read_in_turn(&mut self, in_turn: bool) {
        let bytes = if in_turn { WINDOW } else { self.window };
        for r in &mut self.ranks {
            let lanes = r.lanes.iter_mut().flatten().map(|l| &mut l.reader);
            for reader in r.reader.iter_mut().chain(lanes) {
                reader.set_window(bytes);
            }
        }
    }

    /// The next event of stream `i` into `ev`; `false` at the stream's end.
    pub fn next_into(&mut self, i: usize, ev: &mut Event) -> Result<bool> {
        let StreamAt {
            rank_at, slot, ended, ..
        } = self.streams[i];
        if ended {
            return Ok(false);
        }
        let lane = self.ranks[rank_at].lane(slot, &mut self.run, self.origin)?;
        loop {
            match next_call(&mut *lane.reader, &mut lane.conv, &mut self.run, ev)? {
                None => {
                    // Its conversion state (live requests, handles seen)
                    // goes now, so that a folder read stream after stream
                    // holds one stream's, not every stream's; the reader
                    // stays for a restart (or the rank's other lanes).
                    let r = &mut self.ranks[rank_at];
                    if let Some(mut lane) = r.lanes[slot].take() {
                        if r.reader.is_none() {
                            lane.reader.rewind();
                            r.reader = Some(lane.reader);
                        }
                    }
                    self.streams[i].ended = true;
                    return Ok(false);
                }
                Some(s) if s == slot => return Ok(true),
                Some(_) => {}
            }
        }
    }

    /// The next event of stream `i`, `None` at its end.
    pub fn next(&mut self, i: usize) -> Result<Option<Event>> {
        let mut ev = Event::default();
        Ok(self.next_into(i, &mut ev)?.then_some(ev))
    }

    /// Starts stream `i`'s lane over: its file from the start, a fresh
    /// conversion (which finds the communicators it creates in the run's
    /// table again, under the same ids).
    pub fn restart(&mut self, i: usize) -> Result<()> {
        let StreamAt { rank_at, slot, .. } = self.streams[i];
        self.streams[i].ended = false;
        let r = &mut self.ranks[rank_at];
        if let Some(lane) = r.lanes[slot].take() {
            r.reader = Some(lane.reader);
        }
        r.lane(slot, &mut self.run, self.origin).map(|_| ())
    }
}

/// What [`save_merged`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Saved {
    /// Size of `MPI_COMM_WORLD`.
    pub world_size: u32,
    /// Events written.
    pub events: u64,
    /// Bytes written.
    pub bytes: u64,
    /// The merge's warnings (as `merge_dir` gives them).
    pub warnings: Vec<String>,
}

/// Merges the rank files of `dir` into the merged trace `path`, streaming
/// (see the module's documentation): memory does not grow with the
/// events. The file is written under a temporary name and renamed when
/// complete. `progress` is told of the events converted in both passes
/// (twice [`FolderReader::event_count`] in all).
pub fn save_merged(dir: &Path, path: &Path, progress: &dyn Fn(u64)) -> Result<Saved> {
    let mut f = FolderReader::open(dir)?;
    f.read_in_turn(true);
    // Pass 1, stream by stream in rank order, so that communicators get
    // the ids the in-memory merge gives them.
    let mut counts = vec![0u64; f.run.routine_names.len()];
    let mut ev = Event::default();
    for i in 0..f.streams.len() {
        let mut n = 0u64;
        while f.next_into(i, &mut ev)? {
            counts[ev.routine as usize] += 1;
            n += 1;
            if n.is_multiple_of(1 << 16) {
                progress(1 << 16);
            }
        }
        progress(n % (1 << 16));
    }
    let warnings = f.warnings();
    let (routines, remap) = routine_order(&counts, &f.run.routine_names);
    // Pass 2: each stream read again from the start.
    crate::trace::save_atomic(path, |out, tmp| {
        let io = |e| Error::io(tmp, e);
        let mut w = MergedWriter::new(
            out,
            f.world_size,
            &f.mpi,
            &routines,
            &f.run.comms,
            &f.clocks,
            f.sites(),
            f.wins(),
        )
        .map_err(io)?;
        let mut events = 0u64;
        for i in 0..f.streams.len() {
            let StreamAt { rank, thread, .. } = f.streams[i];
            f.restart(i)?;
            let mut failed = None;
            let stream = std::iter::from_fn(|| match f.next_into(i, &mut ev) {
                Ok(true) => {
                    ev.routine = remap[ev.routine as usize];
                    events += 1;
                    Some(std::mem::take(&mut ev))
                }
                Ok(false) => None,
                Err(e) => {
                    failed = Some(e);
                    None
                }
            });
            w.stream(i as u32, rank, thread, stream, progress).map_err(io)?;
            if let Some(e) = failed {
                return Err(e);
            }
        }
        Ok(Saved {
            world_size: f.world_size,
            events,
            bytes: w.finish().map_err(io)?,
            warnings,
        })
    })
}
