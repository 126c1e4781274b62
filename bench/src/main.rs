//! `pnmpi-bench`: measures what libpnmpi costs per MPI call, natively and
//! through 0, 1, ... empty module layers, in one run, so that the
//! overhead figures (α, β of the paper's section 5, against the project's
//! bars in `report.rs`) come from one machine state.
//!
//! Each round runs every setup once (in a rotated order), so that noise
//! from other processes spreads over all setups alike; the report is the
//! median over rounds.
//!
//! `pnmpi-bench suite` measures all of the paper's section 5 the same way
//! in one run: per-call overhead, ping-pong latency, MPI_Init
//! time, delay layers, bandwidth and memory, with CSV and SVG plots.

mod install;
mod report;
mod run;
mod stats;
mod suite;

use anyhow::Result;
use clap::Parser;
use install::Install;
use report::{Context, Model, Summary};
use run::{Bench, Launch, Program, Setup};
use std::path::PathBuf;
use std::process::ExitCode;

/// Measure ns per MPI_Comm_rank call: native MPI versus libpnmpi with 0, 1, 10 ... empty modules.
///
/// Uses libpnmpi.so from the cargo target folder this executable is in
/// (build the workspace first with the same MPICC and CARGO_TARGET_DIR) and
/// the compact empty module, which it builds into the same folder. Prints a table to stdout and progress to stderr.
/// `pnmpi-bench suite` runs the paper's whole section 5 side by side.
#[derive(Parser, Debug)]
#[command(name = "pnmpi-bench", version, about, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    overhead: Args,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Run the paper's section 5 side by side, interleaved: per-call overhead,
    /// ping-pong latency, MPI_Init time, delay layers, bandwidth, memory.
    Suite(suite::SuiteArgs),
}

/// The options of the per-call overhead measurement (no subcommand).
#[derive(clap::Args, Debug)]
struct Args {
    /// Layer counts to measure through libpnmpi (copies of the empty module);
    /// 0 gives alpha, two counts >= 1 give beta.
    #[arg(long, value_delimiter = ',', default_value = "0,1,10")]
    layers: Vec<usize>,
    /// Rounds; each runs every setup once.
    #[arg(long, default_value_t = 7, value_parser = clap::value_parser!(u32).range(1..))]
    rounds: u32,
    /// MPI_Comm_rank calls timed per run, in 20 batches of which the fastest
    /// counts (after a warm-up of a tenth as many).
    #[arg(long, default_value_t = 10_000_000, value_parser = clap::value_parser!(u64).range(20..))]
    calls: u64,
    /// Also measure one module restricted to MPI_Send (`routines MPI_Send`):
    /// on MPI_Comm_rank it should cost what 0 modules cost.
    #[arg(long)]
    send_only: bool,
    /// How to start each run.
    #[arg(long, value_enum, default_value_t = Launch::Mpirun)]
    launch: Launch,
    /// Also write the medians as CSV to this file (replaced whole).
    #[arg(long, value_name = "PATH")]
    csv: Option<PathBuf>,
    /// The MPI compiler wrapper; must be the MPI libpnmpi was built for.
    #[arg(long, env = "MPICC", default_value = "mpicc")]
    mpicc: String,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Suite(args)) => suite::run(args),
        None => bench(cli.overhead),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pnmpi-bench: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn bench(args: Args) -> Result<()> {
    let mut layers = args.layers.clone();
    layers.sort_unstable();
    layers.dedup();
    let install = Install::next_to_exe()?;
    install.check_compiler(&args.mpicc)?;
    eprintln!(
        "pnmpi-bench: building with {} against {}",
        args.mpicc,
        install.dir.display()
    );
    let setups: Vec<Setup> = std::iter::once(Setup::Native)
        .chain(layers.iter().map(|&layers| Setup::Pnmpi { layers }))
        .chain(args.send_only.then_some(Setup::SendOnly))
        .collect();
    let bench = Bench::prepare(
        &install,
        &args.mpicc,
        args.launch,
        args.calls,
        &install.libempty,
        &[Program::CommRank],
        &setups,
    )?;
    let mut samples = vec![Vec::new(); setups.len()];
    for round in 0..args.rounds as usize {
        // Rotating the order keeps any drift within a round (a CPU clock
        // settling, a neighbour starting) from always hitting one setup.
        for k in 0..setups.len() {
            let i = (round + k) % setups.len();
            let ns = bench.measure(setups[i])?;
            eprintln!(
                "pnmpi-bench: round {}/{} {:<18} {ns:8.2} ns/call",
                round + 1,
                args.rounds,
                setups[i].label()
            );
            samples[i].push(ns);
        }
    }
    let rows: Vec<Summary> = setups
        .iter()
        .zip(&samples)
        .map(|(&setup, s)| Summary::new(setup, s).expect("rounds >= 1 gives every setup a sample"))
        .collect();
    let model = Model::fit(&rows);
    let ctx = Context {
        benchmark: "comm_rank",
        mpi: install.flavor.name(),
        launch: args.launch.name(),
        calls: args.calls,
    };
    println!("machine: {}", machine());
    print!("{}", report::table(&ctx, &rows, &model));
    if let Some(path) = &args.csv {
        report::write_atomically(path, &report::csv(&ctx, &rows, &model))?;
        eprintln!("pnmpi-bench: wrote {}", path.display());
    }
    Ok(())
}

/// The core count and CPU model, for reading numbers from other machines.
fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")?
                .split_once(':')
                .map(|(_, m)| m.trim())
        })
        .unwrap_or("unknown CPU");
    format!("{cores} cores, {model}")
}
