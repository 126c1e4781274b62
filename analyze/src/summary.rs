//! The figures of an analysis, ready to print or serialise: the wait
//! states by pattern, rank, routine and site, the worst waits with their
//! causes, and the critical path's composition and the imbalance.

use crate::calls::Call;
use crate::calls::OpRef;
use crate::path::{Activity, Segment};
use crate::run::Run;
use crate::sites::{place, site};
use crate::waits::{Pattern, Wait};
use pnmpi_sim::units::Ns;
use serde::Serialize;
use std::collections::BTreeMap;

/// Seconds from ns.
pub fn secs(ns: Ns) -> f64 {
    ns / 1e9
}

/// A call, named for a reader.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CallName {
    /// World rank.
    pub rank: u32,
    /// Thread on the rank.
    pub thread: u32,
    /// Routine.
    pub routine: String,
    /// Its position among the actor's calls, from 0.
    pub call: u32,
    /// Entry, s from the start of the analysed window.
    pub at_s: f64,
    /// `file:line`, where the trace has it.
    pub site: Option<String>,
}

impl CallName {
    /// Names call `at` of `run`, times from `origin`.
    pub fn of(run: &Run, at: OpRef, origin: Ns) -> CallName {
        let a = run.actors[at.actor as usize];
        CallName {
            rank: a.rank,
            thread: a.thread,
            routine: run.routine(at).to_owned(),
            call: at.op,
            at_s: secs(run.span(at).start - origin),
            site: site(run, at),
        }
    }
}

/// One pattern's total.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PatternRow {
    /// Scalasca's name.
    pub pattern: &'static str,
    /// Seconds, summed over ranks.
    pub time_s: f64,
    /// Of the run's rank-time (runtime x ranks), %.
    pub percent: f64,
    /// Calls that waited.
    pub calls: u64,
}

/// One rank's waits, per pattern (in [`Pattern::ALL`] order).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RankRow {
    /// World rank.
    pub rank: u32,
    /// Seconds per pattern.
    pub time_s: Vec<f64>,
    /// Total, s.
    pub total_s: f64,
}

/// One routine's (or site's) waits under one pattern.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WhereRow {
    /// Routine name, or `file:line`.
    pub name: String,
    /// Scalasca's name of the pattern.
    pub pattern: &'static str,
    /// Seconds.
    pub time_s: f64,
    /// Of the run's rank-time, %.
    pub percent: f64,
    /// Calls.
    pub calls: u64,
}

/// One wait, with its cause.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WaitRow {
    /// The waiting call.
    pub call: CallName,
    /// Scalasca's name of the pattern.
    pub pattern: &'static str,
    /// Seconds.
    pub wait_s: f64,
    /// The call it waited for.
    pub cause: CallName,
}

/// The wait states.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WaitSummary {
    /// All waits, s.
    pub total_s: f64,
    /// Of the run's rank-time, %.
    pub percent: f64,
    /// Pattern names, the columns of [`RankRow::time_s`].
    pub patterns: Vec<&'static str>,
    /// Per pattern.
    pub by_pattern: Vec<PatternRow>,
    /// Per rank.
    pub by_rank: Vec<RankRow>,
    /// Per routine and pattern, most first.
    pub by_routine: Vec<WhereRow>,
    /// Per call site and pattern, most first (empty without sites).
    pub by_site: Vec<WhereRow>,
    /// Whether the trace records call sites.
    pub sites_recorded: bool,
    /// The longest waits, longest first.
    pub worst: Vec<WaitRow>,
}

/// The waits of `run`, `worst` of them listed.
pub fn waits(run: &Run, waits: &[Wait], worst: usize) -> WaitSummary {
    let (origin, _) = run.window();
    let rank_time = (run.runtime() * f64::from(run.world_size)).max(1.0);
    let pct = |ns: Ns| 100.0 * ns / rank_time;
    let np = Pattern::ALL.len();
    let index = |p: Pattern| Pattern::ALL.iter().position(|&q| q == p).unwrap_or(0);
    let mut by_pattern = vec![(0.0, 0u64); np];
    let mut by_rank = vec![vec![0.0; np]; run.world_size as usize];
    let mut by_routine: BTreeMap<(String, usize), (Ns, u64)> = BTreeMap::new();
    let mut by_site: BTreeMap<(String, usize), (Ns, u64)> = BTreeMap::new();
    let mut calls = run.cursor();
    for w in waits {
        let p = index(w.pattern);
        by_pattern[p].0 += w.time;
        by_pattern[p].1 += 1;
        if let Some(r) = by_rank.get_mut(run.rank(w.at.actor) as usize) {
            r[p] += w.time;
        }
        let call = calls.get(w.at.actor as usize, w.at.op);
        let routine = call.map_or("?", |c| run.routine_name(c.routine));
        let e = by_routine.entry((routine.to_owned(), p)).or_default();
        e.0 += w.time;
        e.1 += 1;
        if let Some(s) = call.and_then(|c| place(run, &c)) {
            let e = by_site.entry((s, p)).or_default();
            e.0 += w.time;
            e.1 += 1;
        }
    }
    let rows = |m: BTreeMap<(String, usize), (Ns, u64)>| {
        let mut v: Vec<WhereRow> = m
            .into_iter()
            .map(|((name, p), (t, n))| WhereRow {
                name,
                pattern: Pattern::ALL[p].name(),
                time_s: secs(t),
                percent: pct(t),
                calls: n,
            })
            .collect();
        v.sort_by(|a, b| b.time_s.total_cmp(&a.time_s));
        v
    };
    let mut longest: Vec<&Wait> = waits.iter().collect();
    longest.sort_by(|a, b| b.time.total_cmp(&a.time).then(a.at.cmp(&b.at)));
    // From +0: an empty float sum is -0, which prints as "-0.000".
    let total: Ns = waits.iter().fold(0.0, |t, w| t + w.time);
    WaitSummary {
        total_s: secs(total),
        percent: pct(total),
        patterns: Pattern::ALL.iter().map(|p| p.name()).collect(),
        by_pattern: Pattern::ALL
            .iter()
            .zip(&by_pattern)
            .map(|(p, &(t, n))| PatternRow {
                pattern: p.name(),
                time_s: secs(t),
                percent: pct(t),
                calls: n,
            })
            .collect(),
        by_rank: by_rank
            .into_iter()
            .enumerate()
            .map(|(r, t)| RankRow {
                rank: r as u32,
                total_s: secs(t.iter().sum()),
                time_s: t.into_iter().map(secs).collect(),
            })
            .collect(),
        by_routine: rows(by_routine),
        by_site: rows(by_site),
        sites_recorded: crate::sites::recorded(run),
        worst: longest
            .into_iter()
            .take(worst)
            .map(|w| WaitRow {
                call: CallName::of(run, w.at, origin),
                pattern: w.pattern.name(),
                wait_s: secs(w.time),
                cause: CallName::of(run, w.cause, origin),
            })
            .collect(),
    }
}

/// Time on the path by a key.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Share {
    /// Rank, routine or region.
    pub name: String,
    /// Seconds on the path.
    pub time_s: f64,
    /// Of the path, %.
    pub percent: f64,
}

/// One rank's part of the path.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PathRank {
    /// World rank.
    pub rank: u32,
    /// Compute on the path, s.
    pub compute_s: f64,
    /// MPI time on the path, s.
    pub mpi_s: f64,
}

/// Compute balance across ranks.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Imbalance {
    /// The most compute a rank did in the window, s.
    pub max_compute_s: f64,
    /// The mean over ranks, s.
    pub mean_compute_s: f64,
    /// The least, s.
    pub min_compute_s: f64,
    /// (max - mean) / max, %: the share of the slowest rank's compute
    /// the others leave idle.
    pub percent: f64,
    /// Compute on the critical path beyond the mean rank's compute, s
    /// (Scalasca's critical-path imbalance): what balancing could gain.
    pub path_excess_s: f64,
    /// The rank that computed most.
    pub max_rank: u32,
}

/// The critical path's composition.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PathSummary {
    /// Its length, s.
    pub length_s: f64,
    /// Where it starts and ends: (rank, s from the window's start).
    pub from: (u32, f64),
    /// Where it ends.
    pub to: (u32, f64),
    /// Compute on it, s.
    pub compute_s: f64,
    /// MPI time on it, s.
    pub mpi_s: f64,
    /// Per rank it visits, by rank.
    pub by_rank: Vec<PathRank>,
    /// Compute per region (rank, and the calls around the burst), most first.
    pub by_region: Vec<Share>,
    /// MPI time per routine, most first.
    pub by_routine: Vec<Share>,
    /// Compute per call site (the call after the burst), most first;
    /// empty without sites.
    pub by_site: Vec<Share>,
    /// How often it changes rank.
    pub hops: u64,
    /// Compute balance.
    pub imbalance: Imbalance,
}

/// Each rank's compute in the window (the bursts after `MPI_Init`, the
/// one before `MPI_Finalize` included, and the local calls such as
/// `MPI_Wtime`), ns.
pub fn rank_compute(run: &Run) -> Vec<Ns> {
    let mut out = vec![0.0; run.world_size as usize];
    for a in &run.actors {
        if let Some(r) = out.get_mut(a.rank as usize) {
            *r += a.compute;
        }
    }
    out
}

/// Sorts shares, most first, with their % of `total`.
fn shares(m: BTreeMap<String, Ns>, total: Ns) -> Vec<Share> {
    let mut v: Vec<Share> = m
        .into_iter()
        .map(|(name, t)| Share {
            name,
            time_s: secs(t),
            percent: 100.0 * t / total.max(1.0),
        })
        .collect();
    v.sort_by(|a, b| b.time_s.total_cmp(&a.time_s).then(a.name.cmp(&b.name)));
    v
}

/// The composition of `path` in `run`.
pub fn path(run: &Run, path: &[Segment]) -> PathSummary {
    let (origin, _) = run.window();
    let length: Ns = path.iter().map(Segment::len).sum();
    let mut ranks: BTreeMap<u32, (Ns, Ns)> = BTreeMap::new();
    let mut regions: BTreeMap<String, Ns> = BTreeMap::new();
    let mut routines: BTreeMap<String, Ns> = BTreeMap::new();
    let mut sites: BTreeMap<String, Ns> = BTreeMap::new();
    let mut calls = run.cursor();
    let mut call = |actor: u32, op: u32| calls.get(actor as usize, op);
    let name = |c: Option<Call>| {
        c.and_then(|c| run.routines.get(c.routine as usize))
            .map_or("the end", String::as_str)
    };
    let mut hops = 0;
    for (k, s) in path.iter().enumerate() {
        let rank = run.rank(s.actor);
        if k > 0 && path[k - 1].actor != s.actor {
            hops += 1;
        }
        let r = ranks.entry(rank).or_default();
        match s.what {
            Activity::Compute { before, after } => {
                r.0 += s.len();
                let after = call(s.actor, after);
                let region = format!(
                    "rank {rank}: {} -> {}",
                    before.map_or("start", |b| name(call(s.actor, b))),
                    name(after)
                );
                *regions.entry(region).or_default() += s.len();
                if let Some(site) = after.and_then(|c| place(run, &c)) {
                    *sites.entry(site).or_default() += s.len();
                }
            }
            Activity::Mpi { op } => {
                r.1 += s.len();
                *routines.entry(name(call(s.actor, op)).to_owned()).or_default() += s.len();
            }
        }
    }
    let compute = rank_compute(run);
    let n = compute.len().max(1) as f64;
    let (max_rank, max) = compute
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map_or((0, 0.0), |(r, &t)| (r as u32, t));
    let mean = compute.iter().sum::<Ns>() / n;
    let min = compute.iter().copied().fold(Ns::INFINITY, Ns::min);
    let path_compute: Ns = ranks.values().map(|r| r.0).sum();
    let end = |s: Option<&Segment>, at_end: bool| {
        s.map_or((0, 0.0), |s| {
            (
                run.rank(s.actor),
                secs(if at_end { s.end } else { s.start } - origin),
            )
        })
    };
    PathSummary {
        length_s: secs(length),
        from: end(path.first(), false),
        to: end(path.last(), true),
        compute_s: secs(path_compute),
        mpi_s: secs(ranks.values().map(|r| r.1).sum()),
        by_rank: ranks
            .into_iter()
            .map(|(rank, (c, m))| PathRank {
                rank,
                compute_s: secs(c),
                mpi_s: secs(m),
            })
            .collect(),
        by_region: shares(regions, length),
        by_routine: shares(routines, length),
        by_site: shares(sites, length),
        hops,
        imbalance: Imbalance {
            max_compute_s: secs(max),
            mean_compute_s: secs(mean),
            min_compute_s: secs(if min.is_finite() { min } else { 0.0 }),
            percent: if max > 0.0 {
                100.0 * (max - mean) / max
            } else {
                0.0
            },
            path_excess_s: secs((path_compute - mean).max(0.0)),
            max_rank,
        },
    }
}
