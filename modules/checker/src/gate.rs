//! The gate before every checked call: once `MPI_Finalize` has run, a
//! checked call is reported instead of made. Apart from `lifecycle`, which
//! closes it, so that the modules of objects and calls that `lifecycle`
//! uses at `MPI_Init` and `MPI_Finalize` do not depend on it.

use crate::report::{self, Class};
use crate::site::Here;
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

static FINALIZED: AtomicBool = AtomicBool::new(false);

/// Before a checked call: after `MPI_Finalize`, reports it and returns
/// the code the wrapper returns instead of calling MPI.
pub fn gate(here: &Here) -> Option<c_int> {
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

/// Closes the gate: `MPI_Finalize` is under way.
pub fn close() {
    FINALIZED.store(true, Relaxed);
}

/// Whether `MPI_Finalize` has run.
pub fn finalized() -> bool {
    FINALIZED.load(Relaxed)
}
