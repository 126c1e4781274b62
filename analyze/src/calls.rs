//! One call as the analysis keeps it: its times, routine and what it is
//! to the critical path, in 16 bytes. The rest of an op (peers, tags,
//! requests) serves matching only, which takes it as the trace is read
//! ([`crate::matching::Sides`]); the what-if replays read the trace
//! again. So the run in memory grows by these records and the matching
//! tables, not by the replay engine's ops.

use pnmpi_sim::input::{Op, OpKind};
use pnmpi_sim::units::Ns;

/// What a call is to the critical path and the compute figures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// No communication (`MPI_Wtime`, `MPI_Comm_rank`...): CPU time.
    Local,
    /// `MPI_Init`: the analysed window starts at its end.
    Init,
    /// `MPI_Finalize`: the window ends at its start.
    Finalize,
    /// Any other MPI call.
    Mpi,
}

/// A call: entry on the trace clock, ns, duration, routine and class.
/// The duration is an `f32`: within 0.06 ppm of the trace's (a traced
/// call, not the run, is that long), and the end is the start plus it
/// wherever the analysis asks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Call {
    /// Entry.
    pub start: Ns,
    /// Duration, ns.
    dur: f32,
    /// Routine index into [`crate::load::Run::routines`].
    pub routine: u16,
    /// What it is.
    pub class: Class,
}

/// The most routines a trace may name: [`Call::routine`] is 16 bits.
pub const MAX_ROUTINES: usize = 1 << 16;

impl Call {
    /// The record of `op`, which entered at `start` (its routine below
    /// [`MAX_ROUTINES`]).
    pub fn of(op: &Op, start: Ns) -> Call {
        Call {
            start,
            dur: op.dur as f32,
            routine: op.routine as u16,
            class: match op.kind {
                OpKind::Local => Class::Local,
                OpKind::Init => Class::Init,
                OpKind::Finalize => Class::Finalize,
                _ => Class::Mpi,
            },
        }
    }

    /// Return, ns on the trace clock.
    pub fn end(&self) -> Ns {
        self.start + Ns::from(self.dur)
    }

    /// CPU time the call stands for: a local call's duration, else none.
    pub fn cpu(&self) -> Ns {
        if self.class == Class::Local {
            Ns::from(self.dur)
        } else {
            0.0
        }
    }
}
