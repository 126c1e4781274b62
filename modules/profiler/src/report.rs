//! Rank 0's report: every rank's profile gathered on the module's own
//! communicator (past the chain, so no module below counts the gather),
//! then written as text (mpiP's sections, BCS-MPI's
//! primitive table, the accuracy check, text histograms), as JSON (the
//! same, plus every rank's raw profile) and as an SVG picture of the
//! distributions. Each file is written under a temporary name and renamed,
//! so that a reader never sees half a report.

use crate::config::{Bins, Config};
use crate::profile::{RankProfile, Routine, Site, Stats};
use crate::row::{push_left, push_right, Row};
use crate::svg::{self, Panel};
use pnmpi_sdk::fixed::Fixed;
use pnmpi_sdk::{native, Comm};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The MDS claim: computation plus communication is the wall time within this.
const ACCURACY_PERCENT: f64 = 0.01;
/// Rows of mpiP's "top twenty" sections.
const TOP: usize = 20;
/// A histogram row's bar, 50 marks at most.
const BAR: &str = "##################################################";

/// Gathers every rank's profile to rank 0 of `comm`, which writes the
/// report. Returns where it was written (rank 0) or `None` (other ranks).
/// Rank 0 sends nothing and keeps its own profile as it is: encoding and
/// parsing it again was a tenth of its report's instructions.
pub fn gather_and_write(comm: Comm, mine: RankProfile, config: &Config) -> Result<Option<PathBuf>, String> {
    let json = if mine.rank == 0 {
        Vec::new()
    } else {
        serde_json::to_vec(&mine).map_err(|e| format!("cannot encode the profile: {e}"))?
    };
    let gathered = native::gatherv(&json, comm).map_err(|e| format!("cannot gather the profiles: {e}"))?;
    let Some(all) = gathered else {
        return Ok(None);
    };
    let mut ranks = vec![mine];
    for bytes in all.iter().skip(1) {
        let rank = serde_json::from_slice::<RankProfile>(bytes)
            .map_err(|e| format!("cannot decode a rank's profile: {e}"))?;
        ranks.push(rank);
    }
    let report = Report::new(config, &ranks);
    let text_path = config.output.clone();
    write_atomically(&text_path, report.text())?;
    let json = report_json(&report, &all).map_err(|e| format!("cannot encode the report: {e}"))?;
    write_atomically(&text_path.with_extension("json"), &json)?;
    write_atomically(&text_path.with_extension("svg"), report.svg())?;
    Ok(Some(text_path))
}

/// The report as compact JSON and a newline, `per_rank` last: rank 0's
/// profile encoded, every other rank's pasted as that rank encoded it
/// (`gathered`), not decoded and encoded again.
fn report_json(report: &Report, gathered: &[Vec<u8>]) -> Result<Vec<u8>, String> {
    let mut json = serde_json::to_vec(report).map_err(|e| e.to_string())?;
    // The object's closing brace, reopened for its last field.
    json.pop();
    json.extend_from_slice(br#","per_rank":["#);
    if let Some(first) = report.per_rank.first() {
        serde_json::to_writer(&mut json, first).map_err(|e| e.to_string())?;
    }
    for bytes in gathered.iter().skip(1) {
        json.push(b',');
        json.extend_from_slice(bytes);
    }
    json.extend_from_slice(b"]}\n");
    Ok(json)
}

fn write_atomically(path: &Path, text: impl AsRef<[u8]>) -> Result<(), String> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&temp, text)
        .and_then(|()| std::fs::rename(&temp, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&temp);
            format!("cannot write {}: {e}", path.display())
        })
}

/// mpiP's name for a routine: without `MPI_`.
fn short(routine: &str) -> &str {
    routine.strip_prefix("MPI_").unwrap_or(routine)
}

fn percent(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        100.0 * part / whole
    } else {
        0.0
    }
}

/// Coefficient of variation (population standard deviation over mean).
fn cov(values: &[f64]) -> f64 {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    if values.len() < 2 || mean <= 0.0 {
        return 0.0;
    }
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    var.sqrt() / mean
}

/// One rank's time, mpiP's first section.
#[derive(Serialize)]
struct TaskTime {
    rank: i32,
    app_s: f64,
    mpi_s: f64,
    mpi_percent: f64,
}

/// The accuracy check of one rank.
#[derive(Serialize)]
struct Accuracy {
    rank: i32,
    wall_s: f64,
    comp_s: f64,
    comm_s: f64,
    error_percent: f64,
    within: bool,
}

/// A row of the BCS-MPI table: a routine over all ranks.
#[derive(Serialize)]
struct Primitive {
    name: String,
    #[serde(flatten)]
    stats: Stats,
}

/// A call site over all ranks.
#[derive(Serialize)]
struct CallSite {
    id: usize,
    routine: String,
    function: Option<String>,
    file: Option<String>,
    line: Option<u32>,
    /// The object holding the call, and the offset in it of one of the
    /// call's return addresses.
    object: String,
    offset: u64,
    /// Sum over ranks.
    #[serde(flatten)]
    stats: Stats,
    app_percent: f64,
    mpi_percent: f64,
    /// Coefficient of variation of its time over the ranks that called it.
    cov: f64,
    /// Each calling rank's own statistics.
    ranks: Vec<(i32, Stats)>,
}

/// A distribution over all ranks.
#[derive(Serialize)]
struct Distribution {
    name: String,
    bins: Bins,
    /// "s" or "bytes": the unit of `bins`.
    unit: &'static str,
    /// Sparse `[bin, count]`, bin `bins.bins` being the overflow.
    counts: Vec<(usize, u64)>,
}

/// The whole report: rendered as text and SVG, serialized as JSON.
#[derive(Serialize)]
struct Report<'a> {
    tool: &'static str,
    version: &'static str,
    mpi: &'static str,
    command: String,
    ranks: usize,
    config: &'a Config,
    mpi_time: Vec<TaskTime>,
    accuracy: Vec<Accuracy>,
    accuracy_limit_percent: f64,
    primitives: Vec<Primitive>,
    comp_granularity: Stats,
    comm_overhead: Stats,
    callsites: Vec<CallSite>,
    callsites_dropped: u64,
    distributions: Vec<Distribution>,
    /// Written by [`report_json`], after the other fields.
    #[serde(skip)]
    per_rank: &'a [RankProfile],
}

/// What tells call sites apart: routine, function, then file and line, or
/// object and offset.
type SiteKey<'a> = (&'a String, Option<&'a str>, &'a str, u64);
/// A call site as the first rank describes it, and each rank's statistics.
type SiteRanks<'a> = (&'a Site, BTreeMap<i32, Stats>);

fn merge_sparse(into: &mut BTreeMap<usize, u64>, counts: &[(usize, u64)]) {
    for &(bin, n) in counts {
        *into.entry(bin).or_default() += n;
    }
}

impl<'a> Report<'a> {
    fn new(config: &'a Config, ranks: &'a [RankProfile]) -> Report<'a> {
        let mpi_time = ranks
            .iter()
            .map(|r| TaskTime {
                rank: r.rank,
                app_s: r.wall_s,
                mpi_s: r.comm_s,
                mpi_percent: percent(r.comm_s, r.wall_s),
            })
            .collect();
        let accuracy = ranks
            .iter()
            .map(|r| {
                let error_percent = percent((r.comp_s + r.comm_s - r.wall_s).abs(), r.wall_s);
                Accuracy {
                    rank: r.rank,
                    wall_s: r.wall_s,
                    comp_s: r.comp_s,
                    comm_s: r.comm_s,
                    error_percent,
                    within: r.wall_s > 0.0 && error_percent <= ACCURACY_PERCENT,
                }
            })
            .collect();
        let mut primitives: BTreeMap<&str, Stats> = BTreeMap::new();
        let (mut comp, mut comm) = (Stats::default(), Stats::default());
        for r in ranks {
            for routine in &r.routines {
                primitives.entry(&routine.name).or_default().merge(&routine.stats);
            }
            comp.merge(&r.comp);
            comm.merge(&r.comm);
        }
        let mut primitives: Vec<Primitive> = primitives
            .into_iter()
            .map(|(name, stats)| Primitive {
                name: name.to_string(),
                stats,
            })
            .collect();
        primitives.sort_by(|a, b| {
            b.stats
                .total_s
                .total_cmp(&a.stats.total_s)
                .then(a.name.cmp(&b.name))
        });
        let app_total: f64 = ranks.iter().map(|r| r.wall_s).sum();
        let mpi_total: f64 = ranks.iter().map(|r| r.comm_s).sum();
        let mut callsites = Self::callsites(ranks, app_total, mpi_total);
        callsites.sort_by(|a, b| {
            (&a.file, a.line, &a.routine, a.offset).cmp(&(&b.file, b.line, &b.routine, b.offset))
        });
        for (i, site) in callsites.iter_mut().enumerate() {
            site.id = i + 1;
        }
        Report {
            tool: "pnmpi profiler",
            version: env!("CARGO_PKG_VERSION"),
            mpi: pnmpi_mpi_sys::FLAVOR,
            command: command(),
            ranks: ranks.len(),
            config,
            mpi_time,
            accuracy,
            accuracy_limit_percent: ACCURACY_PERCENT,
            primitives,
            comp_granularity: comp,
            comm_overhead: comm,
            callsites,
            callsites_dropped: ranks.iter().map(|r| r.callsites_dropped).sum(),
            distributions: Self::distributions(config, ranks),
            per_rank: ranks,
        }
    }

    /// Sites of all ranks, merged by where they are: routine, function,
    /// file and line when debug information names them (one line inlined
    /// in several places has several return addresses), else routine,
    /// object and offset (the same executable puts a call at the same
    /// offset on every rank).
    fn callsites(ranks: &[RankProfile], app_total: f64, mpi_total: f64) -> Vec<CallSite> {
        let mut merged: BTreeMap<SiteKey, SiteRanks> = BTreeMap::new();
        for r in ranks {
            for site in &r.callsites {
                let key = match (&site.file, site.line) {
                    (Some(file), Some(line)) => (
                        &site.routine,
                        site.function.as_deref(),
                        file.as_str(),
                        line as u64,
                    ),
                    _ => (&site.routine, None, site.object.as_str(), site.offset),
                };
                merged
                    .entry(key)
                    .or_insert_with(|| (site, BTreeMap::new()))
                    .1
                    .entry(r.rank)
                    .or_default()
                    .merge(&site.stats);
            }
        }
        merged
            .into_values()
            .map(|(site, per_rank)| {
                let mut stats = Stats::default();
                for s in per_rank.values() {
                    stats.merge(s);
                }
                let times: Vec<f64> = per_rank.values().map(|s| s.total_s).collect();
                CallSite {
                    id: 0,
                    routine: site.routine.clone(),
                    function: site.function.clone(),
                    file: site.file.clone(),
                    line: site.line,
                    object: site.object.clone(),
                    offset: site.offset,
                    stats,
                    app_percent: percent(stats.total_s, app_total),
                    mpi_percent: percent(stats.total_s, mpi_total),
                    cov: cov(&times),
                    ranks: per_rank.into_iter().collect(),
                }
            })
            .collect()
    }

    fn distributions(config: &Config, ranks: &[RankProfile]) -> Vec<Distribution> {
        let mut out = Vec::new();
        let mut sum = |name: String, bins: Bins, unit, pick: &dyn Fn(&RankProfile) -> Vec<(usize, u64)>| {
            let mut counts = BTreeMap::new();
            for r in ranks {
                merge_sparse(&mut counts, &pick(r));
            }
            out.push(Distribution {
                name,
                bins,
                unit,
                counts: counts.into_iter().collect(),
            });
        };
        sum("Comp Granularity".into(), config.comp, "s", &|r| {
            r.comp_hist.clone()
        });
        sum("Comm Overhead".into(), config.comm, "s", &|r| r.comm_hist.clone());
        for (i, routine) in config.distributions.iter().enumerate() {
            let pick_latency = |r: &RankProfile| {
                r.distributions
                    .get(i)
                    .map(|d| d.latency.clone())
                    .unwrap_or_default()
            };
            let pick_size =
                |r: &RankProfile| r.distributions.get(i).map(|d| d.size.clone()).unwrap_or_default();
            sum(format!("{routine} latency"), config.latency, "s", &pick_latency);
            sum(
                format!("{routine} message size"),
                config.size,
                "bytes",
                &pick_size,
            );
        }
        out
    }

    fn text(&self) -> String {
        let mut t = String::new();
        self.header(&mut t);
        self.mpi_time_section(&mut t);
        self.accuracy_section(&mut t);
        self.aggregate_time(&mut t);
        self.aggregate(
            &mut t,
            "Aggregate Sent Message Size (top twenty, descending, bytes)",
            "Sent%",
            false,
            |r| !crate::bytes::receives(r) && !crate::bytes::one_sided(r),
        );
        self.aggregate(
            &mut t,
            "Aggregate RMA Origin Size (top twenty, descending, bytes)",
            "RMA%",
            true,
            crate::bytes::one_sided,
        );
        self.callsite_list(&mut t);
        self.callsite_time(&mut t);
        self.primitive_tables(&mut t);
        self.bytes_section(&mut t);
        self.histograms(&mut t);
        section(&mut t, "End of Report");
        t
    }

    fn header(&self, t: &mut String) {
        let _ = writeln!(
            t,
            "@ pnmpi profiler report (mpiP sections, BCS-MPI MMDS primitive table)"
        );
        let _ = writeln!(t, "@ Command          : {}", self.command);
        let _ = writeln!(t, "@ Version          : {}", self.version);
        let _ = writeln!(t, "@ MPI              : {}", self.mpi);
        let _ = writeln!(t, "@ Ranks            : {}", self.ranks);
        let clock = self.per_rank.first();
        if let Some(r) = clock {
            let _ = writeln!(
                t,
                "@ Clock            : TSC, {} GHz on rank 0, calibrated against CLOCK_MONOTONIC_RAW over MPI_Init ({} ms)",
                Fixed(r.ticks_per_s / 1e9, 6),
                Fixed(r.calibration_s * 1e3, 1)
            );
        }
        let _ = writeln!(
            t,
            "@ Call sites       : {}",
            if self.config.callsites {
                format!(
                    "{} (calls not placed: {})",
                    self.callsites.len(),
                    self.callsites_dropped
                )
            } else {
                "off".to_string()
            }
        );
        let _ = writeln!(
            t,
            "@ Profile          : MPI_Init's entry to MPI_Finalize's entry, on every thread that calls MPI"
        );
        for r in self.per_rank {
            let _ = writeln!(
                t,
                "@ Rank {:>4}        : {} ({} thread(s))",
                r.rank, r.host, r.threads
            );
        }
    }

    fn mpi_time_section(&self, t: &mut String) {
        section(t, "MPI Time (seconds)");
        let _ = writeln!(
            t,
            "{:<4} {:>12} {:>12} {:>8}",
            "Task", "AppTime", "MPITime", "MPI%"
        );
        let (mut app, mut mpi) = (0.0, 0.0);
        for m in &self.mpi_time {
            Row::new(t)
                .right(m.rank, 4)
                .right(Fixed(m.app_s, 6), 12)
                .right(Fixed(m.mpi_s, 6), 12)
                .right(Fixed(m.mpi_percent, 2), 8)
                .end();
            app += m.app_s;
            mpi += m.mpi_s;
        }
        let _ = writeln!(
            t,
            "{:>4} {:>12} {:>12} {:>8}",
            "*",
            Fixed(app, 6),
            Fixed(mpi, 6),
            Fixed(percent(mpi, app), 2)
        );
    }

    fn accuracy_section(&self, t: &mut String) {
        section(t, "Accuracy: computation + communication vs. wall time (seconds)");
        let _ = writeln!(
            t,
            "{:<4} {:>14} {:>14} {:>14} {:>14} {:>10}  Within {ACCURACY_PERCENT}%",
            "Task", "Wall", "Comp", "Comm", "Comp+Comm", "Error(%)"
        );
        for a in &self.accuracy {
            Row::new(t)
                .right(a.rank, 4)
                .right(Fixed(a.wall_s, 9), 14)
                .right(Fixed(a.comp_s, 9), 14)
                .right(Fixed(a.comm_s, 9), 14)
                .right(Fixed(a.comp_s + a.comm_s, 9), 14)
                .right(Fixed(a.error_percent, 6), 10)
                .then(if a.within { "  yes" } else { "  NO" })
                .end();
        }
        let failed = self.accuracy.iter().filter(|a| !a.within).count();
        let _ = writeln!(
            t,
            "@ Accuracy check: {} of {} ranks within {ACCURACY_PERCENT}% (wall: CLOCK_MONOTONIC_RAW; comp, comm: sums of TSC intervals)",
            self.accuracy.len() - failed,
            self.accuracy.len()
        );
    }

    fn aggregate_time(&self, t: &mut String) {
        section(t, "Aggregate Time (top twenty, descending, milliseconds)");
        let _ = writeln!(
            t,
            "{:<20} {:>5} {:>12} {:>8} {:>8} {:>10} {:>8}",
            "Call", "Site", "Time", "App%", "MPI%", "Count", "COV"
        );
        let mut sites: Vec<&CallSite> = self.callsites.iter().collect();
        sites.sort_by(|a, b| b.stats.total_s.total_cmp(&a.stats.total_s).then(a.id.cmp(&b.id)));
        for s in sites.iter().take(TOP) {
            Row::new(t)
                .left(short(&s.routine), 20)
                .right(s.id, 5)
                .right(Fixed(s.stats.total_s * 1e3, 4), 12)
                .right(Fixed(s.app_percent, 2), 8)
                .right(Fixed(s.mpi_percent, 2), 8)
                .right(s.stats.count, 10)
                .right(Fixed(s.cov, 2), 8)
                .end();
        }
    }

    /// A section `title` of the call sites whose routines `wanted` takes,
    /// by bytes (their share of the section's total under `share`); none
    /// without such sites if `optional` (mpiP leaves its RMA section out
    /// of runs without one-sided calls).
    fn aggregate(
        &self,
        t: &mut String,
        title: &str,
        share: &str,
        optional: bool,
        wanted: impl Fn(&str) -> bool,
    ) {
        let mut sites: Vec<&CallSite> = self
            .callsites
            .iter()
            .filter(|s| s.stats.bytes > 0 && wanted(&s.routine))
            .collect();
        if sites.is_empty() && optional {
            return;
        }
        section(t, title);
        let _ = writeln!(
            t,
            "{:<20} {:>5} {:>10} {:>14} {:>12} {:>8}",
            "Call", "Site", "Count", "Total", "Avrg", share
        );
        let total: u64 = sites.iter().map(|s| s.stats.bytes).sum();
        sites.sort_by(|a, b| b.stats.bytes.cmp(&a.stats.bytes).then(a.id.cmp(&b.id)));
        for s in sites.iter().take(TOP) {
            Row::new(t)
                .left(short(&s.routine), 20)
                .right(s.id, 5)
                .right(s.stats.count, 10)
                .right(s.stats.bytes, 14)
                .right(Fixed(s.stats.bytes as f64 / s.stats.count.max(1) as f64, 1), 12)
                .right(Fixed(percent(s.stats.bytes as f64, total as f64), 2), 8)
                .end();
        }
    }

    fn callsite_list(&self, t: &mut String) {
        section(t, &format!("Callsites: {}", self.callsites.len()));
        let _ = writeln!(
            t,
            "{:>4} {:>3} {:<40} {:>6} {:<28} MPI_Call",
            "ID", "Lev", "File/Address", "Line", "Parent_Funct"
        );
        for s in &self.callsites {
            let place = match &s.file {
                Some(file) => file.clone(),
                None => format!("{}+{:#x}", s.object, s.offset),
            };
            let line = s.line.map_or("-".to_string(), |l| l.to_string());
            Row::new(t)
                .right(s.id, 4)
                .right(0, 3)
                .left(place, 40)
                .right(line, 6)
                .left(s.function.as_deref().unwrap_or("?"), 28)
                .right(short(&s.routine), 0)
                .end();
        }
    }

    fn callsite_time(&self, t: &mut String) {
        let rows: usize = self.callsites.iter().map(|s| s.ranks.len() + 1).sum();
        section(
            t,
            &format!("Callsite Time statistics (all, milliseconds): {rows}"),
        );
        let _ = writeln!(
            t,
            "{:<20} {:>5} {:>4} {:>10} {:>12} {:>12} {:>12} {:>8} {:>8}",
            "Name", "Site", "Rank", "Count", "Max", "Mean", "Min", "App%", "MPI%"
        );
        let wall: BTreeMap<i32, (f64, f64)> = self
            .per_rank
            .iter()
            .map(|r| (r.rank, (r.wall_s, r.comm_s)))
            .collect();
        let row = |t: &mut String, s: &CallSite, rank: String, stats: &Stats, app: f64, mpi: f64| {
            Row::new(t)
                .left(short(&s.routine), 20)
                .right(s.id, 5)
                .right(rank, 4)
                .right(stats.count, 10)
                .right(Fixed(stats.max_s * 1e3, 4), 12)
                .right(Fixed(stats.mean_s() * 1e3, 4), 12)
                .right(Fixed(stats.min_s * 1e3, 4), 12)
                .right(Fixed(percent(stats.total_s, app), 2), 8)
                .right(Fixed(percent(stats.total_s, mpi), 2), 8)
                .end();
        };
        let mut sites: Vec<&CallSite> = self.callsites.iter().collect();
        sites.sort_by(|a, b| (short(&a.routine), a.id).cmp(&(short(&b.routine), b.id)));
        for s in sites {
            for (rank, stats) in &s.ranks {
                let (app, mpi) = wall.get(rank).copied().unwrap_or_default();
                row(t, s, rank.to_string(), stats, app, mpi);
            }
            let (app, mpi) = wall
                .values()
                .fold((0.0, 0.0), |(a, m), (wa, wm)| (a + wa, m + wm));
            row(t, s, "*".into(), &s.stats, app, mpi);
        }
    }

    fn primitive_tables(&self, t: &mut String) {
        section(t, "Primitive statistics (BCS-MPI MMDS Table 2 layout; all ranks)");
        primitive_table(t, &self.primitives, &self.comp_granularity, &self.comm_overhead);
        for r in self.per_rank {
            section(t, &format!("Primitive statistics: rank {}", r.rank));
            primitive_table(t, &by_time(&r.routines), &r.comp, &r.comm);
        }
        for r in self.per_rank.iter().filter(|r| r.per_thread.len() > 1) {
            for th in &r.per_thread {
                section(
                    t,
                    &format!(
                        "Per-thread primitive statistics: rank {} thread {}",
                        r.rank, th.thread
                    ),
                );
                primitive_table(t, &by_time(&th.routines), &th.comp, &th.comm);
            }
        }
    }

    fn bytes_section(&self, t: &mut String) {
        section(t, "Bytes moved per routine (count x type size; all ranks)");
        let _ = writeln!(
            t,
            "{:<28} {:>10} {:>16} {:>14}  Side",
            "Primitive", "Count", "Bytes", "Avrg"
        );
        for p in self.primitives.iter().filter(|p| p.stats.bytes > 0) {
            Row::new(t)
                .left(&p.name, 28)
                .right(p.stats.count, 10)
                .right(p.stats.bytes, 16)
                .right(Fixed(p.stats.bytes as f64 / p.stats.count.max(1) as f64, 1), 14)
                .then(if crate::bytes::receives(&p.name) {
                    "  received"
                } else {
                    "  sent"
                })
                .end();
        }
    }

    fn histograms(&self, t: &mut String) {
        section(t, "Distributions (all ranks)");
        for d in &self.distributions {
            let points: u64 = d.counts.iter().map(|&(_, n)| n).sum();
            let (scale, unit) = unit_of(d);
            let _ = writeln!(
                t,
                "{} ({} points; bins of {} {unit} up to {} {unit})",
                d.name,
                points,
                svg::trim(&Fixed(d.bins.resolution * scale, 6).to_string()),
                svg::trim(&Fixed(d.bins.range * scale, 6).to_string()),
            );
            let max = d.counts.iter().map(|&(_, n)| n).max().unwrap_or(0);
            // `  [{low:>12}, {high:>12}) {unit:<5} {n:>10} |{bar}`, pushed.
            for &(bin, n) in &d.counts {
                t.push_str("  [");
                push_right(t, Fixed(bin as f64 * d.bins.resolution * scale, 3), 12);
                t.push_str(", ");
                if bin >= d.bins.bins {
                    push_right(t, "inf", 12);
                } else {
                    push_right(t, Fixed((bin + 1) as f64 * d.bins.resolution * scale, 3), 12);
                }
                t.push_str(") ");
                push_left(t, unit, 5);
                t.push(' ');
                push_right(t, n, 10);
                t.push_str(" |");
                let mut bar = ((n as f64 / max as f64) * 50.0).ceil() as usize;
                while bar > 0 {
                    let k = bar.min(BAR.len());
                    t.push_str(&BAR[..k]);
                    bar -= k;
                }
                t.push('\n');
            }
            let _ = writeln!(t);
        }
    }

    fn svg(&self) -> String {
        let panels: Vec<Panel> = self
            .distributions
            .iter()
            .map(|d| {
                let (scale, unit) = unit_of(d);
                Panel {
                    title: d.name.clone(),
                    counts: &d.counts,
                    bins: d.bins.bins,
                    width: d.bins.resolution * scale,
                    unit,
                }
            })
            .collect();
        svg::render(&panels)
    }
}

/// The display unit of a distribution: times in the unit of their resolution.
fn unit_of(d: &Distribution) -> (f64, &'static str) {
    if d.unit == "bytes" {
        return (1.0, "bytes");
    }
    match d.bins.resolution {
        r if r >= 1.0 => (1.0, "s"),
        r if r >= 1e-3 => (1e3, "ms"),
        r if r >= 1e-6 => (1e6, "us"),
        _ => (1e9, "ns"),
    }
}

/// A section's title between rules, 75 columns wide, pushed as it is
/// (no `format!`: the report has a dozen).
fn section(t: &mut String, title: &str) {
    const RULE: &str = "---------------------------------------------------------------------------";
    t.push_str(RULE);
    t.push_str("\n@--- ");
    t.push_str(title);
    t.push(' ');
    let head = "@--- ".len() + title.len() + 1;
    t.push_str(&RULE[..RULE.len().saturating_sub(head)]);
    t.push('\n');
    t.push_str(RULE);
    t.push('\n');
}

/// The rows of a primitive table, the longest total time first.
fn by_time(routines: &[Routine]) -> Vec<Primitive> {
    let mut rows: Vec<Primitive> = routines
        .iter()
        .map(|p| Primitive {
            name: p.name.clone(),
            stats: p.stats,
        })
        .collect();
    rows.sort_by(|a, b| {
        b.stats
            .total_s
            .total_cmp(&a.stats.total_s)
            .then(a.name.cmp(&b.name))
    });
    rows
}

fn primitive_table(t: &mut String, rows: &[Primitive], comp: &Stats, comm: &Stats) {
    let _ = writeln!(
        t,
        "{:<28} {:>12} {:>12} {:>14} {:>10} {:>12}",
        "Primitive", "Min(ms)", "Max(ms)", "Total(ms)", "Count", "Average(ms)"
    );
    let line = |t: &mut String, name: &str, s: &Stats| {
        Row::new(t)
            .left(name, 28)
            .right(Fixed(s.min_s * 1e3, 3), 12)
            .right(Fixed(s.max_s * 1e3, 3), 12)
            .right(Fixed(s.total_s * 1e3, 3), 14)
            .right(s.count, 10)
            .right(Fixed(s.mean_s() * 1e3, 3), 12)
            .end();
    };
    for p in rows {
        line(t, &p.name, &p.stats);
    }
    line(t, "Comp Granularity", comp);
    line(t, "Comm Overhead", comm);
}

/// The command line of this process (rank 0's).
fn command() -> String {
    std::fs::read("/proc/self/cmdline")
        .map(|raw| {
            raw.split(|&b| b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}
