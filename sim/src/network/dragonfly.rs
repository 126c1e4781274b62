//! SimGrid's dragonfly (`DRAGONFLY`, its parameters
//! `"G,BLUE;C,BLACK;R,GREEN;N"`): G groups of C chassis of R routers
//! (blades) of N hosts. Each router has a local link to each of its
//! hosts; the routers of a chassis are all linked (green), so are the
//! routers of the same blade in the chassis of a group (black), and
//! router `h` of group `g` (by its index in the group) is linked to
//! group `h` (blue). A level's count of links is one link of that many
//! times the bandwidth. Host `i` is `(group, chassis, router, node)` in
//! that order, the node fastest.
//!
//! Links are named and numbered as SimGrid creates them (local, green,
//! black, then blue, each named with its creation number), and a route
//! takes SimGrid's minimal path, its quirks included: to another group
//! it goes to router `target group` of its chassis, then to chassis 0,
//! over the blue link, and lands on router `source group` of chassis 0;
//! a green hop within a group is then taken as if from chassis 0, and a
//! black hop follows only when the target's chassis is not the one that
//! leaves it on. So SimGrid needs at least as many routers per chassis as
//! there are groups.

use super::graph::{Graph, Link, LinkId};
use super::spec::{directed, LinkSpec};

/// The level names of a dragonfly's links, in SimGrid's creation order:
/// router to host, within a chassis, across the chassis of a group,
/// across groups.
pub const LEVELS: [&str; 4] = ["local", "green", "black", "blue"];

/// SimGrid's dragonfly parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    /// Groups.
    pub groups: u32,
    /// Links between two groups.
    pub blue: u32,
    /// Chassis per group.
    pub chassis: u32,
    /// Links between two routers of a blade in a group.
    pub black: u32,
    /// Routers (blades) per chassis.
    pub routers: u32,
    /// Links between two routers of a chassis.
    pub green: u32,
    /// Hosts per router.
    pub nodes: u32,
}

impl Params {
    /// Reads `"2,1;2,1;2,1;2"`.
    pub fn parse(s: &str) -> Result<Params, String> {
        let bad = |why: &str| {
            format!(
                "DRAGONFLY parameters `{s}`: {why}; write \"GROUPS,LINKS;CHASSIS,LINKS;ROUTERS,LINKS;NODES\", counts of at least 1, e.g. \"2,1;2,1;2,1;2\""
            )
        };
        let n: Vec<u32> = s
            .split(';')
            .flat_map(|p| p.split(','))
            .map(|x| x.trim().parse::<u32>().ok().filter(|&n| n > 0))
            .collect::<Option<_>>()
            .ok_or_else(|| bad("not all counts of at least 1"))?;
        let shape: Vec<usize> = s.split(';').map(|p| p.split(',').count()).collect();
        if shape != [2, 2, 2, 1] {
            return Err(bad("three pairs and one count"));
        }
        let p = Params {
            groups: n[0],
            blue: n[1],
            chassis: n[2],
            black: n[3],
            routers: n[4],
            green: n[5],
            nodes: n[6],
        };
        if p.groups > 1 && p.groups > p.routers {
            return Err(bad(&format!(
                "{} groups but {} routers per chassis: SimGrid reaches group g through router g of each chassis, so give at least as many routers as groups",
                p.groups, p.routers
            )));
        }
        if p.hosts() > u64::from(u32::MAX) / 2 {
            return Err(bad("too many hosts"));
        }
        Ok(p)
    }

    /// Hosts.
    pub fn hosts(&self) -> u64 {
        [self.groups, self.chassis, self.routers, self.nodes]
            .iter()
            .map(|&x| u64::from(x))
            .product()
    }
}

/// A router: (group, chassis, blade).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Router {
    group: u32,
    chassis: u32,
    blade: u32,
}

/// Pairs `j < k` of `n` things, in SimGrid's loop order: pair `(j, k)`'s index.
fn pair(j: u32, k: u32, n: u32) -> u32 {
    j * n - j * (j + 1) / 2 + (k - j - 1)
}

/// The pair of index `i` among `n` things.
fn unpair(i: u32, n: u32) -> (u32, u32) {
    let mut j = 0;
    while pair(j, n - 1, n) < i {
        j += 1;
    }
    (j, i - pair(j, j + 1, n) + j + 1)
}

/// A dragonfly and its links.
#[derive(Debug)]
pub struct Dragonfly {
    zone: String,
    p: Params,
    /// Per level of [`LEVELS`].
    specs: [LinkSpec; 4],
    links: Vec<Link>,
    /// Per level, SimGrid's number of its first link, and our id of it.
    first_uid: [u32; 4],
    first_id: [LinkId; 4],
    /// The first limiter (hosts', then routers').
    limiters: Option<LinkId>,
}

impl Dragonfly {
    /// The dragonfly `zone` of `p`, its links of `specs` by [`LEVELS`], a
    /// limiter of that bandwidth per host and router when given.
    pub fn new(zone: &str, p: Params, specs: [LinkSpec; 4], limiter: Option<f64>) -> Dragonfly {
        let routers = p.groups * p.chassis * p.routers;
        let counts = [
            routers * p.nodes,
            p.groups * p.chassis * (p.routers * (p.routers - 1) / 2),
            p.groups * (p.chassis * (p.chassis - 1) / 2) * p.routers,
            p.groups * (p.groups - 1) / 2,
        ];
        let times = [1, p.green, p.black, p.blue];
        let mut links = Vec::new();
        let (mut first_uid, mut first_id) = ([0; 4], [0; 4]);
        let mut uid = 0;
        for level in 0..4 {
            first_uid[level] = uid;
            first_id[level] = links.len() as LinkId;
            for _ in 0..counts[level] {
                specs[level].push(&mut links, f64::from(times[level]));
            }
            uid += counts[level];
        }
        let limiters = limiter.map(|bw| {
            let first = links.len() as LinkId;
            for _ in 0..p.hosts() as u32 + routers {
                LinkSpec::limiter(bw).push(&mut links, 1.0);
            }
            first
        });
        Dragonfly {
            zone: zone.to_owned(),
            p,
            specs,
            links,
            first_uid,
            first_id,
            limiters,
        }
    }

    fn index(&self, r: Router) -> u32 {
        (r.group * self.p.chassis + r.chassis) * self.p.routers + r.blade
    }

    /// Our id of the `n`-th link of `level`, going up (`part` 0) or down (1).
    fn link(&self, level: usize, n: u32, part: u32) -> LinkId {
        self.specs[level].id(self.first_id[level], n, part)
    }

    /// Router `r`'s green link to blade `k` of its chassis.
    fn green(&self, r: Router, k: u32) -> LinkId {
        let chassis = r.group * self.p.chassis + r.chassis;
        let (j, k, part) = if r.blade < k {
            (r.blade, k, 0)
        } else {
            (k, r.blade, 1)
        };
        let n = chassis * (self.p.routers * (self.p.routers - 1) / 2) + pair(j, k, self.p.routers);
        self.link(1, n, part)
    }

    /// Router `r`'s black link to chassis `k` of its group.
    fn black(&self, r: Router, k: u32) -> LinkId {
        let (j, k, part) = if r.chassis < k {
            (r.chassis, k, 0)
        } else {
            (k, r.chassis, 1)
        };
        let pairs = self.p.chassis * (self.p.chassis - 1) / 2;
        let n = (r.group * pairs + pair(j, k, self.p.chassis)) * self.p.routers + r.blade;
        self.link(2, n, part)
    }

    /// Router `r`'s blue link, to the group of its index in its group.
    fn blue(&self, r: Router) -> LinkId {
        let other = r.chassis * self.p.routers + r.blade;
        let (i, j, part) = if r.group < other {
            (r.group, other, 0)
        } else {
            (other, r.group, 1)
        };
        self.link(3, pair(i, j, self.p.groups), part)
    }

    fn host(&self, h: u32) -> (Router, u32) {
        let p = &self.p;
        let r = Router {
            group: h / (p.chassis * p.routers * p.nodes),
            chassis: h / (p.routers * p.nodes) % p.chassis,
            blade: h / p.nodes % p.routers,
        };
        (r, h % p.nodes)
    }

    fn limit(&self, r: Router, out: &mut Vec<LinkId>) {
        if let Some(f) = self.limiters {
            out.push(f + self.p.hosts() as u32 + self.index(r));
        }
    }

    fn limit_host(&self, h: u32, out: &mut Vec<LinkId>) {
        if let Some(f) = self.limiters {
            out.push(f + h);
        }
    }
}

impl Graph for Dragonfly {
    fn links(&self) -> &[Link] {
        &self.links
    }

    fn route(&self, src: u32, dst: u32, out: &mut Vec<LinkId>) {
        if src == dst {
            return;
        }
        let (mine, my_node) = self.host(src);
        let (target, its_node) = self.host(dst);
        self.limit_host(src, out);
        out.push(self.link(0, self.index(mine) * self.p.nodes + my_node, 0));
        if target != mine {
            let mut cur = mine;
            if target.group != mine.group {
                if cur.blade != target.group {
                    self.limit(cur, out);
                    out.push(self.green(cur, target.group));
                    cur.blade = target.group;
                }
                if cur.chassis != 0 {
                    self.limit(cur, out);
                    out.push(self.black(cur, 0));
                    cur.chassis = 0;
                }
                out.push(self.blue(cur));
                self.limit(cur, out);
                cur = Router {
                    group: target.group,
                    chassis: 0,
                    blade: mine.group,
                };
            }
            if target.blade != cur.blade {
                self.limit(cur, out);
                out.push(self.green(cur, target.blade));
                cur = Router {
                    group: target.group,
                    chassis: 0,
                    blade: target.blade,
                };
            }
            if target.chassis != cur.chassis {
                self.limit(cur, out);
                out.push(self.black(cur, target.chassis));
            }
        }
        self.limit(target, out);
        out.push(self.link(0, self.index(target) * self.p.nodes + its_node, 1));
        self.limit_host(dst, out);
    }

    fn level(&self, link: LinkId) -> String {
        if self.limiters.is_some_and(|f| link >= f) {
            return "limiter".into();
        }
        LEVELS[self.first_id.iter().rposition(|&f| f <= link).unwrap_or(0)].into()
    }

    fn name(&self, link: LinkId) -> String {
        let p = &self.p;
        if let Some(k) = self.limiters.and_then(|f| link.checked_sub(f)) {
            let hosts = p.hosts() as u32;
            let id = if k < hosts { k } else { 2 * hosts - 1 - (k - hosts) };
            return format!("{}_link_{id}_limiter", self.zone);
        }
        let level = self.first_id.iter().rposition(|&f| f <= link).unwrap_or(0);
        let w = self.specs[level].width();
        let (n, part) = (
            (link - self.first_id[level]) / w,
            (link - self.first_id[level]) % w,
        );
        let uid = self.first_uid[level] + n;
        let base = match level {
            0 => format!(
                "local_link_from_router_{}_to_node_{}_{uid}",
                n / p.nodes,
                n % p.nodes
            ),
            1 => {
                let pairs = p.routers * (p.routers - 1) / 2;
                let (j, k) = unpair(n % pairs, p.routers);
                format!(
                    "green_link_in_chassis_{}_between_routers_{j}_and_{k}_{uid}",
                    (n / pairs) % p.chassis
                )
            }
            2 => {
                let pairs = p.chassis * (p.chassis - 1) / 2;
                let (blade, rest) = (n % p.routers, n / p.routers);
                let (j, k) = unpair(rest % pairs, p.chassis);
                format!(
                    "black_link_in_group_{}_between_chassis_{j}_and_{k}_blade_{blade}_{uid}",
                    rest / pairs
                )
            }
            _ => {
                let (i, j) = unpair(n, p.groups);
                let per_group = p.chassis * p.routers;
                format!(
                    "blue_link_between_group_{i}_and_{j}_routers_{}_and_{}_{uid}",
                    i * per_group + j,
                    j * per_group + i
                )
            }
        };
        directed(base, &self.specs[level], part)
    }
}
