//! `pnmpi trace analyze`: why a traced run is slow, and which change
//! would pay.
//!
//! The layers, bottom first: [`load`] reads a trace once, into [`calls`]
//! with their times (those that communicate nothing folded into the
//! compute around them); as it reads, [`matching`] links sends to
//! receives and the members of each collective, and [`waits`] turns the
//! links into Scalasca's wait states; [`path`] walks the critical path
//! back through the calls and the waits; [`summary`] turns both into figures;
//! [`whatif`] replays the run, changed as a [`spec`] says, through
//! `pnmpi-sim`'s engine; [`report`] prints the text, JSON and SVG, and
//! [`marks`] puts the waits and the path on tracks of the Perfetto export.
//! [`sites`] names each call's call site (file:line), where the trace
//! records them, for the tables by site and `compute site` what-ifs.
//!
//! This crate sits above `pnmpi-trace` and `pnmpi-sim`: the trace crate
//! knows nothing of replays, and the engine nothing of the analysis.

pub mod calls;
pub mod load;
pub mod marks;
pub mod matching;
pub mod path;
pub mod report;
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
