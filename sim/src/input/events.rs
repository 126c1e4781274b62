//! The event-source interface of `pnmpi-trace`'s streaming readers, and
//! an in-memory source over a whole [`Trace`] (small traces, tests).

use pnmpi_trace::fields::{COMM_SELF, COMM_WORLD, FIRST_TABLE_COMM};
use pnmpi_trace::rma::Win;
use pnmpi_trace::trace::{Comm, Event, Stream, Trace};

/// Members of the communicators a trace names: `MPI_COMM_WORLD`, each
/// rank's `MPI_COMM_SELF`, and the trace's table, as world ranks.
pub struct Members {
    world: Vec<i64>,
}

impl Members {
    /// For a world of `size` ranks.
    pub fn new(size: u32) -> Members {
        Members {
            world: (0..i64::from(size)).collect(),
        }
    }

    /// World ranks of communicator `id` as seen from `rank`.
    pub fn of<'a>(&'a self, table: &'a [Comm], id: i64, rank: u32) -> Option<&'a [i64]> {
        match id {
            COMM_WORLD => Some(&self.world),
            // The world list holds every rank at its own index.
            COMM_SELF => self.world.get(rank as usize).map(std::slice::from_ref),
            _ => usize::try_from(id - FIRST_TABLE_COMM)
                .ok()
                .and_then(|i| table.get(i))
                .map(|c| c.members.as_slice()),
        }
    }
}

/// One stream of a trace: a thread of a rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamInfo {
    /// World rank.
    pub rank: u32,
    /// Thread index on the rank.
    pub thread: u32,
}

/// Where a replay reads events from, stream by stream.
pub trait EventSource {
    /// Size of `MPI_COMM_WORLD`.
    fn world_size(&self) -> u32;
    /// Routine names; [`Event::routine`] indexes them.
    fn routines(&self) -> &[String];
    /// The streams, by rank then thread: made when asked (a replay asks
    /// once, when it starts), not kept beside the reader's own list.
    fn streams(&self) -> Vec<StreamInfo>;
    /// The next event of `stream` into `ev`; `Ok(false)` at its end.
    fn next(&mut self, stream: usize, ev: &mut Event) -> pnmpi_trace::Result<bool>;
    /// World ranks of communicator `id` as seen from `rank`.
    fn members(&self, id: i64, rank: u32) -> Option<&[i64]>;
    /// Warnings about the input.
    fn warnings(&self) -> Vec<String>;
    /// The one-sided window table (events' window ids index it); empty
    /// when the input has none.
    fn wins(&self) -> &[Win] {
        &[]
    }
    /// Only streams `range` will be read from now on (see
    /// [`crate::input::OpSource::keep`]).
    fn keep(&mut self, _range: std::ops::Range<usize>) {}
}

/// A whole trace in memory.
pub struct MemorySource {
    trace: Trace,
    pos: Vec<usize>,
    members: Members,
}

impl MemorySource {
    /// Serves `trace`'s events.
    pub fn new(trace: Trace) -> MemorySource {
        MemorySource {
            pos: vec![0; trace.streams.len()],
            members: Members::new(trace.world_size),
            trace,
        }
    }
}

impl EventSource for MemorySource {
    fn world_size(&self) -> u32 {
        self.trace.world_size
    }

    fn routines(&self) -> &[String] {
        &self.trace.routines
    }

    fn streams(&self) -> Vec<StreamInfo> {
        let info = |s: &Stream| StreamInfo {
            rank: s.rank,
            thread: s.thread,
        };
        self.trace.streams.iter().map(info).collect()
    }

    fn next(&mut self, stream: usize, ev: &mut Event) -> pnmpi_trace::Result<bool> {
        let s = &self.trace.streams[stream];
        match s.events.get(self.pos[stream]) {
            Some(e) => {
                ev.clone_from(e);
                self.pos[stream] += 1;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn members(&self, id: i64, rank: u32) -> Option<&[i64]> {
        self.members.of(&self.trace.comms, id, rank)
    }

    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }

    fn wins(&self) -> &[Win] {
        &self.trace.wins
    }
}
