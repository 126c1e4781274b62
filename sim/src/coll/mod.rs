//! Collectives: the shape of one collective call, and its two replay
//! forms. *Analytic*: a closed form in the number of tasks, as PSINS's
//! simple model has it (the model computes it). *Algorithmic*: each
//! task's part expanded into point-to-point [`Step`]s of a named
//! algorithm, as SimGrid and LogGOPSim do; the engine then replays those
//! messages like the application's own, through the same model.

mod algorithms;
mod exchange;
#[cfg(test)]
mod tests;
mod tree;
mod vector;

pub use algorithms::{algorithms_of, check_algorithm, default_algorithm, expand};
pub use vector::{expand_v, largest};

use pnmpi_trace::routine::Coll;

/// One task's step in an expanded collective. Peers are indices in the
/// communicator; the engine maps them to world ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Post a nonblocking send.
    Isend {
        /// Communicator index of the receiver.
        to: u32,
        /// Message size.
        bytes: u64,
    },
    /// Post a nonblocking receive.
    Irecv {
        /// Communicator index of the sender.
        from: u32,
        /// Message size.
        bytes: u64,
    },
    /// Wait for every send and receive posted since the last `WaitAll`.
    WaitAll,
}

/// One collective call as every member sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Which collective.
    pub coll: Coll,
    /// Number of tasks in the communicator (P).
    pub size: u32,
    /// This task's index in the communicator.
    pub me: u32,
    /// The root's index (rooted collectives; 0 otherwise).
    pub root: u32,
    /// Bytes per process, as the tracer records them: the message of a
    /// broadcast, the vector of a reduction, one block of an all-to-all,
    /// one contribution of a gather.
    pub bytes: u64,
}

/// `ceil(log2(p))`, the depth of a binomial tree over `p` tasks.
pub fn log2_ceil(p: u32) -> u32 {
    if p <= 1 {
        0
    } else {
        32 - (p - 1).leading_zeros()
    }
}
