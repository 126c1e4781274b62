//! The engine's [`EventSource`] over a merged trace streamed from disk
//! ([`MergedReader`]): a replay of a `.pnt` holds one chunk per stream,
//! not the trace.

use super::events::{EventSource, StreamInfo};
use pnmpi_trace::fields::{COMM_SELF, COMM_WORLD, FIRST_TABLE_COMM};
use pnmpi_trace::stream::MergedReader;
use pnmpi_trace::trace::Event;

/// A streamed merged trace.
pub struct StreamSource {
    reader: MergedReader,
    streams: Vec<StreamInfo>,
    world: Vec<i64>,
    selves: Vec<i64>,
}

impl StreamSource {
    /// Serves `reader`'s events.
    pub fn new(reader: MergedReader) -> StreamSource {
        StreamSource {
            streams: reader
                .streams()
                .map(|(rank, thread)| StreamInfo { rank, thread })
                .collect(),
            world: (0..i64::from(reader.world_size)).collect(),
            selves: (0..i64::from(reader.world_size)).collect(),
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
        match id {
            COMM_WORLD => Some(&self.world),
            COMM_SELF => self.selves.get(rank as usize).map(std::slice::from_ref),
            _ => usize::try_from(id - FIRST_TABLE_COMM)
                .ok()
                .and_then(|i| self.reader.comms.get(i))
                .map(|c| c.members.as_slice()),
        }
    }

    fn warnings(&self) -> Vec<String> {
        self.reader.truncated.iter().map(|e| e.to_string()).collect()
    }
}
