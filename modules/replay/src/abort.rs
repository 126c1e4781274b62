//! How a rank stops: its rank for the messages, the divergence report,
//! and the abort of the whole job.

use crate::format::Kind;
use std::io::Write;
use std::sync::atomic::{AtomicI32, Ordering};

/// This process's rank in `MPI_COMM_WORLD`, once MPI is up.
static RANK: AtomicI32 = AtomicI32::new(-1);

/// This process's rank in `MPI_COMM_WORLD` (-1 before `MPI_Init`).
pub fn rank() -> i32 {
    RANK.load(Ordering::Relaxed)
}

/// Sets the rank, once MPI is up.
pub fn set_rank(rank: i32) {
    RANK.store(rank, Ordering::Relaxed);
}

/// Reports a divergence from the record by thread `thread`'s call
/// `index` (its calls that consult the record, from 0) and aborts the
/// job: a replayed run that left the record must not go on as if it had
/// not.
pub fn diverge(thread: u32, index: u64, kind: Kind, what: &str) -> ! {
    let msg = format!(
        "pnmpi replay: rank {}: thread {thread}: call #{index} {kind}: {what} \
         (the program, its inputs, its threads or the number of ranks changed since the record)\n",
        rank()
    );
    let _ = std::io::stderr().write_all(msg.as_bytes());
    abort(3)
}

/// Aborts the whole job with `code`, past the modules below, after a
/// moment for the other ranks' messages: the first abort tears the job
/// down, and MPICH's launcher under load dropped a rank's message that
/// was still being written.
pub fn abort(code: i32) -> ! {
    std::thread::sleep(std::time::Duration::from_millis(200));
    // Every caller runs between MPI_Init and MPI_Finalize.
    pnmpi_mpi_sys::abort::abort_job(code)
}
