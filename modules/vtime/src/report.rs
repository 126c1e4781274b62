//! The report, at `MPI_Finalize`: rank 0 gathers every rank's virtual run
//! time (its latest thread's end: the clock of the thread that entered
//! `MPI_Finalize`, or of a thread that ended later), each thread's end
//! when a rank had several, compute, communication
//! and wait, and the real wall time the run took, prints a table to
//! stderr and writes the JSON report (to a temporary file, then renamed,
//! so a reader never sees half of it).

use crate::config;
use crate::state::State;
use pnmpi_mpi_sys::Handle;
use pnmpi_sdk::{constants, native, Comm};
use pnmpi_sim::live::report::{table, write, RankReport, Report, ThreadEnd};

/// Fields each rank sends, in this order.
const FIELDS: usize = 12;

/// A rank's line as the numbers it sends to rank 0, and back.
trait Row {
    fn row(&self) -> [f64; FIELDS];
    fn from_row(rank: u32, r: &[f64]) -> Self;
}

impl Row for RankReport {
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
            self.acks_sent as f64,
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
            acks_sent: r[11] as u64,
        }
    }
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
        runtime_ns: st.threads.end(),
        compute_ns: t.compute,
        comm_ns: t.comm,
        wait_ns: t.wait,
        calls: t.calls,
        messages_sent: t.sent,
        bytes_sent: t.sent_bytes,
        messages_received: t.received,
        collectives: t.collectives,
        wall_ns: wall,
        acks_sent: t.acks,
    };
    let threads: Vec<f64> = st
        .threads
        .ends
        .iter()
        .flat_map(|(&t, &end)| [f64::from(t), end])
        .collect();
    // Every rank takes part in both gathers before any returns.
    let per_thread = native::gatherv(&threads, world);
    let all = match native::gather(&mine.row(), world) {
        Ok(Some(all)) => all,
        Ok(None) => return,
        Err(e) => {
            pnmpi_sdk::say::warn("vtime", format_args!("cannot gather the report: {e}"));
            return;
        }
    };
    let per_thread = match per_thread {
        Ok(all) => all.unwrap_or_default(),
        Err(e) => {
            pnmpi_sdk::say::warn("vtime", format_args!("cannot gather the threads' ends: {e}"));
            Vec::new()
        }
    };
    let per_rank: Vec<RankReport> = all
        .chunks(FIELDS)
        .enumerate()
        .map(|(r, row)| RankReport::from_row(r as u32, row))
        .collect();
    let mut report = Report::new(config.machine_name(), &config.model, config.cpu_factor, per_rank);
    // Ranks with one thread need no line of their own.
    if per_thread.iter().any(|t| t.len() > 2) {
        report.per_thread = per_thread
            .iter()
            .enumerate()
            .flat_map(|(rank, ends)| {
                ends.chunks(2).map(move |e| ThreadEnd {
                    rank: rank as u32,
                    thread: e[0] as u32,
                    end_ns: e[1],
                })
            })
            .collect();
    }
    // The table's lines in one write.
    pnmpi_sdk::say::write_line(&table(&report));
    match write(&config.report, &report) {
        Ok(()) => pnmpi_sdk::say::note("vtime", format_args!("wrote {}", config.report.display())),
        Err(e) => pnmpi_sdk::say::warn(
            "vtime",
            format_args!("cannot write {}: {e}", config.report.display()),
        ),
    }
}
