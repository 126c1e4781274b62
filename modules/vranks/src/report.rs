//! The report at the end of the run: vtime's table and JSON
//! (`pnmpi_sim::live::report`), for the N virtual ranks. When the ranks
//! were spread over processes, process 0 gathers every process's lines
//! and counts, and alone prints and writes.

use crate::dist::Dist;
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
    let s = e.sched();
    let ranks = s
        .local_ranks()
        .map(|r| {
            let rank = s.rank(r);
            let st = &rank.stats;
            RankReport {
                rank: r,
                node: e.timing().node(r),
                runtime_ns: rank.end.unwrap_or(rank.clock),
                compute_ns: st.compute,
                comm_ns: st.comm,
                wait_ns: st.wait,
                calls: st.calls,
                messages_sent: st.sent,
                bytes_sent: st.sent_bytes,
                messages_received: st.received,
                collectives: st.collectives,
                wall_ns,
                acks_sent: 0,
            }
        })
        .collect();
    let (windows, exchanges, records) = e.dist().map_or((0, 0, 0), Dist::counts);
    let (events, switches) = s.counts();
    Part {
        ranks,
        switches,
        events,
        windows,
        exchanges,
        records,
    }
}

/// Prints the table and writes the JSON report (process 0 of a spread
/// run: every process calls this, in step).
pub fn finish(e: &mut Engine, config: &Config, wall_ns: f64) {
    let mine = part(e, wall_ns);
    let spread = e.dist().is_some();
    let all = match e.dist_mut() {
        None => mine,
        Some(d) => {
            let bytes = postcard::to_allocvec(&mine).expect("a report part encodes");
            let Some(parts) = d.gather(&bytes) else { return };
            let mut all = Part::default();
            for (i, p) in parts.iter().enumerate() {
                let p: Part = match postcard::from_bytes(p) {
                    Ok(p) => p,
                    Err(err) => {
                        pnmpi_sdk::say::unranked(
                            "vranks",
                            pnmpi_sdk::say::Level::Error,
                            format_args!("process {i}'s part of the report is unreadable ({err}); its ranks are missing from the report"),
                        );
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
    // The table's lines in one write.
    pnmpi_sdk::say::write_line(&table(&report));
    match write(&config.report, &report) {
        Ok(()) => pnmpi_sdk::say::unranked(
            "vtime",
            pnmpi_sdk::say::Level::Note,
            format_args!("wrote {}", config.report.display()),
        ),
        Err(err) => pnmpi_sdk::say::unranked(
            "vtime",
            pnmpi_sdk::say::Level::Warning,
            format_args!("cannot write {}: {err}", config.report.display()),
        ),
    }
    let spread = match spread {
        true => format!(
            "; {} windows, {} exchanges of records, {} records between processes",
            all.windows, all.exchanges, all.records
        ),
        false => String::new(),
    };
    pnmpi_sdk::say::unranked(
        "vranks",
        pnmpi_sdk::say::Level::Note,
        format_args!(
            "{} context switches, {} events in {:.3} s{spread}",
            all.switches,
            all.events,
            wall_ns * 1e-9
        ),
    );
}
