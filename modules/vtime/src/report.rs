//! The report, at `MPI_Finalize`: rank 0 gathers every rank's virtual run
//! time (its clock when it entered `MPI_Finalize`), compute, communication
//! and wait, and the real wall time the run took, prints a table to
//! stderr and writes the JSON report (to a temporary file, then renamed,
//! so a reader never sees half of it).

use crate::config;
use crate::state::State;
use pnmpi_mpi_sys::Handle;
use pnmpi_sdk::{constants, native, Comm};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

/// Fields each rank sends, in this order.
const FIELDS: usize = 11;

/// One rank's line of the report.
#[derive(Serialize, Clone, Copy)]
pub struct RankReport {
    /// World rank.
    pub rank: u32,
    /// Node on the target machine.
    pub node: u32,
    /// Virtual run time: end of `MPI_Init` to the start of `MPI_Finalize`.
    pub runtime_ns: f64,
    /// Scaled CPU time between MPI calls.
    pub compute_ns: f64,
    /// Time the model charged inside MPI calls.
    pub comm_ns: f64,
    /// Time inside MPI calls waiting for a later partner.
    pub wait_ns: f64,
    /// MPI calls.
    pub calls: u64,
    /// Timed messages sent.
    pub messages_sent: u64,
    /// Their bytes.
    pub bytes_sent: u64,
    /// Timed messages received.
    pub messages_received: u64,
    /// Timed collectives.
    pub collectives: u64,
    /// Real wall time over the same span, ns.
    pub wall_ns: f64,
}

impl RankReport {
    fn row(&self) -> [f64; FIELDS] {
        [
            f64::from(self.node),
            self.runtime_ns,
            self.compute_ns,
            self.comm_ns,
            self.wait_ns,
            self.calls as f64,
            self.messages_sent as f64,
            self.bytes_sent as f64,
            self.messages_received as f64,
            self.collectives as f64,
            self.wall_ns,
        ]
    }

    fn from_row(rank: u32, r: &[f64]) -> RankReport {
        RankReport {
            rank,
            node: r[0] as u32,
            runtime_ns: r[1],
            compute_ns: r[2],
            comm_ns: r[3],
            wait_ns: r[4],
            calls: r[5] as u64,
            messages_sent: r[6] as u64,
            bytes_sent: r[7] as u64,
            messages_received: r[8] as u64,
            collectives: r[9] as u64,
            wall_ns: r[10],
        }
    }
}

/// The whole report.
#[derive(Serialize)]
struct Report<'a> {
    /// The target machine.
    machine: String,
    /// The communication model.
    model: &'a str,
    /// The CPU factor.
    cpu_factor: f64,
    /// World size.
    ranks: usize,
    /// The latest rank's virtual run time: the run's predicted time, s.
    virtual_runtime_s: f64,
    /// The longest rank's real wall time over the same span, s.
    wall_s: f64,
    /// Real wall time per virtual second: the simulator's own cost.
    slowdown: f64,
    /// Sums over the ranks, virtual s.
    compute_s: f64,
    /// As above.
    comm_s: f64,
    /// As above.
    wait_s: f64,
    /// Per rank, in rank order.
    per_rank: Vec<RankReport>,
}

/// Closes the books at `MPI_Finalize` (the state already taken, the clock
/// at the call's entry): gathers and reports on rank 0.
pub fn finish(st: &State) {
    let wall = pnmpi_sdk::clock::monotonic_ns().saturating_sub(st.wall_start) as f64;
    let Some(config) = config::get() else { return };
    let Some(world) = st
        .comms
        .get(&constants::COMM_WORLD().bits())
        .map(|i| Comm::from_bits(i.shadow))
    else {
        return;
    };
    let t = &st.totals;
    let mine = RankReport {
        rank: st.rank,
        node: st.node_of.get(st.rank as usize).copied().unwrap_or(0),
        runtime_ns: st.clock,
        compute_ns: t.compute,
        comm_ns: t.comm,
        wait_ns: t.wait,
        calls: t.calls,
        messages_sent: t.sent,
        bytes_sent: t.sent_bytes,
        messages_received: t.received,
        collectives: t.collectives,
        wall_ns: wall,
    };
    let all = match native::gather(&mine.row(), world) {
        Ok(Some(all)) => all,
        Ok(None) => return,
        Err(e) => {
            eprintln!("pnmpi vtime: rank {}: cannot gather the report: {e}", st.rank);
            return;
        }
    };
    let per_rank: Vec<RankReport> = all
        .chunks(FIELDS)
        .enumerate()
        .map(|(r, row)| RankReport::from_row(r as u32, row))
        .collect();
    let runtime = per_rank.iter().map(|r| r.runtime_ns).fold(0.0, f64::max);
    let wall = per_rank.iter().map(|r| r.wall_ns).fold(0.0, f64::max);
    let report = Report {
        machine: config.machine_name(),
        model: &config.model,
        cpu_factor: config.cpu_factor,
        ranks: per_rank.len(),
        virtual_runtime_s: runtime * 1e-9,
        wall_s: wall * 1e-9,
        slowdown: if runtime > 0.0 { wall / runtime } else { 0.0 },
        compute_s: per_rank.iter().map(|r| r.compute_ns).sum::<f64>() * 1e-9,
        comm_s: per_rank.iter().map(|r| r.comm_ns).sum::<f64>() * 1e-9,
        wait_s: per_rank.iter().map(|r| r.wait_ns).sum::<f64>() * 1e-9,
        per_rank,
    };
    eprint!("{}", table(&report));
    match write(&config.report, &report) {
        Ok(()) => eprintln!("pnmpi vtime: wrote {}", config.report.display()),
        Err(e) => eprintln!("pnmpi vtime: cannot write {}: {e}", config.report.display()),
    }
}

/// The table rank 0 prints: every rank up to 16, else the least, mean
/// and most of each column.
fn table(r: &Report<'_>) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "pnmpi vtime: {} ranks on {} (model {}, cpu_factor {})",
        r.ranks, r.machine, r.model, r.cpu_factor
    );
    let _ = writeln!(
        out,
        "{:>8} {:>5} {:>14} {:>14} {:>14} {:>14} {:>9}",
        "rank", "node", "virtual s", "compute s", "comm s", "wait s", "messages"
    );
    let line = |out: &mut String, name: &str, node: String, x: [f64; 5]| {
        let _ = writeln!(
            out,
            "{name:>8} {node:>5} {:>14.9} {:>14.9} {:>14.9} {:>14.9} {:>9.0}",
            x[0] * 1e-9,
            x[1] * 1e-9,
            x[2] * 1e-9,
            x[3] * 1e-9,
            x[4]
        );
    };
    let cols = |p: &RankReport| {
        [
            p.runtime_ns,
            p.compute_ns,
            p.comm_ns,
            p.wait_ns,
            (p.messages_sent + p.messages_received) as f64,
        ]
    };
    if r.per_rank.len() <= 16 {
        for p in &r.per_rank {
            line(&mut out, &p.rank.to_string(), p.node.to_string(), cols(p));
        }
    } else {
        let n = r.per_rank.len() as f64;
        let mut min = [f64::INFINITY; 5];
        let mut max = [f64::NEG_INFINITY; 5];
        let mut sum = [0.0; 5];
        for p in &r.per_rank {
            for (i, v) in cols(p).into_iter().enumerate() {
                min[i] = min[i].min(v);
                max[i] = max[i].max(v);
                sum[i] += v;
            }
        }
        line(&mut out, "min", String::new(), min);
        line(&mut out, "mean", String::new(), sum.map(|s| s / n));
        line(&mut out, "max", String::new(), max);
    }
    let _ = writeln!(
        out,
        "pnmpi vtime: virtual run time {:.9} s; real wall time {:.3} s; slowdown {:.2}x",
        r.virtual_runtime_s, r.wall_s, r.slowdown
    );
    out
}

/// Writes the JSON to a temporary file beside `path`, then renames it.
fn write(path: &Path, report: &Report<'_>) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(report).map_err(std::io::Error::other)?;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    let tmp = std::path::PathBuf::from(tmp);
    std::fs::write(&tmp, text + "\n")?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}
