//! The native MPI as seen from Rust: bindgen's types and `PMPI_`
//! declarations (`ffi`), and the routine table (`ROUTINE_NAMES`,
//! `for_each_routine!`) that libpnmpi and every Rust module share, so that
//! routine ids and signatures agree across crates.
//!
//! `no_std`, so that a module built without std (the compact empty module)
//! can use it.

#![no_std]

extern crate self as pnmpi_mpi_sys;

/// bindgen's output for the native `mpi.h`: types and `PMPI_` functions.
#[allow(
    non_upper_case_globals,
    non_camel_case_types,
    non_snake_case,
    dead_code,
    clippy::all
)]
pub mod ffi {
    include!(concat!(env!("OUT_DIR"), "/ffi.rs"));
}

include!(concat!(env!("OUT_DIR"), "/routines.rs"));

pub mod constants;

/// The build report: what was generated, what was skipped and why.
pub const BUILD_REPORT: &str = include_str!(concat!(env!("OUT_DIR"), "/pnmpi-build-report.txt"));

/// File-name prefixes of the native MPIs' Fortran binding libraries:
/// Open MPI's `mpif.h`, `use mpi` and `use mpi_f08` libraries, and MPICH's
/// (and Intel MPI's) `libmpifort` / `libmpichfort`. libpnmpi binds their
/// `PMPI_X` calls into the chain, and the profiler looks through their
/// frames for the application's call site.
pub const FORTRAN_BINDINGS: &[&str] = &["libmpi_mpifh", "libmpi_usempi", "libmpichfort", "libmpifort"];
