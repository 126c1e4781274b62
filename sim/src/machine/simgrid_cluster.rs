//! The machine's network as a SimGrid `<cluster>`: what `pnmpi trace
//! export --format simgrid --machine m.toml` writes as platform.xml, so
//! that the export README's `smpirun` line simulates the machine that
//! `pnmpi sim replay -m m.toml` does. The reverse of `-m platform.xml`
//! (`platform.rs`), and checked like it against libsimgrid's routes
//! (`sim/tests/simgrid_routes.rs`).
//!
//! A `<cluster>` gives every link one bandwidth, latency and sharing
//! policy: a machine whose levels differ, or an xSim shape (ring, mesh,
//! tree, star), has no `<cluster>` and is an error that says so. Hosts are
//! `node-0` .. `node-N-1`, of 1 Gflop/s (a `compute F` action lasts F ns,
//! as the export's own platform has them) and the machine's cores per
//! node; a message within a node is the host's loopback, at
//! `[network.intra]`'s latency and bandwidth.

use super::topology::Shape;
use super::{Curve, Machine};
use crate::network::spec::{LinkSpec, Policy};
use std::fmt::Write as _;

/// SimGrid's name of a sharing policy.
fn policy(p: Policy) -> &'static str {
    match p {
        Policy::Shared => "SHARED",
        Policy::Fatpipe => "FATPIPE",
        Policy::SplitDuplex => "SPLITDUPLEX",
    }
}

/// The attributes of a link class, with `prefix` before each name
/// (`bb_` for the backbone).
fn link_attrs(prefix: &str, l: &LinkSpec) -> String {
    format!(
        " {prefix}bw=\"{}Bps\" {prefix}lat=\"{}ns\" {prefix}sharing_policy=\"{}\"",
        l.bandwidth,
        l.latency,
        policy(l.policy)
    )
}

/// The one value of a curve, or what is wrong with it.
fn constant<T: Copy>(c: &Curve<T>, what: &str) -> Result<T, String> {
    match c {
        Curve::Const(v) => Ok(*v),
        _ => Err(format!(
            "{what} is a table over message sizes; a SimGrid <cluster> takes one value"
        )),
    }
}

impl Machine {
    /// The machine as a SimGrid platform holding one `<cluster>`, or
    /// `None` when it has no topology of links (the flat network, which
    /// the export's own platform describes); an error says what a
    /// `<cluster>` cannot say.
    pub fn simgrid_cluster(&self) -> Result<Option<String>, String> {
        let Some(t) = &self.network.topology else {
            return Ok(None);
        };
        let (kind, parameters) = match &t.shape {
            Shape::Cluster => (None, String::new()),
            Shape::FatTree(p) => (Some("FAT_TREE"), p.clone()),
            Shape::Dragonfly(p) => (Some("DRAGONFLY"), p.clone()),
            Shape::Torus(dims) => (
                Some("TORUS"),
                dims.iter().map(u32::to_string).collect::<Vec<_>>().join(","),
            ),
            other => {
                return Err(format!(
                "[network.topology] shape {other:?} is one of xSim's, which SimGrid has no <cluster> for; \
                     use cluster, fat_tree, dragonfly or torus"
            ))
            }
        };
        let links = &t.links;
        if let Some((name, l)) = links.levels.iter().find(|(_, l)| **l != links.base) {
            return Err(format!(
                "[network.topology.levels.{name}] ({} B/s, {} ns) differs from the topology's links \
                 ({} B/s, {} ns): a SimGrid <cluster> gives every link one bandwidth and latency",
                l.bandwidth, l.latency, links.base.bandwidth, links.base.latency
            ));
        }
        if links.base.policy == Policy::Fatpipe {
            return Err(
                "the topology's links are fatpipe: SimGrid 3.32 makes a <cluster>'s links SHARED \
                        whatever it says; use sharing = \"shared\" or \"splitduplex\""
                    .into(),
            );
        }
        let cores = self.nodes.first().map_or(1, |n| n.cores);
        if self.nodes.iter().any(|n| n.cores != cores || n.cpu_ratio != 1.0) {
            return Err(
                "the nodes differ in cores or cpu_ratio: a SimGrid <cluster>'s hosts are alike".into(),
            );
        }
        let intra = &self.network.intra;
        let loopback_lat = constant(&intra.latency, "[network.intra] latency")?.0;
        let loopback_bw = constant(&intra.bandwidth, "[network.intra] bandwidth")?.0;
        let mut xml = String::from(
            "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n",
        );
        let _ = writeln!(
            xml,
            "<!-- {}: written by pnmpi from {} -->\n<platform version=\"4.1\">",
            self.name, self.file
        );
        let _ = write!(
            xml,
            "  <cluster id=\"{}\" prefix=\"node-\" suffix=\"\" radical=\"0-{}\" speed=\"1Gf\" core=\"{cores}\"{}",
            t.name,
            t.nodes.saturating_sub(1),
            link_attrs("", &links.base)
        );
        if let Some(kind) = kind {
            let _ = write!(xml, " topology=\"{kind}\" topo_parameters=\"{parameters}\"");
        }
        if let Some(bb) = &links.backbone {
            xml += &link_attrs("bb_", bb);
        }
        if let Some(limiter) = links.limiter {
            let _ = write!(xml, " limiter_link=\"{limiter}Bps\"");
        }
        if loopback_bw.is_finite() {
            let _ = write!(
                xml,
                " loopback_bw=\"{loopback_bw}Bps\" loopback_lat=\"{loopback_lat}ns\""
            );
        }
        xml += "/>\n</platform>\n";
        Ok(Some(xml))
    }
}
