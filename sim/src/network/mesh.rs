//! xSim's mesh: a grid without wrap-around links. Host `i` sits at
//! `(i mod X, (i / X) mod Y, ...)` and has a link to its next neighbour
//! in each dimension where it is not last (`mesh_link_from_I_to_J`); a
//! route corrects the first dimension first, one hop at a time.

use super::graph::{Graph, Link, LinkId};
use super::spec::{directed, LinkSpec};

/// A mesh and its links.
#[derive(Debug)]
pub struct Mesh {
    dims: Vec<u32>,
    spec: LinkSpec,
    links: Vec<Link>,
    /// Per (host, dimension), its link's index among the mesh's links,
    /// `u32::MAX` where the host is last in that dimension.
    slot: Vec<u32>,
    /// Per link index, its (host, dimension) slot.
    owner: Vec<u32>,
}

impl Mesh {
    /// The mesh of `dims`, its links of `spec`.
    pub fn new(dims: &[u32], spec: LinkSpec) -> Mesh {
        let hosts: u32 = dims.iter().product();
        let n = dims.len() as u32;
        let (mut links, mut slot, mut owner) = (Vec::new(), Vec::new(), Vec::new());
        for host in 0..hosts {
            let mut stride = 1;
            for (j, &k) in dims.iter().enumerate() {
                if (host / stride) % k == k - 1 {
                    slot.push(u32::MAX);
                } else {
                    slot.push(owner.len() as u32);
                    owner.push(host * n + j as u32);
                    spec.push(&mut links, 1.0);
                }
                stride *= k;
            }
        }
        Mesh {
            dims: dims.to_vec(),
            spec,
            links,
            slot,
            owner,
        }
    }
}

impl Graph for Mesh {
    fn links(&self) -> &[Link] {
        &self.links
    }

    fn route(&self, src: u32, dst: u32, out: &mut Vec<LinkId>) {
        let n = self.dims.len() as u32;
        let (mut cur, mut stride) = (src, 1);
        for (j, &k) in self.dims.iter().enumerate() {
            let t = (dst / stride) % k;
            loop {
                let c = (cur / stride) % k;
                let (owner, next, part) = match c.cmp(&t) {
                    std::cmp::Ordering::Equal => break,
                    std::cmp::Ordering::Less => (cur, cur + stride, 0),
                    std::cmp::Ordering::Greater => (cur - stride, cur - stride, 1),
                };
                out.push(self.spec.id(0, self.slot[(owner * n) as usize + j], part));
                cur = next;
            }
            stride *= k;
        }
    }

    fn level(&self, link: LinkId) -> String {
        let slot = self.owner[(link / self.spec.width()) as usize];
        format!("dimension {}", slot % self.dims.len() as u32 + 1)
    }

    fn name(&self, link: LinkId) -> String {
        let (index, part) = (link / self.spec.width(), link % self.spec.width());
        let n = self.dims.len() as u32;
        let slot = self.owner[index as usize];
        let (host, dim) = (slot / n, (slot % n) as usize);
        let stride: u32 = self.dims[..dim].iter().product();
        directed(
            format!("mesh_link_from_{host}_to_{}", host + stride),
            &self.spec,
            part,
        )
    }
}
