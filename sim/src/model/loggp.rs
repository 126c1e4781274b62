//! The LogGP model (Alexandrov et al.), as LogGOPSim uses it: L the wire
//! latency, o the CPU overhead per message on each side, g the gap
//! between two messages a process injects, G the time per byte. Messages
//! of at most S bytes (default: the machine's eager threshold) are eager;
//! larger ones start with a request-to-send / clear-to-send handshake.
//!
//! ```text
//! send posted at t:  inject = max(t, nic_free[src]); CPU free at inject + o
//!                    nic_free[src] = inject + max(g, (s-1) G)
//! eager:             arrival = inject + o + (s-1) G + L
//! rendezvous:        ready = max(inject + o + L, recv_post) + o + L + o
//!                    arrival = ready + (s-1) G + L
//! receive completes: max(arrival, recv_post) + o
//! ping-pong round:   2 (2o + L + (s-1) G)           (eager)
//! collective:        scaling(P) x (2o + L + (s-1) G)
//! ```
//!
//! `[model.loggp]` gives L, o, g and G (with units: `G = "0.1ns"` per
//! byte), optionally S, and optionally an `intra` table with the same
//! keys for messages within a node.

use super::api::{CollCall, Model, Msg, Transfer};
use super::closed_form::{collective_steps, within_one_node};
use crate::machine::{Machine, MachineError};
use crate::units::{Bytes, Ns, Time};
use serde::Deserialize;

#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
struct Params {
    L: Time,
    o: Time,
    g: Time,
    G: Time,
}

/// `[model.loggp]`: the parameters across nodes, S, and `intra`. (Not
/// `#[serde(flatten)]` over [`Params`]: it would lose the positions.)
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
struct Table {
    L: Time,
    o: Time,
    g: Time,
    G: Time,
    #[serde(default)]
    S: Option<Bytes>,
    #[serde(default)]
    intra: Option<Params>,
}

/// The LogGP model.
pub struct LogGp {
    machine: Machine,
    inter: Params,
    intra: Params,
    eager_max: u64,
    nic_free: Vec<Ns>,
}

/// Builds it from `[model.loggp]`.
pub fn build(machine: &Machine) -> Result<Box<dyn Model>, MachineError> {
    machine.require_network("loggp")?;
    let t: Table = machine.model_table("loggp")?.ok_or_else(|| MachineError {
        file: machine.file.clone(),
        line: None,
        what: "the loggp model needs a [model.loggp] table with L, o, g and G (e.g. L = \"2.5us\", o = \"1.5us\", g = \"1us\", G = \"6ps\")".into(),
    })?;
    let inter = Params {
        L: t.L,
        o: t.o,
        g: t.g,
        G: t.G,
    };
    Ok(Box::new(LogGp {
        eager_max: t.S.unwrap_or(machine.network.eager_threshold).0,
        intra: t.intra.unwrap_or(inter),
        inter,
        machine: machine.clone(),
        nic_free: Vec::new(),
    }))
}

impl LogGp {
    /// The parameters of `m`'s level, its L grown by the topology's hops.
    fn params(&self, m: &Msg) -> Params {
        if m.src_node == m.dst_node {
            return self.intra;
        }
        let mut p = self.inter;
        p.L.0 += self.machine.hop_delay(m.src_node, m.dst_node);
        p
    }

    fn wire(p: &Params, bytes: u64) -> Ns {
        bytes.saturating_sub(1) as f64 * p.G.0 + p.L.0
    }
}

impl Model for LogGp {
    fn name(&self) -> &'static str {
        "loggp"
    }

    fn eager(&self, m: &Msg) -> bool {
        m.bytes <= self.eager_max
    }

    fn send_overhead(&mut self, m: &Msg, at: Ns) -> Ns {
        let p = self.params(m);
        let src = m.src as usize;
        if self.nic_free.len() <= src {
            self.nic_free.resize(src + 1, 0.0);
        }
        let inject = at.max(self.nic_free[src]);
        self.nic_free[src] = inject + p.g.0.max(m.bytes.saturating_sub(1) as f64 * p.G.0);
        inject + p.o.0
    }

    fn rendezvous_ready(&mut self, m: &Msg, send: Ns, recv: Ns) -> Ns {
        let p = self.params(m);
        (send + p.L.0).max(recv) + p.o.0 + p.L.0 + p.o.0
    }

    fn transfer(&mut self, m: &Msg, ready: Ns) -> Transfer {
        let p = self.params(m);
        Transfer {
            start: ready,
            end: ready + Self::wire(&p, m.bytes),
        }
    }

    fn recv_done(&mut self, m: &Msg, arrived: Ns, posted: Ns) -> Ns {
        arrived.max(posted) + self.params(m).o.0
    }

    fn collective(&mut self, c: &CollCall<'_>, ready: Ns) -> Ns {
        let params = if within_one_node(c) {
            self.intra
        } else {
            self.inter
        };
        ready + collective_steps(&self.machine, c) * (2.0 * params.o.0 + Self::wire(&params, c.shape.bytes))
    }

    /// Its only state is each sending rank's NIC (`g`, `G`), updated by
    /// that rank's own sends in their order; every message and collective
    /// takes at least one L.
    fn lookahead(&self) -> Ns {
        self.intra.L.0.min(self.inter.L.0)
    }
}
