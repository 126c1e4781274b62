//! What the two streaming readers have in common, so that the tools
//! (statistics, dump, exports, the simulator's replay) are written once
//! for a merged trace ([`MergedReader`]: one chunk per stream in memory)
//! and a tracer output folder ([`FolderReader`]: a window of each
//! thread's rank file and each rank's live communicators and requests),
//! and never hold the whole trace.

use crate::folder::FolderReader;
use crate::rma::Win;
use crate::sites::Site;
use crate::stream::MergedReader;
use crate::trace::{Comm, Event};
use crate::Result;

/// A trace read stream by stream, an event at a time.
pub trait StreamedTrace {
    /// Size of `MPI_COMM_WORLD`.
    fn world_size(&self) -> u32;
    /// The MPI the trace was recorded with.
    fn mpi(&self) -> &str;
    /// Routine names; events index them.
    fn routines(&self) -> &[String];
    /// The communicator table (ids from 2), as far as it is known: a
    /// folder's grows as the events creating communicators are read.
    fn comms(&self) -> &[Comm];
    /// The streams: (rank, thread), by rank then thread.
    fn stream_list(&self) -> Vec<(u32, u32)>;
    /// The next event of stream `i` into `ev`; `false` at its end.
    fn next_into(&mut self, i: usize, ev: &mut Event) -> Result<bool>;
    /// Starts stream `i` over from its first event, for the tools that
    /// read a trace twice (a folder's second pass finds its
    /// communicators under the same ids).
    fn restart(&mut self, i: usize) -> Result<()>;
    /// The number of events, exactly, with [`comms`](Self::comms)
    /// complete afterwards: a merged trace knows both from its index; a
    /// folder is read through once (`progress` told of the events), so
    /// that its streams must be restarted before they are read again
    /// (as [`for_each_event`] does).
    fn count_events(&mut self, progress: &dyn Fn(u64)) -> Result<u64>;
    /// Warnings about the input (truncated or unfinished files).
    fn warnings(&self) -> Vec<String>;
    /// Told that the streams are about to be read in turn, each from its
    /// start to its end (`true`), or in any order again (`false`): a
    /// folder then reads the one stream being read in larger pieces than
    /// its share of what all its streams read at once may hold (see
    /// [`FolderReader::read_in_turn`]).
    fn read_in_turn(&mut self, _in_turn: bool) {}
    /// Told that only streams `range` will be read from now on: a reader
    /// may free the others' state (a process of a parallel replay reads
    /// its own ranks'). Reading another stream afterwards may fail.
    fn keep(&mut self, _range: std::ops::Range<usize>) {}
    /// Told that the events' call sites will not be used (a replay): a
    /// reader may then leave [`V::Site`](crate::fields::V::Site) none and
    /// save decoding it.
    fn skip_sites(&mut self) {}
    /// The host rank `rank` ran on, as its rank file's header recorded
    /// it; `None` when the trace does not record hosts (a merged trace, an
    /// OTF2 archive) or has no file for the rank.
    fn host(&self, _rank: u32) -> Option<&str> {
        None
    }
    /// The one-sided window table ([`V::Win`](crate::fields::V::Win)
    /// values index it), as far as it is known (as [`comms`](Self::comms));
    /// empty when the trace has none.
    fn wins(&self) -> &[Win] {
        &[]
    }
    /// The call sites that events' [`V::Site`](crate::fields::V::Site)
    /// values index; empty when the trace records none (traces before
    /// format version 4, `argument sites off`, OTF2 archives).
    fn sites(&self) -> &[Site] {
        &[]
    }
}

impl StreamedTrace for MergedReader {
    fn world_size(&self) -> u32 {
        self.world_size
    }

    fn mpi(&self) -> &str {
        &self.mpi
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

    fn next_into(&mut self, i: usize, ev: &mut Event) -> Result<bool> {
        MergedReader::next_into(self, i, ev)
    }

    fn restart(&mut self, i: usize) -> Result<()> {
        MergedReader::restart(self, i)
    }

    fn keep(&mut self, range: std::ops::Range<usize>) {
        MergedReader::keep(self, range);
    }

    fn skip_sites(&mut self) {
        MergedReader::skip_sites(self);
    }

    fn count_events(&mut self, _: &dyn Fn(u64)) -> Result<u64> {
        Ok(self.event_count())
    }

    fn warnings(&self) -> Vec<String> {
        self.truncated.iter().map(|e| e.to_string()).collect()
    }

    fn sites(&self) -> &[Site] {
        &self.sites
    }

    fn wins(&self) -> &[Win] {
        &self.wins
    }
}

impl StreamedTrace for FolderReader {
    fn world_size(&self) -> u32 {
        self.world_size
    }

    fn mpi(&self) -> &str {
        &self.mpi
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

    fn next_into(&mut self, i: usize, ev: &mut Event) -> Result<bool> {
        FolderReader::next_into(self, i, ev)
    }

    fn restart(&mut self, i: usize) -> Result<()> {
        FolderReader::restart(self, i)
    }

    fn count_events(&mut self, progress: &dyn Fn(u64)) -> Result<u64> {
        count_by_reading(self, progress)
    }

    fn warnings(&self) -> Vec<String> {
        FolderReader::warnings(self)
    }

    fn read_in_turn(&mut self, in_turn: bool) {
        FolderReader::read_in_turn(self, in_turn)
    }

    fn host(&self, rank: u32) -> Option<&str> {
        FolderReader::host(self, rank)
    }

    fn sites(&self) -> &[Site] {
        FolderReader::sites(self)
    }

    fn wins(&self) -> &[Win] {
        FolderReader::wins(self)
    }
}

/// [`StreamedTrace::count_events`] of a source that knows its events
/// only by reading them all (a folder, an OTF2 archive).
pub fn count_by_reading(src: &mut dyn StreamedTrace, progress: &dyn Fn(u64)) -> Result<u64> {
    let mut n = 0;
    for_each_event(src, progress, |_, _, _, _, _| {
        n += 1;
        Ok(())
    })?;
    Ok(n)
}

/// Reads every stream from its start to its end, in stream order,
/// calling `each` with the source, the stream's index and (rank, thread),
/// and each event with its index in the stream (`progress` told of the
/// events read): one pass of a tool, in the merged trace's order, one
/// event in memory.
pub fn for_each_event(
    src: &mut dyn StreamedTrace,
    progress: &dyn Fn(u64),
    each: impl FnMut(&dyn StreamedTrace, usize, (u32, u32), usize, &Event) -> Result<()>,
) -> Result<()> {
    for_each_event_of(src, &|_| true, progress, each)
}

/// [`for_each_event`] over the streams whose (rank, thread) `wanted`
/// accepts only; the others are not read.
pub fn for_each_event_of(
    src: &mut dyn StreamedTrace,
    wanted: &dyn Fn((u32, u32)) -> bool,
    progress: &dyn Fn(u64),
    each: impl FnMut(&dyn StreamedTrace, usize, (u32, u32), usize, &Event) -> Result<()>,
) -> Result<()> {
    src.read_in_turn(true);
    let read = each_in_turn(src, wanted, progress, each);
    src.read_in_turn(false);
    read
}

/// [`for_each_event_of`]'s reading.
fn each_in_turn(
    src: &mut dyn StreamedTrace,
    wanted: &dyn Fn((u32, u32)) -> bool,
    progress: &dyn Fn(u64),
    mut each: impl FnMut(&dyn StreamedTrace, usize, (u32, u32), usize, &Event) -> Result<()>,
) -> Result<()> {
    let mut ev = Event::default();
    for (i, at) in src.stream_list().into_iter().enumerate() {
        if !wanted(at) {
            continue;
        }
        src.restart(i)?;
        let mut n = 0u64;
        while src.next_into(i, &mut ev)? {
            each(&*src, i, at, n as usize, &ev)?;
            n += 1;
            if n.is_multiple_of(1 << 16) {
                progress(1 << 16);
            }
        }
        progress(n % (1 << 16));
    }
    Ok(())
}
