//! The export of one rank, written to its action file as it goes: its
//! requests' keys, what it knows of them ahead, and the action lines.

use crate::messages::Persistent;
use crate::routine::RoutineKind;
use crate::trace::ReqRef;
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

/// SimGrid's request key: (source, destination, tag) in world ranks.
pub(super) type SimgridKey = (i64, i64, i64);

/// Where a rank's requests' lookahead comes from.
pub(super) enum Known {
    /// Collected by a first reading of the rank's streams: the sources
    /// and tags of wildcard receives (from their completions), every
    /// persistent request, and the requests `MPI_Cancel` named.
    Collected {
        wild: HashMap<ReqRef, (i64, i64)>,
        persistent: HashMap<ReqRef, Persistent>,
        cancelled: HashSet<ReqRef>,
    },
    /// Not collected: persistent requests as their inits are read; a
    /// wildcard receive, or a start of a request not seen yet, stops the
    /// rank ([`Rank::lookahead`]) to be written again with the collected
    /// ones.
    SoFar(HashMap<ReqRef, Persistent>),
}

/// The export of one rank, written to its file as it goes.
pub(super) struct Rank<'a> {
    pub(super) routines: &'a [String],
    pub(super) kinds: &'a [RoutineKind],
    pub(super) world_size: u32,
    pub(super) me: i64,
    pub(super) out: String,
    pub(super) file: std::io::BufWriter<std::fs::File>,
    pub(super) actions: u64,
    pub(super) compute: u64,
    /// Requests replayed with a key, to wait for.
    pub(super) keys: HashMap<ReqRef, SimgridKey>,
    /// SimGrid's own table: it keeps one request per key.
    pub(super) stored: HashMap<SimgridKey, ReqRef>,
    pub(super) approximated: HashMap<String, u64>,
    pub(super) known: Known,
    /// Set when an event needed what only the collected lookahead knows.
    pub(super) lookahead: bool,
    /// Nonblocking collectives written as messages: their keys, to wait
    /// for where the request completes.
    pub(super) nbc: HashMap<ReqRef, Vec<SimgridKey>>,
    /// Per communicator, the collectives written as messages so far.
    pub(super) direct_seq: HashMap<i64, u32>,
    /// Index of the event being written, among the rank's events.
    pub(super) index: u64,
    /// Why the export cannot go on: SimGrid would misread the event.
    pub(super) error: Option<String>,
}

impl Rank<'_> {
    /// Writes `action`, after the compute burst that precedes it.
    pub(super) fn act(&mut self, action: &str) {
        if self.compute > 0 {
            let _ = writeln!(self.out, "{} compute {}", self.me, self.compute);
            self.actions += 1;
            self.compute = 0;
        }
        let _ = writeln!(self.out, "{} {action}", self.me);
        self.actions += 1;
    }

    /// Moves the text written so far to the file.
    pub(super) fn flush(&mut self) -> std::io::Result<()> {
        use std::io::Write;
        self.file.write_all(self.out.as_bytes())?;
        self.out.clear();
        Ok(())
    }
}
