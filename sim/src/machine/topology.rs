//! The network's shape between nodes. Two families:
//!
//! - xSim's shapes, star, ring, 2-D or 3-D mesh and torus, and tree, with
//!   a latency per hop: a message between two nodes pays
//!   `hops(a, b) x hop_latency` on top of its level's latency.
//! - SimGrid's `<cluster>` zones, a star of private links with an
//!   optional backbone (`cluster`), a fat tree, a dragonfly and a torus of
//!   any dimension, given by SimGrid's own parameter strings, whose links
//!   carry their own bandwidth, latency and sharing policy.
//!
//! Both are graphs of links with routes ([`Topology::graph`], the same
//! routes as SimGrid's zones): a model that shares links among flows
//! reads them there. Messages within a node pay nothing more. Without a
//! `[network.topology]` every pair of nodes is one flat network.
//!
//! ```toml
//! [network.topology]
//! shape = "torus"          # star | ring | mesh | torus | tree
//! dims = [4, 4]            # mesh and torus: 2 or 3 sizes whose product is the node count
//! arity = 2                # tree: children per vertex
//! hop_latency = "100ns"
//! bandwidth = "10GB/s"     # optional: each link's (unlimited by default)
//! sharing = "fatpipe"      # optional: shared | fatpipe (default) | splitduplex
//! ```
//!
//! ```toml
//! [network.topology]
//! shape = "fat_tree"               # cluster | fat_tree | dragonfly | torus
//! topology = "2;4,4;1,4;1,1"       # SimGrid's topo_parameters (none for cluster)
//! bandwidth = "10GB/s"             # every link's, as <cluster bw=...>
//! latency = "2.5us"                # as <cluster lat=...>
//! sharing = "splitduplex"          # shared | fatpipe | splitduplex (SimGrid's default)
//! limiter = "12GB/s"               # optional: <cluster limiter_link=...>
//! name = "cluster"                 # optional: <cluster id=...>, in SimGrid's link names
//! [network.topology.levels.2]      # optional: one level's links differ
//! bandwidth = "20GB/s"
//! [network.topology.backbone]      # cluster only: <cluster bb_bw= bb_lat= bb_sharing_policy=>
//! bandwidth = "100GB/s"
//! latency = "1us"
//! ```
//!
//! Nodes are numbered as the machine numbers them. On a mesh or torus,
//! node `n` sits at `(n mod X, (n / X) mod Y, n / (X Y))`. On a tree the
//! nodes are its vertices in breadth-first order (node 0 the root, the
//! children of `v` are `arity v + 1 ..= arity v + arity`). On a star
//! every node hangs off one switch: two hops between any two nodes.

use crate::network::cluster::Star;
use crate::network::spec::{LinkSpec, Policy};
use crate::network::Graph;
use crate::units::{Bandwidth, Ns, Time};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// The name of the zone SimGrid's shapes are built as (`<cluster
/// id="cluster">`) unless `name` says otherwise: SimGrid's names of
/// cluster, torus and limiter links carry it.
pub const ZONE: &str = "cluster";

/// The shape of the network between nodes.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Shape {
    /// All nodes on one switch.
    Star,
    /// Each node linked to the next, the last to the first.
    Ring,
    /// A 2-D or 3-D grid without wrap-around links.
    Mesh(Vec<u32>),
    /// A grid with wrap-around links, of any dimension.
    Torus(Vec<u32>),
    /// A complete tree of this arity, nodes in breadth-first order.
    Tree(u32),
    /// SimGrid's `<cluster>` without topology: a private link per node,
    /// and a backbone when given.
    Cluster,
    /// SimGrid's `FAT_TREE`, by its parameter string.
    FatTree(String),
    /// SimGrid's `DRAGONFLY`, by its parameter string.
    Dragonfly(String),
}

/// The links of a topology: every link's, and what differs by level.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkClasses {
    /// Every link's, unless its level has its own.
    pub base: LinkSpec,
    /// By level name (a fat tree's `1` ..= levels, a dragonfly's `local`,
    /// `green`, `black`, `blue`).
    pub levels: BTreeMap<String, LinkSpec>,
    /// A cluster's backbone.
    pub backbone: Option<LinkSpec>,
    /// SimGrid's limiter links' bandwidth, B/s.
    pub limiter: Option<f64>,
}

impl LinkClasses {
    /// The links of level `name`.
    pub fn level(&self, name: &str) -> LinkSpec {
        self.levels.get(name).copied().unwrap_or(self.base)
    }
}

/// A built graph, shared by every model that reads it.
#[derive(Clone)]
pub struct SharedGraph(pub Arc<dyn Graph>);

impl fmt::Debug for SharedGraph {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "Graph({} links)", self.0.links().len())
    }
}

impl PartialEq for SharedGraph {
    /// The same graph: it is built once per machine.
    fn eq(&self, other: &Self) -> bool {
        std::ptr::addr_eq(Arc::as_ptr(&self.0), Arc::as_ptr(&other.0))
    }
}

/// A topology: the shape, its links and their routes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Topology {
    /// How nodes are linked.
    pub shape: Shape,
    /// xSim's shapes: the latency added per hop (every link's). None on
    /// SimGrid's, whose links carry their own.
    pub hop_latency: Option<Time>,
    /// The machine's node count (the ring's length).
    pub nodes: u32,
    /// The zone's name, in SimGrid's link names.
    pub name: String,
    /// Its links' bandwidth, latency and sharing.
    #[serde(skip)]
    pub links: LinkClasses,
    /// The links and routes, built by [`Topology::fit`].
    #[serde(skip)]
    graph: Option<SharedGraph>,
}

/// `[network.topology.levels.NAME]` and `[network.topology.backbone]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkTable {
    #[serde(default)]
    bandwidth: Option<Bandwidth>,
    #[serde(default)]
    latency: Option<Time>,
    #[serde(default)]
    sharing: Option<String>,
}

/// `[network.topology]` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TopologyTable {
    shape: String,
    #[serde(default)]
    dims: Option<Vec<u32>>,
    #[serde(default)]
    arity: Option<u32>,
    #[serde(default)]
    hop_latency: Option<Time>,
    #[serde(default)]
    topology: Option<String>,
    #[serde(default)]
    bandwidth: Option<Bandwidth>,
    #[serde(default)]
    latency: Option<Time>,
    #[serde(default)]
    sharing: Option<String>,
    #[serde(default)]
    limiter: Option<Bandwidth>,
    #[serde(default)]
    backbone: Option<LinkTable>,
    #[serde(default)]
    levels: BTreeMap<String, LinkTable>,
    #[serde(default)]
    name: Option<String>,
}

/// The shapes, as the error for an unknown one lists them.
const SHAPES: &str = "star, ring, mesh, torus, tree, cluster, fat_tree or dragonfly";

impl LinkTable {
    /// The links this table describes, what it leaves out taken from `base`.
    fn over(&self, base: LinkSpec, what: &str) -> Result<LinkSpec, String> {
        Ok(LinkSpec {
            bandwidth: self.bandwidth.map_or(base.bandwidth, |b| b.0),
            latency: self.latency.map_or(base.latency, |t| t.0),
            policy: match &self.sharing {
                Some(s) => Policy::parse(s).map_err(|e| format!("{what} sharing: {e}"))?,
                None => base.policy,
            },
        })
    }
}

impl TopologyTable {
    /// The topology as written, its keys checked (not yet its size: see
    /// [`Topology::fit`]); the error says what to write instead.
    pub(super) fn build(self) -> Result<Topology, String> {
        let only = |key: &str, given: bool| {
            if given {
                Err(format!("`{key}` does not apply to shape \"{}\"", self.shape))
            } else {
                Ok(())
            }
        };
        const KNOWN: [&str; 8] = [
            "star",
            "ring",
            "mesh",
            "torus",
            "tree",
            "cluster",
            "fat_tree",
            "dragonfly",
        ];
        if !KNOWN.contains(&self.shape.as_str()) {
            return Err(format!("unknown shape \"{}\": use {SHAPES}", self.shape));
        }
        let xsim = matches!(self.shape.as_str(), "star" | "ring" | "mesh" | "tree")
            || self.shape == "torus" && self.topology.is_none();
        if xsim {
            only("topology", self.topology.is_some())?;
            only("latency (each hop's is hop_latency)", self.latency.is_some())?;
            only("limiter", self.limiter.is_some())?;
            only("backbone", self.backbone.is_some())?;
            only("levels", !self.levels.is_empty())?;
        } else {
            only("dims (SimGrid's shapes take `topology`)", self.dims.is_some())?;
            only("arity", self.arity.is_some())?;
            only(
                "hop_latency (SimGrid's links take `latency`)",
                self.hop_latency.is_some(),
            )?;
        }
        let grid = |what: &str| -> Result<Vec<u32>, String> {
            let dims = self.dims.clone().ok_or_else(|| {
                format!(
                    "a {what} needs `dims`, e.g. dims = [4, 4] for 16 nodes{}",
                    if what == "torus" {
                        " (or SimGrid's `topology = \"4,4\"` with `bandwidth` and `latency`)"
                    } else {
                        ""
                    }
                )
            })?;
            if !(2..=3).contains(&dims.len()) || dims.contains(&0) {
                return Err(format!(
                    "a {what}'s dims are 2 or 3 sizes of at least 1, e.g. [4, 4] or [4, 4, 2]; got {dims:?}"
                ));
            }
            Ok(dims)
        };
        let parameters = || {
            self.topology.clone().ok_or_else(|| {
                format!(
                    "a {} needs `topology`, SimGrid's topo_parameters, e.g. {}",
                    self.shape,
                    match self.shape.as_str() {
                        "fat_tree" => "\"2;4,4;1,4;1,1\"",
                        _ => "\"2,1;2,1;2,1;2\"",
                    }
                )
            })
        };
        let mut level_names: Vec<String> = Vec::new();
        let shape = match self.shape.as_str() {
            "star" | "ring" => {
                only("dims", self.dims.is_some())?;
                only("arity", self.arity.is_some())?;
                if self.shape == "star" {
                    Shape::Star
                } else {
                    Shape::Ring
                }
            }
            "mesh" => {
                only("arity", self.arity.is_some())?;
                Shape::Mesh(grid("mesh")?)
            }
            "torus" if xsim => {
                only("arity", self.arity.is_some())?;
                Shape::Torus(grid("torus")?)
            }
            "torus" => Shape::Torus(crate::network::torus::parse(
                self.topology.as_deref().unwrap_or(""),
            )?),
            "tree" => {
                only("dims", self.dims.is_some())?;
                match self.arity {
                    Some(a) if a >= 2 => Shape::Tree(a),
                    _ => return Err("a tree needs `arity`, the children per vertex: 2 or more".into()),
                }
            }
            "cluster" => {
                only(
                    "topology (a cluster has one host per node)",
                    self.topology.is_some(),
                )?;
                Shape::Cluster
            }
            "fat_tree" => {
                let p = parameters()?;
                let levels = crate::network::fat_tree::Params::parse(&p)?.levels();
                level_names = (1..=levels).map(|l| l.to_string()).collect();
                Shape::FatTree(p)
            }
            _ => {
                // dragonfly, the last of KNOWN
                let p = parameters()?;
                crate::network::dragonfly::Params::parse(&p)?;
                level_names = crate::network::dragonfly::LEVELS.map(String::from).to_vec();
                Shape::Dragonfly(p)
            }
        };
        if !matches!(shape, Shape::Cluster) {
            only("backbone", self.backbone.is_some())?;
        }
        let policy = |default| match &self.sharing {
            Some(s) => Policy::parse(s).map_err(|e| format!("sharing: {e}")),
            None => Ok(default),
        };
        let base = if xsim {
            let Some(hop) = self.hop_latency else {
                return Err(format!(
                    "shape \"{}\" needs `hop_latency`, the latency of each hop, e.g. hop_latency = \"100ns\"",
                    self.shape
                ));
            };
            LinkSpec {
                bandwidth: self.bandwidth.map_or(f64::INFINITY, |b| b.0),
                latency: hop.0,
                policy: policy(Policy::Fatpipe)?,
            }
        } else {
            let (Some(bandwidth), Some(latency)) = (self.bandwidth, self.latency) else {
                return Err(format!(
                    "shape \"{}\" needs its links' `bandwidth` and `latency`, e.g. bandwidth = \"10GB/s\" and latency = \"2.5us\"",
                    self.shape
                ));
            };
            LinkSpec {
                bandwidth: bandwidth.0,
                latency: latency.0,
                policy: policy(Policy::SplitDuplex)?,
            }
        };
        let mut levels = BTreeMap::new();
        for (name, t) in &self.levels {
            if !level_names.contains(name) {
                return Err(if level_names.is_empty() {
                    format!("levels do not apply to shape \"{}\"", self.shape)
                } else {
                    format!(
                        "levels.{name}: no such level of a {}; its levels are {}",
                        self.shape,
                        level_names.join(", ")
                    )
                });
            }
            levels.insert(name.clone(), t.over(base, &format!("levels.{name}"))?);
        }
        let backbone = match &self.backbone {
            Some(t) => Some(t.over(
                LinkSpec {
                    policy: Policy::Shared,
                    ..base
                },
                "backbone",
            )?),
            None => None,
        };
        if backbone.is_some_and(|b| b.policy == Policy::SplitDuplex) {
            return Err(
                "backbone sharing: a backbone is shared or fatpipe, as SimGrid's bb_sharing_policy".into(),
            );
        }
        Ok(Topology {
            shape,
            hop_latency: self.hop_latency,
            nodes: 0,
            name: self.name.clone().unwrap_or_else(|| ZONE.to_owned()),
            links: LinkClasses {
                base,
                levels,
                backbone,
                limiter: self.limiter.map(|b| b.0),
            },
            graph: None,
        })
    }
}

/// Node `n`'s coordinates on a grid of `dims`.
fn coords(n: u32, dims: &[u32]) -> impl Iterator<Item = u32> + '_ {
    let mut rest = n;
    dims.iter().map(move |&d| {
        let c = rest % d;
        rest /= d;
        c
    })
}

/// The parent of vertex `v` in a complete tree of `arity` (none for the root).
fn parent(v: u32, arity: u32) -> Option<u32> {
    (v > 0).then(|| (v - 1) / arity)
}

/// The depth of vertex `v` (the root's is 0).
fn depth(mut v: u32, arity: u32) -> u32 {
    let mut d = 0;
    while let Some(p) = parent(v, arity) {
        v = p;
        d += 1;
    }
    d
}

impl Topology {
    /// Sizes the topology to the machine's `nodes` and builds its graph:
    /// a grid, a fat tree or a dragonfly must have a host for each node,
    /// no more and no fewer.
    pub(super) fn fit(&mut self, nodes: u32) -> Result<(), String> {
        use crate::network::{dragonfly, fat_tree, mesh, torus, tree};
        let hosts = |what: String, hosts: u64| {
            if hosts == u64::from(nodes) {
                Ok(())
            } else {
                Err(format!(
                    "{what} make {hosts} positions but [machine] has {nodes} nodes; their product must be the node count"
                ))
            }
        };
        let l = &self.links;
        let graph: Arc<dyn Graph> = match &self.shape {
            Shape::Mesh(dims) | Shape::Torus(dims) => {
                hosts(
                    format!("dims {dims:?}"),
                    dims.iter().map(|&d| u64::from(d)).product(),
                )?;
                match &self.shape {
                    Shape::Mesh(_) => Arc::new(mesh::Mesh::new(dims, l.base)),
                    _ => Arc::new(torus::Torus::new(&self.name, dims, l.base, l.limiter)),
                }
            }
            Shape::FatTree(p) => {
                let params = fat_tree::Params::parse(p)?;
                hosts(format!("FAT_TREE {p}'s"), params.hosts())?;
                let specs = (1..=params.levels()).map(|i| l.level(&i.to_string())).collect();
                Arc::new(fat_tree::FatTree::new(&self.name, params, specs, l.limiter))
            }
            Shape::Dragonfly(p) => {
                let params = dragonfly::Params::parse(p)?;
                hosts(format!("DRAGONFLY {p}'s"), params.hosts())?;
                Arc::new(dragonfly::Dragonfly::new(
                    &self.name,
                    params,
                    dragonfly::LEVELS.map(|n| l.level(n)),
                    l.limiter,
                ))
            }
            Shape::Star => Arc::new(Star::cluster(
                "star",
                (0..i64::from(nodes)).collect(),
                l.base,
                None,
                None,
            )),
            Shape::Cluster => Arc::new(Star::cluster(
                &self.name,
                (0..i64::from(nodes)).collect(),
                l.base,
                l.backbone,
                l.limiter,
            )),
            Shape::Ring => Arc::new(torus::Torus::new("ring", &[nodes.max(1)], l.base, None)),
            Shape::Tree(arity) => Arc::new(tree::Tree::new(nodes, *arity, l.base)),
        };
        self.nodes = nodes;
        self.graph = Some(SharedGraph(graph));
        Ok(())
    }

    /// The links and routes (built once the machine's node count is known).
    pub fn graph(&self) -> Option<Arc<dyn Graph>> {
        self.graph.as_ref().map(|g| g.0.clone())
    }

    /// Makes every link private ([`crate::network::Private`]): the run
    /// against which a report measures what sharing cost.
    pub fn make_private(&mut self) {
        if let Some(g) = &mut self.graph {
            g.0 = Arc::new(crate::network::Private::new(g.0.clone()));
        }
    }

    /// Links a message crosses from node `a` to node `b` (0 within a node).
    pub fn hops(&self, a: u32, b: u32) -> u32 {
        if a == b {
            return 0;
        }
        match &self.shape {
            Shape::Star => 2,
            Shape::Ring => {
                let d = a.abs_diff(b);
                d.min(self.nodes.saturating_sub(d))
            }
            Shape::Mesh(dims) => coords(a, dims)
                .zip(coords(b, dims))
                .map(|(x, y)| x.abs_diff(y))
                .sum(),
            Shape::Torus(dims) if self.hop_latency.is_some() => coords(a, dims)
                .zip(coords(b, dims))
                .zip(dims)
                .map(|((x, y), &k)| {
                    let d = x.abs_diff(y);
                    d.min(k - d)
                })
                .sum(),
            Shape::Tree(arity) => {
                let (mut x, mut y) = (a, b);
                let (mut dx, mut dy) = (depth(x, *arity), depth(y, *arity));
                let mut hops = 0;
                while x != y {
                    if dx >= dy {
                        x = parent(x, *arity).unwrap_or(0);
                        dx = dx.saturating_sub(1);
                    } else {
                        y = parent(y, *arity).unwrap_or(0);
                        dy = dy.saturating_sub(1);
                    }
                    hops += 1;
                }
                hops
            }
            _ => {
                let mut route = Vec::new();
                if let Some(g) = &self.graph {
                    g.0.route(a, b, &mut route);
                }
                route.len() as u32
            }
        }
    }

    /// The latency the topology adds from node `a` to node `b`, ns: xSim's
    /// hops times the hop latency, or the sum of the route's links'.
    pub fn delay(&self, a: u32, b: u32) -> Ns {
        match (self.hop_latency, &self.graph) {
            (Some(hop), _) => f64::from(self.hops(a, b)) * hop.0,
            (None, Some(g)) => g.0.latency(a, b),
            (None, None) => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::machine::Machine;

    fn machine(nodes: u32, topology: &str) -> Result<Machine, String> {
        let src = format!(
            "[machine]\nnodes = {nodes}\n[network]\nlatency = \"1us\"\nbandwidth = \"1GB/s\"\n\n[network.topology]\n{topology}\n"
        );
        Machine::parse("m.toml", &src).map_err(|e| e.to_string())
    }

    fn hops(nodes: u32, topology: &str, pairs: &[(u32, u32, u32)]) {
        let m = machine(nodes, &format!("{topology}\nhop_latency = \"10ns\"")).expect("valid");
        let t = m.network.topology.as_ref().expect("a topology");
        for &(a, b, want) in pairs {
            assert_eq!(t.hops(a, b), want, "{topology}: {a} -> {b}");
            assert_eq!(t.hops(b, a), want, "{topology}: {b} -> {a}");
            assert_eq!(m.hop_delay(a, b), 10.0 * f64::from(want));
        }
    }

    #[test]
    fn each_shape_counts_its_hops() {
        hops(8, "shape = \"star\"", &[(0, 0, 0), (0, 1, 2), (3, 7, 2)]);
        hops(
            8,
            "shape = \"ring\"",
            &[(0, 1, 1), (0, 4, 4), (0, 5, 3), (1, 7, 2), (6, 6, 0)],
        );
        // 4 x 4: node n at (n mod 4, n / 4).
        hops(
            16,
            "shape = \"mesh\"\ndims = [4, 4]",
            &[(0, 15, 6), (0, 3, 3), (5, 10, 2), (1, 13, 3)],
        );
        hops(
            16,
            "shape = \"torus\"\ndims = [4, 4]",
            &[(0, 15, 2), (0, 3, 1), (0, 2, 2), (5, 10, 2)],
        );
        // 4 x 2 x 2: node n at (n mod 4, (n / 4) mod 2, n / 8).
        hops(
            16,
            "shape = \"mesh\"\ndims = [4, 2, 2]",
            &[(0, 15, 5), (0, 8, 1), (4, 11, 5)],
        );
        hops(
            16,
            "shape = \"torus\"\ndims = [4, 2, 2]",
            &[(0, 15, 3), (0, 3, 1), (1, 14, 3)],
        );
        // Binary tree: 0; 1 2; 3 4 5 6; 7 8 ...
        hops(
            15,
            "shape = \"tree\"\narity = 2",
            &[(0, 1, 1), (3, 4, 2), (3, 5, 4), (7, 14, 6), (7, 0, 3)],
        );
        hops(
            13,
            "shape = \"tree\"\narity = 3",
            &[(1, 12, 3), (4, 6, 2), (0, 12, 2)],
        );
    }

    #[test]
    fn xsim_shapes_route_over_their_hops() {
        let shapes = [
            (8, "shape = \"star\""),
            (9, "shape = \"ring\""),
            (2, "shape = \"ring\""),
            (12, "shape = \"mesh\"\ndims = [4, 3]"),
            (24, "shape = \"torus\"\ndims = [4, 3, 2]"),
            (25, "shape = \"torus\"\ndims = [5, 5]"),
            (14, "shape = \"tree\"\narity = 3"),
        ];
        for (nodes, shape) in shapes {
            let m = machine(
                nodes,
                &format!("{shape}\nhop_latency = \"10ns\"\nsharing = \"splitduplex\""),
            )
            .expect(shape);
            let t = m.network.topology.as_ref().expect("a topology");
            let g = m.graph().expect("a graph");
            for a in 0..nodes {
                for b in 0..nodes {
                    let mut route = Vec::new();
                    g.route(a, b, &mut route);
                    assert_eq!(route.len() as u32, t.hops(a, b), "{shape}: {a} -> {b}");
                    assert_eq!(g.latency(a, b), m.hop_delay(a, b), "{shape}: {a} -> {b}");
                    let mut names: Vec<String> = route.iter().map(|&l| g.name(l)).collect();
                    names.dedup();
                    assert_eq!(
                        names.len(),
                        route.len(),
                        "{shape}: {a} -> {b} crosses a link twice: {names:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn every_link_names_its_tier_in_the_words_of_its_shape() {
        let links = "bandwidth = \"10GB/s\"\nlatency = \"2.5us\"";
        let levels = |nodes: u32, table: &str, a: u32, b: u32| {
            // xSim's shapes take a hop latency, SimGrid's their links'.
            let links = if table.contains("hop_latency") { "" } else { links };
            let m = machine(nodes, &format!("{links}\n{table}")).expect(table);
            let g = m.graph().expect("a graph");
            let mut route = Vec::new();
            g.route(a, b, &mut route);
            route.iter().map(|&l| g.level(l)).collect::<Vec<String>>()
        };
        assert_eq!(
            levels(16, "shape = \"fat_tree\"\ntopology = \"2;4,4;1,4;1,1\"", 0, 15),
            ["level 1", "level 2", "level 2", "level 1"]
        );
        let df = levels(16, "shape = \"dragonfly\"\ntopology = \"2,1;2,1;2,1;2\"", 0, 15);
        assert_eq!(
            (df.first().map(String::as_str), df.last().map(String::as_str)),
            (Some("local"), Some("local"))
        );
        for tier in ["green", "black", "blue"] {
            assert!(
                df.iter().any(|l| l == tier),
                "0 -> 15 crosses a {tier} link: {df:?}"
            );
        }
        assert_eq!(
            levels(8, "shape = \"torus\"\ntopology = \"2,2,2\"", 0, 7),
            ["dimension 1", "dimension 2", "dimension 3"]
        );
        assert_eq!(
            levels(4, "shape = \"mesh\"\ndims = [2, 2]\nhop_latency = \"10ns\"", 3, 0),
            ["dimension 1", "dimension 2"]
        );
        assert_eq!(
            levels(7, "shape = \"tree\"\narity = 2\nhop_latency = \"10ns\"", 3, 0),
            ["depth 2", "depth 1"]
        );
        assert_eq!(
            levels(
                4,
                "shape = \"cluster\"\n[network.topology.backbone]\nbandwidth = \"1GB/s\"",
                1,
                2
            ),
            ["host", "backbone", "host"]
        );
    }

    #[test]
    fn simgrid_shapes_take_their_parameter_strings() {
        let links = "bandwidth = \"10GB/s\"\nlatency = \"2.5us\"";
        let m = machine(16, &format!("shape = \"fat_tree\"\ntopology = \"2;4,4;1,4;1,1\"\n{links}\n[network.topology.levels.2]\nbandwidth = \"20GB/s\"")).expect("valid");
        let g = m.graph().expect("a graph");
        let mut route = Vec::new();
        g.route(0, 15, &mut route);
        let names: Vec<String> = route.iter().map(|&l| g.name(l)).collect();
        // SimGrid 3.32's route for the pair.
        assert_eq!(
            names,
            [
                "link_from_0_31_0_UP",
                "link_from_31_24_19_UP",
                "link_from_28_24_31_DOWN",
                "link_from_15_28_15_DOWN"
            ]
        );
        let bw: Vec<f64> = route.iter().map(|&l| g.links()[l as usize].bandwidth).collect();
        assert_eq!(bw, [10e9, 20e9, 20e9, 10e9]);
        assert_eq!(m.hop_delay(0, 15), 10_000.0);
        for (nodes, table) in [
            (16, "shape = \"dragonfly\"\ntopology = \"2,1;2,1;2,1;2\""),
            (32, "shape = \"torus\"\ntopology = \"4,2,2,2\""),
            (
                5,
                "shape = \"cluster\"\n[network.topology.backbone]\nbandwidth = \"1GB/s\"",
            ),
        ] {
            let m = machine(nodes, &format!("{links}\n{table}")).expect(table);
            assert!(m.graph().is_some(), "{table}");
        }
        let cases = [
            ("shape = \"fat_tree\"\ntopology = \"2;4,4;1,4\"", "FAT_TREE parameters `2;4,4;1,4`: 3 parts"),
            ("shape = \"fat_tree\"\ntopology = \"2;4,2;1,4;1,1\"", "FAT_TREE 2;4,2;1,4;1,1's make 8 positions but [machine] has 16 nodes"),
            ("shape = \"dragonfly\"\ntopology = \"4,1;2,1;2,1;1\"", "4 groups but 2 routers per chassis"),
            ("shape = \"torus\"\ntopology = \"4,x\"", "TORUS parameters `4,x`"),
            ("shape = \"fat_tree\"", "a fat_tree needs `topology`"),
            ("shape = \"fat_tree\"\ntopology = \"2;4,4;1,4;1,1\"\nhop_latency = \"1us\"", "`hop_latency (SimGrid's links take `latency`)` does not apply"),
            ("shape = \"fat_tree\"\ntopology = \"2;4,4;1,4;1,1\"\n[network.topology.levels.blue]\nlatency = \"1us\"", "levels.blue: no such level of a fat_tree; its levels are 1, 2"),
            ("shape = \"cluster\"\nsharing = \"half\"", "sharing: unknown sharing policy `half`"),
        ];
        for (table, want) in cases {
            let text = if table.contains("hop_latency") || table == "shape = \"fat_tree\"" {
                format!("{table}\n{links}")
            } else {
                format!("{links}\n{table}")
            };
            let e = machine(16, &text).expect_err(table);
            assert!(e.contains(want), "{table}: want `{want}` in `{e}`");
        }
    }

    #[test]
    fn bad_topologies_name_the_line_and_the_fix() {
        let cases = [
            (
                "shape = \"hypercube\"\nhop_latency = \"1ns\"",
                "unknown shape \"hypercube\": use star, ring, mesh, torus, tree, cluster, fat_tree or dragonfly",
            ),
            ("shape = \"torus\"\nhop_latency = \"1ns\"", "a torus needs `dims`"),
            (
                "shape = \"mesh\"\ndims = [16]\nhop_latency = \"1ns\"",
                "2 or 3 sizes",
            ),
            (
                "shape = \"torus\"\ndims = [4, 3]\nhop_latency = \"1ns\"",
                "m.toml:7: [network.topology] dims [4, 3] make 12 positions but [machine] has 16 nodes",
            ),
            ("shape = \"tree\"\nhop_latency = \"1ns\"", "a tree needs `arity`"),
            (
                "shape = \"ring\"\narity = 2\nhop_latency = \"1ns\"",
                "`arity` does not apply to shape \"ring\"",
            ),
            ("shape = \"ring\"", "hop_latency"),
            ("shape = \"ring\"\nhop_latency = \"fast\"", "hop_latency"),
        ];
        for (table, want) in cases {
            let e = machine(16, table).expect_err(table);
            assert!(e.contains(want), "{table}: want `{want}` in `{e}`");
            assert!(e.starts_with("m.toml:"), "{e}");
        }
    }

    #[test]
    fn a_message_pays_its_hops_on_top_of_its_level() {
        let m = machine(16, "shape = \"torus\"\ndims = [4, 4]\nhop_latency = \"100ns\"").expect("valid");
        // 1 us + 1000 B at 1 GB/s + 2 hops x 100 ns.
        assert_eq!(m.p2p_cost(0, 15, 1000), 1000.0 + 1000.0 + 200.0);
        assert_eq!(m.p2p_cost(3, 3, 1000), m.level(3, 3).cost(1000));
    }
}
