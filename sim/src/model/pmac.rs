//! PSINS's PMaC model. Point-to-point: the bandwidth of a message between
//! nodes is divided by the load on the resources it crosses at the time
//! it moves: the messages outstanding on its sender's out-links, its
//! receiver's in-links and the global buses, each over the resource's
//! count. Collectives: the time comes from curves fitted to measured
//! collective times (`pnmpi sim calibrate` writes them).
//!
//! ```text
//! n_out, n_in, n_bus = messages between nodes in flight at `ready` from the
//!                      sender's node, to the receiver's node, anywhere (this one included)
//! load   = max(n_out / links_out, n_in / links_in, n_bus / buses)   (buses = 0: unlimited)
//! T(m)   = latency + s / (bandwidth / max(1, load))
//! collective (fitted, per routine): alpha(P) + beta(P) s,
//!          alpha(P) = alpha + alpha_log log2 P,  beta(P) = beta + beta_log log2 P
//! ```
//!
//! With one message in flight at a time, load <= 1 and PMaC is the simple
//! model. The simple model is the lower bound: PMaC never predicts a
//! shorter time for a message or a collective than simple does.

use super::api::{CollCall, Model, Msg, Transfer};
use super::closed_form::simple_collective;
use crate::machine::{Machine, MachineError, COLL_NAMES};
use crate::units::{Ns, Time};
use pnmpi_trace::routine::Coll;
use serde::Deserialize;
use std::collections::BTreeMap;

/// A collective's fitted time: `alpha(P) + beta(P) * bytes`.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Fit {
    /// Time at zero bytes, at P = 1 (the log term's intercept).
    pub alpha: Time,
    /// Growth of the zero-byte time per doubling of P.
    #[serde(default)]
    pub alpha_log: Time,
    /// Time per byte at P = 1.
    pub beta: Time,
    /// Growth of the time per byte per doubling of P.
    #[serde(default)]
    pub beta_log: Time,
}

impl Fit {
    /// The fitted time of a collective of `p` tasks and `bytes` bytes.
    pub fn time(&self, p: u32, bytes: u64) -> Ns {
        let l = f64::from(p.max(1)).log2();
        (self.alpha.0 + self.alpha_log.0 * l) + (self.beta.0 + self.beta_log.0 * l) * bytes as f64
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    #[serde(default)]
    collectives: BTreeMap<String, Fit>,
}

/// The PMaC model.
pub struct Pmac {
    machine: Machine,
    fits: Vec<(Coll, Fit)>,
    /// End times of messages between nodes in flight: globally, by sending node, by receiving node.
    all: Vec<Ns>,
    out: Vec<Vec<Ns>>,
    into: Vec<Vec<Ns>>,
}

/// Builds it from `[model.pmac]`.
pub fn build(machine: &Machine) -> Result<Box<dyn Model>, MachineError> {
    machine.require_network("pmac")?;
    let p: Params = machine.model_table("pmac")?.ok_or_else(|| MachineError {
        file: machine.file.clone(),
        line: None,
        what: "the pmac model needs a [model.pmac] table with the fitted collective curves; \
               `mpirun -np N pnmpi sim calibrate -o MACHINE.toml` writes one"
            .into(),
    })?;
    let mut fits = Vec::new();
    for (name, fit) in p.collectives {
        let Some(&(_, c)) = COLL_NAMES.iter().find(|(n, _)| *n == name) else {
            return Err(MachineError {
                file: machine.file.clone(),
                line: None,
                what: format!("[model.pmac.collectives.{name}]: unknown collective"),
            });
        };
        fits.push((c, fit));
    }
    let n = machine.nodes.len();
    Ok(Box::new(Pmac {
        machine: machine.clone(),
        fits,
        all: Vec::new(),
        out: vec![Vec::new(); n],
        into: vec![Vec::new(); n],
    }))
}

impl Model for Pmac {
    fn name(&self) -> &'static str {
        "pmac"
    }

    fn eager(&self, m: &Msg) -> bool {
        m.bytes <= self.machine.network.eager_threshold.0
    }

    fn transfer(&mut self, m: &Msg, ready: Ns) -> Transfer {
        let level = self.machine.level(m.src_node, m.dst_node);
        let hops = self.machine.hop_delay(m.src_node, m.dst_node);
        let (lat, bw) = (level.latency.at(m.bytes).0 + hops, level.bandwidth.at(m.bytes));
        if m.src_node == m.dst_node {
            return Transfer {
                start: ready,
                end: ready + lat + bw.ns_for(m.bytes),
            };
        }
        let (s, d) = (m.src_node as usize, m.dst_node as usize);
        for list in [&mut self.all, &mut self.out[s], &mut self.into[d]] {
            list.retain(|&end| end > ready);
        }
        let nodes = &self.machine.nodes;
        let buses = self.machine.network.buses;
        let mut load = f64::max(
            (self.out[s].len() + 1) as f64 / f64::from(nodes[s].links_out),
            (self.into[d].len() + 1) as f64 / f64::from(nodes[d].links_in),
        );
        if buses > 0 {
            load = load.max((self.all.len() + 1) as f64 / f64::from(buses));
        }
        let end = ready + lat + bw.ns_for(m.bytes) * load.max(1.0);
        for list in [&mut self.all, &mut self.out[s], &mut self.into[d]] {
            list.push(end);
        }
        Transfer { start: ready, end }
    }

    fn collective(&mut self, c: &CollCall<'_>, ready: Ns) -> Ns {
        let simple = simple_collective(&self.machine, c);
        let fitted = self
            .fits
            .iter()
            .find(|(k, _)| *k == c.shape.coll)
            .map_or(simple, |(_, f)| f.time(c.shape.size, c.shape.bytes));
        ready + fitted.max(simple)
    }
}
