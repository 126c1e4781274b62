//! Simulation of MPI runs on a model of another machine: the machine
//! description, the network and collective models, and the trace-driven
//! replay engine behind `pnmpi sim` (PSINS's simulator). The jitter
//! simulator and the `vtime` module use the same machine and models, so
//! the same parameters give the same answer in all three.

pub mod calibrate;
pub mod coll;
pub mod compare;
pub mod engine;
pub mod input;
pub mod live;
pub mod machine;
pub mod model;
pub mod motif;
pub mod report;
pub mod units;

/// Why a simulation could not run or finish.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// A bad machine file or model parameter. (Not `#[from]`: that makes
    /// it the error's source too, and error chains would print it twice.)
    #[error("{0}")]
    Machine(machine::MachineError),
    /// A bad trace.
    #[error("{0}")]
    Trace(pnmpi_trace::Error),
    /// A bad SimGrid trace: file, line, what.
    #[error("{file}:{line}: {what}")]
    Input {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        what: String,
    },
    /// The trace cannot complete on any machine.
    #[error("the trace deadlocks: no rank can go on\n{0}")]
    Deadlock(String),
    /// A parallel replay that cannot go on, or cannot start.
    #[error("parallel replay: {0}")]
    Parallel(String),
}

impl From<machine::MachineError> for SimError {
    fn from(e: machine::MachineError) -> SimError {
        SimError::Machine(e)
    }
}
