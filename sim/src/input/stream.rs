//! The engine's [`EventSource`] over our traces streamed from disk: a
//! merged trace ([`MergedReader`]: a replay of a `.pnt` holds one chunk
//! per stream) or a tracer output folder ([`FolderReader`]: a replay of a
//! folder holds a window of each thread's rank file and each rank's live
//! communicators and requests), not the trace.

use super::events::{EventSource, Members, StreamInfo};
use pnmpi_trace::folder::FolderReader;
use pnmpi_trace::stream::MergedReader;
use pnmpi_trace::trace::{Comm, Event};

/// What the streaming readers of `pnmpi-trace` have in common.
pub trait StreamedTrace {
    /// Size of `MPI_COMM_WORLD`.
    fn world_size(&self) -> u32;
    /// Routine names; events index them.
    fn routines(&self) -> &[String];
    /// The communicator table (ids from 2), as far as it is known.
    fn comms(&self) -> &[Comm];
    /// The streams: (rank, thread), by rank then thread.
    fn stream_list(&self) -> Vec<(u32, u32)>;
    /// The next event of stream `i` into `ev`; `false` at its end.
    fn next_into(&mut self, i: usize, ev: &mut Event) -> pnmpi_trace::Result<bool>;
    /// Warnings about the input.
    fn warnings(&self) -> Vec<String>;
}

impl StreamedTrace for MergedReader {
    fn world_size(&self) -> u32 {
        self.world_size
    }

    fn routines(&self) -> &[String] {
        &self.routines
    }

    fn comms(&self) -> &[Comm] {
        &self.comms
    }

    fn stream_list(&self) -> Vec<(u32, u32)> {
        self.streams().collect()
    }

    fn next_into(&mut self, i: usize, ev: &mut Event) -> pnmpi_trace::Result<bool> {
        MergedReader::next_into(self, i, ev)
    }

    fn warnings(&self) -> Vec<String> {
        self.truncated.iter().map(|e| e.to_string()).collect()
    }
}

impl StreamedTrace for FolderReader {
    fn world_size(&self) -> u32 {
        self.world_size
    }

    fn routines(&self) -> &[String] {
        FolderReader::routines(self)
    }

    fn comms(&self) -> &[Comm] {
        FolderReader::comms(self)
    }

    fn stream_list(&self) -> Vec<(u32, u32)> {
        self.streams().collect()
    }

    fn next_into(&mut self, i: usize, ev: &mut Event) -> pnmpi_trace::Result<bool> {
        FolderReader::next_into(self, i, ev)
    }

    fn warnings(&self) -> Vec<String> {
        FolderReader::warnings(self)
    }
}

/// A streamed trace: a merged `.pnt` (the default) or a tracer folder.
pub struct StreamSource<R: StreamedTrace = MergedReader> {
    reader: R,
    streams: Vec<StreamInfo>,
    members: Members,
}

impl<R: StreamedTrace> StreamSource<R> {
    /// Serves `reader`'s events.
    pub fn new(reader: R) -> StreamSource<R> {
        StreamSource {
            streams: reader
                .stream_list()
                .into_iter()
                .map(|(rank, thread)| StreamInfo { rank, thread })
                .collect(),
            members: Members::new(reader.world_size()),
            reader,
        }
    }
}

impl<R: StreamedTrace> EventSource for StreamSource<R> {
    fn world_size(&self) -> u32 {
        self.reader.world_size()
    }

    fn routines(&self) -> &[String] {
        self.reader.routines()
    }

    fn streams(&self) -> &[StreamInfo] {
        &self.streams
    }

    fn next(&mut self, stream: usize, ev: &mut Event) -> pnmpi_trace::Result<bool> {
        self.reader.next_into(stream, ev)
    }

    fn members(&self, id: i64, rank: u32) -> Option<&[i64]> {
        self.members.of(self.reader.comms(), id, rank)
    }

    fn warnings(&self) -> Vec<String> {
        self.reader.warnings()
    }
}
