//! The `pnmpi` command. `pnmpi run` starts an MPI program that was never
//! linked with libpnmpi, by preloading libpnmpi into it.

mod analyze;
mod calibrate;
mod goal;
mod jitter;
mod jitter_collect;
mod output;
mod run;
mod sim;
mod stats_json;
mod synth;
mod trace;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Chain MPI tools (PMPI modules) on an unmodified MPI program.
#[derive(Parser)]
#[command(name = "pnmpi", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a program with libpnmpi preloaded: `mpirun -np 4 pnmpi run -- ./app args`.
    Run(run::RunArgs),
    /// Merge, inspect and convert traces of the `tracer` module.
    Trace(trace::TraceArgs),
    /// Predict a traced run on another machine (replay simulator).
    Sim(sim::SimArgs),
    /// Collect OS noise and predict its cost at any task count (jitSim).
    Jitter(jitter::JitterArgs),
}

fn main() -> ExitCode {
    // Like other Unix tools, end quietly when the reader of our output goes
    // away (`pnmpi trace dump t.pnt | head`) instead of failing to print.
    // SAFETY: restoring the default disposition of SIGPIPE before any
    // thread starts; no handler is involved.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run::run(args),
        Command::Trace(args) => return trace::run(args),
        Command::Sim(args) => return sim::run(args),
        Command::Jitter(args) => return jitter::run(args),
    };
    match result {
        Ok(never) => match never {},
        Err(e) => {
            eprintln!("pnmpi: error: {e:#}");
            ExitCode::from(run::EXIT_LAUNCH_FAILED)
        }
    }
}
