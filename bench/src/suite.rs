//! `pnmpi-bench suite`: the paper's section 5 measured side by side in one
//! run, on one machine state: per-call overhead (figure 4's model), 0-byte ping-pong
//! latency (figure 4), `MPI_Init` time (figure 5), delay layers (figure 6),
//! bandwidth (table 1) and memory (section 5.6).
//!
//! Every part's setups are measured in every round, and the rounds
//! interleave all parts, so that a neighbour's build slowing the machine
//! for a minute hits every figure alike; each figure is a median over
//! rounds.

use crate::install::Install;
use crate::report::write_atomically;
use crate::run::{Bench, Launch, Program, Setup, Values, MEMORY_PHASE};
use crate::stats::{median, slope};
use anyhow::{bail, Context as _, Result};
use pnmpi_plot::{Chart, Kind, Series};
use std::path::PathBuf;

/// The options of `pnmpi-bench suite`.
#[derive(clap::Args, Debug)]
pub struct SuiteArgs {
    /// Parts to run.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "overhead,pingpong,init,delay,bandwidth,memory"
    )]
    only: Vec<Part>,
    /// Rounds; each runs every setup of every part once.
    #[arg(long, default_value_t = 7, value_parser = clap::value_parser!(u32).range(1..))]
    rounds: u32,
    /// MPI_Comm_rank calls per overhead run up to 10 layers; above, 10/N
    /// as many, so that deep chains take as long as 10 layers (at least 20).
    #[arg(long, default_value_t = 10_000_000, value_parser = clap::value_parser!(u64).range(20..))]
    calls: u64,
    /// Empty-layer counts of the MPI_Comm_rank overhead part.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "0,1,2,5,10,16,20,32,50,100,1000"
    )]
    layers: Vec<usize>,
    /// Empty-layer counts of the 0-byte ping-pong (figure 4).
    #[arg(long, value_delimiter = ',', default_value = "0,1,2,5,10,20,50,100")]
    pingpong_layers: Vec<usize>,
    /// Round trips per 0-byte ping-pong run, in 10 batches of which the
    /// fastest counts.
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u64).range(10..))]
    trips: u64,
    /// Module counts of the MPI_Init part (figure 5).
    #[arg(long, value_delimiter = ',', default_value = "0,1,2,5,10,20,50,100")]
    init_layers: Vec<usize>,
    /// Delay layers go from 0 to this many (figure 6).
    #[arg(long, default_value_t = 10)]
    delay_layers: usize,
    /// Round trips per delay run, each timed alone; the fastest counts.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u64).range(10..))]
    delay_trips: u64,
    /// Message size of the bandwidth part, in bytes.
    #[arg(long, default_value_t = 1 << 20, value_parser = clap::value_parser!(u32).range(1..=i32::MAX as i64))]
    bandwidth_bytes: u32,
    /// Round trips per bandwidth run, in batches of 10 of which the fastest
    /// counts.
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u64).range(10..))]
    bandwidth_trips: u64,
    /// Module counts of the memory part.
    #[arg(long, value_delimiter = ',', default_value = "0,1,10,100,1000")]
    memory_layers: Vec<usize>,
    /// How to start the single-rank runs (overhead, init, memory); the
    /// ping-pong runs always use mpirun.
    #[arg(long, value_enum, default_value_t = Launch::Mpirun)]
    launch: Launch,
    /// The module to layer [default: the compact empty module, built into
    /// this executable's target folder; `target/release/libempty.so` is the
    /// std-linked one].
    #[arg(long, value_name = "PATH")]
    module: Option<PathBuf>,
    /// Write every median and every derived figure as CSV to this file.
    #[arg(long, value_name = "PATH")]
    csv: Option<PathBuf>,
    /// Write the SVG plots into this folder.
    #[arg(long, value_name = "DIR")]
    plots: Option<PathBuf>,
    /// The MPI compiler wrapper; must be the MPI libpnmpi was built for.
    #[arg(long, env = "MPICC", default_value = "mpicc")]
    mpicc: String,
}

/// One benchmark of the suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Part {
    /// ns per MPI_Comm_rank call against N empty layers: α, β.
    Overhead,
    /// 0-byte ping-pong latency between 2 ranks against N empty layers.
    Pingpong,
    /// MPI_Init time against N modules.
    Init,
    /// Ping-pong latency against N layers that delay MPI_Send by 100 µs.
    Delay,
    /// Ping-pong bandwidth at large messages, native against 0 and 1 module.
    Bandwidth,
    /// Heap and resident memory after MPI_Init, and the link-stack table.
    Memory,
}

impl Part {
    fn name(self) -> &'static str {
        match self {
            Part::Overhead => "overhead",
            Part::Pingpong => "pingpong",
            Part::Init => "init",
            Part::Delay => "delay",
            Part::Bandwidth => "bandwidth",
            Part::Memory => "memory",
        }
    }

    /// The program this part runs, and on how many ranks.
    fn program(self) -> (Program, usize) {
        match self {
            Part::Overhead => (Program::CommRank, 1),
            Part::Pingpong | Part::Delay | Part::Bandwidth => (Program::PingPong, 2),
            Part::Init | Part::Memory => (Program::InitMem, 1),
        }
    }

    /// What this part adds to its runs' environment. The memory part turns
    /// off glibc's per-thread cache of freed chunks: `mallinfo2` counts
    /// cached chunks as in use, so the temporaries freed while libpnmpi
    /// builds the table would count as table (up to 7 chunks per size).
    fn env(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Part::Memory => &[("GLIBC_TUNABLES", "glibc.malloc.tcache_count=0")],
            _ => &[],
        }
    }

    /// The values this part keeps from its program's output; the first is
    /// required in every run.
    fn metrics(self) -> &'static [&'static str] {
        match self {
            Part::Overhead => &["ns_per_call"],
            Part::Pingpong | Part::Delay => &["latency_ns"],
            Part::Init => &["init_ns", "setup_ms"],
            Part::Bandwidth => &["bandwidth_mb_s"],
            Part::Memory => &[
                "heap_bytes",
                "rss_kib",
                "hwm_kib",
                "table_heap_bytes",
                "rss_after_table_kib",
                "wrapped_routines",
            ],
        }
    }
}

/// One run that every round makes.
#[derive(Debug, Clone)]
struct Task {
    part: Part,
    setup: Setup,
    args: Vec<String>,
}

/// The median of one metric of one setup of one part over the rounds.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub part: Part,
    pub setup: Setup,
    pub metric: &'static str,
    pub rounds: usize,
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

/// The rows of a run, looked up by part, setup and metric.
pub struct Results<'a>(&'a [Row]);

impl Results<'_> {
    /// The median of `metric` of `setup` in `part`.
    pub fn get(&self, part: Part, setup: Setup, metric: &str) -> Option<f64> {
        self.0
            .iter()
            .find(|r| r.part == part && r.setup == setup && r.metric == metric)
            .map(|r| r.median)
    }

    /// `(layers, median)` of the libpnmpi setups of `part` that layer one
    /// module file (or the delay module), by layer count.
    fn layered(&self, part: Part, metric: &str) -> Vec<(usize, f64)> {
        self.points(part, metric, |s| match s {
            Setup::Native | Setup::SendOnly | Setup::Distinct { .. } => None,
            s => s.layers(),
        })
    }

    /// `(layers, median)` of the setups of `part` with distinct module files.
    fn distinct(&self, part: Part, metric: &str) -> Vec<(usize, f64)> {
        self.points(part, metric, |s| match s {
            Setup::Distinct { layers } => Some(layers),
            _ => None,
        })
    }

    fn points(&self, part: Part, metric: &str, layers: impl Fn(Setup) -> Option<usize>) -> Vec<(usize, f64)> {
        let mut points: Vec<(usize, f64)> = self
            .0
            .iter()
            .filter(|r| r.part == part && r.metric == metric)
            .filter_map(|r| Some((layers(r.setup)?, r.median)))
            .collect();
        points.sort_by_key(|p| p.0);
        points
    }
}

/// A figure derived from the medians, with its bar if it has one.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub part: Part,
    pub name: &'static str,
    pub value: f64,
    pub unit: &'static str,
    /// The bar as text (`<= 1 ns`) and whether the value meets it.
    pub bar: Option<(String, bool)>,
}

impl Figure {
    fn info(part: Part, name: &'static str, value: f64, unit: &'static str) -> Figure {
        Figure {
            part,
            name,
            value,
            unit,
            bar: None,
        }
    }

    /// A figure that must be at most `limit`.
    fn at_most(part: Part, name: &'static str, value: f64, unit: &'static str, limit: f64) -> Figure {
        Figure {
            bar: Some((format!("<= {limit} {unit}"), value <= limit)),
            ..Figure::info(part, name, value, unit)
        }
    }
}

/// The link-stack table of `src/dispatch.rs` for N modules that each wrap
/// `wrapped` of libpnmpi's `routines` routines, in one stack:
///
/// - a `Box<Table>` (48 bytes: three boxed slices and the level count) and
///   its `[Stack; routines]` (12 bytes each: where a routine's hops and
///   levels start, and its depth);
/// - one array of hops: one 16-byte `Hop` (code address, level) per module
///   wrapping each wrapped routine;
/// - one array of levels: per wrapped routine, one `u32` per level, N +
///   stacks levels (the application and the modules; a named stack adds
///   its top);
/// - the cache key of the table (one `bool` per module).
///
/// The suite's modules are N copies of one module, so every wrapped
/// routine has N hops; each array is allocated at its final size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TableModel {
    pub routines: u64,
    pub wrapped: u64,
    pub stacks: u64,
}

impl TableModel {
    /// The sizes of the table's allocations with `n` modules (none without
    /// one).
    fn requests(&self, n: u64) -> [u64; 5] {
        if n == 0 {
            return [0; 5];
        }
        [
            48,
            12 * self.routines,
            n,
            16 * n * self.wrapped,
            4 * (n + self.stacks) * self.wrapped,
        ]
    }

    /// Bytes the table asks malloc for with `n` modules.
    pub fn payload(&self, n: u64) -> u64 {
        self.requests(n).iter().sum()
    }

    /// Bytes malloc hands out for them: what `mallinfo2` counts, so it is
    /// what the measurement is compared to.
    pub fn allocated(&self, n: u64) -> u64 {
        self.requests(n)
            .iter()
            .filter(|&&r| r > 0)
            .map(|&r| chunk(r))
            .sum()
    }
}

/// glibc's default threshold above which x86-64 malloc maps a request.
const MMAP_THRESHOLD: u64 = 128 * 1024;

/// The size of glibc's x86-64 malloc chunk for a request of `n` bytes: up
/// to a 16-byte chunk with an 8-byte header, 32 bytes at least, or whole
/// pages for a request it maps.
fn chunk(n: u64) -> u64 {
    let chunk = ((n + 8 + 15) & !15).max(32);
    if n >= MMAP_THRESHOLD {
        (chunk + 8).div_ceil(4096) * 4096
    } else {
        chunk
    }
}

/// The project's bars: α (libpnmpi with no module over native MPI), β
/// (each further layer) and the first layer, ns per call.
const ALPHA_BAR_NS: f64 = 1.0;
const BETA_BAR_NS: f64 = 4.0;
const FIRST_LAYER_BAR_NS: f64 = 8.0;
const DEEP_PER_LAYER_BAR_NS: f64 = 25.0;
const INIT_100_BAR_MS: f64 = 20.0;
const DELAY_US: f64 = 100.0;
const DELAY_TOLERANCE_PCT: f64 = 5.0;
const BANDWIDTH_TOLERANCE_PCT: f64 = 1.0;
/// The table model must match the measured table to this share.
const TABLE_MODEL_TOLERANCE_PCT: f64 = 1.0;

/// MPI_Comm_rank calls of an overhead run with `layers` layers: `calls`
/// up to 10 layers, then fewer, so that a run of 1000 layers (tens of µs
/// per call) does not take minutes.
fn calls_at(calls: u64, layers: usize) -> u64 {
    (calls * 10 / layers.max(10) as u64).max(20)
}

impl SuiteArgs {
    /// Every run of one round, part by part.
    fn tasks(&self) -> Vec<Task> {
        let native_and = |layers: &[usize]| -> Vec<Setup> {
            let mut layers = layers.to_vec();
            layers.sort_unstable();
            layers.dedup();
            std::iter::once(Setup::Native)
                .chain(layers.into_iter().map(|layers| Setup::Pnmpi { layers }))
                .collect()
        };
        let mut tasks = Vec::new();
        let mut add = |part: Part, setup: Setup, args: Vec<String>| {
            if self.only.contains(&part) {
                tasks.push(Task { part, setup, args });
            }
        };
        for setup in native_and(&self.layers) {
            let calls = calls_at(self.calls, setup.layers().unwrap_or(0));
            add(Part::Overhead, setup, vec![calls.to_string()]);
        }
        for setup in native_and(&self.pingpong_layers) {
            add(Part::Pingpong, setup, vec!["0".into(), self.trips.to_string()]);
        }
        for setup in native_and(&self.init_layers) {
            add(Part::Init, setup, vec![]);
        }
        for &layers in self.init_layers.iter().filter(|&&n| n > 0) {
            add(Part::Init, Setup::Distinct { layers }, vec![]);
        }
        for layers in 0..=self.delay_layers {
            // One round trip per batch: at 10 layers a trip takes 2 ms,
            // and on a shared machine a longer batch is rarely undisturbed.
            let trips = self.delay_trips.to_string();
            add(
                Part::Delay,
                Setup::Delay { layers },
                vec!["0".into(), trips.clone(), trips],
            );
        }
        for setup in native_and(&[0, 1]) {
            let batches = (self.bandwidth_trips / 10).to_string();
            let args = vec![
                self.bandwidth_bytes.to_string(),
                self.bandwidth_trips.to_string(),
                batches,
            ];
            add(Part::Bandwidth, setup, args);
        }
        for setup in native_and(&self.memory_layers) {
            let setup = match setup {
                Setup::Pnmpi { layers } => Setup::Phased { layers },
                native => native,
            };
            add(Part::Memory, setup, vec![MEMORY_PHASE.to_string()]);
        }
        tasks
    }
}

/// Runs the suite and reports it.
pub fn run(args: SuiteArgs) -> Result<()> {
    let install = Install::next_to_exe()?;
    install.check_compiler(&args.mpicc)?;
    let module = args.module.clone().unwrap_or_else(|| install.libempty.clone());
    if !module.is_file() {
        bail!("{}: no such module", module.display());
    }
    let tasks = args.tasks();
    if tasks.is_empty() {
        bail!("no part to run");
    }
    let load_before = load_average();
    eprintln!(
        "pnmpi-bench: building with {} against {}; load average {load_before}",
        args.mpicc,
        install.dir.display()
    );
    let programs: Vec<Program> = tasks.iter().map(|t| t.part.program().0).collect();
    let setups: Vec<Setup> = tasks.iter().map(|t| t.setup).collect();
    let bench = Bench::prepare(
        &install,
        &args.mpicc,
        args.launch,
        args.calls,
        &module,
        &programs,
        &setups,
    )?;
    let mut samples: Vec<Vec<Values>> = vec![Vec::new(); tasks.len()];
    for round in 0..args.rounds as usize {
        for k in 0..tasks.len() {
            // Rotated per round, as in the default mode.
            let i = (round + k) % tasks.len();
            let task = &tasks[i];
            let (program, ranks) = task.part.program();
            let run_args: Vec<&str> = task.args.iter().map(String::as_str).collect();
            let values = bench.run(program, task.setup, ranks, &run_args, task.part.env())?;
            let metric = task.part.metrics()[0];
            let value = values.get(metric).with_context(|| {
                format!(
                    "{} {} printed no `{metric}`",
                    task.part.name(),
                    task.setup.label()
                )
            })?;
            eprintln!(
                "pnmpi-bench: round {}/{} {:<9} {:<20} {metric} {value:.2}",
                round + 1,
                args.rounds,
                task.part.name(),
                task.setup.label(),
            );
            samples[i].push(values);
        }
    }
    let rows = summarize(&tasks, &samples);
    let results = Results(&rows);
    let model = TableModel {
        routines: install.routines as u64,
        wrapped: wrapped_routines(&rows).unwrap_or(install.routines as u64),
        stacks: 1,
    };
    let figures = figures(&results, &model);
    let load_after = load_average();
    println!("machine: {}", crate::machine());
    println!("load average: {load_before} at start, {load_after} at end");
    println!(
        "MPI: {}; median of {} interleaved rounds; module {}",
        install.flavor.name(),
        args.rounds,
        module.display()
    );
    print!("{}", tables(&results, &model));
    print!("{}", figure_table(&figures));
    let ctx = (install.flavor.name(), args.launch.name());
    if let Some(path) = &args.csv {
        write_atomically(path, &csv(ctx, &rows, &figures))?;
        eprintln!("pnmpi-bench: wrote {}", path.display());
    }
    if let Some(dir) = &args.plots {
        for (name, chart) in charts(&results, &model, install.flavor.name()) {
            let path = dir.join(name);
            write_atomically(&path, &chart.svg()?)?;
            eprintln!("pnmpi-bench: wrote {}", path.display());
        }
    }
    Ok(())
}

/// The 1, 5 and 15-minute load averages, as `/proc/loadavg` has them.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "unknown".into())
}

/// One row per task and metric present in its runs.
fn summarize(tasks: &[Task], samples: &[Vec<Values>]) -> Vec<Row> {
    let mut rows = Vec::new();
    for (task, runs) in tasks.iter().zip(samples) {
        for &metric in task.part.metrics() {
            let values: Vec<f64> = runs.iter().filter_map(|v| v.get(metric)).collect();
            let Some(median) = median(&values) else {
                continue;
            };
            rows.push(Row {
                part: task.part,
                setup: task.setup,
                metric,
                rounds: values.len(),
                median,
                min: values.iter().copied().fold(f64::INFINITY, f64::min),
                max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            });
        }
    }
    rows
}

/// The routines each module wraps, from libpnmpi's report of a memory run.
fn wrapped_routines(rows: &[Row]) -> Option<u64> {
    rows.iter()
        .find(|r| r.metric == "wrapped_routines")
        .map(|r| r.median as u64)
}

/// The derived figures (overheads per call and per layer), from the
/// medians.
pub fn figures(r: &Results, model: &TableModel) -> Vec<Figure> {
    let mut out = Vec::new();
    let o = Part::Overhead;
    let at = |part: Part, layers: usize, metric: &str| r.get(part, Setup::Pnmpi { layers }, metric);
    let native = |part: Part, metric: &str| r.get(part, Setup::Native, metric);
    let ns = "ns_per_call";
    if let (Some(native), Some(zero)) = (native(o, ns), at(o, 0, ns)) {
        out.push(Figure::at_most(
            o,
            "alpha: 0 modules - native",
            zero - native,
            "ns",
            ALPHA_BAR_NS,
        ));
    }
    if let (Some(zero), Some(one)) = (at(o, 0, ns), at(o, 1, ns)) {
        out.push(Figure::at_most(
            o,
            "first layer: 1 - 0 modules",
            one - zero,
            "ns",
            FIRST_LAYER_BAR_NS,
        ));
    }
    let layered = r.layered(o, ns);
    let fit = |lo: usize, hi: usize| {
        let points: Vec<(f64, f64)> = layered
            .iter()
            .filter(|p| (lo..=hi).contains(&p.0))
            .map(|&(n, y)| (n as f64, y))
            .collect();
        slope(&points)
    };
    if let Some(beta) = fit(1, 10) {
        out.push(Figure::at_most(
            o,
            "beta: slope over 1..10 layers",
            beta,
            "ns",
            BETA_BAR_NS,
        ));
    }
    if let (Some(ten), Some(hundred)) = (at(o, 10, ns), at(o, 100, ns)) {
        out.push(Figure::info(
            o,
            "slope from 10 to 100 layers",
            (hundred - ten) / 90.0,
            "ns",
        ));
    }
    if let (Some(zero), Some(deep)) = (at(o, 0, ns), at(o, 1000, ns)) {
        let per_layer = (deep - zero) / 1000.0;
        out.push(Figure::at_most(
            o,
            "per layer at 1000: (1000 - 0 modules) / 1000",
            per_layer,
            "ns",
            DEEP_PER_LAYER_BAR_NS,
        ));
    }
    if let (Some(hundred), Some(deep)) = (at(o, 100, ns), at(o, 1000, ns)) {
        out.push(Figure::info(
            o,
            "slope from 100 to 1000 layers",
            (deep - hundred) / 900.0,
            "ns",
        ));
    }

    let p = Part::Pingpong;
    let lat = "latency_ns";
    if let (Some(native), Some(zero)) = (native(p, lat), at(p, 0, lat)) {
        out.push(Figure::info(p, "0 modules - native", zero - native, "ns"));
    }
    if let (Some(zero), Some(one)) = (at(p, 0, lat), at(p, 1, lat)) {
        out.push(Figure::info(p, "first layer: 1 - 0 modules", one - zero, "ns"));
    }
    let points: Vec<(f64, f64)> = r
        .layered(p, lat)
        .into_iter()
        .filter(|p| (1..=10).contains(&p.0))
        .map(|(n, y)| (n as f64, y))
        .collect();
    if let Some(beta) = slope(&points) {
        out.push(Figure::info(
            p,
            "slope over 1..10 layers (a send and a receive each)",
            beta,
            "ns",
        ));
    }

    let i = Part::Init;
    let ms = |ns: f64| ns / 1e6;
    if let (Some(native), Some(hundred)) = (native(i, "init_ns"), at(i, 100, "init_ns")) {
        let added = ms(hundred - native);
        out.push(Figure::at_most(
            i,
            "100 modules - native",
            added,
            "ms",
            INIT_100_BAR_MS,
        ));
    }
    if let (Some(zero), Some(hundred)) = (at(i, 0, "init_ns"), at(i, 100, "init_ns")) {
        out.push(Figure::info(
            i,
            "100 modules - 0 modules",
            ms(hundred - zero),
            "ms",
        ));
    }
    let distinct = r.get(i, Setup::Distinct { layers: 100 }, "init_ns");
    if let (Some(native), Some(hundred)) = (native(i, "init_ns"), distinct) {
        let added = ms(hundred - native);
        out.push(Figure::at_most(
            i,
            "100 distinct module files - native",
            added,
            "ms",
            INIT_100_BAR_MS,
        ));
    }
    // libpnmpi's own share, timed inside the process: free of the MPI's
    // start-up noise, which is several ms from run to run.
    for (setup, what) in [
        (Setup::Pnmpi { layers: 100 }, "libpnmpi's own setup, 100 modules"),
        (
            Setup::Distinct { layers: 100 },
            "libpnmpi's own setup, 100 distinct files",
        ),
    ] {
        if let Some(setup_ms) = r.get(i, setup, "setup_ms") {
            out.push(Figure::info(i, what, setup_ms, "ms"));
        }
    }
    let points: Vec<(f64, f64)> = r
        .layered(i, "init_ns")
        .into_iter()
        .filter(|p| p.0 >= 1)
        .map(|(n, y)| (n as f64, ms(y)))
        .collect();
    if let Some(per_module) = slope(&points) {
        out.push(Figure::info(i, "slope per module", per_module, "ms"));
    }

    let d = Part::Delay;
    let delays = r.layered(d, lat);
    let steps: Vec<f64> = delays
        .windows(2)
        .filter(|w| w[1].0 == w[0].0 + 1)
        .map(|w| (w[1].1 - w[0].1) / 1e3)
        .collect();
    let points: Vec<(f64, f64)> = delays.iter().map(|&(n, y)| (n as f64, y / 1e3)).collect();
    if let Some(per_layer) = slope(&points) {
        out.push(Figure::info(d, "slope per delay layer", per_layer, "us"));
    }
    if let Some(worst) = steps
        .iter()
        .map(|s| (s - DELAY_US) / DELAY_US * 100.0)
        .max_by(|a, b| a.abs().total_cmp(&b.abs()))
    {
        let figure = Figure::info(d, "largest deviation of one layer's step from 100 us", worst, "%");
        out.push(Figure {
            bar: Some((
                format!("within +-{DELAY_TOLERANCE_PCT} %"),
                worst.abs() <= DELAY_TOLERANCE_PCT,
            )),
            ..figure
        });
    }

    let b = Part::Bandwidth;
    let bw = "bandwidth_mb_s";
    if let Some(native) = native(b, bw) {
        for (layers, name) in [(0, "0 modules vs native"), (1, "1 module vs native")] {
            if let Some(v) = at(b, layers, bw) {
                let pct = (v - native) / native * 100.0;
                let figure = Figure::info(b, name, pct, "%");
                out.push(Figure {
                    bar: (layers == 1).then(|| {
                        (
                            format!("within +-{BANDWIDTH_TOLERANCE_PCT} %"),
                            pct.abs() <= BANDWIDTH_TOLERANCE_PCT,
                        )
                    }),
                    ..figure
                });
            }
        }
    }

    let m = Part::Memory;
    let tables = r.layered(m, "table_heap_bytes");
    if let Some(&(n, measured)) = tables.last().filter(|p| p.0 >= 1) {
        let predicted = model.allocated(n as u64) as f64;
        let err = (measured - predicted) / predicted * 100.0;
        let figure = Figure::info(m, "table: measured vs model at the most modules", err, "%");
        out.push(Figure {
            bar: Some((
                format!("within +-{TABLE_MODEL_TOLERANCE_PCT} %"),
                err.abs() <= TABLE_MODEL_TOLERANCE_PCT,
            )),
            ..figure
        });
    }
    let per_module = |metric: &str, scale: f64| {
        let points: Vec<(f64, f64)> = r
            .layered(m, metric)
            .into_iter()
            .filter(|p| p.0 >= 1)
            .map(|(n, y)| (n as f64, y * scale))
            .collect();
        slope(&points)
    };
    if let Some(heap) = per_module("heap_bytes", 1.0) {
        out.push(Figure::info(
            m,
            "heap after MPI_Init per module (loader)",
            heap,
            "B",
        ));
    }
    if let Some(table) = per_module("table_heap_bytes", 1.0) {
        out.push(Figure::info(m, "table per module", table, "B"));
    }
    if let Some(rss) = per_module("rss_after_table_kib", 1.0) {
        out.push(Figure::info(m, "resident per module", rss, "KiB"));
    }
    out
}

/// One table per part: each setup's median, min and max, and what the part
/// compares it to.
fn tables(r: &Results, model: &TableModel) -> String {
    let mut out = String::new();
    let mut part_table = |part: Part, metric: &str, unit: &str, scale: f64, title: &str| {
        let rows: Vec<&Row> =
            r.0.iter()
                .filter(|x| x.part == part && x.metric == metric)
                .collect();
        if rows.is_empty() {
            return;
        }
        let base = r
            .get(part, Setup::Native, metric)
            .or_else(|| r.get(part, Setup::Delay { layers: 0 }, metric));
        out.push_str(&format!(
            "\n{title} ({unit}, median of {} rounds)\n",
            rows[0].rounds
        ));
        out.push_str(&format!(
            "{:<22} {:>12} {:>12} {:>12} {:>12} {:>12}\n",
            "setup", "median", "min", "max", "vs base", "per layer"
        ));
        for row in rows {
            let delta = base.map(|b| (row.median - b) / scale);
            let per_layer = match (row.setup.layers(), r.get(part, zero_of(row.setup), metric)) {
                (Some(n), Some(zero)) if n > 0 => format!("{:12.3}", (row.median - zero) / scale / n as f64),
                _ => format!("{:>12}", "-"),
            };
            out.push_str(&format!(
                "{:<22} {:>12.3} {:>12.3} {:>12.3} {:>12} {per_layer}\n",
                row.setup.label(),
                row.median / scale,
                row.min / scale,
                row.max / scale,
                delta.map_or_else(|| "-".into(), |d| format!("{d:+.3}")),
            ));
        }
    };
    part_table(
        Part::Overhead,
        "ns_per_call",
        "ns per MPI_Comm_rank",
        1.0,
        "overhead",
    );
    part_table(
        Part::Pingpong,
        "latency_ns",
        "us one way, 0 bytes",
        1e3,
        "ping-pong latency",
    );
    part_table(Part::Init, "init_ns", "ms", 1e6, "MPI_Init time");
    part_table(
        Part::Delay,
        "latency_ns",
        "us one way, 0 bytes",
        1e3,
        "delay layers",
    );
    part_table(Part::Bandwidth, "bandwidth_mb_s", "MB/s", 1.0, "bandwidth");
    part_table(
        Part::Memory,
        "heap_bytes",
        "KiB in use after MPI_Init",
        1024.0,
        "heap",
    );
    part_table(
        Part::Memory,
        "rss_after_table_kib",
        "KiB resident, table built",
        1.0,
        "resident",
    );
    let tables = r.layered(Part::Memory, "table_heap_bytes");
    if !tables.is_empty() {
        out.push_str(&format!(
            "\nlink-stack table (bytes; model: {} routines, {} wrapped, {} stack)\n",
            model.routines, model.wrapped, model.stacks
        ));
        out.push_str(&format!(
            "{:>8} {:>12} {:>14} {:>14} {:>9}\n",
            "modules", "measured", "model payload", "model malloc", "error %"
        ));
        for (n, measured) in tables {
            let allocated = model.allocated(n as u64) as f64;
            let err = if allocated > 0.0 {
                format!("{:+.3}", (measured - allocated) / allocated * 100.0)
            } else {
                "-".into()
            };
            out.push_str(&format!(
                "{n:>8} {measured:>12.0} {:>14} {allocated:>14.0} {err:>9}\n",
                model.payload(n as u64)
            ));
        }
    }
    out
}

/// The setup with no layer of the same kind as `setup`.
fn zero_of(setup: Setup) -> Setup {
    match setup {
        // Distinct files with 0 modules is 0 modules.
        Setup::Delay { .. } => Setup::Delay { layers: 0 },
        Setup::Phased { .. } => Setup::Phased { layers: 0 },
        _ => Setup::Pnmpi { layers: 0 },
    }
}

/// The derived figures against the bars.
fn figure_table(figures: &[Figure]) -> String {
    let mut out = String::from("\nfigures against the bars\n");
    for f in figures {
        let bar = match &f.bar {
            Some((text, true)) => format!("met ({text})"),
            Some((text, false)) => format!("NOT MET ({text})"),
            None => String::new(),
        };
        out.push_str(&format!(
            "{:<10} {:<52} {:>12.3} {:<4} {bar}\n",
            f.part.name(),
            f.name,
            f.value,
            f.unit
        ));
    }
    out
}

const CSV_HEADER: &str = "part,mpi,launch,setup,layers,metric,rounds,median,min,max,bar,met";

/// Every row, then every derived figure (setup `derived`, its value in
/// `median`, its bar and verdict in `bar` and `met`).
fn csv((mpi, launch): (&str, &str), rows: &[Row], figures: &[Figure]) -> String {
    let mut out = format!("{CSV_HEADER}\n");
    for r in rows {
        out.push_str(&format!(
            "{},{mpi},{launch},{},{},{},{},{},{},{},,\n",
            r.part.name(),
            r.setup.name(),
            r.setup.layers().map(|n| n.to_string()).unwrap_or_default(),
            r.metric,
            r.rounds,
            r.median,
            r.min,
            r.max
        ));
    }
    for f in figures {
        let (bar, met) = f
            .bar
            .as_ref()
            .map_or((String::new(), String::new()), |(text, met)| {
                (text.clone(), met.to_string())
            });
        out.push_str(&format!(
            "{},{mpi},{launch},derived,,\"{} ({})\",,{},,,\"{bar}\",{met}\n",
            f.part.name(),
            f.name,
            f.unit,
            f.value
        ));
    }
    out
}

/// The plots: the paper's figures 4, 5 and 6, the per-call overhead and
/// its per-layer cost against N, and memory against N.
fn charts(r: &Results, model: &TableModel, mpi: &str) -> Vec<(&'static str, Chart)> {
    let xy = |points: Vec<(usize, f64)>, scale: f64| -> Vec<(f64, f64)> {
        points.into_iter().map(|(n, y)| (n as f64, y / scale)).collect()
    };
    let measured = |name: &str, points: Vec<(f64, f64)>| Series {
        name: name.into(),
        points,
        kind: Kind::Measured,
    };
    let flat = |name: &str, y: Option<f64>, x0: f64, x1: f64| {
        y.map(|y| Series {
            name: name.into(),
            points: vec![(x0, y), (x1, y)],
            kind: Kind::Reference,
        })
    };
    let span = |points: &[(f64, f64)]| {
        (
            points.first().map_or(0.0, |p| p.0),
            points.last().map_or(1.0, |p| p.0),
        )
    };
    let mut charts = Vec::new();

    let pp = xy(r.layered(Part::Pingpong, "latency_ns"), 1e3);
    let (x0, x1) = span(&pp);
    let native = r
        .get(Part::Pingpong, Setup::Native, "latency_ns")
        .map(|v| v / 1e3);
    charts.push((
        "fig4-pingpong-latency.svg",
        Chart {
            title: format!("Fig. 4: 0-byte ping-pong latency vs empty layers ({mpi})"),
            x_label: "empty layers".into(),
            y_label: "one-way latency (µs)".into(),
            log_x: false,
            log_y: false,
            legend_lower_right: false,
            series: [Some(measured("libpnmpi", pp)), flat("native MPI", native, x0, x1)]
                .into_iter()
                .flatten()
                .collect(),
        },
    ));

    let init = xy(r.layered(Part::Init, "init_ns"), 1e6);
    let (x0, x1) = span(&init);
    let native = r.get(Part::Init, Setup::Native, "init_ns").map(|v| v / 1e6);
    let zero = init.iter().copied().filter(|p| p.0 == 0.0);
    let distinct: Vec<(f64, f64)> = zero.chain(xy(r.distinct(Part::Init, "init_ns"), 1e6)).collect();
    charts.push((
        "fig5-init-time.svg",
        Chart {
            title: format!("Fig. 5: MPI_Init time vs modules ({mpi})"),
            x_label: "modules".into(),
            y_label: "MPI_Init (ms)".into(),
            log_x: false,
            log_y: false,
            legend_lower_right: false,
            series: [
                Some(measured("libpnmpi, one file N times (private copies)", init)),
                Some(measured("libpnmpi, N distinct files", distinct)),
                flat("native MPI", native, x0, x1),
            ]
            .into_iter()
            .flatten()
            .collect(),
        },
    ));

    let delay = xy(r.layered(Part::Delay, "latency_ns"), 1e3);
    let ideal: Vec<(f64, f64)> = delay
        .first()
        .map(|&(_, base)| delay.iter().map(|&(n, _)| (n, base + DELAY_US * n)).collect())
        .unwrap_or_default();
    charts.push((
        "fig6-delay-layers.svg",
        Chart {
            title: format!("Fig. 6: latency vs 100 µs delay layers ({mpi})"),
            x_label: "delay layers".into(),
            y_label: "one-way latency (µs)".into(),
            log_x: false,
            log_y: false,
            legend_lower_right: false,
            series: vec![
                measured("libpnmpi", delay),
                Series {
                    name: "0 layers + 100 µs per layer".into(),
                    points: ideal,
                    kind: Kind::Reference,
                },
            ],
        },
    ));

    let calls = xy(r.layered(Part::Overhead, "ns_per_call"), 1.0);
    let deep: Vec<(f64, f64)> = calls.iter().copied().filter(|p| p.0 >= 1.0).collect();
    let (x0, x1) = span(&deep);
    let native = r.get(Part::Overhead, Setup::Native, "ns_per_call");
    let zero = r.get(Part::Overhead, Setup::Pnmpi { layers: 0 }, "ns_per_call");
    charts.push((
        "overhead-per-call.svg",
        Chart {
            title: format!("MPI_Comm_rank: ns per call vs empty layers ({mpi})"),
            x_label: "empty layers".into(),
            y_label: "ns per call".into(),
            log_x: true,
            log_y: true,
            legend_lower_right: false,
            series: [
                Some(measured("libpnmpi, N layers", deep.clone())),
                flat("libpnmpi, 0 modules", zero, x0, x1),
                flat("native MPI", native, x0, x1),
            ]
            .into_iter()
            .flatten()
            .collect(),
        },
    ));
    let per_layer: Vec<(f64, f64)> = zero
        .map(|zero| deep.iter().map(|&(n, y)| (n, (y - zero) / n)).collect())
        .unwrap_or_default();
    let (x0, x1) = span(&per_layer);
    charts.push((
        "overhead-per-layer.svg",
        Chart {
            title: format!("MPI_Comm_rank: ns per layer, (T(N) - T(0)) / N ({mpi})"),
            x_label: "empty layers N".into(),
            y_label: "ns per layer".into(),
            log_x: true,
            log_y: false,
            legend_lower_right: false,
            series: [
                Some(measured("libpnmpi", per_layer)),
                flat("bar for beta, 1..10 (4 ns)", Some(BETA_BAR_NS), x0, x1),
                flat("bar at N = 1000 (25 ns)", Some(DEEP_PER_LAYER_BAR_NS), x0, x1),
            ]
            .into_iter()
            .flatten()
            .collect(),
        },
    ));

    let native_heap = r.get(Part::Memory, Setup::Native, "heap_bytes");
    let heap_added: Vec<(f64, f64)> = native_heap
        .map(|base| {
            let tables = r.layered(Part::Memory, "table_heap_bytes");
            r.layered(Part::Memory, "heap_bytes")
                .into_iter()
                .map(|(n, heap)| {
                    let table = tables.iter().find(|t| t.0 == n).map_or(0.0, |t| t.1);
                    (n as f64, (heap + table - base) / 1024.0)
                })
                .collect()
        })
        .unwrap_or_default();
    let table = xy(r.layered(Part::Memory, "table_heap_bytes"), 1024.0);
    let modelled: Vec<(f64, f64)> = table
        .iter()
        .map(|&(n, _)| (n, model.allocated(n as u64) as f64 / 1024.0))
        .collect();
    let native_rss = r.get(Part::Memory, Setup::Native, "rss_kib");
    let rss_added: Vec<(f64, f64)> = native_rss
        .map(|base| {
            r.layered(Part::Memory, "rss_after_table_kib")
                .into_iter()
                .map(|(n, rss)| (n as f64, rss - base))
                .collect()
        })
        .unwrap_or_default();
    charts.push((
        "memory.svg",
        Chart {
            title: format!("Memory added by libpnmpi vs modules ({mpi})"),
            x_label: "modules".into(),
            y_label: "KiB over native MPI".into(),
            log_x: true,
            log_y: true,
            legend_lower_right: true,
            series: vec![
                measured("resident (VmRSS)", rss_added),
                measured("heap in use, all", heap_added),
                measured("heap: link-stack table", table),
                Series {
                    name: "table model".into(),
                    points: modelled,
                    kind: Kind::Reference,
                },
            ],
        },
    ));
    charts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(part: Part, setup: Setup, metric: &'static str, median: f64) -> Row {
        Row {
            part,
            setup,
            metric,
            rounds: 3,
            median,
            min: median,
            max: median,
        }
    }

    fn rows() -> Vec<Row> {
        let o = |layers, v| row(Part::Overhead, Setup::Pnmpi { layers }, "ns_per_call", v);
        let mut rows = vec![
            row(Part::Overhead, Setup::Native, "ns_per_call", 3.5),
            o(0, 4.0),
            o(1, 7.0),
            o(10, 43.0),
            o(100, 1843.0),
            o(1000, 20004.0),
            row(Part::Init, Setup::Native, "init_ns", 50e6),
            row(Part::Init, Setup::Pnmpi { layers: 0 }, "init_ns", 51e6),
            row(Part::Init, Setup::Pnmpi { layers: 100 }, "init_ns", 81e6),
            row(Part::Bandwidth, Setup::Native, "bandwidth_mb_s", 1000.0),
            row(
                Part::Bandwidth,
                Setup::Pnmpi { layers: 1 },
                "bandwidth_mb_s",
                995.0,
            ),
        ];
        for (layers, us) in [(0, 1.0), (1, 101.0), (2, 207.0)] {
            rows.push(row(Part::Delay, Setup::Delay { layers }, "latency_ns", us * 1e3));
        }
        rows
    }

    const MODEL: TableModel = TableModel {
        routines: 405,
        wrapped: 405,
        stacks: 1,
    };

    fn figure<'a>(figures: &'a [Figure], name: &str) -> &'a Figure {
        figures
            .iter()
            .find(|f| f.name.starts_with(name))
            .unwrap_or_else(|| panic!("no figure {name}"))
    }

    #[test]
    fn figures_follow_the_medians_and_judge_the_bars() {
        let rows = rows();
        let f = figures(&Results(&rows), &MODEL);
        let alpha = figure(&f, "alpha");
        assert!((alpha.value - 0.5).abs() < 1e-9);
        assert_eq!(alpha.bar, Some(("<= 1 ns".into(), true)));
        assert!((figure(&f, "first layer").value - 3.0).abs() < 1e-9);
        let beta = figure(&f, "beta");
        assert!((beta.value - 4.0).abs() < 1e-9);
        assert!(beta.bar.as_ref().unwrap().1);
        assert!((figure(&f, "slope from 10 to 100").value - 20.0).abs() < 1e-9);
        let deep = figure(&f, "per layer at 1000");
        assert!((deep.value - 20.0).abs() < 1e-9);
        assert!(deep.bar.as_ref().unwrap().1);
        let init = figure(&f, "100 modules - native");
        assert!((init.value - 31.0).abs() < 1e-9);
        assert!(!init.bar.as_ref().unwrap().1);
        assert!((figure(&f, "slope per delay layer").value - 103.0).abs() < 1e-9);
        // Steps of 100 and 106 us: the worst is +6 %, over the 5 % bar.
        let delay = figure(&f, "largest deviation");
        assert!((delay.value - 6.0).abs() < 1e-9);
        assert!(!delay.bar.as_ref().unwrap().1);
        let bw = figure(&f, "1 module vs native");
        assert!((bw.value + 0.5).abs() < 1e-9);
        assert!(bw.bar.as_ref().unwrap().1);
    }

    #[test]
    fn the_table_model_counts_levels_hops_and_malloc_chunks() {
        assert_eq!(MODEL.payload(0), 0);
        assert_eq!(MODEL.allocated(0), 0);
        // 48 + 12*405 + 1 + 16*405 + 4*2*405
        assert_eq!(MODEL.payload(1), 48 + 4860 + 1 + 6480 + 3240);
        // chunk(48) = 64, chunk(4860) = 4880, chunk(1) = 32,
        // chunk(6480) = 6496, chunk(3240) = 3248.
        assert_eq!(MODEL.allocated(1), 64 + 4880 + 32 + 6496 + 3248);
        assert_eq!((chunk(24), chunk(25), chunk(4004)), (32, 48, 4016));
        // Mapped: whole pages.
        assert_eq!(chunk(MMAP_THRESHOLD), 33 * 4096);
        let r = rows();
        let mut with_table = r.clone();
        with_table.push(row(
            Part::Memory,
            Setup::Phased { layers: 1000 },
            "table_heap_bytes",
            MODEL.allocated(1000) as f64 * 1.002,
        ));
        let f = figures(&Results(&with_table), &MODEL);
        let table = figure(&f, "table: measured vs model");
        assert!((table.value - 0.2).abs() < 1e-9);
        assert!(table.bar.as_ref().unwrap().1);
    }

    #[test]
    fn overhead_runs_of_deep_chains_make_fewer_calls() {
        assert_eq!(calls_at(10_000_000, 0), 10_000_000);
        assert_eq!(calls_at(10_000_000, 10), 10_000_000);
        assert_eq!(calls_at(10_000_000, 1000), 100_000);
        assert_eq!(calls_at(100, 1000), 20);
    }

    #[test]
    fn tasks_cover_each_selected_part_with_native_first() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            suite: SuiteArgs,
        }
        let args = Cli::parse_from([
            "x",
            "--only",
            "delay,memory",
            "--delay-layers",
            "2",
            "--memory-layers",
            "1,0",
        ])
        .suite;
        let tasks = args.tasks();
        let got: Vec<(Part, Setup)> = tasks.iter().map(|t| (t.part, t.setup)).collect();
        assert_eq!(
            got,
            vec![
                (Part::Delay, Setup::Delay { layers: 0 }),
                (Part::Delay, Setup::Delay { layers: 1 }),
                (Part::Delay, Setup::Delay { layers: 2 }),
                (Part::Memory, Setup::Native),
                (Part::Memory, Setup::Phased { layers: 0 }),
                (Part::Memory, Setup::Phased { layers: 1 }),
            ]
        );
        assert_eq!(tasks[0].args, ["0", "200", "200"]);
        assert_eq!(tasks[3].args, ["2"]);
    }

    #[test]
    fn csv_has_rows_then_derived_figures() {
        let rows = rows();
        let f = figures(&Results(&rows), &MODEL);
        let text = csv(("openmpi", "mpirun"), &rows, &f);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], CSV_HEADER);
        assert_eq!(
            lines[1],
            "overhead,openmpi,mpirun,native,,ns_per_call,3,3.5,3.5,3.5,,"
        );
        assert!(lines.iter().any(|l| l.starts_with(
            "overhead,openmpi,mpirun,derived,,\"alpha: 0 modules - native (ns)\",,0.5,,,\"<= 1 ns\",true"
        )));
        assert_eq!(lines.len(), 1 + rows.len() + f.len());
    }

    #[test]
    fn charts_mirror_the_papers_figures() {
        let rows = rows();
        let charts = charts(&Results(&rows), &MODEL, "openmpi");
        let names: Vec<&str> = charts.iter().map(|c| c.0).collect();
        assert_eq!(
            names,
            [
                "fig4-pingpong-latency.svg",
                "fig5-init-time.svg",
                "fig6-delay-layers.svg",
                "overhead-per-call.svg",
                "overhead-per-layer.svg",
                "memory.svg"
            ]
        );
        // Every chart renders, even those without data in this run.
        for (_, chart) in &charts {
            assert!(chart.svg().unwrap().contains("</svg>"));
        }
    }
}
