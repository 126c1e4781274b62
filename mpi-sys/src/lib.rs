//! The native MPI as seen from Rust: bindgen's types and `PMPI_`
//! declarations (`ffi`), and the routine table (`ROUTINE_NAMES`,
//! `for_each_routine!`) that libpnmpi and every Rust module share, so that
//! routine ids and signatures agree across crates.
//!
//! `no_std`, so that a module built without std (the compact empty module)
//! can use it.

#![no_std]

extern crate self as pnmpi_mpi_sys;

/// bindgen's output for the native `mpi.h`: types and `PMPI_` functions
/// (generated code: its layout tests' unsafe blocks carry no comments).
#[allow(
    non_upper_case_globals,
    non_camel_case_types,
    non_snake_case,
    dead_code,
    clippy::all,
    clippy::undocumented_unsafe_blocks
)]
pub mod ffi {
    include!(concat!(env!("OUT_DIR"), "/ffi.rs"));
}

include!(concat!(env!("OUT_DIR"), "/routines.rs"));

pub mod abort;
pub mod combiner;
pub mod constants;

/// The build report: what was generated, what was skipped and why.
pub const BUILD_REPORT: &str = include_str!(concat!(env!("OUT_DIR"), "/pnmpi-build-report.txt"));

/// File-name prefixes of the native MPIs' Fortran binding libraries:
/// Open MPI's `mpif.h`, `use mpi` and `use mpi_f08` libraries, and MPICH's
/// (and Intel MPI's) `libmpifort` / `libmpichfort`. libpnmpi binds their
/// `PMPI_X` calls into the chain, and the profiler looks through their
/// frames for the application's call site.
pub const FORTRAN_BINDINGS: &[&str] = &["libmpi_mpifh", "libmpi_usempi", "libmpichfort", "libmpifort"];

/// An MPI handle (`MPI_Comm`, `MPI_Request`, ...) as a number: a pointer
/// under Open MPI, an `int` under MPICH. A number is `Send`, which a
/// pointer is not, and both MPIs compare handles by value, so modules key
/// their maps and records by it.
pub trait Handle: Copy {
    /// Its bits.
    fn bits(self) -> u64;
    /// The handle with these bits (made by [`Handle::bits`]).
    fn from_bits(bits: u64) -> Self;
}

impl<T> Handle for *mut T {
    fn bits(self) -> u64 {
        self as usize as u64
    }
    fn from_bits(bits: u64) -> Self {
        bits as usize as *mut T
    }
}

impl Handle for core::ffi::c_int {
    fn bits(self) -> u64 {
        u64::from(self as u32)
    }
    fn from_bits(bits: u64) -> Self {
        bits as u32 as core::ffi::c_int
    }
}
