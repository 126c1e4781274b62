//! The report of a live run on a model (`vtime`, `pnmpi run --vranks`):
//! one line per rank, the table printed at the end (every rank up to 16,
//! else the least, mean and most of each column) and the JSON report,
//! written to a temporary file and renamed so a reader never sees half.

use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;

/// One rank's line of the report (read back when the ranks of one run
/// were spread over processes).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default)]
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
    /// Acknowledgements of rendezvous sends this rank sent back (vtime's
    /// cost of timing them; 0 under virtual ranks, which need none).
    #[serde(default)]
    pub acks_sent: u64,
}

/// The whole report.
#[derive(Serialize)]
pub struct Report<'a> {
    /// The target machine.
    pub machine: String,
    /// The communication model.
    pub model: &'a str,
    /// The CPU factor.
    pub cpu_factor: f64,
    /// World size.
    pub ranks: usize,
    /// The latest rank's virtual run time: the run's predicted time, s.
    pub virtual_runtime_s: f64,
    /// The longest rank's real wall time over the same span, s.
    pub wall_s: f64,
    /// Real wall time per virtual second: the simulator's own cost.
    pub slowdown: f64,
    /// Sums over the ranks, virtual s.
    pub compute_s: f64,
    /// As above.
    pub comm_s: f64,
    /// As above.
    pub wait_s: f64,
    /// Per rank, in rank order.
    pub per_rank: Vec<RankReport>,
    /// Per thread of the ranks whose threads called MPI (vtime under
    /// `MPI_THREAD_MULTIPLE`), by rank then thread: each thread's end.
    /// A rank's run time is its latest thread's.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub per_thread: Vec<ThreadEnd>,
}

/// One thread's end in the report.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
pub struct ThreadEnd {
    /// World rank.
    pub rank: u32,
    /// The thread's number in its rank (0: the one that initialized MPI,
    /// then in creation order).
    pub thread: u32,
    /// Its virtual end: its clock when it ended, or at `MPI_Finalize`.
    pub end_ns: f64,
}

impl<'a> Report<'a> {
    /// The report of `per_rank` (in rank order) on `machine`.
    pub fn new(machine: String, model: &'a str, cpu_factor: f64, per_rank: Vec<RankReport>) -> Report<'a> {
        let runtime = per_rank.iter().map(|r| r.runtime_ns).fold(0.0, f64::max);
        let wall = per_rank.iter().map(|r| r.wall_ns).fold(0.0, f64::max);
        Report {
            machine,
            model,
            cpu_factor,
            ranks: per_rank.len(),
            virtual_runtime_s: runtime * 1e-9,
            wall_s: wall * 1e-9,
            slowdown: if runtime > 0.0 { wall / runtime } else { 0.0 },
            compute_s: per_rank.iter().map(|r| r.compute_ns).sum::<f64>() * 1e-9,
            comm_s: per_rank.iter().map(|r| r.comm_ns).sum::<f64>() * 1e-9,
            wait_s: per_rank.iter().map(|r| r.wait_ns).sum::<f64>() * 1e-9,
            per_rank,
            per_thread: Vec::new(),
        }
    }
}

/// The table rank 0 prints: every rank up to 16, else the least, mean
/// and most of each column.
pub fn table(r: &Report<'_>) -> String {
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
pub fn write(path: &Path, report: &Report<'_>) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(report).map_err(std::io::Error::other)?;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    let tmp = std::path::PathBuf::from(tmp);
    std::fs::write(&tmp, text + "\n")?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}
