//! PSINS's resource contention models: bus-only, incoming-link-only and
//! outgoing-link-only. One kind of resource is limited (`[network] buses`,
//! or `links_in` / `links_out` per node); a message between nodes waits
//! until a unit of it is free, first come first served, and holds it for
//! its whole transfer. Messages within a node use no such resource.
//!
//! ```text
//! T(m)   = latency(level, s) + s / bandwidth(level, s)
//! unit   = the unit of the pool that frees first (pool: all buses; the
//!          sender node's out-links; the receiver node's in-links)
//! start  = max(ready, free(unit));  end = start + T(m);  free(unit) = end
//! wait for resources = start - ready   (reported apart from the transfer)
//! ```
//!
//! With unlimited resources (`buses = 0`, or as many links as messages)
//! this is the simple model. Collectives: the simple model's analytic form.

use super::api::{CollCall, Model, Msg, Transfer};
use super::closed_form::simple_collective;
use crate::machine::{Machine, MachineError};
use crate::units::Ns;

/// Which resource is limited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Resource {
    Bus,
    LinkIn,
    LinkOut,
}

impl Resource {
    /// The name of the model that limits this resource.
    fn model_name(self) -> &'static str {
        match self {
            Resource::Bus => "bus",
            Resource::LinkIn => "inlink",
            Resource::LinkOut => "outlink",
        }
    }
}

/// A contention model.
pub struct Contention {
    machine: Machine,
    which: Resource,
    /// When each unit frees: one pool (buses) or one per node (links).
    pools: Vec<Vec<Ns>>,
}

fn build(machine: &Machine, which: Resource) -> Result<Box<dyn Model>, MachineError> {
    machine.require_network(which.model_name())?;
    let pools = match which {
        Resource::Bus => vec![vec![0.0; machine.network.buses as usize]],
        Resource::LinkIn => machine
            .nodes
            .iter()
            .map(|n| vec![0.0; n.links_in as usize])
            .collect(),
        Resource::LinkOut => machine
            .nodes
            .iter()
            .map(|n| vec![0.0; n.links_out as usize])
            .collect(),
    };
    Ok(Box::new(Contention {
        machine: machine.clone(),
        which,
        pools,
    }))
}

/// Bus-only: `[network] buses` shared by all messages between nodes.
pub fn build_bus(machine: &Machine) -> Result<Box<dyn Model>, MachineError> {
    build(machine, Resource::Bus)
}

/// Incoming-link-only: `links_in` per receiving node.
pub fn build_in(machine: &Machine) -> Result<Box<dyn Model>, MachineError> {
    build(machine, Resource::LinkIn)
}

/// Outgoing-link-only: `links_out` per sending node.
pub fn build_out(machine: &Machine) -> Result<Box<dyn Model>, MachineError> {
    build(machine, Resource::LinkOut)
}

impl Model for Contention {
    fn name(&self) -> &'static str {
        self.which.model_name()
    }

    fn eager(&self, m: &Msg) -> bool {
        m.bytes <= self.machine.network.eager_threshold.0
    }

    fn transfer(&mut self, m: &Msg, ready: Ns) -> Transfer {
        let cost = self.machine.p2p_cost(m.src_node, m.dst_node, m.bytes);
        let pool = match self.which {
            _ if m.src_node == m.dst_node => None,
            Resource::Bus => self.pools.first_mut().filter(|p| !p.is_empty()),
            Resource::LinkIn => self.pools.get_mut(m.dst_node as usize),
            Resource::LinkOut => self.pools.get_mut(m.src_node as usize),
        };
        let Some(pool) = pool else {
            return Transfer {
                start: ready,
                end: ready + cost,
            };
        };
        let (unit, free) = pool
            .iter()
            .copied()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .expect("pools have at least one unit");
        let start = ready.max(free);
        pool[unit] = start + cost;
        Transfer {
            start,
            end: start + cost,
        }
    }

    fn collective(&mut self, c: &CollCall<'_>, ready: Ns) -> Ns {
        ready + simple_collective(&self.machine, c)
    }
}
