//! `pnmpi trace analyze`: wait states, the critical path and what-if
//! replays of a trace (the `pnmpi-analyze` crate), as text, JSON and SVG.

use crate::output::write_atomic;
use anyhow::{Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use pnmpi_analyze::report::{Replays, Report};
use pnmpi_analyze::whatif::{fit, Setup, Study};
use pnmpi_analyze::{load, path, spec, summary};
use pnmpi_sim::machine::Machine;
use std::path::PathBuf;

/// Find the wait states (Scalasca's patterns) and the critical path of a
/// traced run, and predict what changes would gain through the replay
/// engine.
#[derive(Args)]
pub struct AnalyzeArgs {
    /// A merged trace (.pnt), a trace folder or an OTF2 archive (traces.otf2).
    input: PathBuf,
    /// A change to predict, repeatable: `compute rank R xF`, `compute
    /// site FILE:LINE xF` (the compute before the calls from that site),
    /// `compute xF`, `latency xF`, `bandwidth xF`.
    #[arg(long = "what-if", value_name = "SPEC")]
    what_if: Vec<String>,
    /// Also predict the N changes with the largest gain: the compute of
    /// each rank and call site on the critical path faster, all compute
    /// faster, latency halved, bandwidth doubled.
    #[arg(long, value_name = "N")]
    opportunities: Option<usize>,
    /// The compute factor the opportunities try.
    #[arg(long, default_value_t = 0.8, value_name = "F")]
    opportunity_factor: f64,
    /// The machine the replays run on (`pnmpi sim calibrate` writes one
    /// of this machine); default: fitted to the trace's messages.
    #[arg(long, short, value_name = "FILE")]
    machine: Option<PathBuf>,
    /// The replay's model (`pnmpi sim models`).
    #[arg(long, default_value = "simple")]
    model: String,
    /// The longest waits listed with their causes.
    #[arg(long, default_value_t = 10, value_name = "N")]
    worst: usize,
    /// Also write the report as JSON.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Also write the critical path on a timeline and the wait-state matrix as SVG.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Keep each call that communicates nothing (a failed MPI_Test or
    /// MPI_Iprobe, MPI_Wtime...) in memory instead of folding it into the
    /// compute around it: the same figures, at the memory and time of
    /// every call (a check of the folding).
    #[arg(long)]
    no_fold: bool,
}

/// The wait states and critical path of `input` as tracks of the
/// Perfetto export (`pnmpi trace export --format chrome --wait-states`).
pub fn marks(input: &std::path::Path) -> Result<Vec<pnmpi_trace::chrome::Mark>> {
    let run = load::open(input, load::Options::default(), &|_| {})?;
    let segments = path::critical_path(&run);
    Ok(pnmpi_analyze::marks::marks(&run, &segments))
}

/// Runs `pnmpi trace analyze`.
pub fn run(a: &AnalyzeArgs) -> Result<()> {
    let bar = ProgressBar::new_spinner();
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} [{elapsed}]") {
        bar.set_style(style);
    }
    let machine = match &a.machine {
        Some(p) => Some(Machine::load(p)?),
        None => None,
    };
    let options = load::Options {
        eager: machine.as_ref().map_or(65536, |m| m.network.eager_threshold.0),
        fold: !a.no_fold,
    };
    bar.set_message("reading, matching, wait states");
    let run = load::open(&a.input, options, &|n| bar.inc(n))?;
    let changes = a
        .what_if
        .iter()
        .map(|s| spec::parse(s, run.world_size))
        .collect::<Result<Vec<_>, _>>()?;
    bar.set_message("critical path");
    let segments = path::critical_path(&run);
    let trace = a.input.display().to_string();
    let mut report = Report::new(
        &trace,
        &run,
        summary::waits(&run, &run.waits, a.worst),
        summary::path(&run, &segments),
        &segments,
    );
    if !changes.is_empty() || a.opportunities.is_some() {
        bar.set_message("replaying");
        let machine = machine.unwrap_or_else(|| fit(&run));
        let study = Study::new(
            &run,
            Setup {
                machine,
                model: a.model.clone(),
            },
        )?;
        let what_if = changes
            .iter()
            .map(|c| study.predict(c))
            .collect::<Result<Vec<_>, _>>()?;
        let opportunities = match a.opportunities {
            Some(n) => study.opportunities(&segments, n, a.opportunity_factor)?,
            None => Vec::new(),
        };
        let (machine, model) = study.setup();
        report.replays = Some(Replays {
            machine: machine.to_owned(),
            model: model.to_owned(),
            baseline_s: study.baseline_s(),
            what_if,
            opportunities,
        });
    }
    bar.finish_and_clear();
    print!("{report}");
    if let Some(p) = &a.json {
        write_atomic(p, report.to_json())?;
    }
    if let Some(p) = &a.svg {
        write_atomic(p, report.svg().context("the SVG")?)?;
    }
    Ok(())
}
