//! Virtual ranks spread over the processes of an MPI job
//! (`mpirun -np P pnmpi run --vranks N`): each process runs a block of
//! consecutive ranks ([`crate::comm::Blocks`]) on its own engine, and
//! what one process's ranks do to another's travels as [`Record`]s
//! through the native MPI between time windows. This layer sits on
//! point-to-point and the collectives: it sends what they owe other
//! processes ([`crate::p2p::P2p::take_remote`],
//! [`crate::coll::Colls::take_shares`]) and hands them what comes in.
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

use crate::coll::{Below, Colls, Join};
use crate::dtype::{layout, unpack};
use crate::one_sided::{self, Op};
use crate::p2p::Remote;
use crate::windows::Windows;
use pnmpi_sim::engine::parallel::Exchange;
use pnmpi_sim::kernel::window::Offer;
use pnmpi_sim::units::Ns;
use serde::{Deserialize, Serialize};

/// What crosses from one process to another.
#[derive(Serialize, Deserialize)]
pub enum Record {
    /// A message, or a matched rendezvous send.
    P2p(Remote),
    /// Members of the sending process joined a collective.
    Join(Join),
    /// One-sided communication with ranks of the receiving process.
    Rma(one_sided::Record),
}

/// What comes between two windows.
pub enum Between {
    /// Records from the other processes, to apply ([`Dist::apply`]);
    /// then ask again.
    Records(Vec<u8>),
    /// The next window's end; `None`: no process has anything left.
    Window(Option<Ns>),
}

/// This process's side of the protocol.
pub struct Dist {
    ex: pnmpi_sim_mpi::Mpi,
    /// Encoded records for each process.
    out: Vec<Vec<u8>>,
    /// The model's lookahead.
    lookahead: Ns,
    /// The end of the current window.
    end: Ns,
    /// Windows run, exchanges of records made, and records received.
    windows: u64,
    exchanges: u64,
    records: u64,
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

    /// This process's index.
    pub fn me(&self) -> u32 {
        self.ex.me()
    }

    /// The end of the current window.
    pub fn end(&self) -> Ns {
        self.end
    }

    /// Windows run, exchanges of records made, records received.
    pub fn counts(&self) -> (u64, u64, u64) {
        (self.windows, self.exchanges, self.records)
    }

    /// Every process's `bytes`, at process 0.
    pub fn gather(&mut self, bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
        self.ex.gather(bytes)
    }

    /// Queues what the layers below owe other processes, in the order
    /// they made it (their stamps).
    pub fn post(
        &mut self,
        p2p: Vec<(u64, u32, Remote)>,
        shares: Vec<(u64, u32, Join)>,
        rma: Vec<(u64, u32, one_sided::Record)>,
    ) -> Result<(), String> {
        let mut all: Vec<(u64, u32, Record)> = p2p
            .into_iter()
            .map(|(s, q, r)| (s, q, Record::P2p(r)))
            .chain(shares.into_iter().map(|(s, q, j)| (s, q, Record::Join(j))))
            .chain(rma.into_iter().map(|(s, q, r)| (s, q, Record::Rma(r))))
            .collect();
        all.sort_by_key(|&(stamp, _, _)| stamp);
        for (_, q, record) in all {
            self.owe(q, record)?;
        }
        Ok(())
    }

    /// Queues `record` for process `to`, after what is queued.
    fn owe(&mut self, to: u32, record: Record) -> Result<(), String> {
        let buf = std::mem::take(&mut self.out[to as usize]);
        self.out[to as usize] =
            postcard::to_extend(&record, buf).map_err(|e| format!("cannot encode a record: {e}"))?;
        Ok(())
    }

    /// Between two windows, with this process's next event at `next`:
    /// the records to apply, if any process holds some (or asks for an
    /// exchange: `exchange`), else the next window's end.
    pub fn between(&mut self, next: Option<Ns>, exchange: bool) -> Between {
        let agreed = self.ex.agree(Offer {
            next,
            owes: exchange || self.out.iter().any(|o| !o.is_empty()),
            broken: false,
        });
        if agreed.owed {
            self.exchanges += 1;
            let out = std::mem::replace(&mut self.out, vec![Vec::new(); self.ex.procs() as usize]);
            return Between::Records(self.ex.alltoallv(&out));
        }
        self.windows += 1;
        let end = agreed.window_end(self.lookahead);
        if let Some(end) = end {
            self.end = end;
        }
        Between::Window(end)
    }

    /// Applies what the other processes sent (`got`), in their order.
    pub fn apply(
        &mut self,
        mut got: &[u8],
        (colls, windows): (&mut Colls, &mut Windows),
        mut b: Below,
    ) -> Result<(), String> {
        while !got.is_empty() {
            let (record, rest) = postcard::take_from_bytes::<Record>(got)
                .map_err(|e| format!("cannot decode a record: {e}"))?;
            got = rest;
            self.records += 1;
            match record {
                Record::P2p(Remote::Message { mut message, gid, at }) => {
                    // The receiver's handle of the communicator, in the sender's
                    // context (a collective's steps keep theirs).
                    message.comm = comm_by_gid(b.comms, gid)? as u32 | (message.comm & crate::p2p::STEPS);
                    b.p2p.inbound(b.sched, message, at);
                }
                Record::P2p(Remote::Matched { req, at }) => {
                    b.p2p.complete(b.sched, req as usize, at);
                }
                Record::Join(Join { comm, seq, share }) => {
                    let comm = comm_by_gid(b.comms, comm)?;
                    colls.joined_elsewhere(b.again(), comm, seq, share)?;
                }
                Record::Rma(one_sided::Record::Op(op)) => {
                    let origin = op.origin;
                    if let Some((token, data)) = operate(&op, windows, b.again())? {
                        let back = one_sided::Record::Fetched { token, data };
                        self.owe(b.comms.blocks.owner(origin), Record::Rma(back))?;
                    }
                }
                Record::Rma(one_sided::Record::Fetched { token, data }) => {
                    let f = windows
                        .fetched(token)
                        .ok_or_else(|| format!("fetched data for operation {token}, unknown here"))?;
                    let l = layout(f.dt);
                    let span = (
                        f.buf,
                        f.buf + l.lb.max(0) as usize + l.extent * f.count.max(0) as usize,
                    );
                    // SAFETY: the origin's result buffer, of `count`
                    // elements of `dt`, in its own memory.
                    let fits = b.sched.in_memory_of(f.rank, span, || unsafe {
                        unpack(&data, f.buf as *mut std::ffi::c_void, f.count, f.dt)
                    });
                    if fits.is_err() {
                        return Err(format!(
                            "rank {}: the result buffer is smaller than the data fetched",
                            f.rank
                        ));
                    }
                    b.p2p.complete(b.sched, f.done.0, f.done.1);
                    if let Some((q, at)) = f.local {
                        b.p2p.complete(b.sched, q, at);
                    }
                }
                Record::Rma(one_sided::Record::Lock(e)) => windows.lock_event_from(e),
            }
        }
        Ok(())
    }
}

/// Applies operation `op` to its target, a rank here: what it fetched,
/// with its token, to send back.
fn operate(op: &Op, windows: &mut Windows, b: Below) -> Result<Option<(u64, Vec<u8>)>, String> {
    let what = |w: &str| {
        format!(
            "rank {}'s {:?} to window rank {}: {w}",
            op.origin,
            op.data_op(),
            op.target
        )
    };
    let w = windows
        .by_gid(op.win)
        .ok_or_else(|| what("the window is unknown here"))?;
    let win = windows.get(w).expect("a live window");
    let span = op.shape.span().map_err(|e| what(&e))?;
    let at = win.address(op.target, op.disp, span).map_err(|e| what(&e))?;
    let world = win.members[op.target as usize];
    // SAFETY: the runs lie inside the target's window memory (checked
    // above), in the target's own globals.
    let fetched = b.sched.in_memory_of(world, (at, at + span), || unsafe {
        one_sided::apply(op.data_op(), op.acc, &op.sent, at as *mut u8, &op.shape)
    });
    Ok(op.token.map(|t| (t, fetched)))
}

/// The communicator another process calls `gid`.
fn comm_by_gid(comms: &crate::comm::Registry, gid: u64) -> Result<usize, String> {
    comms
        .by_gid(gid)
        .ok_or_else(|| format!("a record names communicator {gid:#x}, unknown here"))
}
