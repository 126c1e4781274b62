//! SimGrid's fat tree (`FAT_TREE`, its parameters `"L;d1,...,dL;u1,...,uL;c1,...,cL"`):
//! L levels of switches above the hosts; a switch of level l has `dl`
//! children, a node of level l-1 has `ul` parents, and `cl` parallel
//! links join each child to each of its parents. The host count is the
//! product of the `d`s; fewer parents than children taper the tree.
//!
//! Nodes carry SimGrid's labels: at level l, digit i counts in base
//! `u(i+1)` below l and `d(i+1)` from l on, and a child's parents are the
//! nodes one level up whose labels differ from its own in digit l alone.
//! Links are numbered as SimGrid creates them (by child level, child,
//! parent, parallel link) and named `link_from_C_P_N` after SimGrid's
//! node ids (a host's is its index, switches count down from twice the
//! host count). A route climbs, at each node choosing its parent by the
//! destination's index (SimGrid's d-mod-k), until the destination is
//! below, then descends, taking at each switch the parallel link chosen
//! by the source's index, and SimGrid's way of walking on along the
//! remaining ports once it has stepped down.

use super::graph::{Graph, Link, LinkId};
use super::spec::{directed, LinkSpec};

/// The most levels a fat tree may have here.
const MAX_LEVELS: usize = 16;

/// SimGrid's fat tree parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    /// Children per switch, by level (1 = the hosts' switches).
    pub down: Vec<u32>,
    /// Parents per node, by level.
    pub up: Vec<u32>,
    /// Parallel links between a child and each of its parents, by level.
    pub count: Vec<u32>,
}

impl Params {
    /// Reads `"2;4,4;1,4;1,1"`.
    pub fn parse(s: &str) -> Result<Params, String> {
        let bad = |why: String| {
            format!(
                "FAT_TREE parameters `{s}`: {why}; write \"LEVELS;CHILDREN;PARENTS;LINKS\", each of the three a list of LEVELS counts of at least 1, e.g. \"2;4,4;1,4;1,1\""
            )
        };
        let parts: Vec<&str> = s.split(';').collect();
        if parts.len() != 4 {
            return Err(bad(format!("{} parts separated by `;`, not 4", parts.len())));
        }
        let levels: usize = parts[0]
            .trim()
            .parse()
            .map_err(|_| bad(format!("`{}` is not a number of levels", parts[0])))?;
        if levels == 0 || levels > MAX_LEVELS {
            return Err(bad(format!("{levels} levels: give 1 to {MAX_LEVELS}")));
        }
        let list = |i: usize, what: &str| -> Result<Vec<u32>, String> {
            let v: Vec<u32> = parts[i]
                .split(',')
                .map(|x| x.trim().parse::<u32>().ok().filter(|&n| n > 0))
                .collect::<Option<_>>()
                .ok_or_else(|| bad(format!("the {what} `{}` are not counts of at least 1", parts[i])))?;
            if v.len() != levels {
                return Err(bad(format!("{levels} levels but {} {what}", v.len())));
            }
            Ok(v)
        };
        let p = Params {
            down: list(1, "children counts")?,
            up: list(2, "parent counts")?,
            count: list(3, "link counts")?,
        };
        if p.hosts() > u64::from(u32::MAX) / 2 {
            return Err(bad(format!("{} hosts are too many", p.hosts())));
        }
        Ok(p)
    }

    /// Levels of switches.
    pub fn levels(&self) -> usize {
        self.down.len()
    }

    /// Hosts: the product of the children counts.
    pub fn hosts(&self) -> u64 {
        self.down.iter().map(|&d| u64::from(d)).product()
    }

    /// Nodes at `level` (0: the hosts).
    fn nodes(&self, level: usize) -> u64 {
        let below: u64 = self.up[..level].iter().map(|&u| u64::from(u)).product();
        below * self.down[level..].iter().map(|&d| u64::from(d)).product::<u64>()
    }

    /// The base of digit `i` of a label at `level`.
    fn radix(&self, level: usize, i: usize) -> u32 {
        if i < level {
            self.up[i]
        } else {
            self.down[i]
        }
    }
}

/// A node: its level and position there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Node {
    level: usize,
    pos: u64,
}

type Label = [u32; MAX_LEVELS];

/// A fat tree and its links.
#[derive(Debug)]
pub struct FatTree {
    zone: String,
    p: Params,
    /// Per level l below the top, the links from level l to l+1.
    specs: Vec<LinkSpec>,
    links: Vec<Link>,
    /// Per level l, SimGrid's number of its first link (its creation order).
    first_uid: Vec<u64>,
    /// Per level l, our id of its first link.
    first_id: Vec<LinkId>,
    /// Per level, the number of nodes below it (switches' global index).
    before: Vec<u64>,
    /// The first limiter (hosts', then switches' by level and position).
    limiters: Option<LinkId>,
}

impl FatTree {
    /// The fat tree `zone` of `p`, the links from level l to l+1 of
    /// `specs[l]`, a limiter of that bandwidth per node when given.
    pub fn new(zone: &str, p: Params, specs: Vec<LinkSpec>, limiter: Option<f64>) -> FatTree {
        let mut links = Vec::new();
        let (mut first_uid, mut first_id, mut before) = (Vec::new(), Vec::new(), Vec::new());
        let (mut uid, mut seen) = (0u64, 0u64);
        for (l, spec) in specs.iter().enumerate() {
            before.push(seen);
            seen += p.nodes(l);
            first_uid.push(uid);
            first_id.push(links.len() as LinkId);
            let n = p.nodes(l) * u64::from(p.up[l]) * u64::from(p.count[l]);
            for _ in 0..n {
                spec.push(&mut links, 1.0);
            }
            uid += n;
        }
        // The top level's switches, which have no parents.
        before.push(seen);
        seen += p.nodes(p.levels());
        let limiters = limiter.map(|bw| {
            let first = links.len() as LinkId;
            for _ in 0..seen {
                LinkSpec::limiter(bw).push(&mut links, 1.0);
            }
            first
        });
        FatTree {
            zone: zone.to_owned(),
            p,
            specs,
            links,
            first_uid,
            first_id,
            before,
            limiters,
        }
    }

    fn label(&self, n: Node) -> Label {
        let mut label = [0; MAX_LEVELS];
        let mut rest = n.pos;
        for (i, digit) in label.iter_mut().enumerate().take(self.p.levels()) {
            let r = u64::from(self.p.radix(n.level, i));
            *digit = (rest % r) as u32;
            rest /= r;
        }
        label
    }

    fn at(&self, level: usize, label: &Label) -> Node {
        let mut pos = 0;
        for i in (0..self.p.levels()).rev() {
            pos = pos * u64::from(self.p.radix(level, i)) + u64::from(label[i]);
        }
        Node { level, pos }
    }

    /// SimGrid's id of a node: switches count down from twice the hosts,
    /// below 0 when they outnumber them.
    fn id(&self, n: Node) -> i64 {
        if n.level == 0 {
            n.pos as i64
        } else {
            2 * self.p.hosts() as i64 - 1 - (self.before[n.level] - self.before[1] + n.pos) as i64
        }
    }

    /// SimGrid's number of the `j`-th link from `child` to its parent of
    /// digit `r`.
    fn uid(&self, child: Node, r: u32, j: u32) -> u64 {
        let l = child.level;
        let (up, count) = (u64::from(self.p.up[l]), u64::from(self.p.count[l]));
        self.first_uid[l] + child.pos * up * count + u64::from(r) * count + u64::from(j)
    }

    /// Our id of that link, going up (`part` 0) or down (1).
    fn link(&self, child: Node, r: u32, j: u32, part: u32) -> LinkId {
        let l = child.level;
        let index = (self.uid(child, r, j) - self.first_uid[l]) as LinkId;
        self.specs[l].id(self.first_id[l], index, part)
    }

    fn limiter(&self, n: Node, out: &mut Vec<LinkId>) {
        if let Some(first) = self.limiters {
            out.push(first + (self.before[n.level] + n.pos) as LinkId);
        }
    }

    /// Whether host `dst` (of label `to`) is below `n`.
    fn above(&self, n: Node, to: &Label) -> bool {
        let label = self.label(n);
        n.level > 0 && (n.level..self.p.levels()).all(|i| label[i] == to[i])
    }
}

impl Graph for FatTree {
    fn links(&self) -> &[Link] {
        &self.links
    }

    fn route(&self, src: u32, dst: u32, out: &mut Vec<LinkId>) {
        if src == dst {
            return;
        }
        let p = &self.p;
        let to_node = Node {
            level: 0,
            pos: u64::from(dst),
        };
        let to = self.label(to_node);
        let mut cur = Node {
            level: 0,
            pos: u64::from(src),
        };
        while !self.above(cur, &to) {
            let l = cur.level;
            let mut d = u64::from(dst);
            for &u in &p.up[..l] {
                d /= u64::from(u);
            }
            d %= u64::from(p.up[l]) * u64::from(p.count[l]);
            let (r, j) = ((d % u64::from(p.up[l])) as u32, (d / u64::from(p.up[l])) as u32);
            self.limiter(cur, out);
            out.push(self.link(cur, r, j, 0));
            let mut label = self.label(cur);
            label[l] = r;
            cur = self.at(l + 1, &label);
        }
        while cur != to_node {
            let l = cur.level;
            let mut port = (u64::from(src) % u64::from(p.count[l - 1])) * u64::from(p.down[l - 1]);
            // SimGrid walks on along the ports, from the child it stepped
            // down to, in the same loop.
            while cur.level > 0 && port < u64::from(p.down[cur.level - 1]) * u64::from(p.count[cur.level - 1])
            {
                let l = cur.level;
                let below = u64::from(p.down[l - 1]);
                if port % below == u64::from(to[l - 1]) {
                    let label = self.label(cur);
                    let child = self.at(l - 1, &{
                        let mut c = label;
                        c[l - 1] = to[l - 1];
                        c
                    });
                    out.push(self.link(child, label[l - 1], (port / below) as u32, 1));
                    self.limiter(cur, out);
                    cur = child;
                }
                port += 1;
            }
        }
        self.limiter(to_node, out);
    }

    fn level(&self, link: LinkId) -> String {
        if self.limiters.is_some_and(|f| link >= f) {
            return "limiter".into();
        }
        let l = self.first_id.iter().rposition(|&f| f <= link).unwrap_or(0);
        format!("level {}", l + 1)
    }

    fn name(&self, link: LinkId) -> String {
        if let Some(k) = self.limiters.and_then(|f| link.checked_sub(f)) {
            let k = u64::from(k);
            let level = self.before.iter().rposition(|&b| b <= k).unwrap_or(0);
            let n = Node {
                level,
                pos: k - self.before[level],
            };
            return format!("{}_link_{}_limiter", self.zone, self.id(n));
        }
        let l = self.first_id.iter().rposition(|&f| f <= link).unwrap_or(0);
        let w = self.specs[l].width();
        let (index, part) = (
            u64::from((link - self.first_id[l]) / w),
            (link - self.first_id[l]) % w,
        );
        let (up, count) = (u64::from(self.p.up[l]), u64::from(self.p.count[l]));
        let child = Node {
            level: l,
            pos: index / (up * count),
        };
        let r = ((index % (up * count)) / count) as u32;
        let mut label = self.label(child);
        label[l] = r;
        let parent = self.at(l + 1, &label);
        let uid = self.first_uid[l] + index;
        directed(
            format!("link_from_{}_{}_{uid}", self.id(child), self.id(parent)),
            &self.specs[l],
            part,
        )
    }
}
