//! A replay's results as users read them (PSINS's statistics module):
//! the predicted runtime; per rank computation, communication and wait;
//! per routine time and wait; histograms of message sizes and achieved
//! bandwidths; and, with `--compare`, the traced run's own figures beside
//! the prediction with the error in %, as PSINS's tables 1 and 2. As
//! text, as JSON, and as a Perfetto timeline ([`timeline`]).

pub mod links;
pub mod receives;
pub mod sites;
mod text;
pub mod timeline;

use crate::engine::stats::Log2Histogram;
use crate::engine::Outcome;
use crate::input::{Actor, Measured};
use crate::units::Ns;
use serde::Serialize;

/// The width of a text column of `cells`, at least `least` (its
/// header's).
pub(crate) fn column_width<'a>(cells: impl Iterator<Item = &'a str>, least: usize) -> usize {
    cells.map(str::len).max().unwrap_or(least).max(least)
}

/// Seconds from ns.
fn s(ns: Ns) -> f64 {
    ns / 1e9
}

/// (predicted - measured) / measured, in %.
fn error_pct(predicted: f64, measured: f64) -> Option<f64> {
    (measured > 0.0).then(|| (predicted - measured) / measured * 100.0)
}

/// What the traced figures beside a prediction measure.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Comparison {
    /// The machine file describes the traced machine (`[machine]
    /// traced_on`): the percentages are the simulator's error.
    Error,
    /// It describes another machine: the percentages are the difference
    /// between the two machines, not an error.
    Difference,
}

impl Comparison {
    /// The word a report prints.
    pub fn word(self) -> &'static str {
        match self {
            Comparison::Error => "error",
            Comparison::Difference => "difference",
        }
    }
}

/// One rank's (thread's) line.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RankReport {
    /// World rank.
    pub rank: u32,
    /// Thread index.
    pub thread: u32,
    /// Node it was placed on.
    pub node: u32,
    /// Predicted computation, s.
    pub compute_s: f64,
    /// Predicted communication (time in MPI not waiting), s.
    pub comm_s: f64,
    /// Predicted wait for partners, s.
    pub wait_s: f64,
    /// Predicted end (start of `MPI_Finalize`), s.
    pub end_s: f64,
    /// The trace's own figures, with `--compare`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured: Option<MeasuredRank>,
}

/// A rank's traced figures and the prediction's errors.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct MeasuredRank {
    /// Traced CPU time, s.
    pub compute_s: f64,
    /// Traced time in MPI, s.
    pub mpi_s: f64,
    /// Traced end of `MPI_Init` to start of `MPI_Finalize`, s.
    pub span_s: f64,
    /// Error of the predicted end against the traced span, %.
    pub error_pct: Option<f64>,
}

/// One routine's line.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RoutineReport {
    /// MPI routine.
    pub name: String,
    /// Calls.
    pub count: u64,
    /// Predicted time in it, all ranks, s.
    pub time_s: f64,
    /// Of which waiting, s.
    pub wait_s: f64,
    /// Traced time in it, with `--compare`, s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured_s: Option<f64>,
    /// Error of the prediction, %.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_pct: Option<f64>,
}

/// One histogram bucket: values from `from` (inclusive) to twice that.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Bucket {
    /// Lower bound (bytes, or bytes/s).
    pub from: f64,
    /// Messages in it.
    pub count: u64,
}

/// The whole report; `--json` writes it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Report {
    /// The trace replayed.
    pub trace: String,
    /// The machine's name.
    pub machine: String,
    /// The model.
    pub model: String,
    /// Predicted end of `MPI_Init` to start of the last `MPI_Finalize`, s.
    pub runtime_s: f64,
    /// The traced run's, with `--compare`, s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured_runtime_s: Option<f64>,
    /// Prediction against the traced run, %: an error or a difference,
    /// as `comparison` says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_pct: Option<f64>,
    /// What `error_pct` and the per-rank and per-routine percentages
    /// measure, with `--compare`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comparison: Option<Comparison>,
    /// Per rank.
    pub ranks: Vec<RankReport>,
    /// Per routine, by decreasing predicted time.
    pub routines: Vec<RoutineReport>,
    /// Message sizes, bytes.
    pub message_sizes: Vec<Bucket>,
    /// Achieved bandwidths, bytes/s.
    pub bandwidths: Vec<Bucket>,
    /// Point-to-point messages replayed (collective expansions included).
    pub messages: u64,
    /// Time messages waited for network resources, s.
    pub resource_wait_s: f64,
    /// Ops replayed.
    pub events: u64,
    /// The most unmatched messages at once.
    pub peak_in_flight: u64,
    /// The replay's own wall time, s.
    pub sim_wall_s: f64,
    /// Its speed.
    pub events_per_s: f64,
    /// Peak resident memory of the replay's process (of the largest
    /// process in a parallel replay), bytes; 0 when not measured.
    pub peak_memory_bytes: u64,
    /// Processes that replayed it (1: serial).
    pub processes: u32,
    /// A parallel replay's protocol, as process 0 saw it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol: Option<crate::engine::parallel::ProtocolCost>,
    /// What the input or the replay could not do exactly.
    pub warnings: Vec<String>,
    /// Every message's completion at its receiver, with `--receives`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receives: Option<Vec<receives::Received>>,
    /// The shared links' load and what sharing cost, with `--links`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub links: Option<links::LinksReport>,
}

fn buckets(h: &Log2Histogram) -> Vec<Bucket> {
    h.counts
        .iter()
        .enumerate()
        .filter(|(_, &c)| c > 0)
        .map(|(i, &count)| Bucket {
            from: Log2Histogram::lower(i),
            count,
        })
        .collect()
}

/// What a report is made from besides the outcome.
pub struct Context<'a> {
    /// Trace name.
    pub trace: &'a str,
    /// Machine name.
    pub machine: &'a str,
    /// Model name.
    pub model: &'a str,
    /// Actors of the replay.
    pub actors: &'a [Actor],
    /// Routine names.
    pub routines: &'a [String],
    /// The trace's own figures, for `--compare`.
    pub measured: Option<&'a Measured>,
    /// Whether the machine file describes the traced machine.
    pub traced_machine: bool,
    /// The replay's wall time, s.
    pub wall_s: f64,
    /// Warnings.
    pub warnings: Vec<String>,
}

impl Report {
    /// Builds the report of `out`.
    pub fn new(out: &Outcome, cx: Context<'_>) -> Report {
        let st = &out.stats;
        let m = cx.measured;
        let ranks = st
            .actors
            .iter()
            .enumerate()
            .map(|(i, a)| RankReport {
                rank: a.rank,
                thread: a.thread,
                node: a.node,
                compute_s: s(a.compute),
                comm_s: s(a.comm),
                wait_s: s(a.wait),
                end_s: s(a.end),
                measured: m.map(|m| MeasuredRank {
                    compute_s: s(m.compute[i]),
                    mpi_s: s(m.mpi[i]),
                    span_s: s(m.span[i]),
                    error_pct: error_pct(a.end, m.span[i]),
                }),
            })
            .collect();
        let mut routines: Vec<RoutineReport> = st
            .routines
            .iter()
            .enumerate()
            .filter(|(_, r)| r.count > 0)
            .map(|(i, r)| {
                let measured = m.and_then(|m| m.routine_time.get(i)).copied();
                RoutineReport {
                    name: cx.routines.get(i).cloned().unwrap_or_default(),
                    count: r.count,
                    time_s: s(r.time),
                    wait_s: s(r.wait),
                    measured_s: measured.map(s),
                    error_pct: measured.and_then(|mt| error_pct(r.time, mt)),
                }
            })
            .collect();
        // Ties by name: the routine tables of a folder and of its merged
        // trace list the same routines in different orders.
        routines.sort_by(|a, b| b.time_s.total_cmp(&a.time_s).then_with(|| a.name.cmp(&b.name)));
        let measured_runtime = m.map(|m| m.span.iter().copied().fold(0.0, f64::max));
        Report {
            trace: cx.trace.to_owned(),
            machine: cx.machine.to_owned(),
            model: cx.model.to_owned(),
            runtime_s: s(out.runtime),
            measured_runtime_s: measured_runtime.map(s),
            error_pct: measured_runtime.and_then(|mr| error_pct(out.runtime, mr)),
            comparison: m.map(|_| {
                if cx.traced_machine {
                    Comparison::Error
                } else {
                    Comparison::Difference
                }
            }),
            ranks,
            routines,
            message_sizes: buckets(&st.sizes),
            bandwidths: buckets(&st.bandwidths),
            messages: st.messages,
            resource_wait_s: s(st.resource_wait),
            events: st.events,
            peak_in_flight: st.peak_in_flight as u64,
            sim_wall_s: cx.wall_s,
            events_per_s: if cx.wall_s > 0.0 {
                st.events as f64 / cx.wall_s
            } else {
                0.0
            },
            peak_memory_bytes: 0,
            processes: 1,
            protocol: out.protocol,
            warnings: cx.warnings,
            receives: None,
            links: None,
        }
    }
}
