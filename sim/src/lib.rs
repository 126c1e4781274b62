//! Simulation of MPI runs on a model of another machine: the machine
//! description ([`machine`]), the network and collective models
//! ([`model`], [`kernel::coll`]), and the trace-driven replay engine ([`engine`])
//! behind `pnmpi sim replay` (PSINS's simulator), with its inputs (tracer
//! folders, merged traces, OTF2 archives, SimGrid traces: [`input`]),
//! reports, comparisons across machines and models ([`compare`]),
//! calibration of a real machine ([`calibrate`]) and synthetic motifs
//! ([`motif`]). The jitter simulator, the `vtime` module and the virtual
//! ranks of `pnmpi run --vranks` use the same machine and models
//! ([`live`]), so the same parameters give the same answer in all of them.
//! The parallel replay's exchange over MPI is in `pnmpi-sim-mpi`;
//! `docs/sim.md` has the rules and the equations.

pub mod algorithms;
pub mod calibrate;
pub mod compare;
pub mod engine;
pub mod goal;
pub mod input;
pub mod kernel;
pub mod live;
pub mod machine;
pub mod model;
pub mod motif;
pub mod network;
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
