//! The trace as the analysis reads it: every actor's calls (each a CPU
//! burst and the call after it, as the replay engine reads them,
//! wildcards resolved and persistent requests started) with each call's
//! traced start and end on the trace's clock.
//!
//! The ops come from `pnmpi-sim`'s reader, so that the analysis and the
//! what-if replays see the same calls; an op keeps only its burst and
//! duration, so each actor's clock offset (the start of its first call)
//! is noted as the reader goes, and the times are the running sums from
//! there: exact, since they are whole nanoseconds. Each op is kept as a
//! 16-byte [`Call`] and what matching needs of it ([`Sides`]); the
//! replays read the trace again ([`Run::ops_again`]).

use crate::calls::{Call, Class, MAX_ROUTINES};
use crate::matching::Sides;
use crate::sites::{CallSites, Log, SharedLog};
use crate::AnalyzeError;
use pnmpi_sim::input::events::EventSource;
use pnmpi_sim::input::stream::StreamSource;
use pnmpi_sim::input::trace::TraceOps;
use pnmpi_sim::input::{Actor, Op, OpSource};
use pnmpi_sim::units::Ns;
use pnmpi_trace::source::StreamedTrace;
use pnmpi_trace::trace::Event;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// A call: the `op`-th op of actor `actor`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct OpRef {
    /// Actor index.
    pub actor: u32,
    /// Op index on the actor.
    pub op: u32,
}

/// When a call ran, ns on the trace clock.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Span {
    /// Entry.
    pub start: Ns,
    /// Return.
    pub end: Ns,
}

/// Where the trace can be read again, for the replays.
enum Origin {
    File(PathBuf),
    Memory(pnmpi_trace::Trace),
}

/// A whole trace, in memory as its calls with their times.
pub struct Run {
    /// The actors (threads of ranks), by rank then thread.
    pub actors: Vec<Actor>,
    /// Routine names; calls index them.
    pub routines: Vec<String>,
    /// Size of `MPI_COMM_WORLD`.
    pub world_size: u32,
    /// Per actor, its calls in program order.
    pub ops: Vec<Vec<Call>>,
    /// Per actor, where its first burst began (its clock's origin).
    pub origins: Vec<Ns>,
    /// What matching needs of the ops.
    pub(crate) sides: Sides,
    /// The calls' sites, where the trace has them.
    pub sites: CallSites,
    /// The reader, kept for the communicators' members.
    src: Box<dyn OpSource>,
    origin: Origin,
}

impl Run {
    /// World ranks of communicator `comm` as seen from `rank`.
    pub fn members(&self, comm: i64, rank: u32) -> Option<Vec<u32>> {
        self.src.members(comm, rank)
    }

    /// The reader's warnings (truncated files, approximated calls).
    pub fn warnings(&self) -> Vec<String> {
        self.src.warnings()
    }

    /// A call.
    pub fn call(&self, at: OpRef) -> &Call {
        &self.ops[at.actor as usize][at.op as usize]
    }

    /// A call's times.
    pub fn span(&self, at: OpRef) -> Span {
        let c = self.call(at);
        Span {
            start: c.start,
            end: c.end(),
        }
    }

    /// The routine name of a call.
    pub fn routine(&self, at: OpRef) -> &str {
        self.routines
            .get(self.call(at).routine as usize)
            .map_or("?", String::as_str)
    }

    /// The world rank of an actor.
    pub fn rank(&self, actor: u32) -> u32 {
        self.actors[actor as usize].rank
    }

    /// The CPU burst before call `i` of actor `a`: from the end of the
    /// call before (or the actor's origin) to its entry.
    pub fn gap(&self, a: usize, i: usize) -> Ns {
        let before = match i {
            0 => self.origins[a],
            _ => self.ops[a][i - 1].end(),
        };
        self.ops[a][i].start - before
    }

    /// Where the analysed part of the run begins and ends, ns: the
    /// earliest end of `MPI_Init` and the latest start of `MPI_Finalize`
    /// (the first and last call where the trace has neither), as
    /// `pnmpi sim replay` measures a runtime.
    pub fn window(&self) -> (Ns, Ns) {
        let mut begin = Ns::INFINITY;
        let mut end: Ns = 0.0;
        for calls in &self.ops {
            let Some(first) = calls.first() else { continue };
            let init = calls.iter().find(|c| c.class == Class::Init);
            begin = begin.min(init.map_or(first.start, |c| c.end()));
            let fin = calls.iter().rfind(|c| c.class == Class::Finalize);
            end = end.max(fin.map_or(calls.last().map_or(0.0, |c| c.end()), |c| c.start));
        }
        if begin > end {
            (0.0, 0.0)
        } else {
            (begin, end)
        }
    }

    /// The analysed part's length, ns.
    pub fn runtime(&self) -> Ns {
        let (b, e) = self.window();
        e - b
    }

    /// The number of calls.
    pub fn op_count(&self) -> u64 {
        self.ops.iter().map(|o| o.len() as u64).sum()
    }

    /// The trace's ops read again, as at first: what a replay reads.
    pub fn ops_again(&self) -> Result<Box<dyn OpSource>, AnalyzeError> {
        let first = Rc::new(RefCell::new(Vec::new()));
        // The sites are known: a log without a table notes nothing.
        let mut sites = Log::new(&[]);
        match &self.origin {
            Origin::File(path) => source(path, &first, &mut sites),
            Origin::Memory(trace) => Ok(memory(trace.clone(), &first, &sites)),
        }
    }
}

/// An event source that notes the start of each stream's first event,
/// the one time an op does not carry.
struct Stamped<S: EventSource> {
    inner: S,
    first: Rc<RefCell<Vec<Option<u64>>>>,
    sites: SharedLog,
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
        if more {
            let mut first = self.first.borrow_mut();
            if first.len() <= stream {
                first.resize(stream + 1, None);
            }
            first[stream].get_or_insert(ev.start);
            self.sites.borrow_mut().note(stream, ev);
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

fn stamped<S: EventSource + 'static>(
    inner: S,
    first: &Rc<RefCell<Vec<Option<u64>>>>,
    sites: &SharedLog,
) -> Box<dyn OpSource> {
    Box::new(TraceOps::new(Stamped {
        inner,
        first: Rc::clone(first),
        sites: Rc::clone(sites),
    }))
}

fn streamed<R: StreamedTrace + 'static>(
    reader: R,
    first: &Rc<RefCell<Vec<Option<u64>>>>,
    sites: &mut SharedLog,
) -> Box<dyn OpSource> {
    *sites = Log::new(reader.sites());
    stamped(StreamSource::new(reader), first, sites)
}

/// The ops of the trace at `path`: a tracer folder, a merged `.pnt` or
/// an OTF2 archive (the traces with timestamps; a SimGrid trace has none).
fn source(
    path: &Path,
    first: &Rc<RefCell<Vec<Option<u64>>>>,
    sites: &mut SharedLog,
) -> Result<Box<dyn OpSource>, AnalyzeError> {
    let name = path.display().to_string();
    let trace_err = |e| AnalyzeError::Trace(name.clone(), e);
    if pnmpi_otf2::is_otf2(path) {
        return Ok(streamed(
            pnmpi_otf2::Otf2Trace::open(path).map_err(trace_err)?,
            first,
            sites,
        ));
    }
    if path.is_dir() {
        return Ok(streamed(
            pnmpi_trace::folder::FolderReader::open(path).map_err(trace_err)?,
            first,
            sites,
        ));
    }
    let mut head = Vec::with_capacity(8);
    let read = std::fs::File::open(path)
        .and_then(|f| std::io::Read::read_to_end(&mut std::io::Read::take(f, 8), &mut head));
    if let Err(e) = read {
        return Err(AnalyzeError::Input(format!("{name}: cannot read it: {e}")));
    }
    if head != b"PNMPITRC" {
        return Err(AnalyzeError::Input(format!(
            "{name}: not a merged trace (.pnt), a tracer folder or an OTF2 archive; \
             a SimGrid trace has no timestamps to analyse: analyse the trace it was exported from"
        )));
    }
    Ok(streamed(
        pnmpi_trace::stream::MergedReader::open(path).map_err(trace_err)?,
        first,
        sites,
    ))
}

/// Reads a trace whole: a tracer folder, a merged `.pnt` or an OTF2
/// archive. `progress` is told of the ops read.
pub fn open(path: &Path, progress: &dyn Fn(u64)) -> Result<Run, AnalyzeError> {
    let first = Rc::new(RefCell::new(Vec::new()));
    let mut sites = Log::new(&[]);
    let src = source(path, &first, &mut sites)?;
    read_all(src, &first, &sites, progress, Origin::File(path.to_path_buf()))
}

/// Reads every actor's ops, keeps each as a [`Call`] on the trace clock,
/// and hands it to matching.
fn read_all(
    mut src: Box<dyn OpSource>,
    first: &Rc<RefCell<Vec<Option<u64>>>>,
    sites: &SharedLog,
    progress: &dyn Fn(u64),
    origin: Origin,
) -> Result<Run, AnalyzeError> {
    let actors = src.actors().to_vec();
    if src.routines().len() > MAX_ROUTINES {
        return Err(AnalyzeError::Input(format!(
            "the trace names {} routines; the analysis takes at most {MAX_ROUTINES}",
            src.routines().len()
        )));
    }
    let mut sides = Sides::new(src.routines());
    let mut ops = Vec::with_capacity(actors.len());
    let mut origins = Vec::with_capacity(actors.len());
    for (a, actor) in actors.iter().enumerate() {
        let mut mine: Vec<Call> = Vec::new();
        let mut op = Op::default();
        // The first op's burst runs from the actor's clock origin (0, or
        // its thread's start) to its first event's start.
        let mut t = None;
        while src.next(a, &mut op).map_err(AnalyzeError::Sim)? {
            let start = *t.get_or_insert_with(|| {
                let at = first.borrow().get(a).copied().flatten().unwrap_or(0) as Ns;
                origins.push(at - op.gap);
                at - op.gap
            }) + op.gap;
            let at = OpRef {
                actor: a as u32,
                op: mine.len() as u32,
            };
            sides.see(at, actor.rank, &op, &*src);
            // The running sum stays exact: a call keeps its duration as an f32.
            t = Some(start + op.dur);
            mine.push(Call::of(&op, start));
        }
        if t.is_none() {
            origins.push(first.borrow().get(a).copied().flatten().unwrap_or(0) as Ns);
        }
        progress(mine.len() as u64);
        mine.shrink_to_fit();
        let spans: Vec<Span> = mine
            .iter()
            .map(|c| Span {
                start: c.start,
                end: c.end(),
            })
            .collect();
        sites.borrow_mut().place(a, &spans);
        ops.push(mine);
    }
    Ok(Run {
        routines: src.routines().to_vec(),
        world_size: src.world_size(),
        actors,
        ops,
        origins,
        sides,
        sites: Log::finish(sites),
        src,
        origin,
    })
}

fn memory(
    trace: pnmpi_trace::Trace,
    first: &Rc<RefCell<Vec<Option<u64>>>>,
    sites: &SharedLog,
) -> Box<dyn OpSource> {
    stamped(pnmpi_sim::input::events::MemorySource::new(trace), first, sites)
}

/// A run of a trace in memory (small traces, tests).
pub fn from_trace(trace: pnmpi_trace::Trace) -> Result<Run, AnalyzeError> {
    let first = Rc::new(RefCell::new(Vec::new()));
    let sites = Log::new(&trace.sites);
    let src = memory(trace.clone(), &first, &sites);
    read_all(src, &first, &sites, &|_| {}, Origin::Memory(trace))
}
