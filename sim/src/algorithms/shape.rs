//! One collective call as a member sees it, and the point-to-point steps
//! its algorithm expands into: what the models' closed forms and the
//! named algorithms both take, kept apart from the kernel's rule that
//! picks between them (which needs the machine and the model).

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
