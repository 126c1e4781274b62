//! xSim's tree: a complete tree of some arity whose vertices are the
//! hosts, in breadth-first order (host 0 the root, the children of `v`
//! are `arity v + 1 ..= arity v + arity`). Every host but the root has a
//! link to its parent (`tree_link_V_to_P`); a route climbs from the
//! source to the hosts' nearest common ancestor and comes down to the
//! destination.

use super::graph::{Graph, Link, LinkId};
use super::spec::{directed, LinkSpec};

/// A tree and its links.
#[derive(Debug)]
pub struct Tree {
    arity: u32,
    spec: LinkSpec,
    links: Vec<Link>,
}

impl Tree {
    /// The tree of `hosts` vertices of `arity`, its links of `spec`.
    pub fn new(hosts: u32, arity: u32, spec: LinkSpec) -> Tree {
        let mut links = Vec::new();
        for _ in 1..hosts {
            spec.push(&mut links, 1.0);
        }
        Tree { arity, spec, links }
    }

    fn parent(&self, v: u32) -> u32 {
        (v - 1) / self.arity
    }

    fn depth(&self, mut v: u32) -> u32 {
        let mut d = 0;
        while v > 0 {
            v = self.parent(v);
            d += 1;
        }
        d
    }

    /// The link from `v` to its parent, going up (`part` 0) or down (1).
    fn link(&self, v: u32, part: u32) -> LinkId {
        self.spec.id(0, v - 1, part)
    }
}

impl Graph for Tree {
    fn links(&self) -> &[Link] {
        &self.links
    }

    fn route(&self, src: u32, dst: u32, out: &mut Vec<LinkId>) {
        let (mut x, mut y) = (src, dst);
        let (mut dx, mut dy) = (self.depth(x), self.depth(y));
        let mut down = Vec::new();
        while x != y {
            if dx >= dy {
                out.push(self.link(x, 0));
                x = self.parent(x);
                dx -= 1;
            } else {
                down.push(self.link(y, 1));
                y = self.parent(y);
                dy -= 1;
            }
        }
        out.extend(down.into_iter().rev());
    }

    /// A link's depth: 1 for the root's children's links.
    fn level(&self, link: LinkId) -> String {
        format!("depth {}", self.depth(link / self.spec.width() + 1))
    }

    fn name(&self, link: LinkId) -> String {
        let v = link / self.spec.width() + 1;
        directed(
            format!("tree_link_{v}_to_{}", self.parent(v)),
            &self.spec,
            link % self.spec.width(),
        )
    }
}
