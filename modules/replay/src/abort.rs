//! How a rank stops: its rank, the divergence report, and the abort of
//! the whole job, through the SDK's `say`.

use crate::format::Kind;
use std::fmt::Display;
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
    fail(
        3,
        format_args!(
            "thread {thread}: call #{index} {kind}: {what} \
             (the program, its inputs, its threads or the number of ranks changed since the record)"
        ),
    )
}

/// Says why this rank stops, `pnmpi replay: rank R: WHAT` (the form
/// docs/replay.md shows and scripts read: the stop itself says it is an
/// error), and aborts the whole job with `code` ([`abort`]).
pub fn fail(code: i32, what: impl Display) -> ! {
    pnmpi_sdk::say::note("replay", what);
    abort(code)
}

/// Aborts the whole job with `code`, past the modules below, after a
/// moment for the other ranks' messages: the first abort tears the job
/// down, and MPICH's launcher under load dropped a rank's message that
/// was still being written.
pub fn abort(code: i32) -> ! {
    std::thread::sleep(std::time::Duration::from_millis(200));
    // Every caller runs between MPI_Init and MPI_Finalize: the job ends.
    pnmpi_sdk::say::stop_with(code)
}
