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

/// `a == b` for byte strings in a constant (`==` on slices is not
/// `const`): routine names matched when a crate is compiled.
pub const fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The id of the routine named `name` (`MPI_Send`) in [`ROUTINE_NAMES`],
/// or none: for tables built when a crate is compiled.
pub const fn routine_named(name: &str) -> Option<usize> {
    let mut id = 0;
    while id < ROUTINE_COUNT {
        if same_bytes(ROUTINE_NAMES[id].as_bytes(), name.as_bytes()) {
            return Some(id);
        }
        id += 1;
    }
    None
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routines_are_found_by_name_when_compiled() {
        const SEND: Option<usize> = routine_named("MPI_Send");
        assert_eq!(SEND.map(|id| ROUTINE_NAMES[id]), Some("MPI_Send"));
        assert_eq!(routine_named("MPI_Sen"), None);
        assert_eq!(routine_named("MPI_Sendx"), None);
        assert!(same_bytes(b"MPI_", b"MPI_") && !same_bytes(b"MPI_", b"MPI") && !same_bytes(b"ab", b"ac"));
    }
}
