//! The report at the end of the run: vtime's table and JSON
//! (`pnmpi_sim::live::report`), for the N virtual ranks. When the ranks
//! were spread over processes, process 0 gathers every process's lines
//! and counts, and alone prints and writes.

use crate::engine::Engine;
use pnmpi_sim::live::report::{table, write, RankReport, Report};
use pnmpi_sim::live::target::Config;
use serde::{Deserialize, Serialize};

/// One process's part of the report.
#[derive(Serialize, Deserialize, Default)]
struct Part {
    ranks: Vec<RankReport>,
    switches: u64,
    events: u64,
    /// Windows, exchanges and records received (spread runs).
    windows: u64,
    exchanges: u64,
    records: u64,
}

/// This process's lines and counts.
fn part(e: &Engine, wall_ns: f64) -> Part {
    let ranks = e
        .local_ranks()
        .map(|r| {
            let rank = &e.ranks[r as usize];
            let s = &rank.stats;
            RankReport {
                rank: r,
                node: e.node_of[r as usize],
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
                acks_sent: 0,
            }
        })
        .collect();
    let (windows, exchanges, records) = e
        .dist
        .as_ref()
        .map_or((0, 0, 0), |d| (d.windows, d.exchanges, d.records));
    Part {
        ranks,
        switches: e.switches,
        events: e.events,
        windows,
        exchanges,
        records,
    }
}

/// Prints the table and writes the JSON report (process 0 of a spread
/// run: every process calls this, in step).
pub fn finish(e: &mut Engine, config: &Config, wall_ns: f64) {
    let mine = part(e, wall_ns);
    let all = match e.dist.as_mut() {
        None => mine,
        Some(d) => {
            let bytes = postcard::to_allocvec(&mine).expect("a report part encodes");
            let Some(parts) = d.gather(&bytes) else { return };
            let mut all = Part::default();
            for (i, p) in parts.iter().enumerate() {
                let p: Part = match postcard::from_bytes(p) {
                    Ok(p) => p,
                    Err(err) => {
                        eprintln!("pnmpi vranks: error: process {i}'s part of the report is unreadable ({err}); its ranks are missing from the report");
                        continue;
                    }
                };
                all.ranks.extend(p.ranks);
                all.switches += p.switches;
                all.events += p.events;
                all.windows = all.windows.max(p.windows);
                all.exchanges = all.exchanges.max(p.exchanges);
                all.records += p.records;
            }
            all
        }
    };
    let report = Report::new(config.machine_name(), &config.model, config.cpu_factor, all.ranks);
    eprint!("{}", table(&report));
    match write(&config.report, &report) {
        Ok(()) => eprintln!("pnmpi vtime: wrote {}", config.report.display()),
        Err(err) => eprintln!("pnmpi vtime: cannot write {}: {err}", config.report.display()),
    }
    let spread = match e.dist.as_ref() {
        Some(_) => format!(
            "; {} windows, {} exchanges of records, {} records between processes",
            all.windows, all.exchanges, all.records
        ),
        None => String::new(),
    };
    eprintln!(
        "pnmpi vranks: {} context switches, {} events in {:.3} s{spread}",
        all.switches,
        all.events,
        wall_ns * 1e-9
    );
}
