//! `pnmpi jitter`: collect a node's OS noise, and predict what it costs a
//! bulk-synchronous application at any task count (jitSim).

use crate::output::write_atomic;
use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use pnmpi_jitter::format::{self, Format};
use pnmpi_jitter::sim::{simulate, NoiseSource, Params, Start};
use pnmpi_sim::units::parse_time;
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

/// Collect OS noise, or simulate its cost at scale.
#[derive(Args)]
pub struct JitterArgs {
    #[command(subcommand)]
    command: JitterCommand,
}

#[derive(Subcommand)]
enum JitterCommand {
    /// Measure this node's noise: per core, a tight loop reads the
    /// timestamp counter and keeps the deltas above the jitter threshold.
    Collect(crate::jitter_collect::CollectArgs),
    /// Predict the slowdown of compute phases + barriers at task counts.
    Sim(Box<JitterSimArgs>),
}

/// Options of `pnmpi jitter sim`.
#[derive(Args)]
struct JitterSimArgs {
    /// Noise traces: ours (text or binary, from `collect`), netgauge's
    /// selfish output or LogGOPSim's `<start_ns> <duration_ns>` lines.
    /// Several traces are different nodes' cores: task i uses trace i mod n.
    #[arg(required = true)]
    traces: Vec<PathBuf>,
    /// Trace format, instead of telling it from the content: pnmpi,
    /// binary, netgauge or loggopsim.
    #[arg(long)]
    format: Option<String>,
    /// Work per compute phase, e.g. 1ms.
    #[arg(long, value_name = "TIME")]
    quantum: String,
    /// Compute phases (each ends in a barrier).
    #[arg(long, default_value_t = 100, conflicts_with = "coverage")]
    phases: u32,
    /// Instead of --phases: run as many phases as cover this % of the
    /// (first) trace per task (section 4.2).
    #[arg(long, value_name = "PCT")]
    coverage: Option<f64>,
    /// Task counts: a list (1,64,4096) or a range of powers of two
    /// (1..1048576).
    #[arg(long, default_value = "1..1048576")]
    tasks: String,
    /// Start placements, comma-separated: unsync, sync, cosched.
    #[arg(long, default_value = "unsync")]
    mode: String,
    /// Co-scheduler windows for cosched: HIGH,LOW (e.g. 9ms,1ms).
    #[arg(long, value_name = "HIGH,LOW")]
    window: Option<String>,
    /// CPU time of a barrier send (0: a free barrier).
    #[arg(long, value_name = "TIME")]
    send_latency: Option<String>,
    /// CPU time of a barrier receive.
    #[arg(long, value_name = "TIME")]
    recv_latency: Option<String>,
    /// Take the latencies from a machine file (`pnmpi sim calibrate`):
    /// half the inter-node zero-byte time each for send and receive.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["send_latency", "recv_latency"])]
    machine: Option<PathBuf>,
    /// Children per node of the barrier's tree.
    #[arg(long, default_value_t = 2)]
    arity: u32,
    /// Fix each task's starting row (1-based, task i at ROW[i mod n]),
    /// for worked examples.
    #[arg(long, value_name = "ROW,...")]
    start: Option<String>,
    /// Random seed: the same seed gives the same answer.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write the results as JSON.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write slowdown against task count as SVG.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
}

/// One line of the results.
#[derive(Serialize)]
struct Row {
    mode: &'static str,
    tasks: u32,
    slowdown_pct: f64,
    time_s: f64,
    quiet_s: f64,
    mean_wait_s: f64,
}

#[derive(Serialize)]
struct Results<'a> {
    traces: Vec<String>,
    quantum_s: f64,
    phases: u32,
    send_latency_s: f64,
    recv_latency_s: f64,
    arity: u32,
    seed: u64,
    results: &'a [Row],
}

fn ns(s: &str, what: &str) -> Result<u64> {
    let t = parse_time(s).map_err(|e| anyhow::anyhow!("{what}: {e}"))?;
    Ok(t.0.round() as u64)
}

/// `1,64,4096` or `A..B` (the powers of two from A to B).
fn task_counts(s: &str) -> Result<Vec<u32>> {
    if let Some((a, b)) = s.split_once("..") {
        let (a, b): (u32, u32) = (a.trim().parse()?, b.trim().parse()?);
        if a == 0 || a > b {
            bail!("--tasks {s}: expected A..B with 1 <= A <= B");
        }
        let mut v = Vec::new();
        let mut n = a;
        while n <= b {
            v.push(n);
            n = match n.checked_mul(2) {
                Some(m) => m,
                None => break,
            };
        }
        return Ok(v);
    }
    s.split(',')
        .map(|t| match t.trim().parse::<u32>() {
            Ok(n) if n > 0 => Ok(n),
            _ => bail!("--tasks: `{t}` is not a task count"),
        })
        .collect()
}

/// A start placement by name; cosched needs `window` (`HIGH,LOW`).
pub fn parse_mode(name: &str, window: Option<&str>) -> Result<Start> {
    match name.trim() {
        "unsync" => Ok(Start::Unsync),
        "sync" => Ok(Start::Sync),
        "cosched" => {
            let w = window.context("cosched needs the co-scheduler's windows: --window HIGH,LOW")?;
            let (hi, lo) = w.split_once(',').context("--window HIGH,LOW")?;
            Ok(Start::Cosched {
                hi: ns(hi, "--window")?,
                lo: ns(lo, "--window")?,
            })
        }
        other => bail!("unknown mode `{other}`: use unsync, sync or cosched"),
    }
}

fn modes(a: &JitterSimArgs) -> Result<Vec<Start>> {
    a.mode
        .split(',')
        .map(|m| parse_mode(m, a.window.as_deref()))
        .collect()
}

fn latencies(a: &JitterSimArgs) -> Result<(u64, u64)> {
    if let Some(m) = &a.machine {
        let machine = pnmpi_sim::machine::Machine::load(m)?;
        let half = (machine.network.inter.cost(0) / 2.0).round() as u64;
        return Ok((half, half));
    }
    let get = |v: &Option<String>, what: &str| v.as_deref().map_or(Ok(0), |s| ns(s, what));
    Ok((
        get(&a.send_latency, "--send-latency")?,
        get(&a.recv_latency, "--recv-latency")?,
    ))
}

/// Reads noise traces, in `format` (a `--format` name) or told apart.
pub fn load_traces(paths: &[PathBuf], format: Option<&str>) -> Result<Vec<NoiseSource>> {
    let format =
        match format {
            Some(f) => Some(Format::from_name(f).with_context(|| {
                format!("unknown --format `{f}`: use pnmpi, binary, netgauge or loggopsim")
            })?),
            None => None,
        };
    let mut files = Vec::new();
    for p in paths {
        expand_trace(p, &mut files)?;
    }
    files
        .iter()
        .map(|p| format::load(p, format).map_err(anyhow::Error::from))
        .collect()
}

/// A trace path as given: a folder that `pnmpi jitter collect -o` wrote
/// stands for its per-core traces (`core-N.pnj`, else `core-N.txt`), in
/// core order; collect's own summary files are refused with the way to
/// name the folder instead.
fn expand_trace(path: &std::path::Path, files: &mut Vec<PathBuf>) -> Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if matches!(name.as_str(), "summary.txt" | "summary.svg") {
        let folder = path.parent().map_or(".".into(), |p| p.display().to_string());
        anyhow::bail!(
            "{}: this is `pnmpi jitter collect`'s summary, not a noise trace: name the folder ({folder}) to use every core's trace",
            path.display()
        );
    }
    if !path.is_dir() {
        files.push(path.to_path_buf());
        return Ok(());
    }
    let read =
        std::fs::read_dir(path).with_context(|| format!("cannot read the folder {}", path.display()))?;
    // core number -> (binary, text)
    let mut cores: std::collections::BTreeMap<u64, (Option<PathBuf>, Option<PathBuf>)> = Default::default();
    for entry in read {
        let entry = entry.with_context(|| format!("cannot read the folder {}", path.display()))?;
        let file = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = file.strip_prefix("core-") else {
            continue;
        };
        let (core, binary) = match (rest.strip_suffix(".pnj"), rest.strip_suffix(".txt")) {
            (Some(n), _) => (n, true),
            (_, Some(n)) => (n, false),
            _ => continue,
        };
        let Ok(core) = core.parse::<u64>() else { continue };
        let slot = cores.entry(core).or_default();
        if binary {
            slot.0 = Some(entry.path());
        } else {
            slot.1 = Some(entry.path());
        }
    }
    if cores.is_empty() {
        anyhow::bail!(
            "{}: a folder with no noise trace (core-N.pnj or core-N.txt, as `pnmpi jitter collect -o {}` writes)",
            path.display(),
            path.display()
        );
    }
    files.extend(cores.into_values().filter_map(|(bin, text)| bin.or(text)));
    Ok(())
}

fn sim(a: &JitterSimArgs) -> Result<()> {
    let sources = load_traces(&a.traces, a.format.as_deref())?;
    let quantum = ns(&a.quantum, "--quantum")?;
    if quantum == 0 {
        bail!("--quantum must be above 0");
    }
    for s in &sources {
        if quantum > s.timeline.period() {
            bail!(
                "{}: the trace covers {} ns, less than one quantum of {quantum} ns: \
                 collect a longer trace or use a smaller --quantum",
                s.name,
                s.timeline.period()
            );
        }
    }
    let phases = match a.coverage {
        Some(pct) if pct > 0.0 && pct.is_finite() => {
            ((pct / 100.0 * sources[0].timeline.period() as f64 / quantum as f64).ceil() as u32).max(1)
        }
        Some(pct) => bail!("--coverage {pct}: expected a percentage above 0"),
        None => a.phases,
    };
    let (send, recv) = latencies(a)?;
    let start = match &a.start {
        Some(s) => s
            .split(',')
            .map(|r| match r.trim().parse::<usize>() {
                Ok(n) if n > 0 => Ok(n - 1),
                _ => bail!("--start: `{r}` is not a row number (1-based)"),
            })
            .collect::<Result<Vec<_>>>()?,
        None => Vec::new(),
    };
    let p = Params {
        quantum,
        phases,
        send,
        recv,
        arity: a.arity.max(1),
        seed: a.seed,
        start,
    };
    let counts = task_counts(&a.tasks)?;
    let mut rows = Vec::new();
    println!(
        "{:<8} {:>9} {:>12} {:>14} {:>14}",
        "mode", "tasks", "slowdown", "time (s)", "wait/phase"
    );
    for mode in modes(a)? {
        for &n in &counts {
            let t0 = std::time::Instant::now();
            let o = simulate(&sources, n, mode, &p);
            let r = Row {
                mode: mode.name(),
                tasks: n,
                slowdown_pct: o.slowdown_pct,
                time_s: o.time_ns as f64 / 1e9,
                quiet_s: o.quiet_ns as f64 / 1e9,
                mean_wait_s: o.mean_wait_ns / 1e9,
            };
            println!(
                "{:<8} {:>9} {:>11.3}% {:>14.6} {:>12.3}us",
                r.mode,
                n,
                r.slowdown_pct,
                r.time_s,
                o.mean_wait_ns / 1e3
            );
            if t0.elapsed().as_secs_f64() > 1.0 {
                eprintln!(
                    "  ({n} tasks x {phases} phases in {:.1} s)",
                    t0.elapsed().as_secs_f64()
                );
            }
            rows.push(r);
        }
    }
    if let Some(path) = &a.json {
        let results = Results {
            traces: sources.iter().map(|s| s.name.clone()).collect(),
            quantum_s: quantum as f64 / 1e9,
            phases,
            send_latency_s: send as f64 / 1e9,
            recv_latency_s: recv as f64 / 1e9,
            arity: p.arity,
            seed: a.seed,
            results: &rows,
        };
        write_atomic(path, &serde_json::to_vec_pretty(&results)?)?;
    }
    if let Some(path) = &a.svg {
        let mut names: Vec<&str> = rows.iter().map(|r| r.mode).collect();
        names.dedup();
        let chart = pnmpi_plot::Chart {
            title: format!("slowdown from OS noise, quantum {}, {phases} phases", a.quantum),
            x_label: "tasks".into(),
            y_label: "slowdown (%)".into(),
            log_x: true,
            log_y: false,
            legend_lower_right: true,
            series: names
                .iter()
                .map(|m| pnmpi_plot::Series {
                    name: (*m).to_owned(),
                    points: rows
                        .iter()
                        .filter(|r| r.mode == *m)
                        .map(|r| (f64::from(r.tasks), r.slowdown_pct))
                        .collect(),
                    kind: pnmpi_plot::Kind::Measured,
                })
                .collect(),
        };
        write_atomic(path, chart.svg()?.as_bytes())?;
    }
    Ok(())
}

/// Runs a `pnmpi jitter` subcommand.
pub fn run(args: JitterArgs) -> ExitCode {
    let r = match args.command {
        JitterCommand::Sim(a) => sim(&a),
        JitterCommand::Collect(a) => crate::jitter_collect::run(&a),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pnmpi jitter: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::task_counts;

    #[test]
    fn task_counts_take_lists_and_power_of_two_ranges() {
        assert_eq!(task_counts("1..16").unwrap(), [1, 2, 4, 8, 16]);
        assert_eq!(task_counts("3..13").unwrap(), [3, 6, 12]);
        assert_eq!(task_counts("1,64, 4096").unwrap(), [1, 64, 4096]);
        assert!(task_counts("0..4").is_err() && task_counts("a").is_err() && task_counts("0").is_err());
    }
}
