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
mod pick;
mod platform;
mod schema;
pub mod topology;

pub use curve::{Curve, Step};
pub use schema::{CollChoice, Collectives, Level, Mapping, Network, NodeSpec, Scaling, COLL_NAMES};

use crate::units::{Bandwidth, Bytes, Ns, Time};
use pnmpi_trace::routine::Coll;
use serde::de::DeserializeOwned;
use std::fmt;
use std::path::{Path, PathBuf};

/// A bad machine file: where and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineError {
    /// The file, as the user named it.
    pub file: String,
    /// 1-based line, when the error has a place.
    pub line: Option<usize>,
    /// What is wrong and what to do.
    pub what: String,
}

impl fmt::Display for MachineError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{l}: {}", self.file, self.what),
            None => write!(f, "{}: {}", self.file, self.what),
        }
    }
}

impl std::error::Error for MachineError {}

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

/// Turns a TOML deserialization error into the file, line and message.
fn toml_error(file: &str, source: &str, e: &toml::de::Error) -> MachineError {
    let start = e.span().map(|s| s.start.min(source.len()));
    let line = start.map(|s| source[..s].matches('\n').count() + 1);
    // The span points at the bad value (or its table); the message names
    // the unknown or missing key when that is the fault. A bad value's
    // key is what stands before `=` on its line.
    let key = start.and_then(|s| {
        let line_start = source[..s].rfind('\n').map_or(0, |i| i + 1);
        let (k, _) = source[line_start..s].split_once('=')?;
        let k = k.trim();
        (!k.is_empty() && !k.starts_with('{') && !k.contains(' ')).then(|| k.to_owned())
    });
    let what = e.message().trim();
    MachineError {
        file: file.to_owned(),
        line,
        what: match key {
            Some(k) if !what.contains(&format!("`{k}`")) => format!("{k}: {what}"),
            _ => what.to_owned(),
        },
    }
}

impl Machine {
    /// Reads and validates a machine file.
    pub fn load(path: &Path) -> Result<Machine, MachineError> {
        let file = path.display().to_string();
        let source = std::fs::read_to_string(path).map_err(|e| MachineError {
            file: file.clone(),
            line: None,
            what: format!("cannot read it: {e}"),
        })?;
        Machine::parse(&file, &source)
    }

    /// Parses a machine description from text; `file` names it in errors.
    /// A SimGrid platform (XML) is read as the machine it describes.
    pub fn parse(file: &str, source: &str) -> Result<Machine, MachineError> {
        if platform::is_platform(source) {
            let (toml, line) = platform::to_toml(source).map_err(|(line, what)| MachineError {
                file: file.to_owned(),
                line: Some(line),
                what,
            })?;
            return Machine::parse(file, &toml).map_err(|e| MachineError {
                line: Some(line),
                ..e
            });
        }
        let raw: schema::File = toml::from_str(source).map_err(|e| toml_error(file, source, &e))?;
        raw.validate(file, source)
    }

    /// A machine of `ranks` single-core nodes with one latency and
    /// bandwidth, for tests and for `vtime`'s `latency`/`bandwidth` keys.
    pub fn uniform(ranks: u32, latency: Time, bandwidth: Bandwidth) -> Machine {
        Machine::uniform_eager(ranks, latency, bandwidth, Bytes(65536))
    }

    /// [`Machine::uniform`] with an eager/rendezvous threshold: what
    /// `vtime`'s `latency`, `bandwidth` and `eager` arguments describe.
    /// Times and sizes come from [`crate::units`]' parsers, so they are
    /// finite and non-negative (and the bandwidth positive).
    pub fn uniform_eager(ranks: u32, latency: Time, bandwidth: Bandwidth, eager: Bytes) -> Machine {
        let src = format!(
            "[machine]\nnodes = {}\ncores_per_node = 1\n[network]\nlatency = {:?}\nbandwidth = {:?}\neager_threshold = {:?}\n",
            ranks.max(1),
            format!("{}ns", latency.0),
            format!("{}B/s", bandwidth.0),
            format!("{}B", eager.0)
        );
        Machine::parse("<built-in>", &src).expect("a uniform machine is valid")
    }

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

    /// The machine's text with `key = value` lines appended to `[table]`:
    /// re-parsed, so the result is validated like a file.
    pub fn with_source(&self, source: String) -> Result<Machine, MachineError> {
        Machine::parse(&self.file, &source)
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
        self.mapping.place(self, ranks)
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
