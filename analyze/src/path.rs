//! The critical path: the chain of compute and MPI time, following the
//! happens-before order (program order, messages, collectives), that
//! ends the run; no rank's other work delays the end unless it is on it.
//!
//! It is walked backwards from the latest start of `MPI_Finalize`. On a
//! rank, the path takes the compute before each call (local calls such
//! as `MPI_Wtime` count as compute) and the call itself, back through program order; at a call that waited (a wait
//! state), the part of the call after the late partner entered is on the
//! path, and the path goes on from the partner's call, at its entry, on
//! the partner's rank. It ends at the end of `MPI_Init` of the rank it
//! reaches. Its segments are contiguous: their sum is the time from that
//! `MPI_Init` to the end.

use crate::calls::Class;
use crate::calls::OpRef;
use crate::run::Run;
use crate::waits;
use pnmpi_sim::units::Ns;

/// What a stretch of the path is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activity {
    /// Compute between the calls `before` (ended) and `after` (entered):
    /// op indices on the segment's actor.
    Compute {
        /// The call before the burst, if any.
        before: Option<u32>,
        /// The call after it.
        after: u32,
    },
    /// Time inside call `op` of the segment's actor.
    Mpi {
        /// The call.
        op: u32,
    },
}

/// One stretch of the path, on one actor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Segment {
    /// Actor index.
    pub actor: u32,
    /// Start, ns on the trace clock.
    pub start: Ns,
    /// End.
    pub end: Ns,
    /// What it is.
    pub what: Activity,
}

impl Segment {
    /// Its length, ns.
    pub fn len(&self) -> Ns {
        self.end - self.start
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.end <= self.start
    }
}

/// The path of `run`, earliest segment first.
///
/// A call folded into the compute around it ([`crate::calls`]) is
/// neither a wait nor a cause, so the path passes it as the burst it is
/// part of: where the calls are kept, the walk steps over each local
/// call, whose entry can only lower the time it has reached to no less
/// than the end of the call kept before it; where none is kept before,
/// the burst starts at the actor's first op.
pub fn critical_path(run: &Run) -> Vec<Segment> {
    let last = run
        .actors
        .iter()
        .enumerate()
        .filter(|(_, x)| x.ops > 0)
        .map(|(a, x)| match x.finalize {
            Some((i, start)) => (a, i, start),
            None => (a, x.ops, x.last_end),
        })
        .max_by(|x, y| x.2.total_cmp(&y.2));
    let Some((mut a, mut i, mut t)) = last else {
        return Vec::new();
    };
    let mut calls = run.cursor();
    let mut out = Vec::new();
    let mut budget = run.stored() + 16;
    // The burst being walked back: it ends at `burst_end` before call
    // `after`, and takes in the local calls (MPI_Wtime, MPI_Comm_rank...)
    // it meets, which are CPU time too.
    let (mut burst_end, mut after) = (t, i);
    let mut open = true;
    while i > 0 && budget > 0 {
        let Some(call) = calls.below(a, i) else {
            // Every op before is folded: the burst starts at the first.
            t = run.actors[a].first_start.min(t);
            break;
        };
        budget -= 1;
        let prev = call.op;
        let at = OpRef {
            actor: a as u32,
            op: prev,
        };
        let span = call.span();
        let wait = waits::of(&run.waits, at);
        if wait.is_none() && call.class == Class::Local {
            i = prev;
            t = span.start.min(t);
            continue;
        }
        let push = |out: &mut Vec<Segment>, start: Ns, end: Ns, what| {
            if end > start {
                out.push(Segment {
                    actor: a as u32,
                    start,
                    end,
                    what,
                });
            }
        };
        let end = span.end.min(t);
        push(
            &mut out,
            end,
            burst_end,
            Activity::Compute {
                before: Some(prev),
                after,
            },
        );
        if call.class == Class::Init {
            open = false;
            break;
        }
        match wait {
            Some(w) => {
                let cause = calls
                    .get(w.cause.actor as usize, w.cause.op)
                    .map_or(0.0, |c| c.start);
                let release = cause.clamp(span.start, end);
                push(&mut out, release, end, Activity::Mpi { op: prev });
                a = w.cause.actor as usize;
                i = w.cause.op;
                t = release;
            }
            None => {
                push(&mut out, span.start, end, Activity::Mpi { op: prev });
                i = prev;
                t = span.start.min(end);
            }
        }
        (burst_end, after) = (t, i);
    }
    if open && burst_end > t {
        out.push(Segment {
            actor: a as u32,
            start: t,
            end: burst_end,
            what: Activity::Compute { before: None, after },
        });
    }
    out.reverse();
    out
}
