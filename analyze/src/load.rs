//! The trace as the analysis reads it, once: every actor's calls (each
//! a CPU burst and the call after it, as the replay engine reads them,
//! wildcards resolved and persistent requests started) with each call's
//! traced start and end on the trace's clock, matched and turned into
//! wait states as they come.
//!
//! The ops come from `pnmpi-sim`'s reader, so that the analysis and the
//! what-if replays see the same calls; an op keeps only its burst and
//! duration, so each actor's clock offset (the start of its first call)
//! is noted as the reader goes, and the times are the running sums from
//! there: exact, since they are whole nanoseconds. Each op is kept in
//! [`Calls`] (folded into the compute around it when it communicates
//! nothing), handed to [`Matcher`], whose matches become [`Wait`]s and
//! the fitted machine's figures at once, and counted into the actor's
//! figures ([`Actor`]); the replays read the trace again
//! ([`Run::ops_again`]).

pub use crate::calls::Span;
use crate::calls::{Call, Calls, Class, Cursor};
use crate::matching::Matcher;
use crate::waits::{Offers, Wait};
use crate::whatif::Fit;
use crate::AnalyzeError;
use pnmpi_sim::input::events::EventSource;
use pnmpi_sim::input::stream::StreamSource;
use pnmpi_sim::input::trace::TraceOps;
use pnmpi_sim::input::{Op, OpSource};
use pnmpi_sim::units::Ns;
use pnmpi_trace::sites::Site;
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

/// How the trace is read.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// A send of more bytes waits for its receive (a rendezvous): only
    /// then can a receiver be late.
    pub eager: u64,
    /// Fold the calls that communicate nothing (a failed `MPI_Test` or
    /// `MPI_Iprobe`, `MPI_Wtime`...) into the compute around them, as
    /// the figures count them; `false` keeps each, for checking that the
    /// figures are the same.
    pub fold: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            eager: 65536,
            fold: true,
        }
    }
}

/// Where the trace can be read again, for the replays.
enum Origin {
    File(PathBuf),
    Memory(pnmpi_trace::Trace),
}

/// One actor (a thread of a rank): the figures the analysis takes from
/// every op, folded ones included.
#[derive(Clone, Copy, Debug, Default)]
pub struct Actor {
    /// World rank.
    pub rank: u32,
    /// Thread on the rank.
    pub thread: u32,
    /// Its ops, folded ones included.
    pub ops: u32,
    /// Entry of its first op, and return of its last.
    pub first_start: Ns,
    /// See `first_start`.
    pub last_end: Ns,
    /// Return of its first `MPI_Init`.
    pub init_end: Option<Ns>,
    /// Its last `MPI_Finalize`: op index and entry.
    pub finalize: Option<(u32, Ns)>,
    /// CPU time after its first `MPI_Init` (all of it without one): the
    /// bursts and the local calls, ns.
    pub compute: Ns,
}

/// A whole trace, read: its calls, wait states and what the fitted
/// machine needs.
pub struct Run {
    /// The actors (threads of ranks), by rank then thread.
    pub actors: Vec<Actor>,
    /// Per actor, its calls.
    pub calls: Vec<Calls>,
    /// Routine names; calls index them.
    pub routines: Vec<String>,
    /// Size of `MPI_COMM_WORLD`.
    pub world_size: u32,
    /// Every wait, one per waiting call, ordered by call.
    pub waits: Vec<Wait>,
    /// The trace's call-site table (empty when it records none).
    pub sites: Vec<Site>,
    pub(crate) fit: Fit,
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

    /// A call, if it is kept (not folded, not past its actor's end).
    pub fn call(&self, at: OpRef) -> Option<Call> {
        self.calls.get(at.actor as usize)?.get(at.op)
    }

    /// Lookups in the calls in about their order.
    pub fn cursor(&self) -> Cursor<'_> {
        Cursor::new(&self.calls)
    }

    /// A call's times (none for a call not kept).
    pub fn span(&self, at: OpRef) -> Span {
        self.call(at).map_or_else(Span::default, |c| c.span())
    }

    /// The routine name of a call.
    pub fn routine(&self, at: OpRef) -> &str {
        self.call(at).map_or("?", |c| self.routine_name(c.routine))
    }

    /// Routine `r`'s name.
    pub fn routine_name(&self, r: u32) -> &str {
        self.routines.get(r as usize).map_or("?", String::as_str)
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
        for a in self.actors.iter().filter(|a| a.ops > 0) {
            begin = begin.min(a.init_end.unwrap_or(a.first_start));
            end = end.max(a.finalize.map_or(a.last_end, |(_, t)| t));
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

    /// The number of calls, folded ones included.
    pub fn op_count(&self) -> u64 {
        self.actors.iter().map(|a| u64::from(a.ops)).sum()
    }

    /// The number of calls kept.
    pub fn stored(&self) -> u64 {
        self.calls.iter().map(Calls::stored).sum()
    }

    /// The trace's ops read again, as at first: what a replay reads.
    pub fn ops_again(&self) -> Result<Box<dyn OpSource>, AnalyzeError> {
        let first = Rc::new(RefCell::new(Vec::new()));
        match &self.origin {
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
fn source(
    path: &Path,
    first: &Rc<RefCell<Vec<Option<u64>>>>,
    fold: bool,
) -> Result<(Box<dyn OpSource>, Vec<Site>), AnalyzeError> {
    let name = path.display().to_string();
    let trace_err = |e| AnalyzeError::Trace(name.clone(), e);
    if pnmpi_otf2::is_otf2(path) {
        return Ok(streamed(
            pnmpi_otf2::Otf2Trace::open(path).map_err(trace_err)?,
            first,
            fold,
        ));
    }
    if path.is_dir() {
        return Ok(streamed(
            pnmpi_trace::folder::FolderReader::open(path).map_err(trace_err)?,
            first,
            fold,
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
        fold,
    ))
}

/// Reads and analyses a trace: a tracer folder, a merged `.pnt` or an
/// OTF2 archive. `progress` is told of the ops read.
pub fn open(path: &Path, options: Options, progress: &dyn Fn(u64)) -> Result<Run, AnalyzeError> {
    let first = Rc::new(RefCell::new(Vec::new()));
    let (src, sites) = source(path, &first, options.fold)?;
    let origin = Origin::File(path.to_path_buf());
    read_all(src, sites, &first, options, progress, origin)
}

/// One actor's figures as its ops come.
struct Tally {
    actor: Actor,
    /// The end of the op before, as [`Call::end`] measures it.
    prev_end: Ns,
    /// CPU time in all ops, and after the first `MPI_Init`.
    all: Ns,
    after_init: Ns,
}

impl Tally {
    fn new(actor: &pnmpi_sim::input::Actor, origin: Ns) -> Tally {
        Tally {
            actor: Actor {
                rank: actor.rank,
                thread: actor.thread,
                ..Actor::default()
            },
            prev_end: origin,
            all: 0.0,
            after_init: 0.0,
        }
    }

    /// Counts call `c`, after `folded` local calls folded into its burst:
    /// its burst (from the end of the op before) and, for a local call,
    /// its duration are CPU time.
    fn see(&mut self, c: &Call, folded: u32) {
        let a = &mut self.actor;
        if a.ops == 0 {
            a.first_start = c.start;
        }
        let cpu = c.start - self.prev_end + c.cpu();
        self.all += cpu;
        if a.init_end.is_some() {
            self.after_init += cpu;
        }
        match c.class {
            Class::Init if a.init_end.is_none() => a.init_end = Some(c.end()),
            Class::Finalize => a.finalize = Some((c.op, c.start)),
            _ => {}
        }
        self.prev_end = c.end();
        a.last_end = c.end();
        a.ops += 1 + folded;
    }

    fn finish(mut self) -> Actor {
        self.actor.compute = if self.actor.init_end.is_some() {
            self.after_init
        } else {
            self.all
        };
        self.actor
    }
}

/// The error for an actor with more calls than an op index counts.
fn too_many(actor: &pnmpi_sim::input::Actor) -> AnalyzeError {
    AnalyzeError::Input(format!(
        "rank {} thread {} has more than {} calls; the analysis takes fewer",
        actor.rank,
        actor.thread,
        u32::MAX
    ))
}

/// Reads every actor's ops: keeps each as a [`Call`] on the trace clock
/// (or folds it), counts it into its actor's figures and hands it to
/// matching.
fn read_all(
    mut src: Box<dyn OpSource>,
    sites: Vec<Site>,
    first: &Rc<RefCell<Vec<Option<u64>>>>,
    options: Options,
    progress: &dyn Fn(u64),
    origin: Origin,
) -> Result<Run, AnalyzeError> {
    let actors = src.actors().to_vec();
    let mut matcher = Matcher::new(&actors, src.routines(), options.eager);
    let (mut offers, mut fit) = (Offers::default(), Fit::default());
    let mut figures = Vec::with_capacity(actors.len());
    let mut lists = Vec::with_capacity(actors.len());
    for (a, actor) in actors.iter().enumerate() {
        // Made at the actor's first op, which gives its clock origin.
        let mut reading: Option<(Tally, Calls)> = None;
        let mut op = Op::default();
        // The end of the op before.
        let mut t: Ns = 0.0;
        let mut n: u32 = 0;
        while src.next(a, &mut op).map_err(AnalyzeError::Sim)? {
            let (tally, calls) = reading.get_or_insert_with(|| {
                // The first op's burst runs from the actor's clock origin
                // (0, or its thread's start) to its first event's start.
                let at = first.borrow().get(a).copied().flatten().unwrap_or(0) as Ns;
                t = at - op.gap;
                (Tally::new(actor, t), Calls::new(t, !sites.is_empty()))
            });
            // The calls folded into its burst come first.
            n = n.checked_add(op.folded).ok_or_else(|| too_many(actor))?;
            let call = Call {
                op: n,
                start: t + op.gap,
                dur: op.dur,
                routine: op.routine,
                class: Class::of(&op.kind),
                site: op.site,
            };
            let at = OpRef {
                actor: a as u32,
                op: n,
            };
            matcher.see(at, actor.rank, &op, call.span(), &*src, &mut offers);
            tally.see(&call, op.folded);
            if !(options.fold && call.class == Class::Local) {
                calls.push(&call);
            }
            t = call.end();
            n = n.checked_add(1).ok_or_else(|| too_many(actor))?;
        }
        matcher.actor_done(actor.rank, &mut offers, &mut fit);
        progress(u64::from(n));
        let (actor, calls) = match reading {
            Some((tally, mut calls)) => {
                calls.shrink();
                (tally.finish(), calls)
            }
            None => (Tally::new(actor, 0.0).finish(), Calls::default()),
        };
        figures.push(actor);
        lists.push(calls);
    }
    drop(matcher);
    Ok(Run {
        routines: src.routines().to_vec(),
        world_size: src.world_size(),
        actors: figures,
        calls: lists,
        waits: offers.finish(),
        sites,
        fit,
        src,
        origin,
    })
}

fn memory(trace: pnmpi_trace::Trace, first: &Rc<RefCell<Vec<Option<u64>>>>, fold: bool) -> Box<dyn OpSource> {
    stamped(pnmpi_sim::input::events::MemorySource::new(trace), first, fold)
}

/// A run of a trace in memory (small traces, tests).
pub fn from_trace(trace: pnmpi_trace::Trace, options: Options) -> Result<Run, AnalyzeError> {
    let first = Rc::new(RefCell::new(Vec::new()));
    let src = memory(trace.clone(), &first, options.fold);
    let sites = trace.sites.clone();
    read_all(src, sites, &first, options, &|_| {}, Origin::Memory(trace))
}
