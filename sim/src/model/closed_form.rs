//! PSINS's analytic collective times, which several models share: how
//! many message times a collective takes, and the simple model's time for
//! it at the level its members span.

use super::api::CollCall;
use crate::machine::Machine;
use crate::units::Ns;

/// How many point-to-point message times the analytic form of collective
/// `c` takes: 1, P-1 or ceil(log2 P), from the machine's `[collectives]`
/// (an algorithmic choice never reaches a model; log is the fallback).
pub fn collective_steps(machine: &Machine, c: &CollCall<'_>) -> f64 {
    use crate::machine::{CollChoice, Scaling};
    let p = c.shape.size;
    if p <= 1 {
        return 0.0;
    }
    let scaling = match machine.collective(c.shape.coll) {
        CollChoice::Analytic(s) => *s,
        CollChoice::Algorithmic(_) => Scaling::Log,
    };
    match scaling {
        Scaling::Constant => 1.0,
        Scaling::Linear => f64::from(p - 1),
        Scaling::Log => f64::from(crate::algorithms::log2_ceil(p)),
    }
}

/// PSINS's simple analytic collective time: [`collective_steps`] messages
/// of the call's size at the level its members span.
pub fn simple_collective(machine: &Machine, c: &CollCall<'_>) -> Ns {
    let level = if within_one_node(c) {
        &machine.network.intra
    } else {
        &machine.network.inter
    };
    collective_steps(machine, c) * level.cost_on_wire(c.shape.bytes, machine.network.envelope.0)
}

/// Whether a collective's members all sit on one node (its messages
/// then stay within the node).
pub fn within_one_node(c: &CollCall<'_>) -> bool {
    c.nodes.iter().all(|&n| n == c.nodes[0])
}
