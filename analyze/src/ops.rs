//! The trace's ops as the analysis reads them, from a file or from
//! memory: `pnmpi-sim`'s reader, so that the analysis and the what-if
//! replays see the same calls, with the start of each stream's first
//! event noted (the one time an op does not carry).

use crate::AnalyzeError;
use pnmpi_otf2::Opened;
use pnmpi_sim::input::events::EventSource;
use pnmpi_sim::input::stream::StreamSource;
use pnmpi_sim::input::trace::TraceOps;
use pnmpi_sim::input::OpSource;
use pnmpi_trace::sites::Site;
use pnmpi_trace::source::StreamedTrace;
use pnmpi_trace::trace::Event;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Where the trace can be read again, for the replays.
pub(crate) enum Origin {
    File(PathBuf),
    Memory(pnmpi_trace::Trace),
}

impl Origin {
    /// The trace's ops read again from the start, unfolded, as a replay
    /// reads them.
    pub(crate) fn ops(&self) -> Result<Box<dyn OpSource>, AnalyzeError> {
        let first = Rc::new(RefCell::new(Vec::new()));
        match self {
            Origin::File(path) => source(path, &first, false).map(|(src, _)| src),
            Origin::Memory(trace) => Ok(memory(trace.clone(), &first, false)),
        }
    }
}

/// An event source that notes the start of each stream's first event,
/// the one time an op does not carry.
struct Stamped<S: EventSource> {
    inner: S,
    first: Rc<RefCell<Vec<Option<u64>>>>,
    /// The streams noted already (the shared list is not looked at on
    /// every event).
    noted: Vec<bool>,
}

impl<S: EventSource> EventSource for Stamped<S> {
    fn world_size(&self) -> u32 {
        self.inner.world_size()
    }

    fn routines(&self) -> &[String] {
        self.inner.routines()
    }

    fn streams(&self) -> Vec<pnmpi_sim::input::events::StreamInfo> {
        self.inner.streams()
    }

    fn next(&mut self, stream: usize, ev: &mut Event) -> pnmpi_trace::Result<bool> {
        let more = self.inner.next(stream, ev)?;
        if more && !self.noted.get(stream).copied().unwrap_or(false) {
            if self.noted.len() <= stream {
                self.noted.resize(stream + 1, false);
            }
            self.noted[stream] = true;
            let mut first = self.first.borrow_mut();
            if first.len() <= stream {
                first.resize(stream + 1, None);
            }
            first[stream] = Some(ev.start);
        }
        Ok(more)
    }

    fn members(&self, id: i64, rank: u32) -> Option<&[i64]> {
        self.inner.members(id, rank)
    }

    fn warnings(&self) -> Vec<String> {
        self.inner.warnings()
    }

    fn keep(&mut self, range: std::ops::Range<usize>) {
        self.inner.keep(range);
    }
}

/// The ops of `inner`, the first event of each stream noted in `first`;
/// `fold`: the calls that communicate nothing folded
/// ([`TraceOps::folding`]).
fn stamped<S: EventSource + 'static>(
    inner: S,
    first: &Rc<RefCell<Vec<Option<u64>>>>,
    fold: bool,
) -> Box<dyn OpSource> {
    let ops = TraceOps::new(Stamped {
        inner,
        first: Rc::clone(first),
        noted: Vec::new(),
    });
    if fold {
        Box::new(ops.folding())
    } else {
        Box::new(ops)
    }
}

/// The ops of `reader`, and its site table.
fn streamed<R: StreamedTrace + 'static>(
    reader: R,
    first: &Rc<RefCell<Vec<Option<u64>>>>,
    fold: bool,
) -> (Box<dyn OpSource>, Vec<Site>) {
    let sites = reader.sites().to_vec();
    (stamped(StreamSource::new(reader), first, fold), sites)
}

/// The ops of the trace at `path` (a tracer folder, a merged `.pnt` or
/// an OTF2 archive: the traces with timestamps; a SimGrid trace has
/// none), and its site table; `fold` as [`stamped`] says.
pub(crate) fn source(
    path: &Path,
    first: &Rc<RefCell<Vec<Option<u64>>>>,
    fold: bool,
) -> Result<(Box<dyn OpSource>, Vec<Site>), AnalyzeError> {
    let name = path.display().to_string();
    let opened = pnmpi_otf2::open(path).map_err(|e| AnalyzeError::Trace(name.clone(), e))?;
    Ok(match opened {
        Some(Opened::Otf2(t)) => streamed(t, first, fold),
        Some(Opened::Folder(f)) => streamed(f, first, fold),
        Some(Opened::Merged(r)) => streamed(r, first, fold),
        None => {
            return Err(AnalyzeError::Input(format!(
                "{name}: not a merged trace (.pnt), a tracer folder or an OTF2 archive; \
                 a SimGrid trace has no timestamps to analyse: analyse the trace it was exported from"
            )))
        }
    })
}

/// The ops of a trace in memory; `first` and `fold` as [`stamped`] says.
pub(crate) fn memory(
    trace: pnmpi_trace::Trace,
    first: &Rc<RefCell<Vec<Option<u64>>>>,
    fold: bool,
) -> Box<dyn OpSource> {
    stamped(pnmpi_sim::input::events::MemorySource::new(trace), first, fold)
}
