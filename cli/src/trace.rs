//! `pnmpi trace`: the tools for the `tracer` module's output. Each reads
//! either a trace folder (the per-rank files the tracer wrote) or a merged
//! `.pnt` file. `merge` streams the folder; the others merge it in memory.

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use pnmpi_trace::trace::Trace;
use pnmpi_trace::{chrome, dump, merge, simgrid, stats};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Inputs above this size get a progress bar (on a terminal).
const BIG: u64 = 16 << 20;

/// Work on traces written by the `tracer` module.
#[derive(Args)]
pub struct TraceArgs {
    #[command(subcommand)]
    command: TraceCommand,
}

#[derive(Subcommand)]
enum TraceCommand {
    /// Consolidate a trace folder's per-rank files into one compact trace.
    Merge {
        /// The tracer's output folder (rank-NNNNN.pnr files).
        dir: PathBuf,
        /// The merged trace to write.
        #[arg(short, long, value_name = "FILE", default_value = "trace.pnt")]
        output: PathBuf,
    },
    /// Print every event, one line each: `rank.thread start_ns duration_ns routine key=value...`.
    Dump {
        /// A merged trace (.pnt) or a trace folder.
        input: PathBuf,
        /// Only this rank.
        #[arg(long)]
        rank: Option<u32>,
    },
    /// Events and time per routine, bytes per event, compute/MPI split per rank.
    Stats {
        /// A merged trace (.pnt) or a trace folder.
        input: PathBuf,
    },
    /// Convert to another tool's format.
    Export {
        /// A merged trace (.pnt) or a trace folder.
        input: PathBuf,
        /// `chrome`: Chrome/Perfetto JSON (one file); `simgrid`: SimGrid
        /// time-independent trace for `smpirun -replay` (a folder).
        #[arg(long, value_enum)]
        format: Format,
        /// Output file (chrome, default trace.json) or folder (simgrid, default simgrid/).
        #[arg(short, long, value_name = "PATH")]
        output: Option<PathBuf>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// Chrome trace-event JSON, for ui.perfetto.dev and chrome://tracing.
    Chrome,
    /// SimGrid time-independent trace, for `smpirun -replay`.
    Simgrid,
}

/// Runs a `pnmpi trace` subcommand.
pub fn run(args: TraceArgs) -> ExitCode {
    match dispatch(args.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pnmpi trace: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn dispatch(command: TraceCommand) -> Result<()> {
    match command {
        TraceCommand::Merge { dir, output } => {
            if !dir.is_dir() {
                bail!(
                    "{} is not a folder; `merge` takes the tracer's output folder",
                    dir.display()
                );
            }
            // Streamed: two passes over the rank files, memory independent
            // of the events (pnmpi_trace::folder).
            let size: u64 = merge::rank_files(&dir)?
                .iter()
                .filter_map(|f| std::fs::metadata(f).ok())
                .map(|m| m.len())
                .sum();
            let events = pnmpi_trace::folder::FolderReader::open(&dir)?.event_count();
            let bar = bar(2 * events, size, "merging");
            let saved = pnmpi_trace::folder::save_merged(&dir, &output, &|n| bar.inc(n))?;
            bar.finish_and_clear();
            for w in &saved.warnings {
                eprintln!("pnmpi trace: warning: {w}");
            }
            println!(
                "{}: {} ranks, {} events, {} bytes ({:.2} bytes/event)",
                output.display(),
                saved.world_size,
                saved.events,
                saved.bytes,
                saved.bytes as f64 / saved.events.max(1) as f64
            );
            Ok(())
        }
        TraceCommand::Dump { input, rank } => {
            let trace = load(&input)?.0;
            let stdout = std::io::stdout();
            let mut out = BufWriter::new(stdout.lock());
            dump::dump(&trace, rank, &mut out).or_else(ignore_broken_pipe)
        }
        TraceCommand::Stats { input } => {
            let (trace, size) = load(&input)?;
            let text = stats::stats(&trace, size).to_string();
            std::io::stdout()
                .lock()
                .write_all(text.as_bytes())
                .or_else(ignore_broken_pipe)
        }
        TraceCommand::Export {
            input,
            format,
            output,
        } => {
            let trace = load(&input)?.0;
            let bar = bar(trace.event_count(), trace.event_count() * 100, "exporting");
            match format {
                Format::Chrome => {
                    let path = output.unwrap_or_else(|| PathBuf::from("trace.json"));
                    let tmp = path.with_extension("json.tmp");
                    let file = std::fs::File::create(&tmp)
                        .with_context(|| format!("cannot create {}", tmp.display()))?;
                    let mut w = BufWriter::with_capacity(1 << 20, file);
                    let sum = chrome::write(&trace, &mut w, &|n| bar.inc(n))
                        .and_then(|s| w.flush().map(|()| s))
                        .with_context(|| format!("cannot write {}", tmp.display()))?;
                    std::fs::rename(&tmp, &path)
                        .with_context(|| format!("cannot write {}", path.display()))?;
                    bar.finish_and_clear();
                    println!(
                        "{}: {} slices, {} message arrows; open it in ui.perfetto.dev",
                        path.display(),
                        sum.slices,
                        sum.flows
                    );
                }
                Format::Simgrid => {
                    let dir = output.unwrap_or_else(|| PathBuf::from("simgrid"));
                    let x = simgrid::export(&trace, &dir, &|n| bar.inc(n))?;
                    bar.finish_and_clear();
                    println!(
                        "{}: {} actions for {} ranks",
                        dir.display(),
                        x.actions,
                        trace.world_size
                    );
                    for (routine, n) in &x.approximated {
                        println!("  approximated: {n} x {routine}");
                    }
                    println!("replay it from that folder with: {}", x.command(trace.world_size));
                }
            }
            Ok(())
        }
    }
}

fn ignore_broken_pipe(e: std::io::Error) -> Result<()> {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Ok(())
    } else {
        Err(e.into())
    }
}

/// A progress bar for `len` steps, shown only for inputs of more than
/// [`BIG`] bytes (`size` estimates them) and only on a terminal.
fn bar(len: u64, size: u64, what: &str) -> ProgressBar {
    if size < BIG {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:40}] {percent}% {eta}") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(what.to_string());
    bar
}

/// Reads a `.pnt` file, or merges a trace folder in memory; reports
/// warnings on stderr. Returns the trace and its encoded size, if known.
fn load(input: &Path) -> Result<(Trace, Option<u64>)> {
    if input.is_dir() {
        let files = merge::rank_files(input)?;
        let total: u64 = files
            .iter()
            .filter_map(|f| std::fs::metadata(f).ok())
            .map(|m| m.len())
            .sum();
        let bar = bar(total, total, "reading");
        let (trace, warnings) = merge::merge_dir(input, &|n| bar.inc(n))?;
        bar.finish_and_clear();
        for w in warnings {
            eprintln!("pnmpi trace: warning: {w}");
        }
        return Ok((trace, None));
    }
    let size = std::fs::metadata(input)
        .with_context(|| format!("cannot read {}", input.display()))?
        .len();
    let (trace, truncated) = Trace::read(input)?;
    if let Some(t) = truncated {
        eprintln!("pnmpi trace: warning: {t}");
    }
    Ok((trace, Some(size)))
}
