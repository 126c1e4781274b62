//! `pnmpi trace analyze`: why a traced run is slow, and which change
//! would pay.
//!
//! The layers, bottom first:
//!
//! 1. [`calls`]: the calls with their times (those that communicate
//!    nothing folded into the compute around them), and [`spec`], the
//!    what-if changes as written;
//! 2. [`matching`] links sends to receives and the members of each
//!    collective, and hands each match on as it is made;
//! 3. [`waits`] turns the matches into Scalasca's wait states, and [`fit`]
//!    into the machine fitted for the replays;
//! 4. [`ops`] reads the trace's ops (from a file or memory), and [`run`]
//!    holds a trace once read: calls, figures, waits, fit;
//! 5. [`load`] reads a trace once, feeding the calls to matching as it
//!    goes, into a [`run::Run`];
//! 6. [`path`] walks the critical path back through the calls and the
//!    waits; [`sites`] names each call's call site (file:line), where the
//!    trace records them;
//! 7. [`summary`] turns both into figures;
//! 8. [`whatif`] replays the run, changed as a [`spec`] says, through
//!    `pnmpi-sim`'s engine;
//! 9. [`report`] prints the text, JSON and SVG, and [`marks`] puts the
//!    waits and the path on tracks of the Perfetto export.
//!
//! A module names only modules of lower layers (`tests/layers.rs` checks
//! that no import circle forms).
//!
//! This crate sits above `pnmpi-trace` and `pnmpi-sim`: the trace crate
//! knows nothing of replays, and the engine nothing of the analysis.

pub mod calls;
pub mod fit;
pub mod load;
pub mod marks;
pub mod matching;
pub mod ops;
pub mod path;
pub mod report;
pub mod run;
pub mod sites;
pub mod spec;
pub mod summary;
pub mod waits;
pub mod whatif;

#[cfg(test)]
mod tests;

/// Why an analysis could not be made.
#[derive(Debug, thiserror::Error)]
pub enum AnalyzeError {
    /// The trace could not be read.
    #[error("{0}: {1}")]
    Trace(String, pnmpi_trace::Error),
    /// The input is not a trace this command reads.
    #[error("{0}")]
    Input(String),
    /// A replay failed (a bad machine file, a deadlock).
    #[error("{0}")]
    Sim(pnmpi_sim::SimError),
    /// A bad what-if specification.
    #[error("{0}")]
    Spec(String),
    /// The SVG could not be drawn.
    #[error("cannot draw the SVG: {0}")]
    Draw(String),
}
