//! The MPI routines a virtual rank calls: C symbols that the preloaded
//! `libvranks.so` defines before the native MPI's, each working on the
//! engine's virtual objects. The native MPI serves only what no rank
//! owns: datatypes, operations, packing and local reductions.

pub mod coll;
pub mod comm;
pub mod complete;
pub mod persistent;
pub mod pt2pt;
pub mod unsupported;

use crate::engine::{self, with, Engine};
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
pub struct Call {
    /// Virtual compute charged at entry.
    pub compute: f64,
}

impl Call {
    /// Charges the running rank's compute, at the start of `routine`.
    pub fn enter(routine: &'static str) -> Call {
        let (call, traced) = with(|e| {
            let r = e.current as usize;
            let cpu = if e.cpu_factor > 0.0 {
                pnmpi_sdk::clock::thread_cpu_ns()
            } else {
                0
            };
            let node = e.node_of[r];
            let rank = &mut e.ranks[r];
            let mut compute = 0.0;
            if rank.initialized && !rank.finalized && e.cpu_factor > 0.0 {
                let used = cpu.saturating_sub(rank.cpu_mark).saturating_sub(e.cpu_bias) as f64;
                compute = pnmpi_sim::kernel::cpu(&e.machine, node, used, e.cpu_factor);
                rank.clock += compute;
                rank.stats.compute += compute;
            }
            rank.stats.calls += 1;
            rank.routine = routine;
            let clock = rank.clock;
            let traced = e
                .trace
                .as_mut()
                .map_or(Ok(()), |t| t.begin(r as u32, routine, clock));
            (Call { compute }, traced)
        });
        if let Err(what) = traced {
            fatal("tracer", &what);
        }
        call
    }

    /// Whether the rank computed so little since its last call that it is
    /// polling.
    pub fn polling(&self) -> bool {
        self.compute < POLLING_NS
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        let written = with(|e| {
            let r = e.current as usize;
            if e.cpu_factor > 0.0 {
                e.ranks[r].cpu_mark = pnmpi_sdk::clock::thread_cpu_ns();
            }
            let clock = e.ranks[r].clock;
            e.trace.as_mut().map_or(Ok(()), |t| t.end(r as u32, clock))
        });
        if let Err(what) = written {
            fatal("tracer", &what);
        }
    }
}

/// Stops the run: an application error the real MPI would also stop at
/// (its default error handler is `MPI_ERRORS_ARE_FATAL`).
pub fn fatal(routine: &str, what: &str) -> ! {
    if engine::running() {
        with(|e| fatal_in(e, routine, what))
    }
    stop("?", routine, what)
}

/// [`fatal`] from inside the engine (an error met in an engine step,
/// which holds `e`): names the running rank and writes out the trace
/// through `e`, never through a second borrow of the engine.
pub fn fatal_in(e: &mut Engine, routine: &str, what: &str) -> ! {
    if routine != "tracer" {
        if let Some(t) = e.trace.as_mut() {
            t.abandon();
        }
    }
    stop(&e.current.to_string(), routine, what)
}

/// Says what stopped the run, at virtual rank `rank`, and ends the job
/// (while the ranks run) or the process (before or after).
fn stop(rank: &str, routine: &str, what: &str) -> ! {
    eprintln!("pnmpi vranks: error: virtual rank {rank}: {routine}: {what}");
    if engine::running() {
        // SAFETY: the native MPI is initialized while the ranks run
        // (`start` initializes it before and finalizes it after);
        // aborting the job is always allowed then.
        unsafe { ffi::PMPI_Abort(c::COMM_WORLD(), 1) };
    }
    // SAFETY: _exit(2) ends the process at once. `_exit`, not `exit`:
    // inside a rank, `exit` would end that rank only.
    unsafe { libc::_exit(1) }
}

/// The virtual communicator `h` names, or stops naming the routine.
pub fn comm_of(routine: &str, h: ffi::MPI_Comm) -> usize {
    match crate::handles::comm(h) {
        Some(i) if with(|e| e.comms.exists(i)) => i,
        _ => fatal(
            routine,
            "invalid communicator (MPI_COMM_NULL, freed, or not one of this run's)",
        ),
    }
}

/// The running rank's rank in `comm`, and the communicator's size.
pub fn rank_size(comm: usize) -> (u32, u32) {
    with(|e| {
        let me = e.current;
        (e.comms.rank_of(comm, me).unwrap_or(0), e.comms.size(comm))
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
