//! The op and its parts, and the trait every reader implements: what the
//! engine takes from any input, kept apart from the readers so that they
//! and the engine all build on it.

pub use super::locks::Handover;
use crate::units::Ns;
use pnmpi_trace::rma::DataOp;
use pnmpi_trace::routine::Coll;

/// A request, unique in the run: (actor << 32) | index.
pub type ReqId = u64;

/// Bytes to and from each member of a `v` collective, in communicator
/// rank order (see [`pnmpi_trace::counts::PeerBytesOf`]); boxed in an op,
/// so that other ops stay small.
pub type VCounts = pnmpi_trace::counts::PeerBytesOf<Vec<u64>>;

/// A request that a wait or test completed: 16 bytes (the status's
/// absence is a sentinel source, its tag an MPI `int`), since every rank
/// of a large run holds its wait's list.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Completion {
    /// The request.
    pub req: ReqId,
    /// The status's world source, [`NO_STATUS`] without one.
    src: u32,
    tag: i32,
}

/// No world rank is `u32::MAX`.
const NO_STATUS: u32 = u32::MAX;

impl Completion {
    /// Request `req` completed, with `status` (world source, tag) for a
    /// receive posted with a wildcard.
    ///
    /// A source that is not a world rank, or a tag beyond an MPI `int`,
    /// which no MPI status holds, counts as no status.
    pub fn new(req: ReqId, status: Option<(i64, i64)>) -> Completion {
        let narrow = |(src, tag): (i64, i64)| Some((u32::try_from(src).ok()?, i32::try_from(tag).ok()?));
        let (src, tag) = status
            .and_then(narrow)
            .filter(|s| s.0 != NO_STATUS)
            .unwrap_or((NO_STATUS, 0));
        Completion { req, src, tag }
    }

    /// (world source, tag) for a receive posted with a wildcard, from its
    /// status: the engine matches the receive then.
    pub fn status(&self) -> Option<(u32, i64)> {
        (self.src != NO_STATUS).then_some((self.src, i64::from(self.tag)))
    }
}

/// What a call does, for timing.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum OpKind {
    /// No communication: its traced duration is CPU time.
    #[default]
    Local,
    /// `MPI_Init`: the replay's clock starts at its end.
    Init,
    /// `MPI_Finalize`: the actor's run ends at its start.
    Finalize,
    /// A send; `req` for the nonblocking forms.
    Send {
        /// World rank of the receiver.
        to: u32,
        /// Tag.
        tag: i64,
        /// Communicator id.
        comm: i64,
        /// Payload size.
        bytes: u64,
        /// The request created, if nonblocking.
        req: Option<ReqId>,
    },
    /// A receive; `from` is `None` for a nonblocking wildcard receive
    /// whose source the completing call's status gives.
    Recv {
        /// World rank of the sender.
        from: Option<u32>,
        /// Tag (the actual one for a resolved wildcard).
        tag: i64,
        /// Communicator id.
        comm: i64,
        /// Posted buffer size.
        bytes: u64,
        /// The request created, if nonblocking.
        req: Option<ReqId>,
    },
    /// `MPI_Sendrecv`: both posted at once, then both awaited.
    Sendrecv {
        /// Receiver of the send side.
        to: u32,
        /// Send tag.
        stag: i64,
        /// Send size.
        sbytes: u64,
        /// Sender of the receive side.
        from: u32,
        /// Receive tag.
        rtag: i64,
        /// Receive size.
        rbytes: u64,
        /// Communicator id.
        comm: i64,
    },
    /// Waits (or a test that completed something) for these requests.
    Wait(Vec<Completion>),
    /// `MPI_Cancel` of this request: a receive that has not matched yet
    /// completes at once, unmatched; anything else completes as it would.
    Cancel(ReqId),
    /// A collective; `req` for the nonblocking forms.
    Coll {
        /// Which.
        op: Coll,
        /// Communicator id.
        comm: i64,
        /// Bytes per process (see [`crate::algorithms::Shape::bytes`]).
        bytes: u64,
        /// World rank of the root, for rooted collectives.
        root: Option<u32>,
        /// The request created, if nonblocking.
        req: Option<ReqId>,
        /// A `v` collective's per-peer bytes, where this process knows them.
        counts: Option<Box<VCounts>>,
    },
    /// A one-sided call on window `win` (an index into the trace's window
    /// table), timed by `crate::kernel::rma` and the engine's epochs.
    Rma {
        /// The window.
        win: u32,
        /// What the call does.
        act: RmaAct,
    },
}

/// What a one-sided call does, for timing.
///
/// [`Handover`]s name the lock's target and the other holder.
#[derive(Clone, Debug, PartialEq)]
pub enum RmaAct {
    /// A put, get, accumulate or atomic with world rank `target`; `req`
    /// for the request forms (`MPI_Rput` ...), which complete when the
    /// operation does.
    Data {
        /// World rank of the target.
        target: u32,
        /// The origin buffer's bytes.
        bytes: u64,
        /// The result buffer's bytes (the fetching operations).
        rbytes: u64,
        /// Which operation.
        op: DataOp,
        /// The request created, if a request form.
        req: Option<ReqId>,
    },
    /// `MPI_Win_fence`: the window's group synchronizes once each member's
    /// operations are done.
    Fence,
    /// Completes the caller's operations to world rank `Some(target)`
    /// (`MPI_Win_flush`, `MPI_Win_flush_local`) or to every target
    /// (`None`: the `_all` forms).
    Flush(Option<u32>),
    /// `MPI_Win_lock` or `_lock_all` of a lock that holders before it
    /// hand over (the trace's order, [`super::locks`]): the lock waits for
    /// each's grant.
    Lock(Box<[Handover]>),
    /// `MPI_Win_unlock` (to world rank `Some(target)`) or `_unlock_all`
    /// (`None`): completes the operations, as [`RmaAct::Flush`], then
    /// hands the lock to the holders after it.
    Unlock {
        /// The target, or every target.
        target: Option<u32>,
        /// The holders it hands the lock to.
        grants: Box<[Handover]>,
    },
    /// `MPI_Win_post` to these world ranks (the origins it exposes to).
    Post(Box<[u32]>),
    /// `MPI_Win_start` towards these world ranks (the targets).
    Start(Box<[u32]>),
    /// `MPI_Win_complete`: ends the access epoch of the last start.
    Complete,
    /// `MPI_Win_wait` (or a `MPI_Win_test` that ended the epoch): ends
    /// the exposure epoch of the last post.
    Wait,
}

/// The communicator id under which the engine synchronizes window
/// `win`'s fences (a barrier of its group): below every id a trace
/// gives, so that a fence never meets a collective of the window's own
/// communicator.
pub fn fence_comm(win: u32) -> i64 {
    WIN_COMMS - 2 * i64::from(win)
}

/// The communicator id of window `win`'s post/start and complete/wait
/// notifications (empty messages), apart from its fences' messages.
pub fn pscw_comm(win: u32) -> i64 {
    fence_comm(win) - 1
}

/// The window, if `comm` is one of [`fence_comm`]'s ids.
pub fn fence_window(comm: i64) -> Option<u32> {
    let off = WIN_COMMS.checked_sub(comm)?;
    (off >= 0 && off % 2 == 0)
        .then(|| u32::try_from(off / 2).ok())
        .flatten()
}

/// The first of the windows' communicator ids, far below the trace's
/// own (which are at least -3).
const WIN_COMMS: i64 = -(1 << 40);

/// One CPU burst and the call after it.
#[derive(Clone, Debug, PartialEq)]
pub struct Op {
    /// Traced CPU time before the call, ns.
    pub gap: Ns,
    /// Traced duration of the call, ns.
    pub dur: Ns,
    /// Routine index into [`OpSource::routines`].
    pub routine: u32,
    /// The call site of the event the op came from: an index into the
    /// trace's site table, [`NO_SITE`] where it records none. The engine
    /// ignores it; the analysis's tables by site read it (an op's own
    /// event, which a time cannot name when two events share one).
    pub site: u32,
    /// Calls folded into this op's burst: the calls before it that
    /// communicate nothing, when its source was asked to fold them
    /// ([`super::trace::TraceOps::folding`], for the analysis); 0 otherwise.
    pub folded: u32,
    /// What it does.
    pub kind: OpKind,
}

/// [`Op::site`] of an op whose trace records no site for it.
pub const NO_SITE: u32 = u32::MAX;

impl Default for Op {
    fn default() -> Op {
        Op {
            gap: 0.0,
            dur: 0.0,
            routine: 0,
            site: NO_SITE,
            folded: 0,
            kind: OpKind::Local,
        }
    }
}

/// An actor: one thread of one rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Actor {
    /// World rank.
    pub rank: u32,
    /// Thread index on the rank.
    pub thread: u32,
}

/// Measured figures of the traced run, gathered while reading, for
/// `--compare`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Measured {
    /// Per actor: CPU time between `MPI_Init` and `MPI_Finalize`, ns.
    pub compute: Vec<Ns>,
    /// Per actor: time in MPI calls in that span, ns.
    pub mpi: Vec<Ns>,
    /// Per actor: end of `MPI_Init` to start of `MPI_Finalize`, ns.
    pub span: Vec<Ns>,
    /// Per routine: total time in it, ns.
    pub routine_time: Vec<Ns>,
}

/// A source of ops, actor by actor.
pub trait OpSource {
    /// The actors, by rank then thread.
    fn actors(&self) -> &[Actor];
    /// Size of `MPI_COMM_WORLD`.
    fn world_size(&self) -> u32;
    /// Routine names ([`Op::routine`] indexes them).
    fn routines(&self) -> &[String];
    /// The next op of `actor` into `op`; `Ok(false)` at its end.
    fn next(&mut self, actor: usize, op: &mut Op) -> Result<bool, crate::SimError>;
    /// World ranks of communicator `comm`, as seen from `rank`.
    fn members(&self, comm: i64, rank: u32) -> Option<Vec<u32>>;
    /// The traced run's own figures, complete once every actor was read
    /// to its end; `None` for traces without times.
    fn measured(&self) -> Option<Measured>;
    /// Warnings about the input (truncation, approximations).
    fn warnings(&self) -> Vec<String>;
    /// Only actors `range` will be read from now on: a process of a
    /// parallel replay reads its own ranks', and a source may free (or
    /// never make) the others' reading state, so that its memory follows
    /// them. [`actors`](Self::actors) still lists every actor;
    /// [`measured`](Self::measured) may answer `None`.
    fn keep(&mut self, _range: std::ops::Range<usize>) {}
}
