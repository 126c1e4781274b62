//! Errors a build can hit while reading the native MPI; each names the fix.

use std::path::PathBuf;

/// Why stub generation failed. The messages are shown by `cargo build`, so
/// each one says which package or variable to act on.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "no MPI found: {detail}.\n  Install one with `apt-get install libopenmpi-dev openmpi-bin` \
         (Open MPI) or `apt-get install libmpich-dev mpich` (MPICH), or point MPICC at its \
         compiler wrapper (e.g. MPICC=mpicc.mpich) or MPI_PKG_CONFIG at its pkg-config name"
    )]
    NoMpi { detail: String },
    #[error(
        "libclang is missing, so bindgen cannot read mpi.h: {detail}.\n  Install it with \
         `apt-get install libclang-dev`, or set LIBCLANG_PATH to the folder holding libclang.so"
    )]
    NoLibclang { detail: String },
    #[error("bindgen could not parse {header}: {detail}")]
    Bindgen { header: PathBuf, detail: String },
    #[error("cannot parse bindgen's output for {header}: {detail}")]
    Parse { header: PathBuf, detail: String },
    #[error("cannot read the MPI library {path}: {detail}")]
    Library { path: PathBuf, detail: String },
    #[error("{what} declares no PMPI_ routine: is {header} really an MPI header?")]
    NoRoutines { what: String, header: PathBuf },
}

/// Result alias for stub generation.
pub type Result<T> = std::result::Result<T, Error>;
