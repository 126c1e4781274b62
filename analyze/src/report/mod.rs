//! The analysis's report: [`Report`] holds every figure; [`text`] prints
//! it, serde writes it as JSON, and [`svg`] draws the critical path on a
//! timeline beside the rank-by-pattern wait matrix.

pub mod svg;
pub mod text;

use crate::path::{Activity, Segment};
use crate::run::Run;
use crate::summary::{secs, PathSummary, WaitSummary};
use crate::whatif::Prediction;
use serde::Serialize;

/// One stretch of the critical path, for the timeline.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Stretch {
    /// World rank.
    pub rank: u32,
    /// Start, s from the window's start.
    pub start_s: f64,
    /// End.
    pub end_s: f64,
    /// Compute (else MPI).
    pub compute: bool,
}

/// The replays behind the what-ifs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Replays {
    /// The machine's name.
    pub machine: String,
    /// The model.
    pub model: String,
    /// The replay of the run as recorded, s.
    pub baseline_s: f64,
    /// The changes asked for.
    pub what_if: Vec<Prediction>,
    /// The best changes found.
    pub opportunities: Vec<Prediction>,
}

/// Everything `pnmpi trace analyze` found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// The trace's path.
    pub trace: String,
    /// Ranks.
    pub ranks: u32,
    /// Calls.
    pub calls: u64,
    /// End of the first `MPI_Init` to the start of the last `MPI_Finalize`, s.
    pub runtime_s: f64,
    /// The wait states.
    pub waits: WaitSummary,
    /// The critical path.
    pub path: PathSummary,
    /// The what-if replays, when asked for.
    pub replays: Option<Replays>,
    /// The reader's warnings.
    pub warnings: Vec<String>,
    /// The path, stretch by stretch (merged per rank and activity), for the SVG.
    #[serde(skip)]
    pub stretches: Vec<Stretch>,
}

impl Report {
    /// The report of `run`'s analysis.
    pub fn new(
        trace: &str,
        run: &Run,
        waits: WaitSummary,
        path_summary: PathSummary,
        path: &[Segment],
    ) -> Report {
        let (origin, _) = run.window();
        let mut stretches: Vec<Stretch> = Vec::new();
        for s in path {
            let rank = run.rank(s.actor);
            let compute = matches!(s.what, Activity::Compute { .. });
            let (start, end) = (secs(s.start - origin), secs(s.end - origin));
            match stretches.last_mut() {
                Some(l) if l.rank == rank && l.compute == compute => l.end_s = end,
                _ => stretches.push(Stretch {
                    rank,
                    start_s: start,
                    end_s: end,
                    compute,
                }),
            }
        }
        Report {
            trace: trace.to_owned(),
            ranks: run.world_size,
            calls: run.op_count(),
            runtime_s: secs(run.runtime()),
            waits,
            path: path_summary,
            replays: None,
            warnings: run.warnings(),
            stretches,
        }
    }

    /// The report as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}
