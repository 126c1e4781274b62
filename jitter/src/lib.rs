//! OS jitter (jitSim, De and Mann): noise traces from one node, and a
//! simulator that predicts how much that noise slows a bulk-synchronous
//! application (compute a quantum, then a barrier) at any task count.
//!
//! - [`format`] reads and writes noise traces: ours (text and binary
//!   `<jitter_duration, cycles_to_next_jitter>` rows), netgauge's
//!   selfish-detour output and LogGOPSim's `<start_ns> <duration_ns>`
//!   lines;
//! - [`timeline`] turns a trace into a periodic timeline of noise events
//!   that a task walks through (the paper's figure 2);
//! - [`sim`] places tasks in the timelines (unsynchronized, synchronized,
//!   co-scheduled), runs compute phases and tree barriers (figures 3 and
//!   6), and reports the slowdown against the same run without noise;
//! - [`inject`] puts the same noise into `pnmpi sim replay`'s engine.
//!
//! This crate has no MPI dependency; the collector that measures a node
//! lives in the `pnmpi` command.

pub mod format;
pub mod inject;
pub mod sim;
pub mod timeline;

use std::path::PathBuf;

/// Why a trace could not be read or a simulation not run.
#[derive(Debug, thiserror::Error)]
pub enum JitterError {
    /// A bad trace: the file, where in it, what is wrong and what to do.
    #[error("{file}: {at}: {what}")]
    Trace {
        /// The trace file.
        file: PathBuf,
        /// "line N" or "byte N".
        at: String,
        /// What is wrong, and what to do.
        what: String,
    },
    /// A parameter the traces cannot serve (a quantum longer than a trace).
    #[error("{0}")]
    Params(String),
    /// An I/O error on a file.
    #[error("{file}: {err}")]
    Io {
        /// The file.
        file: PathBuf,
        /// The error.
        err: std::io::Error,
    },
}
