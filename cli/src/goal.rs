//! `pnmpi sim replay X.goal`: a GOAL schedule (LogGOPSim's input) run on
//! the LogGOPS model with LogGOPSim's rules.

use crate::output::{peak_rss_bytes, write_atomic};
use anyhow::{Context, Result};
use pnmpi_sim::goal;
use pnmpi_sim::machine::Machine;
use std::fmt::Write as _;
use std::io::Read;
use std::path::Path;

/// Whether `path` is a GOAL schedule (read from its first bytes).
pub fn is_goal_file(path: &Path) -> bool {
    let mut head = vec![0u8; 4096];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    goal::is_goal(&head[..n])
}

/// Runs the schedule at `path` on `machine`'s `[model.loggops]`, prints
/// the finish times as LogGOPSim does, and writes `json` if asked.
pub fn replay(path: &Path, machine: &Path, model: &str, json: Option<&Path>) -> Result<()> {
    if model != "loggops" {
        anyhow::bail!(
            "{}: a GOAL schedule runs under the loggops model (LogGOPSim's rules), not `{model}`: use --model loggops",
            path.display()
        );
    }
    let machine = Machine::load(machine)?;
    let params = pnmpi_sim::model::LogGopsParams::of(&machine)?;
    let started = std::time::Instant::now();
    std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut schedule = goal::parse_file(path)?;
    let parsed = started.elapsed().as_secs_f64();
    let start = std::time::Instant::now();
    let mut model = goal::LogGops::new(params, schedule.ranks(), schedule.cpus, schedule.nics);
    let out = goal::run(&mut schedule, &mut model).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let wall = start.elapsed().as_secs_f64();
    let (host, latest) = out.latest();
    let peak = peak_rss_bytes();
    let p = params;
    println!(
        "pnmpi sim: {} on {}, model loggops: L={} o={} g={} G={} O={} ns, S={} B; {} ranks ({} CPUs, {} NICs each)",
        path.display(),
        machine.name,
        p.L,
        p.o,
        p.g,
        p.G,
        p.O,
        p.S,
        schedule.ranks(),
        schedule.cpus,
        schedule.nics
    );
    if schedule.ranks() <= 16 {
        for (h, t) in out.finish.iter().enumerate() {
            println!("Host {h}: {t}");
        }
    }
    println!(
        "Maximum finishing time at host {host}: {latest} ({:.9} s)",
        latest as f64 * 1e-9
    );
    println!(
        "simulated {} events in {:.4} s ({:.2} M events/s; schedule read in {:.3} s; peak memory {} MiB)",
        out.events,
        wall,
        out.events as f64 / wall.max(1e-9) / 1e6,
        parsed,
        peak >> 20
    );
    if let Some(j) = json {
        // Written by hand: a million ranks as JSON values would take more
        // memory than the run.
        let mut ranks = String::with_capacity(out.finish.len() * 48);
        for (r, &t) in out.finish.iter().enumerate() {
            let sep = if r == 0 { "" } else { "," };
            let _ = write!(
                ranks,
                "{sep}\n    {{\"rank\": {r}, \"end_ns\": {t}, \"end_s\": {:e}}}",
                t as f64 * 1e-9
            );
        }
        let head = serde_json::json!({
            "trace": path.display().to_string(),
            "machine": machine.name,
            "model": "loggops",
            "runtime_s": latest as f64 * 1e-9,
            "runtime_ns": latest,
            "latest_rank": host,
            "events": out.events,
            "sim_wall_s": wall,
            "read_wall_s": parsed,
            "events_per_s": out.events as f64 / wall.max(1e-9),
            "peak_memory_bytes": peak,
        });
        let head = serde_json::to_string_pretty(&head)?;
        let body = head.strip_suffix("\n}").unwrap_or(&head);
        write_atomic(j, format!("{body},\n  \"ranks\": [{ranks}\n  ]\n}}\n"))?;
    }
    Ok(())
}
