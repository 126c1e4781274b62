//! SimGrid's CM02 network model, as `smpirun` runs it with the SimGrid
//! export's options (`network/model:CM02`, SMPI's latency and bandwidth
//! factors 1, no cross-traffic): a message between two nodes is a flow
//! over the route the machine's `[network.topology]` gives (or the
//! `<cluster>` of `-m platform.xml`), sharing every link it crosses with
//! the other flows in flight by max-min fairness
//! ([`crate::network::flows`]):
//!
//! ```text
//! bytes    = size + [network] envelope (SMPI's 16-byte header)
//! latency  = the route's links' latencies, paid first
//! rate     = the flow's max-min share: weight 1 / route latency,
//!            bound min(least bandwidth, TCP_GAMMA / (2 route latency))
//! eager    : size <= eager_threshold (SMPI's detached sends below
//!            smpi/send-is-detached-thresh, sent before the receive is
//!            posted); larger ones move once the receive is posted
//! ```
//!
//! A message within a node crosses no link: the copy of `[network.intra]`,
//! closed-form; on the flat network (no `[network.topology]`) no message
//! crosses a link another does, and every one is closed-form. Collectives should be algorithmic (`[collectives] mode =
//! "algorithmic"`, as the platform and the export's machine.toml say), so
//! that each of their messages is a flow; a collective the engine times
//! as a whole (a nonblocking one) gets the simple model's closed form at
//! the route's latency, sharing no link.

use super::api::{CollCall, Model, Msg, Transfer};
use super::closed_form::collective_steps;
use crate::machine::{Machine, MachineError};
use crate::network::flows::{FlowId, Flows};
use crate::network::load::LinkLoad;
use crate::units::Ns;

/// The CM02 model: the machine for closed forms, the flows in flight on
/// its links (none on the flat network, where no message crosses a link
/// another does: every message is then closed-form, as `simple`'s).
pub struct Cm02 {
    machine: Machine,
    flows: Option<Flows>,
}

/// Builds it on the machine's graph of links, if any.
pub fn build(machine: &Machine) -> Result<Box<dyn Model>, MachineError> {
    machine.require_network("cm02")?;
    Ok(Box::new(Cm02 {
        machine: machine.clone(),
        flows: machine.graph().map(Flows::new),
    }))
}

impl Model for Cm02 {
    fn name(&self) -> &'static str {
        "cm02"
    }

    fn eager(&self, m: &Msg) -> bool {
        m.bytes <= self.machine.network.eager_threshold.0
    }

    /// A message within a node (`[network.intra]`'s copy), or any on the
    /// flat network.
    fn transfer(&mut self, m: &Msg, ready: Ns) -> Transfer {
        Transfer {
            start: ready,
            end: ready + self.machine.p2p_cost(m.src_node, m.dst_node, m.bytes),
        }
    }

    fn flow(&mut self, m: &Msg, ready: Ns) -> Option<FlowId> {
        if m.src_node == m.dst_node {
            return None;
        }
        let bytes = (m.bytes + self.machine.network.envelope.0) as f64;
        self.flows.as_mut()?.start(m.src_node, m.dst_node, bytes, ready)
    }

    fn flows(&mut self) -> Option<&mut Flows> {
        self.flows.as_mut()
    }

    fn count_link_loads(&mut self) -> bool {
        self.flows.as_mut().map(Flows::count_loads).is_some()
    }

    fn link_loads(&self) -> Option<Vec<LinkLoad>> {
        self.flows.as_ref()?.loads()
    }

    fn collective(&mut self, c: &CollCall<'_>, ready: Ns) -> Ns {
        let (Some(&a), Some(&b)) = (c.nodes.first(), c.nodes.last()) else {
            return ready;
        };
        ready + collective_steps(&self.machine, c) * self.machine.p2p_cost(a, b, c.shape.bytes)
    }

    /// On the flat network, stateless as `simple`; on links, the flows in
    /// flight span ranks: no parallel replay.
    fn lookahead(&self) -> Ns {
        if self.flows.is_some() {
            0.0
        } else {
            self.machine.min_latency()
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::machine::Machine;

    fn machine(topology: &str) -> Machine {
        let text =
            format!("[machine]\nnodes = 4\n[network]\nlatency = \"0us\"\nbandwidth = \"10GB/s\"\n{topology}");
        Machine::parse("m.toml", &text).expect("a machine")
    }

    #[test]
    fn on_links_it_has_flows_no_lookahead_and_simulators_without_flows_refuse_it() {
        let links = machine(
            "[network.topology]\nshape = \"torus\"\ntopology = \"4\"\nbandwidth = \"10GB/s\"\nlatency = \"1us\"\n",
        );
        let mut m = crate::model::build("cm02", &links).expect("cm02");
        assert_eq!(m.lookahead(), 0.0, "its flows span ranks");
        let why = crate::model::unshared(m.as_mut(), "vtime runs one process per rank").expect("refused");
        assert!(why.contains("cm02") && why.contains("pnmpi sim replay"), "{why}");
        // On the flat network nothing is shared: as simple, and allowed.
        let mut flat = crate::model::build("cm02", &machine("")).expect("cm02");
        assert!(crate::model::unshared(flat.as_mut(), "x").is_none());
        let mut simple = crate::model::build("simple", &links).expect("simple");
        assert!(crate::model::unshared(simple.as_mut(), "x").is_none());
    }
}
