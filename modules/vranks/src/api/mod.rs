//! The MPI routines a virtual rank calls: C symbols that the preloaded
//! `libvranks.so` defines before the native MPI's, each working on the
//! engine's virtual objects. The native MPI serves only what no rank
//! owns: datatypes, operations, packing and local reductions.

pub mod coll;
pub mod comm;
pub mod complete;
pub mod persistent;
pub mod pt2pt;
mod results;
pub mod rma;
pub mod traced;
pub mod unsupported;

use crate::engine::{self, with};
use pnmpi_mpi_sys::{constants as c, ffi};
use std::ffi::c_int;

/// Compute shorter than this before a test or probe that finds nothing
/// is polling: the rank waits for the next event instead of spinning in
/// zero virtual time.
const POLLING_NS: f64 = 1000.0;

/// An MPI call in progress: at its start the rank's CPU time since its
/// last call is charged to its clock; at its end the CPU mark is reset,
/// so that the layer's own work is not charged. In a traced run it is
/// one event of the rank's trace, from the clock after the compute to
/// the clock at its end ([`crate::trace`]).
pub struct CallInProgress {
    /// Virtual compute charged at entry.
    pub compute: f64,
}

impl CallInProgress {
    /// Charges the running rank's compute, at the start of `routine`.
    pub fn enter(routine: &'static str) -> CallInProgress {
        let (compute, traced) = with(|e| e.enter_call(routine));
        if let Err(what) = traced {
            fatal("tracer", &what);
        }
        CallInProgress { compute }
    }

    /// Whether the rank computed so little since its last call that it is
    /// polling.
    pub fn polling(&self) -> bool {
        self.compute < POLLING_NS
    }
}

impl Drop for CallInProgress {
    fn drop(&mut self) {
        let written = with(|e| e.leave_call());
        if let Err(what) = written {
            fatal("tracer", &what);
        }
    }
}

/// Stops the run: an application error the real MPI would also stop at
/// (its default error handler is `MPI_ERRORS_ARE_FATAL`).
pub fn fatal(routine: &str, what: &str) -> ! {
    if engine::running() {
        with(|e| e.fatal(routine, what))
    }
    engine::stop("?", routine, what)
}

/// The handle of virtual object `index` of `kind`; stops the run if
/// there are too many live objects of that kind for a handle to name.
pub fn handle<H: pnmpi_mpi_sys::Handle>(kind: crate::handles::Kind, index: usize) -> H {
    crate::handles::make(kind, index).unwrap_or_else(|what| fatal("pnmpi vranks", &what))
}

/// The handle of virtual communicator `index` (as [`handle`]).
pub fn comm_handle(index: usize) -> ffi::MPI_Comm {
    crate::handles::comm_handle(index).unwrap_or_else(|what| fatal("pnmpi vranks", &what))
}

/// The virtual communicator `h` names, or stops naming the routine.
pub fn comm_of(routine: &str, h: ffi::MPI_Comm) -> usize {
    match crate::handles::comm(h) {
        Some(i) if with(|e| e.comms().exists(i)) => i,
        _ => fatal(
            routine,
            "invalid communicator (MPI_COMM_NULL, freed, or not one of this run's)",
        ),
    }
}

/// The running rank's rank in `comm`, and the communicator's size.
pub fn rank_size(comm: usize) -> (u32, u32) {
    with(|e| {
        let me = e.current();
        (e.comms().rank_of(comm, me).unwrap_or(0), e.comms().size(comm))
    })
}

/// Fills a status the application gave (unless it is `MPI_STATUS_IGNORE`).
///
/// # Safety
/// `st` is null, `MPI_STATUS_IGNORE`, or points to an `MPI_Status`.
pub unsafe fn set_status(st: *mut ffi::MPI_Status, source: c_int, tag: c_int, bytes: usize) {
    if st.is_null() || st == c::STATUS_IGNORE() {
        return;
    }
    // SAFETY: the caller's status.
    unsafe {
        (*st).MPI_SOURCE = source;
        (*st).MPI_TAG = tag;
        (*st).MPI_ERROR = c::SUCCESS();
        ffi::PMPI_Status_set_elements_x(st, c::BYTE(), bytes as ffi::MPI_Count);
        ffi::PMPI_Status_set_cancelled(st, 0);
    }
}

/// `MPI_SUCCESS`.
pub fn ok() -> c_int {
    c::SUCCESS()
}
