//! The engine's [`EventSource`] over a merged trace streamed from disk
//! ([`MergedReader`]): a replay of a `.pnt` holds one chunk per stream,
//! not the trace.

use super::events::{EventSource, Members, StreamInfo};
use pnmpi_trace::stream::MergedReader;
use pnmpi_trace::trace::Event;

/// A streamed merged trace.
pub struct StreamSource {
    reader: MergedReader,
    streams: Vec<StreamInfo>,
    members: Members,
}

impl StreamSource {
    /// Serves `reader`'s events.
    pub fn new(reader: MergedReader) -> StreamSource {
        StreamSource {
            streams: reader
                .streams()
                .map(|(rank, thread)| StreamInfo { rank, thread })
                .collect(),
            members: Members::new(reader.world_size),
            reader,
        }
    }
}

impl EventSource for StreamSource {
    fn world_size(&self) -> u32 {
        self.reader.world_size
    }

    fn routines(&self) -> &[String] {
        &self.reader.routines
    }

    fn streams(&self) -> &[StreamInfo] {
        &self.streams
    }

    fn next(&mut self, stream: usize, ev: &mut Event) -> pnmpi_trace::Result<bool> {
        self.reader.next_into(stream, ev)
    }

    fn members(&self, id: i64, rank: u32) -> Option<&[i64]> {
        self.members.of(&self.reader.comms, id, rank)
    }

    fn warnings(&self) -> Vec<String> {
        self.reader.truncated.iter().map(|e| e.to_string()).collect()
    }
}
