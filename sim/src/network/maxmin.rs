//! Max-min fairness over shared links, as SimGrid's LMM solver
//! (`lmm::MaxMin`, 3.32) computes it: each flow is a variable with a
//! sharing penalty `p` and an optional bound, each link a constraint of
//! its bandwidth. The "level" of every unsaturated flow rises together;
//! a flow's rate is `level / p`. A shared link saturates when the rates
//! crossing it sum to its bandwidth, a fat pipe when its largest rate
//! reaches it; a flow stops at its bound. So flows with a larger penalty
//! (CM02: a longer route latency) get less of a link.
//!
//! SimGrid's rounding rules are kept, because they decide near-ties: a
//! link counts as saturated once what remains of it is below 1e-5 of its
//! bandwidth, or its usage below 1e-5 (SimGrid's `maxmin/precision`),
//! which is why penalties are in seconds and bandwidths in bytes per
//! second, SimGrid's units.
//!
//! **Incremental, as SimGrid's selective update is.** A change marks
//! links as modified, and [`MaxMin::solve`] recomputes only the flows that
//! cross a modified link, so the cost follows the flows that interact,
//! not all flows in flight. Which links a change marks is SimGrid's rule
//! (`System::update_modified_cnst_set`), kept because SimGrid's answers
//! follow from it: a marked link marks the links of the active flows
//! crossing it, transitively, but a link marked already since the last
//! solve spreads no further, and a flow met once since the last solve is
//! not followed again. A flow created ([`MaxMin::create`], in its
//! latency) marks every link of its route; a flow that becomes active
//! ([`MaxMin::enable`]) or leaves ([`MaxMin::remove`]) marks only the
//! first link of its route. So a solve may leave out a link that a newly
//! active flow shares with flows marked earlier: those keep their rates,
//! and the new flow's rate ignores that link, as in SimGrid, which then is
//! not exactly max-min fair. Rates are SimGrid's, link for link.

use super::graph::{Link, LinkId, Sharing};
use levels::Levels;
use smallvec::SmallVec;

mod levels;

/// A flow of the solver.
pub type VarId = u32;

/// SimGrid's `maxmin/precision`.
const PRECISION: f64 = 1e-5;

/// A link: its bandwidth, the flows crossing it, and what a marking and a
/// solve keep of it. Everything a flow's visit reads or writes sits in
/// one cache line: at scale the solver is bound by memory, not
/// arithmetic, and every visit of a link in separate arrays cost a miss
/// each.
#[repr(align(64))]
struct Cnst {
    capacity: f64,
    /// Scratch of a solve: what remains of it and its usage by the flows
    /// not fixed yet.
    remaining: f64,
    usage: f64,
    /// Its place among a filling's unsaturated links ([`OUT`]: none).
    light_at: u32,
    fatpipe: bool,
    /// Modified since the last solve.
    modified: bool,
    vars: Vec<VarId>,
}

/// Route lengths kept beside their flow: a fat tree of 3 levels crosses
/// at most 6 links, so most flows' links sit in the flow's own record.
type Route = SmallVec<[LinkId; 6]>;

/// A flow, as a marking and a solve read it: its route first (what a
/// marking reads), the solve round in which the marking of modified links
/// last followed it, a solve's scratch, whether it is active (its latency
/// paid: in its links' lists), its penalty and bound. All in one cache
/// line, as a link's record is: at scale a solve visits a flow at a cache
/// miss, and the record used to straddle two lines three times in four.
/// What a solve writes for the caller sits apart ([`Solved`]).
#[repr(align(64))]
struct Var {
    links: Route,
    visited: u32,
    /// The solve epoch in which it was gathered, and fixed.
    seen: u32,
    fixed: u32,
    active: bool,
    /// Among a round's saturated flows.
    gathered: bool,
    penalty: f64,
    bound: f64,
}

const _: () = assert!(
    std::mem::size_of::<Var>() == 64,
    "a flow's record is one cache line"
);

impl Var {
    /// `1 / penalty`: its weight in a link's usage. Divided afresh rather
    /// than kept, to keep the record in one line: the same quotient, bit
    /// for bit, each time.
    fn share(&self) -> f64 {
        1.0 / self.penalty
    }
}

/// What the last solve that reached a flow gave it: its rate and the
/// link at whose level it was fixed ([`NO_LINK`]: none yet), which a
/// report charges with its loss to sharing.
#[derive(Clone, Copy)]
struct Solved {
    rate: f64,
    bottleneck: LinkId,
}

/// A flow's [`Solved`] before any solve.
const UNSOLVED: Solved = Solved {
    rate: 0.0,
    bottleneck: NO_LINK,
};

/// "No link" for [`MaxMin::bottleneck`].
pub const NO_LINK: LinkId = LinkId::MAX;

/// The flows sharing a network's links, and their max-min rates.
pub struct MaxMin {
    cnsts: Vec<Cnst>,
    vars: Vec<Var>,
    /// Each flow's rate and bottleneck, by variable.
    out: Vec<Solved>,
    free: Vec<VarId>,
    /// Links modified since the last solve, in the order marked.
    modified: Vec<LinkId>,
    /// The solve round, which [`Var::visited`] compares with.
    round: u32,
    /// Links whose flows a marking still has to follow.
    to_follow: Vec<LinkId>,
    /// The solve epoch, which [`Var::seen`] and [`Var::fixed`] compare
    /// with.
    epoch: u32,
    /// Scratch of a filling: the unsaturated links, in SimGrid's order
    /// (a saturated one swapped out for the last), the links at a
    /// round's level, that round's open flows, and the unsaturated links
    /// by level.
    light: Vec<LinkId>,
    at_level: Vec<LinkId>,
    saturated: Vec<VarId>,
    levels: Levels,
    /// The flows the last solve recomputed.
    solved: Vec<VarId>,
}

/// How a filling finds a round's level: the least level of the
/// unsaturated links, and into the vector those at it, in their order
/// among the unsaturated links.
type NextLevel = fn(&mut MaxMin, &mut Vec<LinkId>) -> f64;

/// "Not among the unsaturated links".
const OUT: u32 = u32::MAX;

impl MaxMin {
    /// A solver over `links`, with no flow yet.
    pub fn new(links: &[Link]) -> MaxMin {
        let n = links.len();
        MaxMin {
            cnsts: links
                .iter()
                .map(|l| Cnst {
                    capacity: l.bandwidth,
                    remaining: 0.0,
                    usage: 0.0,
                    light_at: OUT,
                    fatpipe: l.sharing == Sharing::Fatpipe,
                    modified: false,
                    vars: Vec::new(),
                })
                .collect(),
            vars: Vec::new(),
            out: Vec::new(),
            free: Vec::new(),
            modified: Vec::new(),
            round: 1,
            to_follow: Vec::new(),
            epoch: 0,
            light: Vec::new(),
            at_level: Vec::new(),
            saturated: Vec::new(),
            levels: Levels::new(n),
            solved: Vec::new(),
        }
    }

    /// A flow over `route` still paying its latency: it takes nothing
    /// from its links until [`enable`](Self::enable)d, but marks every one
    /// of them modified (SimGrid creates its variable then).
    /// Its sharing penalty `penalty` (> 0) and bound `bound` (bytes per
    /// second, `f64::INFINITY`: none) are kept for then.
    pub fn create(&mut self, route: &[LinkId], penalty: f64, bound: f64) -> VarId {
        let freed = self.free.pop();
        // A freed variable's list of links is reused: no allocation a flow.
        let mut links = freed
            .map(|id| std::mem::take(&mut self.vars[id as usize].links))
            .unwrap_or_default();
        links.clear();
        links.extend_from_slice(route);
        let var = Var {
            links,
            visited: self.round.wrapping_sub(1),
            seen: 0,
            fixed: 0,
            active: false,
            gathered: false,
            penalty,
            bound,
        };
        let id = match freed {
            Some(id) => {
                self.vars[id as usize] = var;
                self.out[id as usize] = UNSOLVED;
                id
            }
            None => {
                self.vars.push(var);
                self.out.push(UNSOLVED);
                (self.vars.len() - 1) as VarId
            }
        };
        for &l in route {
            self.mark(l);
        }
        id
    }

    /// Flow `v`'s latency is paid: it shares its links from now on, at
    /// the penalty and bound it was created with; marks its route's first
    /// link.
    pub fn enable(&mut self, v: VarId) {
        let x = &mut self.vars[v as usize];
        if x.active {
            return;
        }
        x.active = true;
        for &l in &x.links {
            self.cnsts[l as usize].vars.push(v);
        }
        if let Some(&first) = x.links.first() {
            self.mark(first);
        }
    }

    /// Adds a flow of sharing penalty `penalty` (> 0), at most `bound`
    /// bytes per second, over `route`, active at once (a route of no
    /// latency). Its rate is known after the next [`solve`](Self::solve).
    pub fn add(&mut self, penalty: f64, bound: f64, route: &[LinkId]) -> VarId {
        let id = self.create(&[], penalty, bound);
        let x = &mut self.vars[id as usize];
        x.active = true;
        x.links = Route::from_slice(route);
        // As SimGrid adds an active variable's links one by one.
        for &l in route {
            self.cnsts[l as usize].vars.push(id);
            self.mark(l);
        }
        id
    }

    /// Removes flow `v` (its route's first link marked first): the flows it
    /// shared links with get their rates again at the next
    /// [`solve`](Self::solve).
    pub fn remove(&mut self, v: VarId) {
        let x = &self.vars[v as usize];
        if x.active {
            if let Some(&first) = x.links.first() {
                self.mark(first);
            }
        }
        let mut links = std::mem::take(&mut self.vars[v as usize].links);
        for &l in &links {
            let vars = &mut self.cnsts[l as usize].vars;
            if let Some(i) = vars.iter().position(|&x| x == v) {
                vars.swap_remove(i);
            }
        }
        // Kept, empty, for the next flow made in this variable.
        links.clear();
        self.vars[v as usize].links = links;
        self.vars[v as usize].active = false;
        self.free.push(v);
    }

    /// Flow `v`'s rate, bytes per second, as of the last solve.
    pub fn rate(&self, v: VarId) -> f64 {
        self.out[v as usize].rate
    }

    /// The link that set flow `v`'s rate in the last solve that fixed it
    /// at a link's level (the first of its links to saturate as the
    /// levels rose), [`NO_LINK`] before any: what slows it, when its rate
    /// is below its bound.
    pub fn bottleneck(&self, v: VarId) -> LinkId {
        self.out[v as usize].bottleneck
    }

    /// Flow `v`'s bound, bytes per second.
    pub fn bound(&self, v: VarId) -> f64 {
        self.vars[v as usize].bound
    }

    /// Flow `v`'s route.
    pub fn route(&self, v: VarId) -> &[LinkId] {
        &self.vars[v as usize].links
    }

    /// Marks link `l` modified, and, if it was not, the links of the active
    /// flows crossing it, transitively (SimGrid's rule: the module doc).
    fn mark(&mut self, l: LinkId) {
        let (cnsts, vars) = (&mut self.cnsts, &mut self.vars);
        if cnsts[l as usize].modified {
            return;
        }
        cnsts[l as usize].modified = true;
        self.modified.push(l);
        self.to_follow.push(l);
        while let Some(c) = self.to_follow.pop() {
            for i in 0..cnsts[c as usize].vars.len() {
                let x = &mut vars[cnsts[c as usize].vars[i] as usize];
                if x.visited == self.round {
                    continue;
                }
                x.visited = self.round;
                for &k in &x.links {
                    let kc = &mut cnsts[k as usize];
                    if k != c && !kc.modified {
                        kc.modified = true;
                        self.modified.push(k);
                        self.to_follow.push(k);
                    }
                }
            }
        }
    }

    /// Recomputes the rates of the active flows crossing a link modified
    /// since the last solve; returns those flows.
    pub fn solve(&mut self) -> &[VarId] {
        self.solve_with(Self::next_level)
    }

    /// [`solve`](Self::solve), each round's level from `next_level`.
    fn solve_with(&mut self, next_level: NextLevel) -> &[VarId] {
        self.solved.clear();
        if self.modified.is_empty() {
            return &self.solved;
        }
        self.epoch += 1;
        let links = std::mem::take(&mut self.modified);
        let mut vars = std::mem::take(&mut self.solved);
        let mut light = std::mem::take(&mut self.light);
        light.clear();
        // One pass over the modified links gathers their flows and starts
        // the filling: each link's remainder is its capacity and, no flow
        // being fixed yet, its usage is that of all its flows.
        for &l in &links {
            let c = &mut self.cnsts[l as usize];
            c.modified = false;
            c.remaining = c.capacity;
            c.light_at = OUT;
            let mut usage = if c.fatpipe { 0.0 } else { -0.0 };
            for &v in &c.vars {
                let x = &mut self.vars[v as usize];
                if x.seen != self.epoch {
                    x.seen = self.epoch;
                    vars.push(v);
                }
                usage = if c.fatpipe {
                    f64::max(usage, x.share())
                } else {
                    usage + x.share()
                };
            }
            if c.capacity <= c.capacity * PRECISION {
                continue;
            }
            c.usage = usage;
            if usage > 0.0 {
                c.light_at = light.len() as u32;
                light.push(l);
            }
        }
        self.light = light;
        self.fill(&vars, next_level);
        self.modified = links;
        self.modified.clear();
        self.round = self.round.wrapping_add(1);
        if self.round == 0 {
            // Wrapped: no flow may look followed in a round to come.
            self.round = 1;
            for x in &mut self.vars {
                x.visited = 0;
            }
        }
        self.solved = vars;
        &self.solved
    }

    /// The usage of link `l` by the flows not fixed yet: the sum of their
    /// `1 / p`, or on a fat pipe the largest.
    fn fresh_usage(&self, l: usize) -> f64 {
        let c = &self.cnsts[l];
        let open = c
            .vars
            .iter()
            .map(|&v| &self.vars[v as usize])
            .filter(|x| x.fixed != self.epoch)
            .map(Var::share);
        if c.fatpipe {
            open.fold(0.0, f64::max)
        } else {
            open.sum()
        }
    }

    /// Progressive filling of one component, with SimGrid's rules: each
    /// round, `next_level` gives the least level of the unsaturated links
    /// (`self.light`, set up by the solve) and those at it (in their order
    /// among the unsaturated links, as SimGrid's scan meets them), whose
    /// open flows are fixed there.
    fn fill(&mut self, vars: &[VarId], next_level: NextLevel) {
        let epoch = self.epoch;
        let mut at = std::mem::take(&mut self.at_level);
        let mut saturated = std::mem::take(&mut self.saturated);
        let cnsts = &self.cnsts;
        self.levels.start(&self.light, |l| {
            let c = &cnsts[l as usize];
            c.remaining / c.usage
        });
        let mut level = f64::INFINITY;
        while !self.light.is_empty() {
            // The links that saturate first, and their open flows.
            level = next_level(self, &mut at);
            saturated.clear();
            for &l in &at {
                for &v in &self.cnsts[l as usize].vars {
                    let x = &mut self.vars[v as usize];
                    if x.fixed != epoch && !x.gathered {
                        x.gathered = true;
                        self.out[v as usize].bottleneck = l;
                        saturated.push(v);
                    }
                }
            }
            for &v in &saturated {
                self.vars[v as usize].gathered = false;
            }
            // A flow whose bound comes first is fixed at it, with those
            // of the same bound, before anything else.
            let least_bound = saturated
                .iter()
                .map(|&v| &self.vars[v as usize])
                .filter(|x| x.bound.is_finite() && x.bound * x.penalty < level)
                .map(|x| x.bound * x.penalty)
                .fold(f64::INFINITY, f64::min);
            for &v in &saturated {
                let x = &self.vars[v as usize];
                let rate = if least_bound.is_infinite() {
                    level / x.penalty
                } else if (least_bound - x.bound * x.penalty).abs() < PRECISION {
                    x.bound
                } else {
                    continue;
                };
                self.fix(v, rate);
            }
            // The links taken at this level and still unsaturated.
            for &l in &at {
                if self.cnsts[l as usize].light_at != OUT {
                    self.levels.push(l, self.level(l));
                }
            }
        }
        // A flow left open when rounding saturated its links: at the last
        // level (SimGrid would leave it at 0, stalled).
        for &v in vars {
            let x = &self.vars[v as usize];
            if x.fixed != epoch {
                self.out[v as usize].rate = if level.is_finite() {
                    (level / x.penalty).min(x.bound)
                } else {
                    x.bound
                };
            }
        }
        self.at_level = at;
        self.saturated = saturated;
    }

    /// Unsaturated link `l`'s level: where it saturates if every open
    /// flow crossing it rises together.
    fn level(&self, l: LinkId) -> f64 {
        let c = &self.cnsts[l as usize];
        c.remaining / c.usage
    }

    /// The least level of the unsaturated links and into `at` those at
    /// it, in their order among the unsaturated links.
    fn next_level(&mut self, at: &mut Vec<LinkId>) -> f64 {
        let cnsts = &self.cnsts;
        let level_of = |l: LinkId| {
            let c = &cnsts[l as usize];
            (c.light_at != OUT).then(|| c.remaining / c.usage)
        };
        let level = self.levels.next(level_of, at).unwrap_or(f64::INFINITY);
        at.sort_unstable_by_key(|&l| self.cnsts[l as usize].light_at);
        level
    }

    /// Fixes flow `v` at `rate` and takes it out of its links.
    fn fix(&mut self, v: VarId, rate: f64) {
        let vi = v as usize;
        let x = &mut self.vars[vi];
        x.fixed = self.epoch;
        self.out[vi].rate = rate;
        let share = x.share();
        for i in 0..self.vars[vi].links.len() {
            let l = self.vars[vi].links[i];
            let li = l as usize;
            if self.cnsts[li].fatpipe {
                self.cnsts[li].usage = self.fresh_usage(li);
            }
            let c = &mut self.cnsts[li];
            if !c.fatpipe {
                update(&mut c.remaining, rate, c.capacity * PRECISION);
                update(&mut c.usage, share, PRECISION);
            }
            let at = c.light_at;
            if at == OUT {
                continue;
            }
            if c.usage <= PRECISION || c.remaining <= c.capacity * PRECISION {
                c.light_at = OUT;
                self.light.swap_remove(at as usize);
                if let Some(&moved) = self.light.get(at as usize) {
                    self.cnsts[moved as usize].light_at = at;
                }
            } else {
                let level = c.remaining / c.usage;
                self.levels.changed(l, level);
            }
        }
    }
}

/// SimGrid's `double_update`: `x -= by`, and 0 once below `precision`.
fn update(x: &mut f64, by: f64, precision: f64) {
    *x -= by;
    if *x < precision {
        *x = 0.0;
    }
}

#[cfg(test)]
mod tests;
