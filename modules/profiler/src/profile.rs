//! One rank's profile, summed over its threads, with its call sites
//! resolved: what each rank sends to rank 0 at `MPI_Finalize` (as JSON,
//! since sites carry names and paths of any length).

use crate::clock::{Clock, Stamp};
use crate::state::{self, Block, Hist, Series};
use pnmpi_mpi_sys::{ROUTINE_COUNT, ROUTINE_NAMES};
use pnmpi_sdk::callsite::Resolver;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ffi::CStr;

/// Count, times (seconds) and bytes of a series of calls or phases.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct Stats {
    /// Calls (or phases).
    pub count: u64,
    /// Their summed time, seconds.
    pub total_s: f64,
    /// The shortest, seconds (0 without calls).
    pub min_s: f64,
    /// The longest, seconds.
    pub max_s: f64,
    /// Bytes moved, count x type size.
    pub bytes: u64,
}

impl Stats {
    /// Adds another series (of another thread or rank).
    pub fn merge(&mut self, other: &Stats) {
        if other.count == 0 {
            return;
        }
        self.min_s = if self.count == 0 {
            other.min_s
        } else {
            self.min_s.min(other.min_s)
        };
        self.max_s = self.max_s.max(other.max_s);
        self.count += other.count;
        self.total_s += other.total_s;
        self.bytes += other.bytes;
    }

    /// Mean seconds per call, 0 without calls.
    pub fn mean_s(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.total_s / self.count as f64
        }
    }
}

/// Sums raw series in ticks, then converts once.
#[derive(Default)]
struct Ticks {
    count: u64,
    total: u64,
    min: u64,
    max: u64,
    bytes: u64,
}

impl Ticks {
    fn add(&mut self, s: &Series) {
        let count = s.count.get();
        if count == 0 {
            return;
        }
        self.min = if self.count == 0 {
            s.min.get()
        } else {
            self.min.min(s.min.get())
        };
        self.max = self.max.max(s.max.get());
        self.count += count;
        self.total += s.total.get();
        self.bytes += s.bytes.get();
    }

    fn merge(&mut self, other: &Ticks) {
        if other.count == 0 {
            return;
        }
        self.min = if self.count == 0 {
            other.min
        } else {
            self.min.min(other.min)
        };
        self.max = self.max.max(other.max);
        self.count += other.count;
        self.total += other.total;
        self.bytes += other.bytes;
    }

    fn stats(&self, clock: &Clock) -> Stats {
        Stats {
            count: self.count,
            total_s: clock.seconds(self.total),
            min_s: clock.seconds(self.min),
            max_s: clock.seconds(self.max),
            bytes: self.bytes,
        }
    }
}

/// A routine's calls on one rank.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Routine {
    /// Its `MPI_` name.
    pub name: String,
    /// Its calls.
    #[serde(flatten)]
    pub stats: Stats,
}

/// A call site's calls on one rank, with where it is.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Site {
    /// The MPI routine called there.
    pub routine: String,
    /// The calling function, if symbols say.
    pub function: Option<String>,
    /// Source file and line of the call, if debug information says.
    pub file: Option<String>,
    /// See `file`.
    pub line: Option<u32>,
    /// The object holding the call, and the return address's offset in it
    /// (the same on every rank, unlike the address itself).
    pub object: String,
    /// See `object`.
    pub offset: u64,
    /// The calls made there.
    #[serde(flatten)]
    pub stats: Stats,
}

/// A selected routine's distributions on one rank: sparse `[bin, count]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RoutineDistribution {
    /// The routine's `MPI_` name.
    pub routine: String,
    /// Its calls' durations, in `Config::latency` bins.
    pub latency: Vec<(usize, u64)>,
    /// Its calls' bytes, in `Config::size` bins.
    pub size: Vec<(usize, u64)>,
}

/// One rank's profile.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RankProfile {
    /// Its rank in `MPI_COMM_WORLD`.
    pub rank: i32,
    /// The node it ran on.
    pub host: String,
    /// Threads that made MPI calls.
    pub threads: usize,
    /// `CLOCK_MONOTONIC_RAW` from MPI_Init's entry to MPI_Finalize's.
    pub wall_s: f64,
    /// The finalizing thread's computation and communication: the two sum
    /// to `wall_s` if every moment is accounted for exactly once.
    pub comp_s: f64,
    /// See `comp_s`.
    pub comm_s: f64,
    /// Tick rate and the length of its calibration window.
    pub ticks_per_s: f64,
    /// See `ticks_per_s`.
    pub calibration_s: f64,
    /// Granularity and overhead, all threads.
    pub comp: Stats,
    /// See `comp`.
    pub comm: Stats,
    /// Sparse `[bin, count]` of the two distributions.
    pub comp_hist: Vec<(usize, u64)>,
    /// See `comp_hist`.
    pub comm_hist: Vec<(usize, u64)>,
    /// Routines called at least once.
    pub routines: Vec<Routine>,
    /// The selected routines' distributions (`Config::distributions`).
    pub distributions: Vec<RoutineDistribution>,
    /// Its call sites, resolved.
    pub callsites: Vec<Site>,
    /// Calls whose site could not be kept (full table, or no site found).
    pub callsites_dropped: u64,
    /// Each thread's own figures, the threads in the order they first
    /// called MPI: a multi-threaded rank's sums above hide which thread
    /// called what.
    #[serde(default)]
    pub per_thread: Vec<ThreadProfile>,
}

/// One thread's figures on its rank.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ThreadProfile {
    /// Its number on the rank: 0 first called MPI, then 1, ...
    pub thread: usize,
    /// Its computation: the gaps between its outermost calls.
    pub comp: Stats,
    /// Its communication: its outermost calls.
    pub comm: Stats,
    /// Its calls of each routine called at least once.
    pub routines: Vec<Routine>,
}

/// A block's calls of each routine: those its call sites hold, and the rest.
fn routines_of(block: &Block) -> Vec<Ticks> {
    let mut routines: Vec<Ticks> = block
        .routines
        .iter()
        .map(|series| {
            let mut t = Ticks::default();
            t.add(series);
            t
        })
        .collect();
    if let Some(table) = &block.sites {
        for (routine, _, series) in table.sites() {
            routines[routine].add(series);
        }
    }
    routines
}

/// A block's communication overhead: its routines' calls (`routines`,
/// from [`routines_of`]) but the nested ones (whose time is inside an
/// outer call). The min and max are the routines', nested calls included.
fn communication(block: &Block, routines: &[Ticks]) -> Ticks {
    let mut all = Ticks::default();
    for routine in routines {
        all.merge(routine);
    }
    all.count -= block.nested.count.get();
    all.total -= block.nested.total.get();
    all
}

fn sparse(hists: &[&Hist]) -> Vec<(usize, u64)> {
    let Some(first) = hists.first() else {
        return Vec::new();
    };
    (0..first.bins.len())
        .map(|i| (i, hists.iter().map(|h| h.bins[i].get()).sum::<u64>()))
        .filter(|&(_, n)| n > 0)
        .collect()
}

/// Collects this rank's profile. `me` is the finalizing thread's block,
/// whose last phase ends at `end`.
pub fn collect(rank: i32, clock: &Clock, end: Stamp, me: Option<&Block>) -> RankProfile {
    let blocks: Vec<&Block> = state::blocks().collect();
    // Each thread's last waiting call is still pending. No other thread
    // is inside MPI once MPI_Finalize is called, so none writes it now.
    for block in &blocks {
        block.flush();
    }
    let mut routines: Vec<Ticks> = (0..ROUTINE_COUNT).map(|_| Ticks::default()).collect();
    let (mut comp, mut comm) = (Ticks::default(), Ticks::default());
    let mut sites: BTreeMap<(usize, usize), Ticks> = BTreeMap::new();
    let mut dropped = 0;
    // Each block's routines, summed once: every table below reads them.
    let owns: Vec<Vec<Ticks>> = blocks.iter().map(|b| routines_of(b)).collect();
    for (block, own) in blocks.iter().zip(&owns) {
        for (total, own) in routines.iter_mut().zip(own) {
            total.merge(own);
        }
        comp.add(&block.comp);
        comm.merge(&communication(block, own));
        if let Some(table) = &block.sites {
            for (routine, ra, series) in table.sites() {
                sites.entry((routine, ra)).or_default().add(series);
            }
            dropped += table.dropped.get();
        }
    }
    let (comp_s, comm_s) = me.map_or((0.0, 0.0), |b| {
        // This thread's block is one of `blocks`: its sums are in `owns`.
        let comm = match blocks.iter().position(|&other| std::ptr::eq(other, b)) {
            Some(at) => communication(b, &owns[at]),
            None => communication(b, &routines_of(b)),
        };
        (clock.seconds(b.comp.total.get()), clock.seconds(comm.total))
    });
    let config = crate::config::get();
    let distributions = config
        .map(|c| c.distributions.as_slice())
        .unwrap_or_default()
        .iter()
        .enumerate()
        .map(|(i, routine)| {
            let lat: Vec<&Hist> = blocks.iter().map(|b| &b.dists[i].latency).collect();
            let size: Vec<&Hist> = blocks.iter().map(|b| &b.dists[i].size).collect();
            RoutineDistribution {
                routine: routine.clone(),
                latency: sparse(&lat),
                size: sparse(&size),
            }
        })
        .collect();
    // The list of blocks is newest first.
    let per_thread = blocks
        .iter()
        .zip(&owns)
        .rev()
        .enumerate()
        .map(|(thread, (b, own))| ThreadProfile {
            thread,
            comp: {
                let mut t = Ticks::default();
                t.add(&b.comp);
                t.stats(clock)
            },
            comm: communication(b, own).stats(clock),
            routines: called(own, clock),
        })
        .collect();
    let comp_hists: Vec<&Hist> = blocks.iter().map(|b| &b.comp_hist).collect();
    let comm_hists: Vec<&Hist> = blocks.iter().map(|b| &b.comm_hist).collect();
    RankProfile {
        rank,
        host: hostname(),
        threads: blocks.len(),
        wall_s: end.ns.saturating_sub(clock.start.ns) as f64 / 1e9,
        comp_s,
        comm_s,
        ticks_per_s: clock.ticks_per_s,
        calibration_s: clock.window_s,
        comp: comp.stats(clock),
        comm: comm.stats(clock),
        comp_hist: sparse(&comp_hists),
        comm_hist: sparse(&comm_hists),
        routines: called(&routines, clock),
        distributions,
        callsites: resolve(&sites, clock),
        callsites_dropped: dropped,
        per_thread,
    }
}

/// The routines of `routines` (by id) called at least once.
fn called(routines: &[Ticks], clock: &Clock) -> Vec<Routine> {
    routines
        .iter()
        .enumerate()
        .filter(|(_, t)| t.count > 0)
        .map(|(id, t)| Routine {
            name: ROUTINE_NAMES[id].to_string(),
            stats: t.stats(clock),
        })
        .collect()
}

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: `buf` is a local buffer of the length passed.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return String::new();
    }
    CStr::from_bytes_until_nul(&buf)
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Names each call site of `sites` (routine id, return address) with
/// the SDK's resolver (each object's debug information read once).
fn resolve(sites: &BTreeMap<(usize, usize), Ticks>, clock: &Clock) -> Vec<Site> {
    let mut resolver = Resolver::default();
    sites
        .iter()
        .map(|(&(routine, ra), ticks)| {
            let at = resolver.resolve(ra);
            Site {
                routine: ROUTINE_NAMES[routine].to_string(),
                function: at.function,
                file: at.file,
                line: at.line,
                object: at.object,
                offset: at.offset,
                stats: ticks.stats(clock),
            }
        })
        .collect()
}
