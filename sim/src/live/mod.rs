//! What a live run on a model shares with the replay: its arguments
//! ([`target`]), its report ([`report`]), the timing of algorithmic
//! collectives ([`algorithmic`]) and vtime's deadlock probes
//! ([`deadlock`]). The `vtime` module (one
//! process per rank) and `libvranks` (many virtual ranks per process)
//! both read and write these, so their runs are set up and reported alike.

pub mod algorithmic;
pub mod deadlock;
pub mod report;
pub mod target;

use crate::units::Ns;

/// A rank's totals for the report, virtual ns unless said: what vtime
/// and libvranks count alike.
#[derive(Clone, Copy, Default, Debug)]
pub struct Totals {
    /// Scaled CPU time between MPI calls.
    pub compute: Ns,
    /// Time in MPI calls that the model charges: overheads, transfers,
    /// collective costs.
    pub comm: Ns,
    /// Time in MPI calls spent waiting for a later partner: a sender that
    /// had not sent yet, the last member of a collective.
    pub wait: Ns,
    /// MPI calls.
    pub calls: u64,
    /// Timed messages sent.
    pub sent: u64,
    /// Their bytes.
    pub sent_bytes: u64,
    /// Timed messages received.
    pub received: u64,
    /// Collectives timed.
    pub collectives: u64,
    /// Acknowledgements of rendezvous sends sent back (vtime: a
    /// rendezvous sender waits for its receive's post).
    pub acks: u64,
}
