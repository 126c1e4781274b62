//! A trace as the analysis holds it once read ([`crate::load`]): every
//! actor's calls and figures, the wait states, and what the fitted
//! machine needs.

use crate::calls::{Call, Calls, Cursor, OpRef, Span};
use crate::fit::Fit;
use crate::ops::Origin;
use crate::waits::Wait;
use crate::AnalyzeError;
use pnmpi_sim::input::OpSource;
use pnmpi_sim::units::Ns;
use pnmpi_trace::sites::Site;

/// How the trace is read.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// A send of more bytes waits for its receive (a rendezvous): only
    /// then can a receiver be late.
    pub eager: u64,
    /// Fold the calls that communicate nothing (a failed `MPI_Test` or
    /// `MPI_Iprobe`, `MPI_Wtime`...) into the compute around them, as
    /// the figures count them; `false` keeps each, for checking that the
    /// figures are the same.
    pub fold: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            eager: 65536,
            fold: true,
        }
    }
}

/// One actor (a thread of a rank): the figures the analysis takes from
/// every op, folded ones included.
#[derive(Clone, Copy, Debug, Default)]
pub struct Actor {
    /// World rank.
    pub rank: u32,
    /// Thread on the rank.
    pub thread: u32,
    /// Its ops, folded ones included.
    pub ops: u32,
    /// Entry of its first op, and return of its last.
    pub first_start: Ns,
    /// See `first_start`.
    pub last_end: Ns,
    /// Return of its first `MPI_Init`.
    pub init_end: Option<Ns>,
    /// Its last `MPI_Finalize`: op index and entry.
    pub finalize: Option<(u32, Ns)>,
    /// CPU time after its first `MPI_Init` (all of it without one): the
    /// bursts and the local calls, ns.
    pub compute: Ns,
}

/// A whole trace, read: its calls, wait states and what the fitted
/// machine needs.
pub struct Run {
    /// The actors (threads of ranks), by rank then thread.
    pub actors: Vec<Actor>,
    /// Per actor, its calls.
    pub calls: Vec<Calls>,
    /// Routine names; calls index them.
    pub routines: Vec<String>,
    /// Size of `MPI_COMM_WORLD`.
    pub world_size: u32,
    /// Every wait, one per waiting call, ordered by call.
    pub waits: Vec<Wait>,
    /// The trace's call-site table (empty when it records none).
    pub sites: Vec<Site>,
    pub(crate) fit: Fit,
    /// The reader, kept for the communicators' members.
    pub(crate) src: Box<dyn OpSource>,
    pub(crate) origin: Origin,
}

impl Run {
    /// World ranks of communicator `comm` as seen from `rank`.
    pub fn members(&self, comm: i64, rank: u32) -> Option<Vec<u32>> {
        self.src.members(comm, rank)
    }

    /// The reader's warnings (truncated files, approximated calls).
    pub fn warnings(&self) -> Vec<String> {
        self.src.warnings()
    }

    /// A call, if it is kept (not folded, not past its actor's end).
    pub fn call(&self, at: OpRef) -> Option<Call> {
        self.calls.get(at.actor as usize)?.get(at.op)
    }

    /// Lookups in the calls in about their order.
    pub fn cursor(&self) -> Cursor<'_> {
        Cursor::new(&self.calls)
    }

    /// A call's times (none for a call not kept).
    pub fn span(&self, at: OpRef) -> Span {
        self.call(at).map_or_else(Span::default, |c| c.span())
    }

    /// The routine name of a call.
    pub fn routine(&self, at: OpRef) -> &str {
        self.call(at).map_or("?", |c| self.routine_name(c.routine))
    }

    /// Routine `r`'s name.
    pub fn routine_name(&self, r: u32) -> &str {
        self.routines.get(r as usize).map_or("?", String::as_str)
    }

    /// The world rank of an actor.
    pub fn rank(&self, actor: u32) -> u32 {
        self.actors[actor as usize].rank
    }

    /// Where the analysed part of the run begins and ends, ns: the
    /// earliest end of `MPI_Init` and the latest start of `MPI_Finalize`
    /// (the first and last call where the trace has neither), as
    /// `pnmpi sim replay` measures a runtime.
    pub fn window(&self) -> (Ns, Ns) {
        let mut begin = Ns::INFINITY;
        let mut end: Ns = 0.0;
        for a in self.actors.iter().filter(|a| a.ops > 0) {
            begin = begin.min(a.init_end.unwrap_or(a.first_start));
            end = end.max(a.finalize.map_or(a.last_end, |(_, t)| t));
        }
        if begin > end {
            (0.0, 0.0)
        } else {
            (begin, end)
        }
    }

    /// The analysed part's length, ns.
    pub fn runtime(&self) -> Ns {
        let (b, e) = self.window();
        e - b
    }

    /// The number of calls, folded ones included.
    pub fn op_count(&self) -> u64 {
        self.actors.iter().map(|a| u64::from(a.ops)).sum()
    }

    /// The number of calls kept.
    pub fn stored(&self) -> u64 {
        self.calls.iter().map(Calls::stored).sum()
    }

    /// The trace's ops read again, as at first: what a replay reads.
    pub fn ops_again(&self) -> Result<Box<dyn OpSource>, AnalyzeError> {
        self.origin.ops()
    }
}
