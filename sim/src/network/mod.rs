//! The network as SimGrid sees it: links, each with a bandwidth, a
//! latency and a sharing policy, and a route between any two hosts that
//! lists the links a message crosses, in order. The shapes that build
//! such a graph (SimGrid's fat trees, dragonflies and tori, and xSim's
//! star, ring, mesh and tree) and the sharing of links by the flows in
//! flight (max-min fairness, SimGrid's CM02) are written against this
//! one description, so that a route computed once is the same for every
//! simulator mode.

use crate::units::Ns;

/// Index of a link in [`Graph::links`].
pub type LinkId = u32;

/// How the flows that cross a link share it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sharing {
    /// The flows share the bandwidth (SimGrid's `SHARED`, and each
    /// direction of a `SPLITDUPLEX` link is a link of its own).
    Shared,
    /// Every flow gets the whole bandwidth (SimGrid's `FATPIPE`).
    Fatpipe,
}

/// One link.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Link {
    /// Bytes per second.
    pub bandwidth: f64,
    /// Latency, ns.
    pub latency: Ns,
    /// How flows share it.
    pub sharing: Sharing,
}

/// The links of a network and the routes between its hosts. Hosts are
/// numbered as the machine numbers its nodes.
pub trait Graph: Send + Sync {
    /// Every link, indexed by [`LinkId`].
    fn links(&self) -> &[Link];

    /// Appends to `out` the links from host `src` to host `dst`, in the
    /// order a message crosses them (SimGrid's route for the pair).
    /// Empty for `src == dst`: the loopback is a copy in memory.
    fn route(&self, src: u32, dst: u32, out: &mut Vec<LinkId>);
}
