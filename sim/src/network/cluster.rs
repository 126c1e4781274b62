//! A star: every host has a private link to one core, as SimGrid's
//! `<cluster>` without a topology builds it (and xSim's star): a message
//! goes up its sender's links (limiter, private link), through the
//! backbone if there is one, and down its receiver's (private link,
//! limiter). A link met twice on the way is crossed once, as SimGrid's
//! star zone routes. The export's own platform, a `<zone
//! routing="Cluster">` whose `<host_link>`s name each host's links, is
//! the same graph with the links it lists.

use super::graph::{Graph, Link, LinkId};
use super::spec::{directed, LinkSpec};

/// One host's links: its limiter, and its private link's ids going up
/// and coming down.
#[derive(Clone, Copy, Debug)]
struct Private {
    limiter: Option<LinkId>,
    up: LinkId,
    down: LinkId,
}

/// How the links are named.
#[derive(Debug)]
enum Names {
    /// `<cluster id=ZONE>`'s: `ZONE_link_R` (`_UP`, `_DOWN` when split),
    /// `ZONE_link_R_limiter`, `ZONE_backbone`, with R the host's radical.
    Cluster {
        zone: String,
        radicals: Vec<i64>,
        private: LinkSpec,
        limiter: bool,
    },
    /// As a platform file declares them, by link.
    Listed(Vec<String>),
}

/// A star of private links, with an optional backbone.
#[derive(Debug)]
pub struct Star {
    links: Vec<Link>,
    hosts: Vec<Private>,
    backbone: Option<LinkId>,
    names: Names,
}

impl Star {
    /// SimGrid's `<cluster id=zone>` of one host per radical: a private
    /// link of `private` per host, a limiter of that bandwidth per host
    /// when given, and a backbone when given.
    pub fn cluster(
        zone: &str,
        radicals: Vec<i64>,
        private: LinkSpec,
        backbone: Option<LinkSpec>,
        limiter: Option<f64>,
    ) -> Star {
        let mut links = Vec::new();
        let hosts = radicals
            .iter()
            .map(|_| {
                let limiter = limiter.map(|bw| LinkSpec::limiter(bw).push(&mut links, 1.0).0);
                let (up, down) = private.push(&mut links, 1.0);
                Private { limiter, up, down }
            })
            .collect();
        let backbone = backbone.map(|b| b.push(&mut links, 1.0).0);
        Star {
            links,
            hosts,
            backbone,
            names: Names::Cluster {
                zone: zone.to_owned(),
                radicals,
                private,
                limiter: limiter.is_some(),
            },
        }
    }

    /// A star of declared links: `links` named `names`, each host's link
    /// up and link down (`<host_link up= down=>`), and the backbone.
    pub fn listed(
        links: Vec<Link>,
        names: Vec<String>,
        hosts: &[(LinkId, LinkId)],
        backbone: Option<LinkId>,
    ) -> Star {
        Star {
            links,
            hosts: hosts
                .iter()
                .map(|&(up, down)| Private {
                    limiter: None,
                    up,
                    down,
                })
                .collect(),
            backbone,
            names: Names::Listed(names),
        }
    }
}

impl Graph for Star {
    fn links(&self) -> &[Link] {
        &self.links
    }

    fn route(&self, src: u32, dst: u32, out: &mut Vec<LinkId>) {
        if src == dst {
            return;
        }
        let start = out.len();
        let (s, d) = (self.hosts[src as usize], self.hosts[dst as usize]);
        let hops = [s.limiter, Some(s.up), self.backbone, Some(d.down), d.limiter];
        for l in hops.into_iter().flatten() {
            if !out[start..].contains(&l) {
                out.push(l);
            }
        }
    }

    fn level(&self, link: LinkId) -> String {
        match &self.names {
            Names::Listed(_) => "link".into(),
            Names::Cluster { private, limiter, .. } => {
                let per = private.width() + u32::from(*limiter);
                if Some(link) == self.backbone {
                    "backbone"
                } else if *limiter && link.is_multiple_of(per) {
                    "limiter"
                } else {
                    "host"
                }
                .into()
            }
        }
    }

    fn name(&self, link: LinkId) -> String {
        match &self.names {
            Names::Listed(names) => names[link as usize].clone(),
            Names::Cluster {
                zone,
                radicals,
                private,
                limiter,
            } => {
                if Some(link) == self.backbone {
                    return format!("{zone}_backbone");
                }
                let per = private.width() + u32::from(*limiter);
                let (host, part) = (link / per, link % per);
                let base = format!("{zone}_link_{}", radicals[host as usize]);
                match part.checked_sub(u32::from(*limiter)) {
                    None => base + "_limiter",
                    Some(p) => directed(base, private, p),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::spec::Policy;

    fn names(g: &Star, src: u32, dst: u32) -> Vec<String> {
        let mut r = Vec::new();
        g.route(src, dst, &mut r);
        r.into_iter().map(|l| g.name(l)).collect()
    }

    #[test]
    fn a_cluster_routes_up_the_backbone_and_down() {
        let spec = |policy| LinkSpec {
            bandwidth: 1e9,
            latency: 1000.0,
            policy,
        };
        let g = Star::cluster(
            "c",
            (0..4).collect(),
            spec(Policy::SplitDuplex),
            Some(spec(Policy::Fatpipe)),
            Some(5e8),
        );
        assert_eq!(
            names(&g, 1, 3),
            [
                "c_link_1_limiter",
                "c_link_1_UP",
                "c_backbone",
                "c_link_3_DOWN",
                "c_link_3_limiter"
            ]
        );
        assert!(names(&g, 2, 2).is_empty());
        assert_eq!(g.latency(1, 3), 3000.0);
        let plain = Star::cluster("p", vec![7, 9], spec(Policy::Shared), None, None);
        assert_eq!(names(&plain, 1, 0), ["p_link_9", "p_link_7"]);
    }
}
