//! PSINS's simple model: a message costs the latency plus its size over
//! the bandwidth of the level it crosses (within or across nodes), with
//! infinite resources: no message ever waits for another. The lower
//! bound of communication time.
//!
//! ```text
//! T(m)      = latency(level, s) + s / bandwidth(level, s)
//! eager     : s <= eager_threshold; arrival = send_post + T(m)
//! rendezvous: arrival = max(send_post, recv_post) + T(m)
//! collective: scaling(P) x T(size), scaling = 1, P-1 or ceil(log2 P)
//! ```

use super::api::{CollCall, Model, Msg, Transfer};
use super::closed_form::simple_collective;
use crate::machine::{Machine, MachineError};
use crate::units::Ns;

/// The simple model.
pub struct Simple {
    machine: Machine,
}

/// Builds it; it needs nothing beyond `[network]`.
pub fn build(machine: &Machine) -> Result<Box<dyn Model>, MachineError> {
    machine.require_network("simple")?;
    Ok(Box::new(Simple {
        machine: machine.clone(),
    }))
}

impl Model for Simple {
    fn name(&self) -> &'static str {
        "simple"
    }

    fn eager(&self, m: &Msg) -> bool {
        m.bytes <= self.machine.network.eager_threshold.0
    }

    fn transfer(&mut self, m: &Msg, ready: Ns) -> Transfer {
        let cost = self.machine.p2p_cost(m.src_node, m.dst_node, m.bytes);
        Transfer {
            start: ready,
            end: ready + cost,
        }
    }

    fn collective(&mut self, c: &CollCall<'_>, ready: Ns) -> Ns {
        ready + simple_collective(&self.machine, c)
    }

    /// Stateless: every message costs at least the least latency, and a
    /// collective of two or more members at least one message.
    fn lookahead(&self) -> Ns {
        self.machine.min_latency()
    }
}
