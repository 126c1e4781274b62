//! A torus of any dimension, as SimGrid's `TORUS` zone builds and routes
//! it. Host `i` sits at `(i mod X, (i / X) mod Y, ...)`; it owns one link
//! per dimension, to its next neighbour there (wrapping round), named
//! `ZONE_link_from_I_to_J`. A route moves one dimension at a time, the
//! first first, until the coordinates agree; the direction in each
//! dimension is the one SimGrid picks from the source's coordinate (to
//! the right when the target is at most half the ring ahead, or behind a
//! source past the middle within half the ring), so that a route
//! crosses SimGrid's links, in SimGrid's order. xSim's ring is the torus
//! of one dimension.

use super::graph::{Graph, Link, LinkId};
use super::spec::{directed, LinkSpec};

/// SimGrid's torus parameters, `"4,4,2"`: the size of each dimension.
pub fn parse(s: &str) -> Result<Vec<u32>, String> {
    let dims: Result<Vec<u32>, _> = s.split(',').map(|d| d.trim().parse::<u32>()).collect();
    match dims {
        Ok(d) if d.iter().filter(|&&k| k == 1).count() > 1 => Err(format!(
            "TORUS parameters `{s}`: more than one dimension of size 1, whose links SimGrid 3.32 names alike (and refuses); leave them out"
        )),
        Ok(d) if !d.is_empty() && !d.contains(&0) => Ok(d),
        _ => Err(format!(
            "TORUS parameters `{s}`: the size of each dimension, at least 1, separated by commas, e.g. \"4,4\""
        )),
    }
}

/// A torus and its links.
#[derive(Debug)]
pub struct Torus {
    zone: String,
    dims: Vec<u32>,
    spec: LinkSpec,
    links: Vec<Link>,
    /// The first limiter link (one per host, in host order), if any.
    limiters: Option<LinkId>,
}

impl Torus {
    /// The torus `zone` of `dims`, its links of `spec`, with a limiter
    /// of that bandwidth per host when given.
    pub fn new(zone: &str, dims: &[u32], spec: LinkSpec, limiter: Option<f64>) -> Torus {
        let hosts: u32 = dims.iter().product();
        let mut links = Vec::new();
        for _ in 0..hosts as usize * dims.len() {
            spec.push(&mut links, 1.0);
        }
        let limiters = limiter.map(|bw| {
            let first = links.len() as LinkId;
            for _ in 0..hosts {
                LinkSpec::limiter(bw).push(&mut links, 1.0);
            }
            first
        });
        Torus {
            zone: zone.to_owned(),
            dims: dims.to_vec(),
            spec,
            links,
            limiters,
        }
    }

    /// Host `host`'s link in dimension `dim`, going up (`part` 0, away
    /// from it) or down (1, towards it).
    fn link(&self, host: u32, dim: usize, part: u32) -> LinkId {
        self.spec.id(0, host * self.dims.len() as u32 + dim as u32, part)
    }

    /// The next host of `host` in dimension `dim`, wrapping round, where
    /// `stride` is the product of the sizes before it.
    fn next(&self, host: u32, dim: usize, stride: u32) -> u32 {
        let k = self.dims[dim];
        if (host / stride) % k == k - 1 {
            host - (k - 1) * stride
        } else {
            host + stride
        }
    }
}

impl Graph for Torus {
    fn links(&self) -> &[Link] {
        &self.links
    }

    fn route(&self, src: u32, dst: u32, out: &mut Vec<LinkId>) {
        let mut cur = src;
        while cur != dst {
            let mut stride = 1;
            for (j, &k) in self.dims.iter().enumerate() {
                let (c, t) = ((cur / stride) % k, (dst / stride) % k);
                if c != t {
                    let mine = (src / stride) % k;
                    let right = (t > mine && t <= mine + k / 2) || (mine > k / 2 && (mine + k / 2) % k >= t);
                    let (next, link) = if right {
                        (self.next(cur, j, stride), self.link(cur, j, 0))
                    } else {
                        let prev = if c == 0 {
                            cur + (k - 1) * stride
                        } else {
                            cur - stride
                        };
                        (prev, self.link(prev, j, 1))
                    };
                    if let Some(l) = self.limiters {
                        out.push(l + cur);
                    }
                    out.push(link);
                    cur = next;
                    break;
                }
                stride *= k;
            }
        }
        if let (Some(l), true) = (self.limiters, src != dst) {
            out.push(l + dst);
        }
    }

    fn level(&self, link: LinkId) -> String {
        if self.limiters.is_some_and(|l| link >= l) {
            return "limiter".into();
        }
        let slot = link / self.spec.width();
        format!("dimension {}", slot % self.dims.len() as u32 + 1)
    }

    fn name(&self, link: LinkId) -> String {
        if let Some(host) = self.limiters.and_then(|l| link.checked_sub(l)) {
            return format!("{}_link_{host}_limiter", self.zone);
        }
        let (slot, part) = (link / self.spec.width(), link % self.spec.width());
        let n = self.dims.len() as u32;
        let (host, dim) = (slot / n, (slot % n) as usize);
        let stride = self.dims[..dim].iter().product();
        let to = self.next(host, dim, stride);
        directed(
            format!("{}_link_from_{host}_to_{to}", self.zone),
            &self.spec,
            part,
        )
    }
}
