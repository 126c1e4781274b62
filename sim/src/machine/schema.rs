//! The machine file's tables, as serde reads them, and their validation.

use super::topology::{Topology, TopologyTable};
use super::{Curve, Machine, MachineError};
use crate::units::{Bandwidth, Bytes, Time};
use pnmpi_trace::routine::Coll;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The whole file. Unknown keys are errors, except in `[model.*]`, which
/// each model reads for itself.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct File {
    machine: MachineTable,
    #[serde(default)]
    node: Vec<toml::Spanned<NodeTable>>,
    #[serde(default)]
    mapping: Option<toml::Spanned<MappingTable>>,
    /// Optional: a model that carries all its own parameters (LogGOPS's
    /// `[model.loggops]`) needs none; the others ask for it when built
    /// ([`Machine::require_network`]).
    #[serde(default)]
    network: Option<Network>,
    #[serde(default)]
    collectives: CollTable,
    /// Read by each model for itself ([`Machine::model_table`]).
    #[serde(default, rename = "model")]
    _model: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MachineTable {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    traced_on: Option<String>,
    nodes: toml::Spanned<u32>,
    #[serde(default = "one")]
    cores_per_node: u32,
    #[serde(default = "one_f")]
    cpu_ratio: toml::Spanned<f64>,
    #[serde(default = "one")]
    links_in: u32,
    #[serde(default = "one")]
    links_out: u32,
}

fn one() -> u32 {
    1
}

fn one_f() -> toml::Spanned<f64> {
    toml::Spanned::new(0..0, 1.0)
}

/// `[[node]]`: overrides for some nodes.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeTable {
    /// The nodes this applies to.
    ids: Vec<u32>,
    #[serde(default)]
    cores: Option<u32>,
    #[serde(default)]
    cpu_ratio: Option<f64>,
    #[serde(default)]
    links_in: Option<u32>,
    #[serde(default)]
    links_out: Option<u32>,
}

/// One node of the target.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NodeSpec {
    /// Cores (tasks it can hold).
    pub cores: u32,
    /// Speed relative to the traced machine: 2 halves every CPU burst.
    pub cpu_ratio: f64,
    /// Links from the global buses into the node (contention models).
    pub links_in: u32,
    /// Links from the node to the global buses.
    pub links_out: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MappingTable {
    #[serde(default)]
    policy: Option<String>,
    #[serde(default)]
    nodes: Option<Vec<u32>>,
}

/// How tasks are placed on nodes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Mapping {
    /// Fill node 0's cores, then node 1's, ...
    Block,
    /// Task t on node t mod nodes.
    Cyclic,
    /// The node of each task, in task order.
    Explicit(Vec<u32>),
}

/// Latency and bandwidth at one level (within or across nodes).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Level {
    /// End-to-end latency of a message, by size.
    pub latency: Curve<Time>,
    /// Sustained bandwidth, by size.
    pub bandwidth: Curve<Bandwidth>,
}

impl Level {
    /// `latency + bytes / bandwidth`, PSINS's simple cost, in ns.
    pub fn cost(&self, bytes: u64) -> f64 {
        self.cost_on_wire(bytes, 0)
    }

    /// The same for a message of `bytes` that carries `envelope` more
    /// bytes on the wire (an MPI header): the curves are read at the
    /// message's own size, the bandwidth moves both.
    pub fn cost_on_wire(&self, bytes: u64, envelope: u64) -> f64 {
        self.latency.at(bytes).0 + self.bandwidth.at(bytes).ns_for(bytes + envelope)
    }
}

/// `[network]`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Network {
    /// Within a node.
    pub intra: Level,
    /// Across nodes.
    pub inter: Level,
    /// Messages of at most this many bytes are sent eagerly; larger ones
    /// wait for their receive (rendezvous).
    pub eager_threshold: Bytes,
    /// Bytes every message carries on the wire besides its payload (the
    /// MPI envelope: SimGrid's SMPI adds 16); 0 by default.
    pub envelope: Bytes,
    /// Global buses between nodes (contention models); 0 is unlimited.
    pub buses: u32,
    /// How nodes are linked, when not one flat network.
    pub topology: Option<Topology>,
}

impl Network {
    /// What a file without `[network]` stands for until a model asks for
    /// it: messages free and instant, the default eager threshold (LogGOPS
    /// takes its `S` from it when `[model.loggops]` gives none).
    fn unspecified() -> Network {
        let free = Level {
            latency: Curve::Const(Time(0.0)),
            bandwidth: Curve::Const(Bandwidth(f64::INFINITY)),
        };
        Network {
            intra: free.clone(),
            inter: free,
            eager_threshold: default_eager(),
            envelope: Bytes(0),
            buses: 0,
            topology: None,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NetworkTable {
    #[serde(default)]
    latency: Option<Curve<Time>>,
    #[serde(default)]
    bandwidth: Option<Curve<Bandwidth>>,
    #[serde(default)]
    intra: Option<Level>,
    #[serde(default)]
    inter: Option<Level>,
    #[serde(default = "default_eager")]
    eager_threshold: Bytes,
    #[serde(default)]
    envelope: Bytes,
    #[serde(default)]
    buses: u32,
    #[serde(default)]
    topology: Option<TopologyTable>,
}

fn default_eager() -> Bytes {
    Bytes(65536)
}

impl<'de> Deserialize<'de> for Network {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let t = NetworkTable::deserialize(d)?;
        let both = match (t.latency, t.bandwidth) {
            (Some(latency), Some(bandwidth)) => Some(Level { latency, bandwidth }),
            (None, None) => None,
            _ => {
                return Err(D::Error::custom(
                    "give both `latency` and `bandwidth`, or neither",
                ))
            }
        };
        let pick = |level: Option<Level>, name: &str| {
            level.or_else(|| both.clone()).ok_or_else(|| {
                D::Error::custom(format!(
                    "no {name}-node network: give [network.{name}] with latency and bandwidth, or both keys in [network]"
                ))
            })
        };
        let topology = match t.topology {
            Some(table) => Some(
                table
                    .build()
                    .map_err(|e| D::Error::custom(format!("[network.topology] {e}")))?,
            ),
            None => None,
        };
        Ok(Network {
            intra: pick(t.intra, "intra")?,
            inter: pick(t.inter, "inter")?,
            eager_threshold: t.eager_threshold,
            envelope: t.envelope,
            buses: t.buses,
            topology,
        })
    }
}

/// How the analytic collective model grows with the number of tasks P.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scaling {
    /// One message time, whatever P.
    Constant,
    /// P - 1 message times.
    Linear,
    /// ceil(log2 P) message times.
    Log,
}

/// How one collective is replayed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum CollChoice {
    /// Closed form: `scaling(P)` times a point-to-point message of its size.
    Analytic(Scaling),
    /// Expanded into the messages of a named algorithm.
    Algorithmic(String),
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct CollEntry {
    #[serde(default)]
    mode: Option<String>,
    #[serde(default)]
    scaling: Option<Scaling>,
    #[serde(default)]
    algorithm: Option<String>,
}

/// `[collectives]`: `mode` and `scaling` for all, then a table per
/// collective. Read as values (serde's `flatten` loses positions).
#[derive(Deserialize, Default)]
#[serde(transparent)]
struct CollTable {
    keys: BTreeMap<String, toml::Spanned<toml::Value>>,
}

/// Every collective's choice.
#[derive(Clone, Debug, PartialEq)]
pub struct Collectives {
    choices: Vec<(Coll, CollChoice)>,
}

/// The collectives by their machine-file names.
pub const COLL_NAMES: [(&str, Coll); 10] = [
    ("barrier", Coll::Barrier),
    ("bcast", Coll::Bcast),
    ("reduce", Coll::Reduce),
    ("allreduce", Coll::Allreduce),
    ("reduce_scatter", Coll::ReduceScatter),
    ("scan", Coll::Scan),
    ("gather", Coll::Gather),
    ("scatter", Coll::Scatter),
    ("allgather", Coll::Allgather),
    ("alltoall", Coll::Alltoall),
];

/// The analytic scaling PSINS's simple model gives each collective when
/// the file says nothing: rooted and tree-like ones log, all-to-all linear.
fn default_scaling_of(c: Coll) -> Scaling {
    match c {
        Coll::Alltoall | Coll::Allgather | Coll::Gather | Coll::Scatter => Scaling::Linear,
        _ => Scaling::Log,
    }
}

impl Collectives {
    /// The choice for `c`.
    pub fn of(&self, c: Coll) -> &CollChoice {
        &self
            .choices
            .iter()
            .find(|(k, _)| *k == c)
            .expect("every collective has a choice")
            .1
    }
}

impl Default for Collectives {
    fn default() -> Self {
        Collectives {
            choices: COLL_NAMES
                .iter()
                .map(|&(_, c)| (c, CollChoice::Analytic(default_scaling_of(c))))
                .collect(),
        }
    }
}

impl Mapping {
    /// The node of each of `ranks` tasks.
    pub fn place(&self, m: &Machine, ranks: u32) -> Result<Vec<u32>, MachineError> {
        let err = |what: String| MachineError {
            file: m.file.clone(),
            line: None,
            what,
        };
        let n = m.nodes.len() as u32;
        if !matches!(self, Mapping::Explicit(_)) && u64::from(ranks) > m.cores() {
            return Err(err(format!(
                "the run has {ranks} tasks but the machine has {} cores: add nodes or cores_per_node",
                m.cores()
            )));
        }
        Ok(match self {
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
}

impl File {
    /// Checks what serde cannot: ranges, ids, the mapping.
    pub(super) fn validate(self, file: &str, source: &str) -> Result<Machine, MachineError> {
        let at = |span: std::ops::Range<usize>, what: String| MachineError {
            file: file.to_owned(),
            line: (span.end > 0).then(|| source[..span.start].matches('\n').count() + 1),
            what,
        };
        let nodes = *self.machine.nodes.get_ref();
        if nodes == 0 {
            return Err(at(
                self.machine.nodes.span(),
                "[machine] nodes must be at least 1".into(),
            ));
        }
        if self.machine.cores_per_node == 0 {
            return Err(at(0..0, "[machine] cores_per_node must be at least 1".into()));
        }
        let ratio = *self.machine.cpu_ratio.get_ref();
        if !(ratio.is_finite() && ratio > 0.0) {
            return Err(at(
                self.machine.cpu_ratio.span(),
                "[machine] cpu_ratio must be above 0 (2 means twice as fast as the traced machine)".into(),
            ));
        }
        if self.machine.links_in == 0 || self.machine.links_out == 0 {
            return Err(at(
                0..0,
                "[machine] links_in and links_out must be at least 1".into(),
            ));
        }
        let mut specs = vec![
            NodeSpec {
                cores: self.machine.cores_per_node,
                cpu_ratio: ratio,
                links_in: self.machine.links_in,
                links_out: self.machine.links_out,
            };
            nodes as usize
        ];
        for n in &self.node {
            let t = n.get_ref();
            for &id in &t.ids {
                let spec = specs.get_mut(id as usize).ok_or_else(|| {
                    at(
                        n.span(),
                        format!("[[node]] ids: node {id} does not exist ([machine] nodes = {nodes})"),
                    )
                })?;
                if let Some(c) = t.cores {
                    if c == 0 {
                        return Err(at(n.span(), "[[node]] cores must be at least 1".into()));
                    }
                    spec.cores = c;
                }
                for (v, slot) in [
                    (t.links_in, &mut spec.links_in),
                    (t.links_out, &mut spec.links_out),
                ] {
                    match v {
                        Some(0) => {
                            return Err(at(
                                n.span(),
                                "[[node]] links_in and links_out must be at least 1".into(),
                            ))
                        }
                        Some(l) => *slot = l,
                        None => {}
                    }
                }
                if let Some(r) = t.cpu_ratio {
                    if !(r.is_finite() && r > 0.0) {
                        return Err(at(n.span(), "[[node]] cpu_ratio must be above 0".into()));
                    }
                    spec.cpu_ratio = r;
                }
            }
        }
        let mapping = match &self.mapping {
            None => Mapping::Block,
            Some(m) => {
                let t = m.get_ref();
                match (t.policy.as_deref(), &t.nodes) {
                    (Some("block") | None, None) => Mapping::Block,
                    (Some("cyclic"), None) => Mapping::Cyclic,
                    (Some("explicit") | None, Some(list)) => {
                        if let Some(bad) = list.iter().find(|&&x| x >= nodes) {
                            return Err(at(
                                m.span(),
                                format!(
                                    "[mapping] nodes: node {bad} does not exist ([machine] nodes = {nodes})"
                                ),
                            ));
                        }
                        Mapping::Explicit(list.clone())
                    }
                    (Some(p), None) => {
                        return Err(at(
                            m.span(),
                            format!("[mapping] policy `{p}`: use block, cyclic, or give `nodes = [...]`"),
                        ))
                    }
                    (Some(p), Some(_)) => {
                        return Err(at(
                            m.span(),
                            format!(
                                "[mapping] policy `{p}` with a `nodes` list: the list is an explicit mapping"
                            ),
                        ))
                    }
                }
            }
        };
        let collectives = self.collectives.resolve(file, source)?;
        let network_given = self.network.is_some();
        let mut network = self.network.unwrap_or_else(Network::unspecified);
        if let Some(t) = &mut network.topology {
            t.fit(nodes).map_err(|what| {
                // The table's own line: serde keeps no position for it here.
                let start = source.find("[network.topology]").map_or(0..0, |s| s..s + 1);
                at(start, format!("[network.topology] {what}"))
            })?;
        }
        Ok(Machine {
            file: file.to_owned(),
            source: source.to_owned(),
            name: self.machine.name.unwrap_or_else(|| file.to_owned()),
            traced_on: self.machine.traced_on,
            nodes: specs,
            mapping,
            network,
            network_given,
            collectives,
        })
    }
}

impl CollTable {
    fn resolve(self, file: &str, source: &str) -> Result<Collectives, MachineError> {
        // A span of 0..0 is a table the file does not have: no line.
        let err = |span: std::ops::Range<usize>, what: String| MachineError {
            file: file.to_owned(),
            line: (span.end > 0).then(|| source[..span.start].matches('\n').count() + 1),
            what,
        };
        let mut default_mode = "analytic".to_string();
        let mut default_scaling = None;
        let mut per: BTreeMap<&str, (CollEntry, std::ops::Range<usize>)> = BTreeMap::new();
        for (key, value) in &self.keys {
            let span = value.span();
            let v = value.get_ref().clone();
            match key.as_str() {
                "mode" => {
                    default_mode = v
                        .as_str()
                        .ok_or_else(|| err(span.clone(), "[collectives] mode: expected a string".into()))?
                        .to_owned()
                }
                "scaling" => {
                    default_scaling =
                        Some(Scaling::deserialize(v).map_err(|e| {
                            err(span.clone(), format!("[collectives] scaling: {}", e.message()))
                        })?)
                }
                name => {
                    let Some(&(n, _)) = COLL_NAMES.iter().find(|(n, _)| *n == name) else {
                        let names: Vec<&str> = COLL_NAMES.iter().map(|(n, _)| *n).collect();
                        return Err(err(
                            span,
                            format!(
                                "[collectives] `{name}`: unknown collective; use mode, scaling or one of {}",
                                names.join(", ")
                            ),
                        ));
                    };
                    let entry = CollEntry::deserialize(v)
                        .map_err(|e| err(span.clone(), format!("[collectives.{name}]: {}", e.message())))?;
                    per.insert(n, (entry, span));
                }
            }
        }
        let mut out = Collectives::default();
        for (name, c) in COLL_NAMES {
            let (e, span) = match per.get(name) {
                Some((e, s)) => (Some(e), s.clone()),
                None => (None, 0..0),
            };
            let mode = e
                .and_then(|e| e.mode.clone())
                .unwrap_or_else(|| default_mode.clone());
            let choice = match mode.as_str() {
                "analytic" => CollChoice::Analytic(
                    e.and_then(|e| e.scaling)
                        .or(default_scaling)
                        .unwrap_or_else(|| default_scaling_of(c)),
                ),
                "algorithmic" => {
                    let alg = e
                        .and_then(|e| e.algorithm.clone())
                        .unwrap_or_else(|| crate::kernel::coll::algorithms::default_algorithm(c).to_owned());
                    if let Err(what) = crate::kernel::coll::algorithms::check_algorithm(c, &alg) {
                        return Err(err(span, format!("[collectives.{name}] algorithm: {what}")));
                    }
                    CollChoice::Algorithmic(alg)
                }
                other => {
                    return Err(err(
                        span,
                        format!("[collectives] mode `{other}` for {name}: use analytic or algorithmic"),
                    ))
                }
            };
            out.choices
                .iter_mut()
                .find(|(k, _)| *k == c)
                .expect("all listed")
                .1 = choice;
        }
        Ok(out)
    }
}
