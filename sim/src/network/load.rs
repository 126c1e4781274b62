//! What each link carried over a run of flows, for a machine designer to
//! see where the network hurts: per link, the bytes that crossed it, the
//! time some flow moved bytes over it, and the time the flows it slowed
//! lost to sharing it.
//!
//! ```text
//! bytes   = the bytes of every flow whose route crosses the link
//! busy    = the time at least one flow crossing it is past its latency
//!           and not done (moving bytes over it)
//! slowed  = the sum, over the flows whose max-min rate this link set
//!           (their bottleneck), of the integral of 1 - rate / alone,
//!           alone being the rate the flow has on private links (its
//!           route's least bandwidth, or TCP's window over its round
//!           trip): how much longer their data took to move than it
//!           would alone, charged to the link that held them back
//! ```
//!
//! Summed over the links, `slowed` is how much longer every transfer took
//! than at its rate alone, from the moment it moved. What sharing did to
//! the ranks' ends is the other measure: the same run on private links
//! (`Machine::with_private_links`).

use super::graph::{Graph, LinkId};
use crate::units::Ns;
use serde::Serialize;

/// One link's figures over a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkLoad {
    /// The link's name, as SimGrid names it on the same platform.
    pub name: String,
    /// The tier it belongs to ([`Graph::level`]).
    pub level: String,
    /// Its bandwidth, bytes/s.
    pub bandwidth: f64,
    /// Bytes that crossed it.
    pub bytes: f64,
    /// Time some flow moved bytes over it, ns.
    pub busy: Ns,
    /// Time the flows it held back lost to sharing it, ns (the module doc).
    pub slowed: Ns,
}

/// The running figures of every link of a graph.
pub struct Loads {
    bytes: Vec<f64>,
    busy: Vec<Ns>,
    slowed: Vec<Ns>,
    /// Flows moving bytes over each link, and since when it is busy.
    moving: Vec<u32>,
    since: Vec<Ns>,
}

impl Loads {
    /// Nothing carried yet over `links` links.
    pub fn new(links: usize) -> Loads {
        Loads {
            bytes: vec![0.0; links],
            busy: vec![0.0; links],
            slowed: vec![0.0; links],
            moving: vec![0; links],
            since: vec![0.0; links],
        }
    }

    /// A flow of `bytes` over `route`: each link carries them.
    pub fn carry(&mut self, route: &[LinkId], bytes: f64) {
        for &l in route {
            self.bytes[l as usize] += bytes;
        }
    }

    /// A flow starts moving bytes over `route` at `t`.
    pub fn enter(&mut self, route: &[LinkId], t: Ns) {
        for &l in route {
            let l = l as usize;
            if self.moving[l] == 0 {
                self.since[l] = t;
            }
            self.moving[l] += 1;
        }
    }

    /// A flow over `route` is done at `t`.
    pub fn leave(&mut self, route: &[LinkId], t: Ns) {
        for &l in route {
            let l = l as usize;
            self.moving[l] -= 1;
            if self.moving[l] == 0 {
                self.busy[l] += t - self.since[l];
            }
        }
    }

    /// A flow held back by `link` moved at `rate` instead of `alone`
    /// bytes/s for `span` ns: it lost `span (1 - rate / alone)` there.
    /// Nothing for a flow at its rate alone, or of no bound.
    pub fn slow(&mut self, link: LinkId, span: Ns, rate: f64, alone: f64) {
        if link == super::maxmin::NO_LINK || !alone.is_finite() || rate >= alone * (1.0 - 1e-9) {
            return;
        }
        self.slowed[link as usize] += span * (1.0 - rate / alone);
    }

    /// Every link's figures at `now`, named by `graph` (a link still busy
    /// counts as busy until `now`).
    pub fn figures(&self, graph: &dyn Graph, now: Ns) -> Vec<LinkLoad> {
        graph
            .links()
            .iter()
            .enumerate()
            .map(|(i, link)| LinkLoad {
                name: graph.name(i as LinkId),
                level: graph.level(i as LinkId),
                bandwidth: link.bandwidth,
                bytes: self.bytes[i],
                busy: self.busy[i]
                    + if self.moving[i] > 0 {
                        now - self.since[i]
                    } else {
                        0.0
                    },
                slowed: self.slowed[i],
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::{Link, Sharing};

    /// Two links, 0 and 1; every route crosses both.
    struct Pair(Vec<Link>);

    impl Graph for Pair {
        fn links(&self) -> &[Link] {
            &self.0
        }
        fn route(&self, _: u32, _: u32, out: &mut Vec<LinkId>) {
            out.extend([0, 1]);
        }
        fn name(&self, link: LinkId) -> String {
            format!("l{link}")
        }
    }

    fn pair() -> Pair {
        let link = Link {
            bandwidth: 1e9,
            latency: 0.0,
            sharing: Sharing::Shared,
        };
        Pair(vec![link; 2])
    }

    #[test]
    fn overlapping_flows_count_their_bytes_once_each_and_their_busy_time_once() {
        let mut l = Loads::new(2);
        l.carry(&[0, 1], 100.0);
        l.carry(&[1], 50.0);
        l.enter(&[0, 1], 10.0);
        l.enter(&[1], 20.0);
        l.leave(&[0, 1], 30.0);
        l.leave(&[1], 60.0);
        // Link 1 busy from 10 to 60, link 0 from 10 to 30; one more flow
        // from 100 on link 0, still moving at 110.
        l.enter(&[0], 100.0);
        let f = l.figures(&pair(), 110.0);
        assert_eq!((f[0].bytes, f[1].bytes), (100.0, 150.0));
        assert_eq!((f[0].busy, f[1].busy), (30.0, 50.0));
        assert_eq!((f[0].name.as_str(), f[1].bandwidth), ("l0", 1e9));
        assert_eq!(f[1].level, "link", "a shape that names no tier");
    }

    #[test]
    fn a_flow_at_half_its_rate_alone_loses_half_its_time_to_the_link_that_holds_it() {
        let mut l = Loads::new(2);
        l.slow(1, 200.0, 5e8, 1e9);
        l.slow(0, 200.0, 1e9, 1e9);
        l.slow(super::super::maxmin::NO_LINK, 200.0, 1.0, 1e9);
        l.slow(0, 200.0, 1.0, f64::INFINITY);
        let f = l.figures(&pair(), 0.0);
        assert_eq!((f[0].slowed, f[1].slowed), (0.0, 100.0));
    }
}
