//! What a class of links is made of, as SimGrid's `<cluster>` gives it
//! (`bw`, `lat`, `sharing_policy`), and how one such link becomes one or
//! two [`Link`]s: a `SPLITDUPLEX` link is one link per direction.

use super::graph::{Link, LinkId, Sharing};
use crate::units::Ns;

/// SimGrid's sharing policies of a link as a platform declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// One link, its bandwidth shared by the flows of both directions.
    Shared,
    /// One link, every flow gets its whole bandwidth.
    Fatpipe,
    /// Two shared links, one per direction (`_UP` and `_DOWN`).
    SplitDuplex,
}

impl Policy {
    /// Reads SimGrid's name (`SHARED`, `FATPIPE`, `SPLITDUPLEX`, and its
    /// synonym `FULLDUPLEX`), in any case.
    pub fn parse(s: &str) -> Result<Policy, String> {
        match s.to_ascii_uppercase().as_str() {
            "SHARED" => Ok(Policy::Shared),
            "FATPIPE" => Ok(Policy::Fatpipe),
            "SPLITDUPLEX" | "FULLDUPLEX" => Ok(Policy::SplitDuplex),
            _ => Err(format!(
                "unknown sharing policy `{s}`: use shared, fatpipe or splitduplex"
            )),
        }
    }

    /// SimGrid's name.
    pub fn simgrid(self) -> &'static str {
        match self {
            Policy::Shared => "SHARED",
            Policy::Fatpipe => "FATPIPE",
            Policy::SplitDuplex => "SPLITDUPLEX",
        }
    }
}

/// Bandwidth, latency and policy of a class of links.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkSpec {
    /// Bytes per second.
    pub bandwidth: f64,
    /// Latency, ns.
    pub latency: Ns,
    /// How it is shared.
    pub policy: Policy,
}

impl LinkSpec {
    /// How many [`Link`]s one such link is: 2 when split by direction.
    pub fn width(&self) -> u32 {
        if self.policy == Policy::SplitDuplex {
            2
        } else {
            1
        }
    }

    /// The id of the `index`-th such link of a run of them from `first`,
    /// going up (`part` 0) or down (1): the down one is its own link only
    /// when split.
    pub fn id(&self, first: LinkId, index: u32, part: u32) -> LinkId {
        first + index * self.width() + part.min(self.width() - 1)
    }

    /// Appends one such link, its bandwidth times `times` (a dragonfly's
    /// parallel links are one link of their summed bandwidth), and
    /// returns its ids going up and going down (the same id unless split).
    pub fn push(&self, links: &mut Vec<Link>, times: f64) -> (LinkId, LinkId) {
        let first = links.len() as LinkId;
        let sharing = match self.policy {
            Policy::Fatpipe => Sharing::Fatpipe,
            _ => Sharing::Shared,
        };
        for _ in 0..self.width() {
            links.push(Link {
                bandwidth: self.bandwidth * times,
                latency: self.latency,
                sharing,
            });
        }
        (first, first + self.width() - 1)
    }

    /// A limiter link of SimGrid's (`limiter_link`): shared, no latency.
    pub fn limiter(bandwidth: f64) -> LinkSpec {
        LinkSpec {
            bandwidth,
            latency: 0.0,
            policy: Policy::Shared,
        }
    }
}

/// The SimGrid name of the `part`-th [`Link`] (0 up, 1 down) of a link
/// named `base` under `spec`: `base_UP`/`base_DOWN` when split.
pub fn directed(base: String, spec: &LinkSpec, part: u32) -> String {
    match (spec.policy, part) {
        (Policy::SplitDuplex, 0) => base + "_UP",
        (Policy::SplitDuplex, _) => base + "_DOWN",
        _ => base,
    }
}
