//! Call sites (file:line) of calls: where the trace records them, the
//! report's tables by site fill from here. The tracer does not record
//! sites yet, and neither do the readers, so every call's site is
//! unknown; `compute site FILE:LINE` what-ifs are refused with that
//! reason (see [`crate::spec`]).

use crate::load::{OpRef, Run};

/// The call site of a call, `file:line`, when the trace has it; none
/// for an op index past the actor's last (the end of the run).
pub fn site(_run: &Run, _at: OpRef) -> Option<String> {
    None
}

/// Whether the trace records call sites at all.
pub fn recorded(run: &Run) -> bool {
    run.ops.iter().enumerate().any(|(a, ops)| {
        !ops.is_empty()
            && site(
                run,
                OpRef {
                    actor: a as u32,
                    op: 0,
                },
            )
            .is_some()
    })
}
