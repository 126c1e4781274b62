//! What a GOAL line says, before the parser checks it against the
//! schedule: an op's kind, and a statement as either reader reads it
//! (`super::fast`, `super::parse`'s words).

/// What an op does. The order is LogGOPSim's: ops freed together are
/// queued sends first, then receives, then computations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Kind {
    /// Sends `size` bytes to `peer` with `tag`.
    Send = 1,
    /// Receives `size` bytes from `peer` (or [`ANY`](super::parse::ANY)) with `tag` (or any).
    Recv = 2,
    /// Computes for `size` ns.
    Calc = 3,
}

/// A statement of a rank block as read, before it is checked against the
/// schedule (its ranks, its labels): from its words ([`decode`]), or
/// straight from its bytes for the common lines (`super::fast`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Stmt<'t> {
    /// `[label:] send|recv|calc ...`; `None` as the peer or the tag is
    /// `-1`, any.
    Op {
        label: Option<&'t [u8]>,
        kind: Kind,
        size: u64,
        peer: Option<u64>,
        tag: Option<u64>,
        cpu: u8,
        nic: u8,
    },
    /// `waiting requires awaited`, or `irequires` (`starts`).
    Dep {
        waiting: &'t [u8],
        starts: bool,
        awaited: &'t [u8],
    },
}
