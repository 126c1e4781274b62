//! `pnmpi trace`: the tools for the `tracer` module's output. Each reads
//! a trace folder (the per-rank files the tracer wrote), a merged `.pnt`
//! file or an OTF2 archive (Score-P's, say), and streams it: memory grows with the streams (threads),
//! not with the events.

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use pnmpi_otf2::Opened;
use pnmpi_trace::source::StreamedTrace;
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
        /// A merged trace (.pnt), a trace folder or an OTF2 archive (traces.otf2).
        input: PathBuf,
        /// Only this rank.
        #[arg(long)]
        rank: Option<u32>,
    },
    /// Events and time per routine, bytes per event, compute/MPI split per
    /// rank, one-sided bytes per rank and per origin-target pair.
    Stats {
        /// A merged trace (.pnt), a trace folder or an OTF2 archive (traces.otf2).
        input: PathBuf,
        /// Print the figures as one JSON object instead of the tables.
        #[arg(long)]
        json: bool,
    },
    /// Wait states (Scalasca's patterns), the critical path, and what
    /// changes would gain, predicted by the replay engine (docs/analyze.md).
    ///
    /// Exit codes: 0 analysed; 1 bad trace, machine file, what-if or
    /// output; 2 bad command line.
    Analyze(crate::analyze::AnalyzeArgs),
    /// Convert to another tool's format.
    Export {
        /// A merged trace (.pnt), a trace folder or an OTF2 archive (traces.otf2).
        input: PathBuf,
        /// `chrome`: Chrome/Perfetto JSON (one file); `simgrid`: SimGrid
        /// time-independent trace for `smpirun -replay` (a folder);
        /// `otf2`: an OTF2 archive for Vampir, Scalasca, otf2-print (a folder).
        #[arg(long, value_enum)]
        format: Format,
        /// Output file (chrome, default trace.json; goal, default
        /// trace.goal) or folder (simgrid, default simgrid/; otf2, default
        /// otf2/, holding traces.otf2).
        #[arg(short, long, value_name = "PATH")]
        output: Option<PathBuf>,
        /// chrome: add each rank's wait states and critical-path stretches
        /// as two tracks; otf2: as metrics, each pattern's wait time and
        /// the time on the critical path accumulated per rank (the
        /// analysis of `pnmpi trace analyze`, which holds the trace's
        /// calls in memory).
        #[arg(long)]
        wait_states: bool,
        /// simgrid: write this machine file's network (a cluster, fat
        /// tree, dragonfly or torus) as platform.xml's SimGrid <cluster>,
        /// its placement of ranks as the host file, and copy it as
        /// machine.toml, so that the README's smpirun line simulates it.
        #[arg(long, value_name = "MACHINE")]
        machine: Option<PathBuf>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// Chrome trace-event JSON, for ui.perfetto.dev and chrome://tracing.
    Chrome,
    /// SimGrid time-independent trace, for `smpirun -replay`.
    Simgrid,
    /// OTF2 archive (Score-P's format), for Vampir, Scalasca and the otf2 tools.
    Otf2,
    /// GOAL schedule, for LogGOPSim and `pnmpi sim replay` (collectives
    /// expanded into their default algorithms' messages).
    Goal,
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
            let mut input = open(&input)?;
            // A folder is read twice: its header lists the events and
            // communicators first.
            let bar = bar(input.passes(2, 1) * input.events, input.size, "reading");
            let stdout = std::io::stdout();
            let mut out = BufWriter::new(stdout.lock());
            let done = dump::dump(&mut *input.src, rank, &mut out, "standard output", &|n| {
                bar.inc(n)
            });
            bar.finish_and_clear();
            match done {
                Err(pnmpi_trace::Error::Io { error, .. })
                    if error.kind() == std::io::ErrorKind::BrokenPipe => {}
                done => done?,
            }
            input.warn();
            Ok(())
        }
        TraceCommand::Stats { input, json } => {
            let mut input = open(&input)?;
            let bar = bar(input.events, input.size, "reading");
            let file_bytes = input.file_bytes();
            let stats = stats::stats(&mut *input.src, file_bytes, &|n| bar.inc(n))?;
            bar.finish_and_clear();
            input.warn();
            let text = if json {
                serde_json::to_string_pretty(&crate::stats_json::stats_json(&stats))? + "\n"
            } else {
                stats.to_string()
            };
            std::io::stdout()
                .lock()
                .write_all(text.as_bytes())
                .or_else(ignore_broken_pipe)
        }
        TraceCommand::Analyze(a) => crate::analyze::run(&a),
        TraceCommand::Export {
            input,
            format,
            output,
            wait_states,
            machine,
        } => {
            if machine.is_some() && !matches!(format, Format::Simgrid) {
                bail!("--machine gives the simgrid export its platform; the other formats take none");
            }
            if wait_states && !matches!(format, Format::Chrome | Format::Otf2) {
                bail!("--wait-states adds tracks to the chrome export, and metrics to the otf2 export, only");
            }
            let marks = if wait_states {
                crate::analyze::marks(&input)?
            } else {
                Vec::new()
            };
            if let Format::Goal = format {
                return export_goal(&input, output);
            }
            let path = input;
            let mut input = open(&path)?;
            let world_size = input.src.world_size();
            match format {
                Format::Chrome => {
                    // Two passes: the slices, then the message arrows.
                    let bar = bar(2 * input.events, input.size, "exporting");
                    let path = output.unwrap_or_else(|| PathBuf::from("trace.json"));
                    let tmp = path.with_extension("json.tmp");
                    let name = tmp.display().to_string();
                    let file =
                        std::fs::File::create(&tmp).with_context(|| format!("cannot create {name}"))?;
                    let mut w = BufWriter::with_capacity(1 << 20, file);
                    let sum = chrome::write_marked(&mut *input.src, &mut w, &name, &|n| bar.inc(n), &marks)
                        .and_then(|s| {
                            w.flush()
                                .map_err(|e| pnmpi_trace::Error::io(&name, e))
                                .map(|()| s)
                        });
                    let sum = match sum {
                        Ok(sum) => sum,
                        Err(e) => {
                            let _ = std::fs::remove_file(&tmp);
                            return Err(e.into());
                        }
                    };
                    std::fs::rename(&tmp, &path)
                        .with_context(|| format!("cannot write {}", path.display()))?;
                    bar.finish_and_clear();
                    input.warn();
                    println!(
                        "{}: {} slices, {} message arrows; open it in ui.perfetto.dev",
                        path.display(),
                        sum.slices,
                        sum.flows
                    );
                }
                Format::Simgrid => {
                    let bar = bar(input.events, input.size, "exporting");
                    let dir = output.unwrap_or_else(|| PathBuf::from("simgrid"));
                    let target = machine
                        .as_deref()
                        .map(|m| simgrid_target(m, world_size))
                        .transpose()?;
                    let target = target.as_ref().map(|(platform, node_of, m)| simgrid::Target {
                        platform,
                        node_of,
                        machine: m.source(),
                        file: &m.file,
                    });
                    let x = simgrid::export_on(&mut *input.src, &dir, &|n| bar.inc(n), target.as_ref())?;
                    bar.finish_and_clear();
                    input.warn();
                    println!(
                        "{}: {} actions for {} ranks",
                        dir.display(),
                        x.actions,
                        world_size
                    );
                    for (routine, n) in &x.approximated {
                        println!("  approximated: {n} x {routine}");
                    }
                    println!("replay it from that folder with: {}", x.command(world_size));
                }
                Format::Goal => export_goal(&path, output)?,
                Format::Otf2 => {
                    // Two passes: the communicator table, then the events.
                    let bar = bar(input.passes(2, 1) * input.events, input.size, "exporting");
                    let dir = output.unwrap_or_else(|| PathBuf::from("otf2"));
                    let x = pnmpi_otf2::export_marked(&mut *input.src, &dir, &|n| bar.inc(n), &marks)?;
                    bar.finish_and_clear();
                    input.warn();
                    println!(
                        "{}: {} locations, {} event records; open it in Vampir, or: otf2-print {}",
                        x.anchor.display(),
                        x.locations,
                        x.records,
                        x.anchor.display()
                    );
                    for (what, n) in &x.lost {
                        println!("  not in OTF2: {n} {what}");
                    }
                }
            }
            Ok(())
        }
    }
}

/// The platform, the node of each of `ranks` ranks and the machine of
/// machine file `path`, for `export --format simgrid --machine`.
fn simgrid_target(path: &Path, ranks: u32) -> Result<(String, Vec<u32>, pnmpi_sim::machine::Machine)> {
    let m = pnmpi_sim::machine::Machine::load(path)?;
    let platform = m
        .simgrid_cluster()
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?
        .with_context(|| {
            format!(
                "{}: no [network.topology] of links: the export's own platform already describes a flat network",
                path.display()
            )
        })?;
    let node_of = m.place(ranks)?;
    Ok((platform, node_of, m))
}

/// `export --format goal`: read as the replay reads a trace (wildcards
/// resolved, persistent requests started, collectives with their members).
fn export_goal(input: &std::path::Path, output: Option<PathBuf>) -> Result<()> {
    let mut src = pnmpi_sim::input::open(input, 1.0)?;
    let path = output.unwrap_or_else(|| PathBuf::from("trace.goal"));
    // The op count is known only at the end: a spinner with the ops read.
    let bar = ProgressBar::new_spinner();
    if let Ok(style) = ProgressStyle::with_template("{spinner} exporting: {pos} ops [{elapsed}]") {
        bar.set_style(style);
    }
    let x = pnmpi_sim::goal::export::export(src.as_mut(), &path, &|n| bar.inc(n))?;
    bar.finish_and_clear();
    for w in src.warnings() {
        eprintln!("pnmpi trace: warning: {w}");
    }
    println!(
        "{}: {} ops for {} ranks ({} collectives as messages)",
        path.display(),
        x.ops,
        x.ranks,
        x.collectives
    );
    if x.one_sided > 0 {
        eprintln!(
            "pnmpi trace: warning: {} one-sided calls written as their traced time (GOAL has no one-sided operations)",
            x.one_sided
        );
    }
    println!(
        "run it with: pnmpi sim replay {} -m MACHINE.toml (with a [model.loggops] table); or with LogGOPSim: txt2bin -i {0} -o t.bin, then LogGOPSim -f t.bin",
        path.display()
    );
    Ok(())
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

/// An input opened for streaming: a merged trace or a tracer folder.
struct Input {
    src: Box<dyn StreamedTrace>,
    /// Whether it is a folder or an OTF2 archive (read twice by `dump`,
    /// no bytes per event).
    folder: bool,
    /// Its bytes (the rank files' for a folder).
    size: u64,
    /// Its events (a folder's records, which become its events).
    events: u64,
}

impl Input {
    /// `folder` passes for a folder, else `merged`.
    fn passes(&self, folder: u64, merged: u64) -> u64 {
        if self.folder {
            folder
        } else {
            merged
        }
    }

    /// The encoded size of a merged trace, for bytes per event.
    fn file_bytes(&self) -> Option<u64> {
        (!self.folder).then_some(self.size)
    }

    /// Reports the input's warnings (truncated or unfinished files,
    /// handles that could not be resolved) on stderr.
    fn warn(&self) {
        for w in self.src.warnings() {
            eprintln!("pnmpi trace: warning: {w}");
        }
    }
}

/// Opens a trace for streaming (a `.pnt` file, a tracer folder or an
/// OTF2 archive): its events are read as each command goes, so memory does
/// not grow with them.
fn open(input: &Path) -> Result<Input> {
    let opened = pnmpi_otf2::open(input)?.with_context(|| {
        format!(
            "{}: not a merged trace (.pnt), a tracer folder or an OTF2 archive",
            input.display()
        )
    })?;
    Ok(match opened {
        Opened::Otf2(r) => {
            // The location files, in the folder beside the anchor file.
            let files = pnmpi_otf2::import::anchor(input).with_extension("");
            let size = std::fs::read_dir(&files)
                .map(|d| {
                    d.flatten()
                        .filter_map(|f| f.metadata().ok())
                        .map(|m| m.len())
                        .sum()
                })
                .unwrap_or(0);
            Input {
                folder: true,
                size,
                // Each call is two records or more.
                events: r.records() / 2,
                src: Box::new(r),
            }
        }
        Opened::Folder(f) => Input {
            folder: true,
            size: f.bytes(),
            events: f.event_count(),
            src: Box::new(f),
        },
        Opened::Merged(r) => Input {
            folder: false,
            size: std::fs::metadata(input)
                .with_context(|| format!("cannot read {}", input.display()))?
                .len(),
            events: r.event_count(),
            src: Box::new(r),
        },
    })
}
