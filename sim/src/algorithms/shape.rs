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

/// A member's size ([`Shape::bytes`]) from the sizes its call gives, the
/// rule every mode applies (the replay to what the tracer recorded, vtime
/// and virtual ranks to the call's counts times its datatypes' sizes),
/// so that the three time a collective from the same inputs. `send` and
/// `recv` are the bytes the member sends and receives, a side with one
/// count per peer summed (the tracer's `BYTES` and `RBYTES`); with
/// `MPI_IN_PLACE`, the block it contributes or keeps in its own buffer,
/// as the other side's arguments describe it. `vector`: a `v` form;
/// `members`: the communicator's size. The size is:
///
/// - a `v` all-to-all's mean block, what it sends over `members`;
/// - a scatter's own block, what it receives (a non-root's send
///   arguments are not significant);
/// - `MPI_Reduce_scatter_block`'s whole vector, a block per member;
/// - otherwise what it sends: the message, the vector, one block, one
///   contribution, `MPI_Reduce_scatter`'s whole vector.
pub fn member_bytes(coll: Coll, vector: bool, send: u64, recv: u64, members: u64) -> u64 {
    match (coll, vector) {
        (Coll::Alltoall, true) => send / members.max(1),
        (Coll::Scatter, _) => recv,
        (Coll::ReduceScatter, false) => send.saturating_mul(members),
        _ => send,
    }
}

/// `ceil(log2(p))`, the depth of a binomial tree over `p` tasks.
pub fn log2_ceil(p: u32) -> u32 {
    if p <= 1 {
        0
    } else {
        32 - (p - 1).leading_zeros()
    }
}
