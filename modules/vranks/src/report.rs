//! The report at the end of the run: vtime's table and JSON
//! (`pnmpi_sim::live::report`), for the N virtual ranks.

use crate::engine::Engine;
use pnmpi_sim::live::report::{table, write, RankReport, Report};
use pnmpi_sim::live::target::Config;

/// Prints the table and writes the JSON report.
pub fn finish(e: &Engine, config: &Config, wall_ns: f64) {
    let per_rank: Vec<RankReport> = e
        .ranks
        .iter()
        .enumerate()
        .map(|(r, rank)| {
            let s = &rank.stats;
            RankReport {
                rank: r as u32,
                node: e.node_of[r],
                runtime_ns: rank.end.unwrap_or(rank.clock),
                compute_ns: s.compute,
                comm_ns: s.comm,
                wait_ns: s.wait,
                calls: s.calls,
                messages_sent: s.sent,
                bytes_sent: s.sent_bytes,
                messages_received: s.received,
                collectives: s.collectives,
                wall_ns,
            }
        })
        .collect();
    let report = Report::new(config.machine_name(), &config.model, config.cpu_factor, per_rank);
    eprint!("{}", table(&report));
    match write(&config.report, &report) {
        Ok(()) => eprintln!("pnmpi vtime: wrote {}", config.report.display()),
        Err(err) => eprintln!("pnmpi vtime: cannot write {}: {err}", config.report.display()),
    }
}
