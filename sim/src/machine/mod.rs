//! The machine description: the target system a replay, a jitter
//! simulation or a `vtime` run models. One TOML file (see
//! `sim/machine.example.toml`, every key commented) gives the nodes and
//! their relative CPU speed, the task-to-core mapping, the network's
//! latency and bandwidth within and across nodes (constants or tables
//! over message sizes), the eager/rendezvous threshold, how each
//! collective is modelled, and a table per model for its own parameters.
//!
//! Errors name the file, the line and the key; a model's own table is
//! read by the model (see [`Machine::model_table`]), so that a new model
//! brings its parameters without a change here.

pub mod curve;
mod error;
use error::toml_error;
mod load;
mod parts;
mod pick;
mod platform;
mod schema;
mod simgrid_cluster;
pub mod topology;

pub use curve::{Curve, Step};
pub use error::MachineError;
pub use parts::{CollChoice, Collectives, Level, Mapping, Network, NodeSpec, Scaling, COLL_NAMES};

use crate::units::Ns;
use pnmpi_trace::routine::Coll;
use serde::de::DeserializeOwned;
use std::path::PathBuf;

/// A loaded, validated machine.
#[derive(Clone, Debug)]
pub struct Machine {
    /// Where it came from (for messages), or `<built-in>`.
    pub file: String,
    /// Its text, kept so that models can read their own tables with
    /// positions for their errors.
    source: String,
    /// A name for reports.
    pub name: String,
    /// `[machine] traced_on`: where the traces replayed on this file were
    /// recorded, when the file describes that machine (as `pnmpi sim
    /// calibrate` writes it). `--compare` then reports the prediction's
    /// error; on any other file, the difference between two machines.
    pub traced_on: Option<String>,
    /// `[machine] model`: the model this machine is meant for, which a
    /// replay uses when `--model` names none (a SimGrid platform's is
    /// `cm02`, SimGrid's own model of its links).
    pub model: Option<String>,
    /// Per node: cores and CPU ratio.
    pub nodes: Vec<NodeSpec>,
    /// How tasks map onto nodes.
    pub mapping: Mapping,
    /// Latency, bandwidth and protocol.
    pub network: Network,
    /// Whether the file gave `[network]` (else `network` is a stand-in that
    /// no model but one carrying its own parameters may use).
    network_given: bool,
    /// How each collective is modelled.
    pub collectives: Collectives,
}

impl Machine {
    /// For a model that times messages with `[network]`: an error naming
    /// the file, what is missing and what to do, when the file has none.
    pub fn require_network(&self, model: &str) -> Result<(), MachineError> {
        if self.network_given {
            return Ok(());
        }
        Err(MachineError {
            file: self.file.clone(),
            line: None,
            what: format!(
                "the {model} model needs [network] with latency and bandwidth (or [network.intra] and \
                 [network.inter]); add it, or use --model loggops, whose [model.loggops] carries all its parameters"
            ),
        })
    }

    /// The machine file's text.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Total cores.
    pub fn cores(&self) -> u64 {
        self.nodes.iter().map(|n| u64::from(n.cores)).sum()
    }

    /// The node of every task of a run of `ranks` tasks.
    pub fn place(&self, ranks: u32) -> Result<Vec<u32>, MachineError> {
        place(&self.mapping, self, ranks)
    }

    /// Reads the model table `[model.NAME]` into `T`. `Ok(None)` when the
    /// file has no such table; errors carry the line and key.
    pub fn model_table<T: DeserializeOwned>(&self, name: &str) -> Result<Option<T>, MachineError> {
        pick::table(&self.source, &["model", name]).map_err(|e| toml_error(&self.file, &self.source, &e))
    }

    /// Nanoseconds of target CPU for `ns` of traced CPU on `node`.
    pub fn cpu(&self, node: u32, ns: Ns) -> Ns {
        ns / self.nodes[node as usize].cpu_ratio
    }

    /// The network level between two nodes.
    pub fn level(&self, a: u32, b: u32) -> &Level {
        if a == b {
            &self.network.intra
        } else {
            &self.network.inter
        }
    }

    /// The latency the topology adds between nodes `a` and `b`, ns (none
    /// without `[network.topology]`, or within a node).
    pub fn hop_delay(&self, a: u32, b: u32) -> Ns {
        self.network.topology.as_ref().map_or(0.0, |t| t.delay(a, b))
    }

    /// The network's links and routes, when `[network.topology]` gives
    /// them (every shape does); `None` for the flat network, where no
    /// message crosses a link another does.
    pub fn graph(&self) -> Option<std::sync::Arc<dyn crate::network::Graph>> {
        self.network.topology.as_ref().and_then(|t| t.graph())
    }

    /// This machine with every link of its topology private (a fat pipe:
    /// no flow slows another), routes and latencies kept: the same replay
    /// on it shows what sharing the links cost.
    pub fn with_private_links(&self) -> Machine {
        let mut m = self.clone();
        if let Some(t) = &mut m.network.topology {
            t.make_private();
        }
        m.name = format!("{} (private links)", self.name);
        m
    }

    /// The least latency of any message, within or across nodes, at any
    /// size, ns: a lower bound of every message's time under the models
    /// that charge the latency (a parallel replay's lookahead).
    pub fn min_latency(&self) -> Ns {
        [&self.network.intra, &self.network.inter]
            .iter()
            .flat_map(|l| l.latency.values())
            .map(|t| t.0)
            .fold(f64::INFINITY, f64::min)
    }

    /// A point-to-point message's time of flight from node `a` to node
    /// `b`: its level's latency and bandwidth, plus the topology's hops.
    pub fn p2p_cost(&self, a: u32, b: u32, bytes: u64) -> Ns {
        self.level(a, b).cost_on_wire(bytes, self.network.envelope.0) + self.hop_delay(a, b)
    }

    /// How collective `c` is modelled.
    pub fn collective(&self, c: Coll) -> &CollChoice {
        self.collectives.of(c)
    }

    /// Where the file is, for messages that point the user at it.
    pub fn path(&self) -> PathBuf {
        PathBuf::from(&self.file)
    }
}

/// The node of each of `ranks` tasks under `mapping` on `m`.
fn place(mapping: &Mapping, m: &Machine, ranks: u32) -> Result<Vec<u32>, MachineError> {
    let err = |what: String| MachineError {
        file: m.file.clone(),
        line: None,
        what,
    };
    let n = m.nodes.len() as u32;
    if !matches!(mapping, Mapping::Explicit(_)) && u64::from(ranks) > m.cores() {
        return Err(err(format!(
            "the run has {ranks} tasks but the machine has {} cores: add nodes or cores_per_node",
            m.cores()
        )));
    }
    Ok(match mapping {
        Mapping::Block => {
            let mut out = Vec::with_capacity(ranks as usize);
            'nodes: for (i, node) in m.nodes.iter().enumerate() {
                for _ in 0..node.cores {
                    if out.len() == ranks as usize {
                        break 'nodes;
                    }
                    out.push(i as u32);
                }
            }
            out
        }
        Mapping::Cyclic => {
            // Round-robin, skipping nodes whose cores are full.
            let mut used = vec![0u32; n as usize];
            let mut out = Vec::with_capacity(ranks as usize);
            let mut node = 0usize;
            while out.len() < ranks as usize {
                if used[node] < m.nodes[node].cores {
                    used[node] += 1;
                    out.push(node as u32);
                }
                node = (node + 1) % n as usize;
            }
            out
        }
        Mapping::Explicit(list) => {
            if list.len() < ranks as usize {
                return Err(err(format!(
                    "[mapping] nodes lists {} tasks but the run has {ranks}",
                    list.len()
                )));
            }
            list[..ranks as usize].to_vec()
        }
    })
}
