//! The machine's parts as the simulators use them: nodes, the mapping of
//! tasks onto them, the network's levels, and how each collective is
//! timed. The file's own tables, which validate into these, are in
//! `schema`.

use super::curve::Curve;
use super::topology::{Topology, TopologyTable};
use crate::units::{Bandwidth, Bytes, Time};
use pnmpi_trace::routine::Coll;
use serde::{Deserialize, Serialize};

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
    pub(super) fn unspecified() -> Network {
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

/// Every collective's choice.
#[derive(Clone, Debug, PartialEq)]
pub struct Collectives {
    pub(super) choices: Vec<(Coll, CollChoice)>,
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
pub(super) fn default_scaling_of(c: Coll) -> Scaling {
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
