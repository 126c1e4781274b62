//! The engine's [`EventSource`] over a tracer output folder streamed from
//! disk ([`FolderReader`]): a replay of a folder holds a window of each
//! thread's rank file and each rank's live communicators and requests,
//! not the trace.

use super::events::{EventSource, Members, StreamInfo};
use pnmpi_trace::folder::FolderReader;
use pnmpi_trace::trace::Event;

/// A streamed trace folder.
pub struct FolderSource {
    reader: FolderReader,
    streams: Vec<StreamInfo>,
    members: Members,
}

impl FolderSource {
    /// Serves `reader`'s events.
    pub fn new(reader: FolderReader) -> FolderSource {
        FolderSource {
            streams: reader
                .streams()
                .map(|(rank, thread)| StreamInfo { rank, thread })
                .collect(),
            members: Members::new(reader.world_size),
            reader,
        }
    }
}

impl EventSource for FolderSource {
    fn world_size(&self) -> u32 {
        self.reader.world_size
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
