//! The engine's [`EventSource`] over our traces streamed from disk: a
//! merged trace ([`MergedReader`]: a replay of a `.pnt` holds one chunk
//! per stream) or a tracer output folder
//! ([`FolderReader`](pnmpi_trace::folder::FolderReader): a replay of a
//! folder holds a window of each thread's rank file and each rank's live
//! communicators and requests), not the trace.

use super::events::{EventSource, Members, StreamInfo};
use pnmpi_trace::rma::Win;
use pnmpi_trace::source::StreamedTrace;
use pnmpi_trace::stream::MergedReader;
use pnmpi_trace::trace::Event;

/// A streamed trace: a merged `.pnt` (the default) or a tracer folder.
pub struct StreamSource<R: StreamedTrace = MergedReader> {
    reader: R,
    members: Members,
}

impl<R: StreamedTrace> StreamSource<R> {
    /// Serves `reader`'s events.
    pub fn new(reader: R) -> StreamSource<R> {
        StreamSource {
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

    fn streams(&self) -> Vec<StreamInfo> {
        self.reader
            .stream_list()
            .into_iter()
            .map(|(rank, thread)| StreamInfo { rank, thread })
            .collect()
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

    fn wins(&self) -> &[Win] {
        self.reader.wins()
    }

    fn keep(&mut self, range: std::ops::Range<usize>) {
        self.reader.keep(range);
    }
}
