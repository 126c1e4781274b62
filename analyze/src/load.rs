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
//! nothing), handed to `Matcher`, whose matches become [`crate::waits::Wait`]s and
//! the fitted machine's figures at once, and counted into the actor's
//! figures ([`Actor`]); the replays read the trace again
//! ([`Run::ops_again`]).

use crate::calls::{Call, Calls, Class};
pub use crate::calls::{OpRef, Span};
use crate::fit::Fit;
use crate::matching::{Collective, Matched, MatchedMessage, Matcher};
use crate::ops::{memory, source, Origin};
pub use crate::run::{Actor, Options, Run};
use crate::waits::Offers;
use crate::AnalyzeError;
use pnmpi_sim::input::{Op, OpSource};
use pnmpi_sim::units::Ns;
use pnmpi_trace::sites::Site;
use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

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

/// The matches' two takers: the wait states and the fitted machine.
#[derive(Default)]
struct Feed {
    offers: Offers,
    fit: Fit,
}

impl Matched for Feed {
    fn message(&mut self, m: &MatchedMessage) {
        self.offers.message(m);
        self.fit.message(m);
    }

    fn collective(&mut self, c: &Collective) {
        self.offers.collective(c);
    }
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
    let mut feed = Feed::default();
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
            matcher.see(at, actor.rank, &op, call.span(), &*src, &mut feed);
            tally.see(&call, op.folded);
            if !(options.fold && call.class == Class::Local) {
                calls.push(&call);
            }
            t = call.end();
            n = n.checked_add(1).ok_or_else(|| too_many(actor))?;
        }
        matcher.actor_done(actor.rank, &mut feed);
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
        waits: feed.offers.finish(),
        sites,
        fit: feed.fit,
        src,
        origin,
    })
}

/// A run of a trace in memory (small traces, tests).
pub fn from_trace(trace: pnmpi_trace::Trace, options: Options) -> Result<Run, AnalyzeError> {
    let first = Rc::new(RefCell::new(Vec::new()));
    let src = memory(trace.clone(), &first, options.fold);
    let sites = trace.sites.clone();
    read_all(src, sites, &first, options, &|_| {}, Origin::Memory(trace))
}
