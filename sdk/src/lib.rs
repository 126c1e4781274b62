//! Write pnmpi modules in Rust.
//!
//! A pnmpi module is a shared object (a `cdylib`) that defines the `MPI_X`
//! routines it wraps and calls `XMPI_X` to reach the next layer of the
//! chain. This crate gives a module everything it needs without writing
//! `unsafe` code:
//!
//! - [`wrap!`] defines wrappers. Each wrapper's C signature comes from the
//!   routine table that libpnmpi itself is generated from
//!   ([`pnmpi_mpi_sys::for_each_routine!`]), so a misspelt routine, a wrong
//!   number of arguments or a wrong return type is a compile error, never a
//!   wrapper that silently does not match the application's call.
//! - [`next`] calls other routines one layer down (`XMPI_`), with slices
//!   and `Result`s instead of raw pointers and status codes; [`raw`]
//!   declares every `XMPI_` entry point for what [`next`] does not cover.
//! - [`native`] makes the same calls straight to the MPI library (`PMPI_`),
//!   past every module below: for the module's own housekeeping (set-up,
//!   private communicators, datatype sizes, a report at `MPI_Finalize`),
//!   which no tool below should count as the application's.
//! - [`services`] wraps LLNL PnMPI's `PNMPI_Service_*` API: arguments from
//!   the configuration, module and stack handles, named services and
//!   globals.
//! - [`sizes`] caches a thread's last datatype size, for wrappers that
//!   count bytes on every call.
//! - [`callsite`] finds the application's call site of a wrapper's call
//!   in a few loads and names it (file:line) for a report.
//! - [`clock`] reads the monotonic clock and the thread's CPU time (with
//!   what a read of it costs), for modules that time or model compute.
//! - [`fixed`] writes fixed-point decimals as `{:.N}` does, at a fraction
//!   of its cost, for reports written at `MPI_Finalize`.
//! - [`say`] prints a module's notes, warnings and errors as one line
//!   with its name and rank, and ends the job on a fatal one.
//! - [`module!`] defines the name and the hooks (`PNMPI_Init` ...) from
//!   Rust closures, and keeps their panics from unwinding into C.
//!
//! A module crate depends on this crate *and* on `pnmpi-mpi-sys`: the
//! routine table spells its types `::pnmpi_mpi_sys::ffi::...`, so the
//! wrappers it generates need that crate by name. Build it as a `cdylib`
//! against the same MPI as libpnmpi; its `XMPI_` and `PNMPI_Service_`
//! imports stay undefined in the `.so` and resolve against libpnmpi when
//! libpnmpi loads the module. `docs/writing-modules.md` is the guide.
//!
//! MPI handles (`MPI_Comm`, `MPI_Datatype`, `MPI_Op`) are passed as they
//! come from the application or from [`constants`]; as in C, MPI trusts
//! them.

pub mod callsite;
pub mod clock;
pub mod contents;
pub mod counter;
pub mod fixed;
pub mod hooks;
pub mod llnl;
pub mod native;
pub mod next;
pub mod raw;
pub mod rma_codes;
pub mod say;
pub mod services;
pub mod sizes;
pub mod threads;
mod wrap;
pub mod zeroed;

/// The native MPI's types, routine table and constants, re-exported so
/// that modules and the macros of this crate use the same build of them.
pub use pnmpi_mpi_sys as sys;

/// MPI's predefined handles and values (`COMM_WORLD()`, `SUM()`, ...).
pub use pnmpi_mpi_sys::constants;

/// `MPI_Comm`: a pointer under Open MPI, an integer under MPICH.
pub type Comm = sys::ffi::MPI_Comm;
/// `MPI_Datatype`.
pub type Datatype = sys::ffi::MPI_Datatype;
/// `MPI_Op`.
pub type Op = sys::ffi::MPI_Op;

/// One `T` per routine id, made on the heap (such arrays are tens of kB,
/// too much for the stack of a small thread). A fixed-size array: the id
/// is a constant in each wrapper, so indexing it needs no bounds check.
pub fn per_routine<T>(make: impl FnMut(usize) -> T) -> Box<[T; sys::ROUTINE_COUNT]> {
    match (0..sys::ROUTINE_COUNT).map(make).collect::<Box<[T]>>().try_into() {
        Ok(array) => array,
        Err(_) => unreachable!("ROUTINE_COUNT elements were made"),
    }
}
