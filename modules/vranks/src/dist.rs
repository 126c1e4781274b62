//! Virtual ranks spread over the processes of an MPI job
//! (`mpirun -np P pnmpi run --vranks N`): each process runs a block of
//! consecutive ranks ([`crate::comm::Blocks`]) on its own engine, and
//! what one process's ranks do to another's travels as [`Record`]s
//! through the native MPI between time windows.
//!
//! The protocol is conservative, with windows bounded by the model's
//! lookahead `L` (its least latency, `Model::lookahead`), as `pnmpi sim
//! replay` runs in parallel: a window runs every local event earlier than
//! `T + L`, where `T` is the earliest pending event of any process. A
//! message sent at `t` arrives at `t + L` or later (an eager message's
//! transfer, a rendezvous envelope one lookahead after its post), and a
//! collective that spans processes completes at least one latency after
//! its last entry, so what one process causes in another happens after
//! the window it was caused in: a record never arrives in its receiver's
//! past. Between windows the processes agree on the next `T` (the
//! kernel's typed agreement, [`pnmpi_sim::kernel::window`], shared with
//! the parallel replay: one `MPI_Allreduce`, which also says whether any
//! process holds records; only then an `MPI_Alltoallv` moves them).
//!
//! Communicator constructors are untimed (each member keeps its clock),
//! so a member that waited for another process's members resumes with
//! its own clock, which may be behind its process's: its later
//! messages are timed from its own clock, as in one process, though
//! another rank's wildcard receive in the same window may already have
//! matched a later message.

use crate::coll::Share;
use crate::engine::Engine;
use crate::p2p::Message;
use pnmpi_sim::engine::parallel::Exchange;
use pnmpi_sim::kernel::window::Offer;
use pnmpi_sim::units::Ns;
use serde::{Deserialize, Serialize};

/// What crosses from one process to another.
#[derive(Serialize, Deserialize)]
pub enum Record {
    /// A message to a rank of the receiving process, arriving at `at`,
    /// on the communicator known everywhere as `gid` (its `comm` is the
    /// sender's handle index, replaced by the receiver's).
    Message { message: Message, gid: u64, at: Ns },
    /// A synchronous send of the receiving process was matched: its
    /// request completes at `at`.
    Matched { req: u64, at: Ns },
    /// Members of the sending process joined the `seq`-th collective on
    /// communicator `comm` (a global id).
    Join { comm: u64, seq: u32, share: Share },
}

/// This process's side of the protocol.
pub struct Dist {
    ex: pnmpi_sim_mpi::Mpi,
    /// Encoded records for each process.
    out: Vec<Vec<u8>>,
    /// The model's lookahead.
    pub lookahead: Ns,
    /// The end of the current window.
    pub end: Ns,
    /// Windows run, exchanges of records made, and records received.
    pub windows: u64,
    pub exchanges: u64,
    pub records: u64,
}

impl Dist {
    /// The protocol over the native world `ex`, with the model's
    /// lookahead (positive).
    pub fn new(ex: pnmpi_sim_mpi::Mpi, lookahead: Ns) -> Dist {
        let procs = ex.procs() as usize;
        Dist {
            ex,
            out: vec![Vec::new(); procs],
            lookahead,
            end: 0.0,
            windows: 0,
            exchanges: 0,
            records: 0,
        }
    }

    /// This process's index and the number of processes.
    pub fn me(&self) -> u32 {
        self.ex.me()
    }

    /// Every process's `bytes`, at process 0.
    pub fn gather(&mut self, bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
        self.ex.gather(bytes)
    }
}

/// Stops the job: a record this process cannot read or place (a bug,
/// never bad input). Called inside an engine step, which holds `e`.
fn broken(e: &mut Engine, what: &str) -> ! {
    crate::api::fatal_in(e, "pnmpi vranks", what)
}

impl Engine {
    /// Queues `record` for process `q`.
    pub fn dist_send(&mut self, q: u32, record: &Record) {
        let Some(d) = self.dist.as_mut() else {
            broken(self, "a record for another process in a run of one process")
        };
        let buf = std::mem::take(&mut d.out[q as usize]);
        match postcard::to_extend(record, buf) {
            Ok(buf) => d.out[q as usize] = buf,
            Err(e) => broken(self, &format!("cannot encode a record: {e}")),
        }
    }

    /// Between two windows: moves the records, then agrees on the next
    /// window. Returns its end, or `None` when no process has anything
    /// left to do.
    pub fn next_window(&mut self) -> Option<Ns> {
        loop {
            let next = self.next_time();
            let d = self.dist.as_mut()?;
            let agreed = d.ex.agree(Offer {
                next,
                owes: d.out.iter().any(|o| !o.is_empty()),
                broken: false,
            });
            if agreed.owed {
                d.exchanges += 1;
                let out = std::mem::replace(&mut d.out, vec![Vec::new(); d.ex.procs() as usize]);
                let got = d.ex.alltoallv(&out);
                self.take_records(&got);
                continue;
            }
            d.windows += 1;
            return agreed.window_end(d.lookahead);
        }
    }

    /// Applies what the other processes sent, in their order.
    fn take_records(&mut self, mut got: &[u8]) {
        while !got.is_empty() {
            let (record, rest) = match postcard::take_from_bytes::<Record>(got) {
                Ok(read) => read,
                Err(e) => broken(self, &format!("cannot decode a record: {e}")),
            };
            got = rest;
            if let Some(d) = self.dist.as_mut() {
                d.records += 1;
            }
            match record {
                Record::Message { mut message, gid, at } => {
                    message.comm = self.comm_by_gid(gid) as u32;
                    self.inbound(message, at);
                }
                Record::Matched { req, at } => self.complete(req as usize, at),
                Record::Join { comm, seq, share } => {
                    let comm = self.comm_by_gid(comm);
                    self.joined_elsewhere(comm, seq, share);
                }
            }
        }
    }

    fn comm_by_gid(&mut self, gid: u64) -> usize {
        match self.comms.by_gid(gid) {
            Some(comm) => comm,
            None => broken(
                self,
                &format!("a record names communicator {gid:#x}, unknown here"),
            ),
        }
    }
}
