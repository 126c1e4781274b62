//! Collectives: the shape of one collective call, and its two timing
//! forms, the kernel's collective rule for the three simulators.
//! *Analytic*: a closed form in the number of tasks, as PSINS's simple
//! model has it (the model computes it: [`closed_form`]). *Algorithmic*:
//! each task's part expanded into point-to-point [`Step`]s of a named
//! algorithm, as SimGrid and LogGOPSim do ([`steps`]); the engine then
//! replays those messages like the application's own, through the same
//! model.
//!
//! What each member brings is a [`Member`]: its size as the tracer records
//! it and, for a `v` collective, the per-peer bytes it knows (those the
//! tracer records on that process). The closed form charges the largest
//! [`Member::charged`] of the members, a maximum that every mode can
//! reduce without knowing the other members' arrays: the replay over the
//! trace's records, vtime by an `MPI_MAX` reduction on its shadow
//! communicator, virtual ranks over their joined members.

mod member;
#[cfg(test)]
mod tests;
mod vector;

pub use crate::algorithms::{algorithms_of, check_algorithm, default_algorithm, log2_ceil, Shape, Step};
pub use member::{charged, Member};

use crate::input::VCounts;
use crate::machine::{CollChoice, Machine};
use crate::model::{CollCall, Model};
use crate::units::Ns;
use pnmpi_trace::routine::Coll;

/// The algorithm collective `c` is expanded into on `machine`, or `None`
/// for the closed form: the machine file's choice, for a blocking call
/// only. A nonblocking collective always takes the closed form: its
/// members go on with their own work while it runs, which an expansion
/// into the caller's messages would hold up. Every mode asks this.
pub fn algorithm(machine: &Machine, c: Coll, blocking: bool) -> Option<&str> {
    match machine.collective(c) {
        CollChoice::Algorithmic(name) if blocking => Some(name),
        _ => None,
    }
}

/// The closed form: when collective `shape` completes on every member,
/// its last member having entered at `latest`, its members on `nodes`
/// (communicator order); `shape.bytes` is the largest
/// [`Member::charged`] over the members.
pub fn closed_form(model: &mut dyn Model, shape: Shape, nodes: &[u32], latest: Ns) -> Ns {
    model.collective(&CollCall { shape, nodes }, latest)
}

/// Appends task `s.me`'s steps of collective `s` run as algorithm `name`
/// (checked at load) with `counts` its part's per-peer bytes: a `v`
/// collective with them runs SimGrid's default for its `v` form whatever
/// `name` says (SimGrid selects those apart; `name` is the plain form's).
pub fn steps(name: &str, s: &Shape, counts: Option<&VCounts>, out: &mut Vec<Step>) {
    match counts {
        Some(c) => vector::expand_v(s, c, out),
        None => crate::algorithms::expand(name, s, out),
    }
}
