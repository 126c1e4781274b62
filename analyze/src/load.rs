//! The trace as the analysis reads it: every actor's ops (a CPU burst
//! and the call after it, as the replay engine reads them, wildcards
//! resolved and persistent requests started) with each call's traced
//! start and end on the trace's clock.
//!
//! The ops come from `pnmpi-sim`'s reader, so that the analysis and the
//! what-if replays see the same calls; an op keeps only its burst and
//! duration, so each actor's clock offset (the start of its first call)
//! is noted as the reader goes, and the times are the running sums from
//! there: exact, since they are whole nanoseconds.

use crate::sites::{CallSites, Log, SharedLog};
use crate::AnalyzeError;
use pnmpi_sim::input::events::EventSource;
use pnmpi_sim::input::stream::StreamSource;
use pnmpi_sim::input::trace::TraceOps;
use pnmpi_sim::input::{Actor, Op, OpKind, OpSource};
use pnmpi_sim::units::Ns;
use pnmpi_trace::source::StreamedTrace;
use pnmpi_trace::trace::Event;
use std::cell::RefCell;
use std::path::Path;
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

/// A whole trace, in memory as ops with their times.
pub struct Run {
    /// The actors (threads of ranks), by rank then thread.
    pub actors: Vec<Actor>,
    /// Routine names; ops index them.
    pub routines: Vec<String>,
    /// Size of `MPI_COMM_WORLD`.
    pub world_size: u32,
    /// Per actor, its ops in program order.
    pub ops: Vec<Vec<Op>>,
    /// Per actor, each op's call times.
    pub times: Vec<Vec<Span>>,
    /// The ops' call sites, where the trace has them.
    pub sites: CallSites,
    /// The reader, kept for the communicators' members.
    src: Box<dyn OpSource>,
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

    /// An op.
    pub fn op(&self, at: OpRef) -> &Op {
        &self.ops[at.actor as usize][at.op as usize]
    }

    /// An op's times.
    pub fn span(&self, at: OpRef) -> Span {
        self.times[at.actor as usize][at.op as usize]
    }

    /// The routine name of an op.
    pub fn routine(&self, at: OpRef) -> &str {
        self.routines
            .get(self.op(at).routine as usize)
            .map_or("?", String::as_str)
    }

    /// The world rank of an actor.
    pub fn rank(&self, actor: u32) -> u32 {
        self.actors[actor as usize].rank
    }

    /// Where the analysed part of the run begins and ends, ns: the
    /// earliest end of `MPI_Init` and the latest start of `MPI_Finalize`
    /// (the first and last call where the trace has neither), as
    /// `pnmpi sim replay` measures a runtime.
    pub fn window(&self) -> (Ns, Ns) {
        let mut begin = Ns::INFINITY;
        let mut end: Ns = 0.0;
        for (ops, times) in self.ops.iter().zip(&self.times) {
            let Some(first) = times.first() else { continue };
            let init = ops.iter().position(|o| matches!(o.kind, OpKind::Init));
            begin = begin.min(init.map_or(first.start, |i| times[i].end));
            let fin = ops.iter().rposition(|o| matches!(o.kind, OpKind::Finalize));
            end = end.max(fin.map_or(times.last().map_or(0.0, |t| t.end), |i| times[i].start));
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

    /// Every call of actor `a`: where it is, and its op.
    pub fn calls_of(&self, a: usize) -> impl Iterator<Item = (OpRef, &Op)> {
        self.ops[a].iter().enumerate().map(move |(i, op)| {
            let at = OpRef {
                actor: a as u32,
                op: i as u32,
            };
            (at, op)
        })
    }

    /// The number of ops.
    pub fn op_count(&self) -> u64 {
        self.ops.iter().map(|o| o.len() as u64).sum()
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

/// Reads a trace whole: a tracer folder, a merged `.pnt` or an OTF2
/// archive (the traces with timestamps; a SimGrid trace has none).
/// `progress` is told of the ops read.
pub fn open(path: &Path, progress: &dyn Fn(u64)) -> Result<Run, AnalyzeError> {
    let first = Rc::new(RefCell::new(Vec::new()));
    let mut sites = Log::new(&[]);
    let name = path.display().to_string();
    let trace_err = |e| AnalyzeError::Trace(name.clone(), e);
    let src = if pnmpi_otf2::is_otf2(path) {
        streamed(
            pnmpi_otf2::Otf2Trace::open(path).map_err(trace_err)?,
            &first,
            &mut sites,
        )
    } else if path.is_dir() {
        streamed(
            pnmpi_trace::folder::FolderReader::open(path).map_err(trace_err)?,
            &first,
            &mut sites,
        )
    } else {
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
        streamed(
            pnmpi_trace::stream::MergedReader::open(path).map_err(trace_err)?,
            &first,
            &mut sites,
        )
    };
    read_all(src, &first, &sites, progress)
}

/// Reads every actor's ops and places them on the trace clock.
fn read_all(
    mut src: Box<dyn OpSource>,
    first: &Rc<RefCell<Vec<Option<u64>>>>,
    sites: &SharedLog,
    progress: &dyn Fn(u64),
) -> Result<Run, AnalyzeError> {
    let actors = src.actors().to_vec();
    let mut ops = Vec::with_capacity(actors.len());
    let mut times = Vec::with_capacity(actors.len());
    for a in 0..actors.len() {
        let mut mine = Vec::new();
        let mut op = Op::default();
        while src.next(a, &mut op).map_err(AnalyzeError::Sim)? {
            mine.push(std::mem::take(&mut op));
        }
        progress(mine.len() as u64);
        mine.shrink_to_fit();
        // The first op's burst runs from the actor's clock origin (0, or
        // its thread's start) to its first event's start.
        let start = first.borrow().get(a).copied().flatten().unwrap_or(0) as Ns;
        let mut t = start - mine.first().map_or(0.0, |o: &Op| o.gap);
        let spans = mine
            .iter()
            .map(|o| {
                let s = t + o.gap;
                t = s + o.dur;
                Span { start: s, end: t }
            })
            .collect::<Vec<Span>>();
        sites.borrow_mut().place(a, &spans);
        ops.push(mine);
        times.push(spans);
    }
    Ok(Run {
        routines: src.routines().to_vec(),
        world_size: src.world_size(),
        actors,
        ops,
        times,
        sites: Log::finish(sites),
        src,
    })
}

/// A run of a trace in memory (small traces, tests).
pub fn from_trace(trace: pnmpi_trace::Trace) -> Result<Run, AnalyzeError> {
    let first = Rc::new(RefCell::new(Vec::new()));
    let sites = Log::new(&trace.sites);
    let src = stamped(pnmpi_sim::input::events::MemorySource::new(trace), &first, &sites);
    read_all(src, &first, &sites, &|_| {})
}
