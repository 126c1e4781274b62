//! The gate before every checked call: once `MPI_Finalize` has run, a
//! checked call is reported instead of made. Apart from `lifecycle`, which
//! closes it, so that the modules of objects and calls that `lifecycle`
//! uses at `MPI_Init` and `MPI_Finalize` do not depend on it.

use crate::report::{self, Class};
use crate::site::Here;
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

static FINALIZED: AtomicBool = AtomicBool::new(false);

/// The synchronizing calls this process made: every checked call but
/// those [`gate_passive`] lets through.
static SYNCS: AtomicU64 = AtomicU64::new(0);

/// Before a checked call: after `MPI_Finalize`, reports it and returns
/// the code the wrapper returns instead of calling MPI. The call counts
/// as one that may order this rank with others (`syncs`).
pub fn gate(here: &Here) -> Option<c_int> {
    SYNCS.fetch_add(1, Relaxed);
    gate_passive(here)
}

/// [`gate`] for a call that orders this rank with no other: a one-sided
/// operation, a shared lock or its unlock, a flush. Two shared-lock
/// epochs of two ranks with none but these between them are concurrent
/// (`race`).
pub fn gate_passive(here: &Here) -> Option<c_int> {
    if !FINALIZED.load(Relaxed) {
        return None;
    }
    report::report(
        Class::Nonblocking,
        "after-finalize",
        here.call(),
        &here.site(),
        "called after MPI_Finalize".into(),
    );
    Some(crate::consts::err(crate::consts::Err::Other))
}

/// The synchronizing calls so far.
pub fn syncs() -> u64 {
    SYNCS.load(Relaxed)
}

/// Closes the gate: `MPI_Finalize` is under way.
pub fn close() {
    FINALIZED.store(true, Relaxed);
}

/// Whether `MPI_Finalize` has run.
pub fn finalized() -> bool {
    FINALIZED.load(Relaxed)
}
