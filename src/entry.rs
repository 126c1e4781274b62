//! The per-routine entry table the application's `MPI_X` jumps through,
//! and the native `PMPI_X` it holds until a binding points it at a layer.
//! The bottom of libpnmpi's layers: it names nothing of libpnmpi's own.
//!
//! Until the modules are loaded (and for every routine no module wraps)
//! an entry holds `PMPI_X`, set by the loader's relocations before any
//! code of the process runs.

use pnmpi_mpi_sys::{ffi, ROUTINE_COUNT};
use std::sync::atomic::{AtomicPtr, Ordering};

/// One of libpnmpi's entry points by routine id (the dispatcher's, or the
/// exported `MPI_X`): the stubs, which define them, hand these to the
/// layers below that point tables and slots at them.
pub type ByRoutine = fn(usize) -> *const ();

/// A code address in a table that is never written.
pub struct Code(pub *const ());

// SAFETY: function addresses, only read.
unsafe impl Sync for Code {}

macro_rules! tables {
    ($(($mpi:ident, $pmpi:ident)),* $(,)?) => {
        /// Where `MPI_X` goes, by routine id.
        pub static ENTRY: [AtomicPtr<()>; ROUTINE_COUNT] = [$(AtomicPtr::new(ffi::$pmpi as *mut ())),*];
        static NATIVE: [Code; ROUTINE_COUNT] = [$(Code(ffi::$pmpi as *const ())),*];
    };
}

pnmpi_mpi_sys::all_routines!(tables);

/// `PMPI_X`.
pub fn native(id: usize) -> *const () {
    NATIVE[id].0
}

/// Where `MPI_X` goes now.
#[inline(always)]
pub fn get(id: usize) -> *const () {
    ENTRY[id].load(Ordering::Acquire)
}

/// Sends `MPI_X` to `target`; one aligned pointer store, so a thread
/// calling X meanwhile takes either the old or the new target.
pub fn set(id: usize, target: *const ()) {
    ENTRY[id].store(target.cast_mut(), Ordering::Release);
}
