//! The fields an event may carry, as bits of its field mask, and the
//! canonical values of a merged trace.
//!
//! Bit positions are shared by rank files and merged traces; a few bits
//! mean something slightly different in each (see `docs/trace-format.md`).
//! The fields of the most common events (point-to-point calls, waits) sit
//! in the low 7 bits so that their mask takes one byte.

/// Peer rank: destination of a send, source of a receive.
pub const PEER: u32 = 1 << 0;
/// Message tag (the send tag for `MPI_Sendrecv`).
pub const TAG: u32 = 1 << 1;
/// Communicator: a handle in rank files, a communicator id in merged traces.
pub const COMM: u32 = 1 << 2;
/// Bytes: count times type size (sent bytes when there are two sides).
pub const BYTES: u32 = 1 << 3;
/// Requests created: their handles in rank files, their number in merged traces.
pub const REQ: u32 = 1 << 4;
/// Requests completed (or freed) by this call.
pub const DONE: u32 = 1 << 5;
/// Root of a rooted collective.
pub const ROOT: u32 = 1 << 6;
/// Received bytes, for calls with a send and a receive side.
pub const RBYTES: u32 = 1 << 7;
/// Source of the receive side of `MPI_Sendrecv`.
pub const SRC: u32 = 1 << 8;
/// Tag of the receive side of `MPI_Sendrecv`.
pub const RTAG: u32 = 1 << 9;
/// Rank files: the status (source, tag) of a blocking receive or probe.
/// Merged traces: the wildcard flags of a receive ([`WILD_SOURCE`], [`WILD_TAG`]).
pub const STATUS: u32 = 1 << 10;
/// Communicator created by this call.
pub const NEWCOMM: u32 = 1 << 11;
/// Merged traces only: the persistent requests that an `MPI_Start`/`MPI_Startall` activated.
pub const INIT: u32 = 1 << 12;
/// Format version 2: bytes sent to and received from each peer of a `v`
/// collective ([`crate::counts`]).
pub const COUNTS: u32 = 1 << 13;
/// Merged traces, format version 3: the call site, an id of the trace's
/// site table ([`crate::sites`]). (Rank files carry their sites in the
/// event head, not in the mask.)
pub const SITE: u32 = 1 << 14;
/// Format version 5 (rank files; 4 for merged traces): the one-sided
/// window a call names, a handle in rank files (against the *window
/// register*), a window id in merged traces ([`crate::rma`]).
pub const WIN: u32 = 1 << 15;
/// Format version 5: the window a call created (kind, displacement unit,
/// members in rank files; its id in merged traces).
pub const NEWWIN: u32 = 1 << 16;
/// Format version 5: the reduction operation of an accumulate, as a code
/// of [`crate::rma::OP_NAMES`].
pub const OP: u32 = 1 << 17;
/// Format version 5: the assertion of a synchronization call, as the
/// bits of [`crate::rma::ASSERT_NAMES`].
pub const ASSERT: u32 = 1 << 18;
/// Format version 5: the lock type of `MPI_Win_lock`
/// ([`crate::rma::LOCK_EXCLUSIVE`], [`crate::rma::LOCK_SHARED`]).
pub const LOCK: u32 = 1 << 19;
/// Format version 5: the group of `MPI_Win_post` or `MPI_Win_start`, as
/// a rank list of world ranks.
pub const GROUP: u32 = 1 << 20;
/// Every bit this version defines.
pub const ALL: u32 = (1 << 21) - 1;
/// The bits format version 5 added: a reader of an older file refuses them.
pub const RMA_BITS: u32 = WIN | NEWWIN | OP | ASSERT | LOCK | GROUP;

/// The value fields of a merged trace, in mask-bit order: each is one
/// number, and a clear bit means "same as the previous event of the same
/// routine in this chunk".
pub const VALUE_BITS: [u32; NV] = [
    PEER, TAG, COMM, BYTES, REQ, ROOT, RBYTES, SRC, RTAG, STATUS, SITE, WIN, OP, ASSERT, LOCK,
];

/// Index of a value field of a merged event ([`crate::trace::Event::vals`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum V {
    /// [`PEER`]
    Peer = 0,
    /// [`TAG`]
    Tag,
    /// [`COMM`]
    Comm,
    /// [`BYTES`]
    Bytes,
    /// [`REQ`]: how many requests the call created.
    Req,
    /// [`ROOT`]
    Root,
    /// [`RBYTES`]
    Rbytes,
    /// [`SRC`]
    Src,
    /// [`RTAG`]
    Rtag,
    /// [`STATUS`]: wildcard flags.
    Wild,
    /// [`SITE`]: the call site's id in the trace's site table.
    Site,
    /// [`WIN`]: the window id.
    Win,
    /// [`OP`]: the operation code.
    Op,
    /// [`ASSERT`]: the assertion bits.
    Assert,
    /// [`LOCK`]: the lock type.
    Lock,
}

/// Number of value fields.
pub const NV: usize = 15;

/// Field names for `dump` and error messages, by [`V`] index.
pub const VALUE_NAMES: [&str; NV] = [
    "peer", "tag", "comm", "bytes", "reqs", "root", "rbytes", "src", "rtag", "wild", "site", "win", "op",
    "assert", "lock",
];

/// Merged traces: `MPI_PROC_NULL` as a peer or root.
pub const PROC_NULL: i64 = -1;
/// Merged traces: `MPI_ANY_SOURCE` as a posted source.
pub const ANY_SOURCE: i64 = -2;
/// Merged traces: a rank outside `MPI_COMM_WORLD` or on an unknown communicator.
pub const UNKNOWN_RANK: i64 = -3;
/// Merged traces: `MPI_ROOT` (the root side of an intercommunicator collective).
pub const ROOT_SELF: i64 = -4;
/// Merged traces: `MPI_ANY_TAG` as a posted tag.
pub const ANY_TAG: i64 = -1;
/// Wildcard flag: the receive was posted with `MPI_ANY_SOURCE`.
pub const WILD_SOURCE: i64 = 1;
/// Wildcard flag: the receive was posted with `MPI_ANY_TAG`.
pub const WILD_TAG: i64 = 2;

/// Merged traces: the id of `MPI_COMM_WORLD`.
pub const COMM_WORLD: i64 = 0;
/// Merged traces: the id of the calling rank's `MPI_COMM_SELF`.
pub const COMM_SELF: i64 = 1;
/// Merged traces: the first id of the communicator table.
pub const FIRST_TABLE_COMM: i64 = 2;
