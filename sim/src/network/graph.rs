//! The description every network shape gives and every sharing model
//! reads: links, each with a bandwidth, a latency and a sharing policy,
//! and a route between any two hosts that lists the links a message
//! crosses, in order.

use crate::units::Ns;
use std::sync::Arc;

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

    /// The link's name, as SimGrid names it on the same platform, so that
    /// reports and cross-checks speak of the links SimGrid shows.
    fn name(&self, link: LinkId) -> String {
        format!("link-{link}")
    }

    /// The tier of the network the link belongs to, in the words of the
    /// shape's parameters (a fat tree's `level 2`, a dragonfly's `blue`,
    /// a torus's `dimension 1`, a cluster's `backbone`, any shape's
    /// `limiter`), so that a designer sees which tier is loaded: the
    /// links report groups its links by it.
    fn level(&self, _link: LinkId) -> String {
        "link".into()
    }

    /// The latency of the route from `src` to `dst`, ns: the sum of its
    /// links' (SimGrid's route latency).
    fn latency(&self, src: u32, dst: u32) -> Ns {
        let mut route = Vec::new();
        self.route(src, dst, &mut route);
        let links = self.links();
        route.iter().map(|&l| links[l as usize].latency).sum()
    }
}

/// A graph's links made private: the same routes, names, bandwidths and
/// latencies, every link a fat pipe, so that no flow slows another. The
/// same run on it is what sharing is measured against.
pub struct Private {
    inner: Arc<dyn Graph>,
    links: Vec<Link>,
}

impl Private {
    /// `inner` with every link private.
    pub fn new(inner: Arc<dyn Graph>) -> Private {
        let links = inner
            .links()
            .iter()
            .map(|l| Link {
                sharing: Sharing::Fatpipe,
                ..*l
            })
            .collect();
        Private { inner, links }
    }
}

impl Graph for Private {
    fn links(&self) -> &[Link] {
        &self.links
    }

    fn route(&self, src: u32, dst: u32, out: &mut Vec<LinkId>) {
        self.inner.route(src, dst, out);
    }

    fn name(&self, link: LinkId) -> String {
        self.inner.name(link)
    }

    fn level(&self, link: LinkId) -> String {
        self.inner.level(link)
    }
}
