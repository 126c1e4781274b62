//! The analysis as extra tracks of the Perfetto export: each rank's wait
//! states (named by pattern, with what they waited for) and its stretches
//! of the critical path.

use crate::path::{Activity, Segment};
use crate::run::Run;
use pnmpi_trace::chrome::Mark;

/// ns on the trace clock, as the export's integer times.
fn ns(t: f64) -> u64 {
    t.max(0.0).round() as u64
}

/// The marks of `run`'s waits and its critical path `path`.
pub fn marks(run: &Run, path: &[Segment]) -> Vec<Mark> {
    let mut out = Vec::with_capacity(run.waits.len() + path.len());
    for w in &run.waits {
        let s = run.span(w.at);
        out.push(Mark {
            rank: run.rank(w.at.actor),
            track: "wait states",
            start: ns(s.start),
            end: ns(s.start + w.time),
            name: w.pattern.name().to_owned(),
            detail: format!(
                "{} waits {:.3} us for rank {} {} (call {})",
                run.routine(w.at),
                w.time / 1e3,
                run.rank(w.cause.actor),
                run.routine(w.cause),
                w.cause.op
            ),
        });
    }
    for s in path {
        let (name, detail) = match s.what {
            Activity::Compute { .. } => ("compute".to_owned(), "CPU on the critical path".to_owned()),
            Activity::Mpi { op } => {
                let at = crate::calls::OpRef { actor: s.actor, op };
                (
                    run.routine(at).to_owned(),
                    format!("call {op} on the critical path"),
                )
            }
        };
        out.push(Mark {
            rank: run.rank(s.actor),
            track: "critical path",
            start: ns(s.start),
            end: ns(s.end),
            name,
            detail,
        });
    }
    out
}
