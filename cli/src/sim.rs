//! `pnmpi sim`: what a traced run would do on another machine (PSINS's
//! simulator): `replay` a trace on a machine description under a model.

use crate::output::write_atomic;
use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use pnmpi_jitter::inject::ReplayNoise;
use pnmpi_sim::engine::parallel::Exchange;
use pnmpi_sim::engine::Observer;
use pnmpi_sim::engine::{replay, Options};
use pnmpi_sim::machine::Machine;
use pnmpi_sim::report::receives::{Observers, Receives};
use pnmpi_sim::report::sites::{slowdown as site_slowdown, SiteTimes};
use pnmpi_sim::report::timeline::Timeline;
use pnmpi_sim::report::{Context as ReportContext, Report};
use pnmpi_sim::{input, model, SimError};
use std::path::PathBuf;
use std::process::ExitCode;

/// Exit code of a trace that deadlocks on any machine.
pub const EXIT_DEADLOCK: u8 = 3;

/// Predict a traced run on another machine.
#[derive(Args)]
pub struct SimArgs {
    #[command(subcommand)]
    command: SimCommand,
}

#[derive(Subcommand)]
enum SimCommand {
    /// Replay a trace on a machine description and print the prediction.
    ///
    /// Under `mpirun -np K` (K > 1) the replay runs in parallel: each
    /// process replays a block of ranks and process 0 reports, with the
    /// serial replay's results bit for bit (docs/sim.md).
    ///
    /// Exit codes: 0 replayed; 1 bad trace, machine file or output;
    /// 2 bad command line; 3 the trace deadlocks. In parallel, an error
    /// that one process meets ends the whole job with its code.
    Replay(ReplayArgs),
    /// Replay one trace under several machines and models: one table, one chart.
    ///
    /// `--vary KEY=V1,V2,...` makes the machines from one file by setting
    /// a key, e.g. `--vary network.buses=1,2,4,8,0` or
    /// `--vary model.bcs.time_slice=50us,100us,200us`.
    Compare(CompareArgs),
    /// Measure this machine and write a machine file (run under mpirun:
    /// `mpirun -np N pnmpi sim calibrate -o machine.toml`).
    ///
    /// Point-to-point latency and bandwidth over sizes (within and across
    /// nodes when the ranks span nodes), the eager threshold, LogGP's
    /// parameters, and each common collective over sizes and task counts,
    /// fitted for the pmac model. About a minute by default; progress on
    /// stderr.
    Calibrate(crate::calibrate::CalibrateArgs),
    /// Write a synthetic trace of a communication motif (as SST's Ember):
    /// `pnmpi sim synth halo3d --ranks 4096 --allreduce-every 10 -o h.pnt`.
    Synth(crate::synth::SynthArgs),
    /// List the communication models.
    Models,
}

#[derive(Args)]
struct CompareArgs {
    /// A tracer output folder, a merged `.pnt`, or a SimGrid index file.
    trace: PathBuf,
    /// A target machine; repeat for several.
    #[arg(long, short, value_name = "FILE", required = true)]
    machine: Vec<PathBuf>,
    /// Models, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "simple")]
    models: Vec<String>,
    /// Sweep one key of the (single) machine file: KEY=V1,V2,...
    #[arg(long, value_name = "KEY=VALUES")]
    vary: Option<String>,
    /// Write the table as CSV.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Write the table as JSON.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write the chart (runtime per machine and model, or against the varied value).
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Leave the traced run's runtime out of the chart (when the targets
    /// are other machines, it is no reference).
    #[arg(long)]
    no_traced: bool,
    /// For SimGrid traces: flops per ns of the traced machine.
    #[arg(long, default_value_t = 1.0, value_name = "F")]
    flops_per_ns: f64,
    /// Name each run's busiest link and the time flows lost to sharing
    /// (models whose messages share links, as cm02 on a [network.topology]).
    #[arg(long)]
    links: bool,
}

#[derive(Args)]
struct ReplayArgs {
    /// A tracer output folder, a merged `.pnt`, an OTF2 archive, a SimGrid
    /// time-independent trace's index file, or a GOAL schedule
    /// (LogGOPSim's input: it runs under `--model loggops`).
    trace: PathBuf,
    /// The target machine (see sim/machine.example.toml).
    #[arg(long, short, value_name = "FILE")]
    machine: PathBuf,
    /// The communication model (`pnmpi sim models` lists them); for
    /// traces the machine's `[machine] model` (`cm02` for a SimGrid
    /// platform.xml), else `simple`; `loggops` for GOAL schedules.
    #[arg(long)]
    model: Option<String>,
    /// Also write the results as JSON.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Also write the predicted run as a Perfetto/Chrome trace.
    #[arg(long, value_name = "FILE")]
    timeline: Option<PathBuf>,
    /// List every message's completion at its receiver in the JSON
    /// (`receives`: sender, receiver, bytes, sent_s, received_s).
    #[arg(long, requires = "json")]
    receives: bool,
    /// Set the traced run's own times beside the prediction, with the
    /// error in %, per rank and per routine.
    #[arg(long)]
    compare: bool,
    /// For SimGrid traces: flops per ns of the traced machine (our export
    /// writes 1).
    #[arg(long, default_value_t = 1.0, value_name = "F")]
    flops_per_ns: f64,
    /// Stretch CPU bursts and message overheads by OS noise from these
    /// traces (`pnmpi jitter collect`, netgauge, LogGOPSim), comma-separated
    /// or repeated; actor i walks trace i mod n.
    #[arg(long, value_name = "TRACE", value_delimiter = ',')]
    noise: Vec<PathBuf>,
    /// Where each actor starts in the noise: unsync, sync or cosched.
    #[arg(long, default_value = "unsync", requires = "noise")]
    noise_mode: String,
    /// Co-scheduler windows for --noise-mode cosched: HIGH,LOW.
    #[arg(long, value_name = "HIGH,LOW", requires = "noise")]
    noise_window: Option<String>,
    /// Noise trace format, instead of telling it from the content.
    #[arg(long, requires = "noise")]
    noise_format: Option<String>,
    /// Seed of the noise placement.
    #[arg(long, default_value_t = 1)]
    noise_seed: u64,
    /// Report the shared links (a model whose messages share links, as
    /// cm02 on a [network.topology] or a SimGrid platform): per link the
    /// bytes, busy time, time lost to sharing and utilisation, the N
    /// busiest by name (10 if N is not given) over the network and in
    /// each level, and the slowdown against the same replay on private
    /// links, which runs after the first: per rank and per call site.
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "10")]
    links: Option<usize>,
    /// Draw the link load by level (mean and busiest utilisation, busy time) as an SVG bar chart.
    #[arg(long, value_name = "FILE", requires = "links")]
    links_svg: Option<PathBuf>,
}

/// Runs a `pnmpi sim` subcommand.
pub fn run(args: SimArgs) -> ExitCode {
    let r = match args.command {
        SimCommand::Replay(a) => replay_cmd(&a),
        SimCommand::Compare(a) => compare_cmd(&a),
        SimCommand::Calibrate(a) => crate::calibrate::run(&a),
        SimCommand::Synth(a) => crate::synth::run(&a),
        SimCommand::Models => {
            for (name, what, _) in model::MODELS {
                println!("{name:<10} {what}");
            }
            Ok(())
        }
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pnmpi sim: error: {e:#}");
            ExitCode::from(exit_code(&e))
        }
    }
}

/// The exit code of a failed command: a deadlock has its own.
fn exit_code(e: &anyhow::Error) -> u8 {
    match e.downcast_ref::<SimError>() {
        Some(SimError::Deadlock(_)) => EXIT_DEADLOCK,
        _ => 1,
    }
}

impl ReplayArgs {
    /// The model asked for, else the one `machine` is meant for
    /// (`[machine] model`: `cm02` on a SimGrid platform), else `simple`.
    fn model<'a>(&'a self, machine: &'a Machine) -> &'a str {
        self.model
            .as_deref()
            .or(machine.model.as_deref())
            .unwrap_or("simple")
    }
}

fn replay_cmd(a: &ReplayArgs) -> Result<()> {
    if crate::goal::is_goal_file(&a.trace) {
        return crate::goal::replay(
            &a.trace,
            &a.machine,
            a.model.as_deref().unwrap_or("loggops"),
            a.json.as_deref(),
        );
    }
    if pnmpi_sim_mpi::launcher_size() > 1 {
        return parallel_replay_cmd(a);
    }
    serial_replay(a)
}

/// The replay in this one process: every rank, one engine.
fn serial_replay(a: &ReplayArgs) -> Result<()> {
    let machine = Machine::load(&a.machine)?;
    let mut model = model::build(a.model(&machine), &machine)?;
    if a.links.is_some() && !model.count_link_loads() {
        anyhow::bail!(
            "--links: the {} model shares no link on {}: give a model whose messages share links \
             (cm02) and a machine with a [network.topology] or a SimGrid platform",
            model.name(),
            machine.name
        );
    }
    // The links report names the call sites that sharing slowed.
    let (mut src, site_names) = if a.links.is_some() {
        input::open_with_sites(&a.trace, a.flops_per_ns)?
    } else {
        (input::open(&a.trace, a.flops_per_ns)?, Vec::new())
    };
    let bar = ProgressBar::new_spinner();
    if let Ok(style) = ProgressStyle::with_template("{spinner} replaying: {msg} [{elapsed}]") {
        bar.set_style(style);
    }
    let started = std::time::Instant::now();
    let progress = |n: u64, t: f64| bar.set_message(progress_line(n, t, started));
    let mut timeline = match &a.timeline {
        Some(p) => {
            let nodes = machine.place(src.world_size())?;
            Some(
                Timeline::create(p, src.actors(), src.routines(), &nodes)
                    .with_context(|| format!("cannot write {}", p.display()))?,
            )
        }
        None => None,
    };
    let mut noise = a.noise(src.actors().len())?;
    let mut receives = a.receives.then(|| Receives::new(src.actors()));
    let mut sites = a.links.map(|_| SiteTimes::default());
    let mut observers = Observers(Vec::new());
    if let Some(t) = timeline.as_mut() {
        observers.0.push(t);
    }
    if let Some(r) = receives.as_mut() {
        observers.0.push(r);
    }
    if let Some(s) = sites.as_mut() {
        observers.0.push(s);
    }
    let observed = !observers.0.is_empty();
    let start = std::time::Instant::now();
    let out = replay(
        src.as_mut(),
        &machine,
        model.as_mut(),
        Options {
            noise: noise.as_mut().map(|n| n as &mut dyn pnmpi_sim::engine::Noise),
            observer: observed.then_some(&mut observers as &mut dyn Observer),
            progress: Some(&progress),
        },
    )?;
    let wall = start.elapsed().as_secs_f64();
    bar.finish_and_clear();
    drop(observers);
    let mut report = report_of(a, &out, &machine, model.as_ref(), src.as_ref(), wall);
    report.receives = receives.map(Receives::finish);
    if let (Some(top), Some(sites)) = (a.links, &sites) {
        let shared = Shared {
            out: &out,
            sites,
            site_names: &site_names,
            routines: src.routines(),
        };
        report.links = Some(links_report(a, &shared, &machine, model.as_ref(), top)?);
    }
    report.peak_memory_bytes = crate::output::peak_rss_bytes();
    print!("{report}");
    if let (Some(p), Some(l)) = (&a.links_svg, &report.links) {
        let title = format!("{}: link load by level on {}", a.trace.display(), machine.name);
        write_atomic(p, &l.svg(&title)?)?;
    }
    if let Some(t) = timeline {
        let (path, flows) = t.finish().context("cannot finish the timeline")?;
        println!(
            "timeline: {} ({flows} message arrows); open it in ui.perfetto.dev",
            path.display()
        );
    }
    if let Some(p) = &a.json {
        crate::output::write_json_atomic(p, &report)?;
    }
    Ok(())
}

impl ReplayArgs {
    /// The OS noise `--noise` asks for, for `actors` actors (a new one
    /// per replay: it is consumed as the replay runs).
    fn noise(&self, actors: usize) -> Result<Option<ReplayNoise>> {
        if self.noise.is_empty() {
            return Ok(None);
        }
        let sources = crate::jitter::load_traces(&self.noise, self.noise_format.as_deref())?;
        let mode = crate::jitter::parse_mode(&self.noise_mode, self.noise_window.as_deref())?;
        Ok(Some(ReplayNoise::new(sources, actors, mode, self.noise_seed)))
    }
}

/// The replay on the shared links, as `--links` compares it.
struct Shared<'a> {
    out: &'a pnmpi_sim::engine::Outcome,
    /// Its time per call site.
    sites: &'a SiteTimes,
    /// The trace's site table, and its routines.
    site_names: &'a [String],
    routines: &'a [String],
}

/// `--links`: the links' load of the replay `shared` of `model` on
/// `machine`, the `top` busiest named, and the same replay on private
/// links beside it, per rank and per call site.
fn links_report(
    a: &ReplayArgs,
    shared: &Shared,
    machine: &Machine,
    model: &dyn model::Model,
    top: usize,
) -> Result<pnmpi_sim::report::links::LinksReport> {
    let Some(loads) = model.link_loads() else {
        anyhow::bail!("--links: the {} model counted no link", model.name());
    };
    let mut report = pnmpi_sim::report::links::LinksReport::new(&loads, shared.out.runtime, top);
    let private = machine.with_private_links();
    let mut alone = model::build(model.name(), &private)?;
    let (mut src, _) = input::open_with_sites(&a.trace, a.flops_per_ns)?;
    let mut noise = a.noise(src.actors().len())?;
    let mut sites = SiteTimes::default();
    let bar = ProgressBar::new_spinner();
    bar.set_message("replaying on private links");
    let on_private = replay(
        src.as_mut(),
        &private,
        alone.as_mut(),
        Options {
            noise: noise.as_mut().map(|n| n as &mut dyn pnmpi_sim::engine::Noise),
            observer: Some(&mut sites),
            ..Options::default()
        },
    )?;
    bar.finish_and_clear();
    let by_site = site_slowdown(shared.sites, &sites, shared.site_names, shared.routines, top);
    report.against_private(shared.out, &on_private, by_site);
    Ok(report)
}

/// The report of a replay of `a`'s trace (with the traced figures under
/// `--compare`).
fn report_of(
    a: &ReplayArgs,
    out: &pnmpi_sim::engine::Outcome,
    machine: &Machine,
    model: &dyn model::Model,
    src: &dyn input::OpSource,
    wall: f64,
) -> Report {
    let trace_name = a.trace.display().to_string();
    let measured = if a.compare { src.measured() } else { None };
    Report::new(
        out,
        ReportContext {
            trace: &trace_name,
            machine: &machine.name,
            model: model.name(),
            actors: src.actors(),
            routines: src.routines(),
            measured: measured.as_ref(),
            traced_machine: machine.traced_on.is_some(),
            wall_s: wall,
            warnings: src.warnings(),
        },
    )
}

/// A replay's progress: events, simulated time reached, speed.
fn progress_line(events: u64, simulated_ns: f64, started: std::time::Instant) -> String {
    let wall = started.elapsed().as_secs_f64().max(1e-9);
    format!(
        "{events} events, simulated {:.6} s, {:.2} M events/s",
        simulated_ns / 1e9,
        events as f64 / wall / 1e6
    )
}

/// `mpirun -np K pnmpi sim replay ...`: each process replays a block of
/// ranks (reading only their events); process 0 prints the report and
/// writes the JSON. What every process would refuse alike is refused
/// before MPI starts; an error met once the job runs (a damaged chunk of
/// one process's ranks, a deadlock found at process 0) ends the whole job
/// with its exit code, since the other processes would wait for it in
/// their next collective.
fn parallel_replay_cmd(a: &ReplayArgs) -> Result<()> {
    let machine = Machine::load(&a.machine)?;
    let mut model = model::build(a.model(&machine), &machine)?;
    if pnmpi_sim::engine::parallel_lookahead(model.as_ref()).is_err() {
        return one_engine_replay(a, model.name());
    }
    for (given, what) in [
        (a.timeline.is_some(), "--timeline"),
        (a.receives, "--receives"),
        (a.compare, "--compare"),
        (!a.noise.is_empty(), "--noise"),
        (a.links.is_some(), "--links"),
    ] {
        if given {
            anyhow::bail!("{what} is not available in a parallel replay yet: run `pnmpi sim replay` without mpirun for it");
        }
    }
    let mut src = input::open(&a.trace, a.flops_per_ns)?;
    let mut mpi = pnmpi_sim_mpi::Mpi::init()?;
    if let Err(e) = parallel_job(a, &mut mpi, &machine, model.as_mut(), src.as_mut()) {
        eprintln!(
            "pnmpi sim (process {} of {}): error: {e:#}",
            mpi.me(),
            mpi.procs()
        );
        mpi.abort(exit_code(&e));
    }
    Ok(())
}

/// `mpirun -np K pnmpi sim replay ...` under a model that cannot be cut
/// into time windows (its state spans ranks, as contention's and shared
/// links' do, or it bounds no message's time from below): process
/// 0 replays every rank, one engine that sees every message, as virtual
/// ranks run such a model; the others wait for it. The answer is the
/// serial replay's.
fn one_engine_replay(a: &ReplayArgs, model: &str) -> Result<()> {
    let mut mpi = pnmpi_sim_mpi::Mpi::init()?;
    if mpi.me() == 0 {
        let note = pnmpi_sim::engine::one_engine_note(model, mpi.procs(), "replays every rank");
        eprintln!("pnmpi sim: note: {note}");
        if let Err(e) = serial_replay(a) {
            eprintln!("pnmpi sim: error: {e:#}");
            mpi.abort(exit_code(&e));
        }
    }
    mpi.wait_quietly();
    Ok(())
}

/// One process's part of a parallel replay, once MPI runs.
fn parallel_job(
    a: &ReplayArgs,
    mpi: &mut pnmpi_sim_mpi::Mpi,
    machine: &Machine,
    model: &mut dyn model::Model,
    src: &mut dyn input::OpSource,
) -> Result<()> {
    let root = mpi.me() == 0;
    let bar = if root {
        ProgressBar::new_spinner()
    } else {
        ProgressBar::hidden()
    };
    if let Ok(style) = ProgressStyle::with_template("{spinner} replaying in parallel: {msg} [{elapsed}]") {
        bar.set_style(style);
    }
    let started = std::time::Instant::now();
    let progress = |n: u64, t: f64| bar.set_message(format!("process 0: {}", progress_line(n, t, started)));
    let start = std::time::Instant::now();
    let folder = a.trace.is_dir();
    let out = pnmpi_sim::engine::replay_parallel(src, machine, model, mpi, folder, Some(&progress))?;
    let wall = start.elapsed().as_secs_f64();
    bar.finish_and_clear();
    let peak = mpi.max(crate::output::peak_rss_bytes());
    let Some(out) = out else {
        return Ok(());
    };
    let mut report = report_of(a, &out, machine, model, src, wall);
    report.peak_memory_bytes = peak;
    report.processes = mpi.procs();
    print!("{report}");
    if let Some(p) = &a.json {
        crate::output::write_json_atomic(p, &report)?;
    }
    Ok(())
}

fn compare_cmd(a: &CompareArgs) -> Result<()> {
    use pnmpi_sim::compare::{compare, vary, Case};
    let machines = a
        .machine
        .iter()
        .map(|p| Machine::load(p))
        .collect::<Result<Vec<_>, _>>()?;
    let cases: Vec<Case> = match &a.vary {
        Some(spec) => {
            let (key, values) = spec
                .split_once('=')
                .context("--vary takes KEY=V1,V2,... (e.g. network.buses=1,2,4)")?;
            if machines.len() != 1 {
                anyhow::bail!("--vary changes one machine file; give exactly one --machine");
            }
            let values: Vec<String> = values.split(',').map(str::to_owned).collect();
            vary(&machines[0], key, &values)?
        }
        None => machines
            .into_iter()
            .map(|m| Case {
                label: m.name.clone(),
                x: None,
                machine: m,
            })
            .collect(),
    };
    let bar = ProgressBar::new_spinner();
    let c = compare(&a.trace, &cases, &a.models, a.flops_per_ns, a.links, &|what| {
        bar.set_message(what.to_owned())
    })?;
    bar.finish_and_clear();
    print!("{c}");
    if let Some(p) = &a.csv {
        write_atomic(p, c.csv())?;
    }
    if let Some(p) = &a.json {
        write_atomic(p, &serde_json::to_string_pretty(&c)?)?;
    }
    if let Some(p) = &a.svg {
        let title = format!("{}: predicted runtime", a.trace.display());
        write_atomic(p, &c.svg(&cases, &a.models, &title, !a.no_traced)?)?;
    }
    Ok(())
}
