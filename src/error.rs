//! Errors that stop a run before MPI starts. Each message names the file
//! (and line) at fault and what to do about it.

use std::path::PathBuf;

/// Why the modules the user asked for cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{file}:{line}: {msg}")]
    Syntax { file: PathBuf, line: usize, msg: String },
    #[error("{file}: {msg}")]
    Toml { file: PathBuf, msg: String },
    #[error("cannot read configuration {file}: {source}")]
    Read { file: PathBuf, source: std::io::Error },
    #[error(
        "both {} and {} exist; remove one, or choose with PNMPI_CONF",
        first.display(),
        second.display()
    )]
    Ambiguous { first: PathBuf, second: PathBuf },
    #[error(
        "{file}:{line}: module `{name}` not found; tried {tried} in: {}. \
         Add its folder to PNMPI_LIB_PATH (colon-separated) or give an absolute path",
        searched.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
    )]
    NotFound {
        file: PathBuf,
        line: usize,
        name: String,
        tried: String,
        searched: Vec<PathBuf>,
    },
    #[error("{file}:{line}: module `{name}` ({path}) cannot be loaded: {reason}")]
    Load {
        file: PathBuf,
        line: usize,
        name: String,
        path: PathBuf,
        reason: String,
    },
    /// An environment setting libpnmpi reads has a value it cannot use.
    #[error("{0}")]
    Setting(String),
    /// The modules loaded but could not be bound to each other.
    #[error("{0}")]
    Bind(String),
}
