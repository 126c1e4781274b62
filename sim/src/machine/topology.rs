//! The network's shape between nodes, as xSim offers it: star, ring, 2-D
//! or 3-D mesh and torus, and tree, with a latency per hop. A message
//! between two nodes pays `hops(a, b) x hop_latency` on top of its
//! level's latency; messages within a node pay nothing more. Without a
//! `[network.topology]` every pair of nodes is one flat network.
//!
//! ```toml
//! [network.topology]
//! shape = "torus"          # star | ring | mesh | torus | tree
//! dims = [4, 4]            # mesh and torus: 2 or 3 sizes whose product is the node count
//! arity = 2                # tree: children per vertex
//! hop_latency = "100ns"
//! ```
//!
//! Nodes are numbered as the machine numbers them. On a mesh or torus,
//! node `n` sits at `(n mod X, (n / X) mod Y, n / (X Y))`. On a tree the
//! nodes are its vertices in breadth-first order (node 0 the root, the
//! children of `v` are `arity v + 1 ..= arity v + arity`). On a star
//! every node hangs off one switch: two hops between any two nodes.

use crate::units::{Ns, Time};
use serde::{Deserialize, Serialize};

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
    /// A 2-D or 3-D grid with wrap-around links.
    Torus(Vec<u32>),
    /// A complete tree of this arity, nodes in breadth-first order.
    Tree(u32),
}

/// A topology: the shape and what each hop costs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Topology {
    /// How nodes are linked.
    pub shape: Shape,
    /// Latency added per hop between nodes.
    pub hop_latency: Time,
    /// The machine's node count (the ring's length).
    pub nodes: u32,
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
    hop_latency: Time,
}

impl TopologyTable {
    /// The topology as written, its keys checked (not yet its size: see
    /// [`Topology::fit`]); the error says what to write instead.
    pub(super) fn build(self) -> Result<Topology, String> {
        let grid = |what: &str| -> Result<Vec<u32>, String> {
            let dims = self
                .dims
                .clone()
                .ok_or_else(|| format!("a {what} needs `dims`, e.g. dims = [4, 4] for 16 nodes"))?;
            if !(2..=3).contains(&dims.len()) || dims.contains(&0) {
                return Err(format!(
                    "a {what}'s dims are 2 or 3 sizes of at least 1, e.g. [4, 4] or [4, 4, 2]; got {dims:?}"
                ));
            }
            Ok(dims)
        };
        let only = |key: &str, given: bool| {
            if given {
                Err(format!("`{key}` does not apply to shape \"{}\"", self.shape))
            } else {
                Ok(())
            }
        };
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
            "mesh" | "torus" => {
                only("arity", self.arity.is_some())?;
                let dims = grid(&self.shape)?;
                if self.shape == "mesh" {
                    Shape::Mesh(dims)
                } else {
                    Shape::Torus(dims)
                }
            }
            "tree" => {
                only("dims", self.dims.is_some())?;
                match self.arity {
                    Some(a) if a >= 2 => Shape::Tree(a),
                    _ => return Err("a tree needs `arity`, the children per vertex: 2 or more".into()),
                }
            }
            other => {
                return Err(format!(
                    "unknown shape \"{other}\": use star, ring, mesh, torus or tree"
                ))
            }
        };
        Ok(Topology {
            shape,
            hop_latency: self.hop_latency,
            nodes: 0,
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
    /// Sizes the topology to the machine's `nodes`: a grid must have a
    /// position for each node, no more and no fewer.
    pub(super) fn fit(&mut self, nodes: u32) -> Result<(), String> {
        if let Shape::Mesh(dims) | Shape::Torus(dims) = &self.shape {
            let product: u64 = dims.iter().map(|&d| u64::from(d)).product();
            if product != u64::from(nodes) {
                return Err(format!(
                    "dims {dims:?} make {product} positions but [machine] has {nodes} nodes; their product must be the node count"
                ));
            }
        }
        self.nodes = nodes;
        Ok(())
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
            Shape::Torus(dims) => coords(a, dims)
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
        }
    }

    /// The latency the topology adds from node `a` to node `b`, ns.
    pub fn delay(&self, a: u32, b: u32) -> Ns {
        f64::from(self.hops(a, b)) * self.hop_latency.0
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
    fn bad_topologies_name_the_line_and_the_fix() {
        let cases = [
            (
                "shape = \"hypercube\"\nhop_latency = \"1ns\"",
                "unknown shape \"hypercube\": use star, ring, mesh, torus or tree",
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
