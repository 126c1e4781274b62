//! Where the network hurts, for a replay under a model whose messages
//! share links (`cm02` on a `[network.topology]` or a SimGrid platform):
//! per link, the bytes it carried, the time it was busy, the time the
//! flows it held back lost to sharing it
//! ([`crate::network::load`]), and its utilisation over the run; the
//! busiest links by their names, over the network and in each of its
//! tiers (a fat tree's levels, a dragonfly's local, green, black and blue
//! links, a torus's dimensions: [`crate::network::Graph::level`]); and
//! what sharing cost the run against the same replay on private links
//! ([`Machine::with_private_links`]), per rank and per call site.
//!
//! [`Machine::with_private_links`]: crate::machine::Machine::with_private_links

use super::sites::SiteSlowdown;
use crate::engine::Outcome;
use crate::network::load::LinkLoad;
use crate::units::Ns;
use serde::Serialize;

/// One link's line.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LinkLine {
    /// Its name (SimGrid's, on the same platform).
    pub name: String,
    /// Its tier.
    pub level: String,
    /// Bandwidth, bytes/s.
    pub bandwidth: f64,
    /// Bytes that crossed it (messages and their envelopes).
    pub bytes: f64,
    /// Time some flow moved bytes over it, s.
    pub busy_s: f64,
    /// Time the flows whose rate it set lost to sharing it, s.
    pub slowed_s: f64,
    /// `busy_s` over the runtime, %.
    pub busy_pct: f64,
    /// Bytes over what its bandwidth could carry in the runtime, %.
    pub utilisation_pct: f64,
}

/// One tier of the network, its links together.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LevelLine {
    /// The tier ([`crate::network::Graph::level`]).
    pub level: String,
    /// Its links.
    pub links: usize,
    /// Of which carried a byte.
    pub used: usize,
    /// Bytes over its links (a message crossing two of them counts twice).
    pub bytes: f64,
    /// Time the flows whose rate its links set lost to sharing them, s.
    pub slowed_s: f64,
    /// Utilisation averaged over its links, idle ones included, %.
    pub mean_utilisation_pct: f64,
    /// Its busiest link's utilisation, %.
    pub max_utilisation_pct: f64,
    /// Busy time averaged over its links, % of the run.
    pub mean_busy_pct: f64,
    /// Its busiest links, as [`LinksReport::busiest`] orders them.
    pub busiest: Vec<LinkLine>,
}

/// One rank's end, shared and private.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RankSlowdown {
    /// World rank.
    pub rank: u32,
    /// Thread index.
    pub thread: u32,
    /// Its end on the shared links, s.
    pub shared_end_s: f64,
    /// On private links, s.
    pub private_end_s: f64,
    /// `shared_end_s / private_end_s` (1 for an end at 0).
    pub ratio: f64,
}

/// What sharing the links cost: the same replay on private links.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Slowdown {
    /// The replay's runtime on the shared links, s.
    pub shared_runtime_s: f64,
    /// On private links, s.
    pub private_runtime_s: f64,
    /// `shared_runtime_s / private_runtime_s`.
    pub ratio: f64,
    /// Per rank.
    pub ranks: Vec<RankSlowdown>,
    /// The call sites whose calls lost the most time to sharing, summed
    /// over the ranks.
    pub sites: Vec<SiteSlowdown>,
}

/// The links' section of a report.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LinksReport {
    /// Links of the network.
    pub links: usize,
    /// Of which carried a byte.
    pub used: usize,
    /// The busiest links, by utilisation (what they carried against what
    /// their bandwidth could carry in the run: on links of one bandwidth,
    /// bytes) then busy time, at most the number asked for.
    pub busiest: Vec<LinkLine>,
    /// Every link that carried a byte, in the network's order.
    pub all: Vec<LinkLine>,
    /// The network's tiers, in the order of their first link.
    pub levels: Vec<LevelLine>,
    /// Against private links, when that replay ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowdown: Option<Slowdown>,
}

/// `a / b`, 1 when `b` is 0 (nothing to slow).
fn ratio(a: Ns, b: Ns) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        1.0
    }
}

/// `v` of `of`, in %.
fn pct(v: f64, of: f64) -> f64 {
    if of > 0.0 {
        v / of * 100.0
    } else {
        0.0
    }
}

impl LinkLine {
    /// The line of `l` over a run of `runtime` ns.
    fn new(l: &LinkLoad, runtime: Ns) -> LinkLine {
        LinkLine {
            name: l.name.clone(),
            level: l.level.clone(),
            bandwidth: l.bandwidth,
            bytes: l.bytes,
            busy_s: l.busy / 1e9,
            slowed_s: l.slowed / 1e9,
            busy_pct: pct(l.busy, runtime),
            utilisation_pct: pct(l.bytes, l.bandwidth * runtime / 1e9),
        }
    }
}

/// The `top` busiest of `lines` that carried a byte: by utilisation
/// (what they carried against what their bandwidth could carry in the
/// run; on links of one bandwidth, bytes), then busy time, then name.
fn busiest<'a>(lines: impl Iterator<Item = &'a LinkLine>, top: usize) -> Vec<LinkLine> {
    let mut b: Vec<LinkLine> = lines.filter(|l| l.bytes > 0.0).cloned().collect();
    b.sort_by(|a, b| {
        b.utilisation_pct
            .total_cmp(&a.utilisation_pct)
            .then(b.busy_s.total_cmp(&a.busy_s))
            .then_with(|| a.name.cmp(&b.name))
    });
    b.truncate(top);
    b
}

impl LevelLine {
    /// The tier `level` of links `of`, its `top` busiest named.
    fn new(level: String, of: &[&LinkLine], top: usize) -> LevelLine {
        let n = of.len().max(1) as f64;
        LevelLine {
            level,
            links: of.len(),
            used: of.iter().filter(|l| l.bytes > 0.0).count(),
            bytes: of.iter().map(|l| l.bytes).sum(),
            slowed_s: of.iter().map(|l| l.slowed_s).sum(),
            mean_utilisation_pct: of.iter().map(|l| l.utilisation_pct).sum::<f64>() / n,
            max_utilisation_pct: of.iter().map(|l| l.utilisation_pct).fold(0.0, f64::max),
            mean_busy_pct: of.iter().map(|l| l.busy_pct).sum::<f64>() / n,
            busiest: busiest(of.iter().copied(), top),
        }
    }
}

impl LinksReport {
    /// The section for `loads` (indexed by link) over a run of `runtime`
    /// ns, naming the `top` busiest links.
    pub fn new(loads: &[LinkLoad], runtime: Ns, top: usize) -> LinksReport {
        let lines: Vec<LinkLine> = loads.iter().map(|l| LinkLine::new(l, runtime)).collect();
        let mut tiers: Vec<(String, Vec<&LinkLine>)> = Vec::new();
        for l in &lines {
            match tiers.iter_mut().find(|(name, _)| *name == l.level) {
                Some((_, of)) => of.push(l),
                None => tiers.push((l.level.clone(), vec![l])),
            }
        }
        let levels = tiers
            .into_iter()
            .map(|(level, of)| LevelLine::new(level, &of, top))
            .collect();
        let all: Vec<LinkLine> = lines.into_iter().filter(|l| l.bytes > 0.0).collect();
        LinksReport {
            links: loads.len(),
            used: all.len(),
            busiest: busiest(all.iter(), top),
            levels,
            all,
            slowdown: None,
        }
    }

    /// Sets the run on private links beside the `shared` one, with the
    /// call sites that lost the most to sharing ([`super::sites::slowdown`]).
    pub fn against_private(&mut self, shared: &Outcome, private: &Outcome, sites: Vec<SiteSlowdown>) {
        let ranks = shared
            .stats
            .actors
            .iter()
            .zip(&private.stats.actors)
            .map(|(s, p)| RankSlowdown {
                rank: s.rank,
                thread: s.thread,
                shared_end_s: s.end / 1e9,
                private_end_s: p.end / 1e9,
                ratio: ratio(s.end, p.end),
            })
            .collect();
        self.slowdown = Some(Slowdown {
            shared_runtime_s: shared.runtime / 1e9,
            private_runtime_s: private.runtime / 1e9,
            ratio: ratio(shared.runtime, private.runtime),
            ranks,
            sites,
        });
    }

    /// Link load by tier as a bar chart: per tier, its links' mean and
    /// its busiest link's utilisation, and their mean busy time, % of the
    /// run.
    pub fn svg(&self, title: &str) -> anyhow::Result<String> {
        let of = |f: fn(&LevelLine) -> f64| self.levels.iter().map(f).collect();
        pnmpi_plot::BarChart {
            title: title.to_owned(),
            y_label: "% of the run".into(),
            groups: self
                .levels
                .iter()
                .map(|l| format!("{} ({} links)", l.level, l.links))
                .collect(),
            bars: vec![
                ("mean utilisation".into(), of(|l| l.mean_utilisation_pct)),
                ("busiest link's utilisation".into(), of(|l| l.max_utilisation_pct)),
                ("mean busy".into(), of(|l| l.mean_busy_pct)),
            ],
            references: Vec::new(),
        }
        .svg()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(name: &str, bytes: f64, busy: Ns, slowed: Ns) -> LinkLoad {
        LinkLoad {
            name: name.into(),
            level: if name < "c" { "up" } else { "down" }.into(),
            bandwidth: 1e9,
            bytes,
            busy,
            slowed,
        }
    }

    /// Five links over a run of 1 ms (1 GB/s carries 1 MB in it), one
    /// idle.
    fn five() -> [LinkLoad; 5] {
        [
            load("a", 2e5, 2e5, 0.0),
            load("idle", 0.0, 0.0, 0.0),
            load("b", 5e5, 8e5, 1e5),
            load("d", 2e5, 9e5, 0.0),
            load("c", 4e5, 2e5, 0.0),
        ]
    }

    #[test]
    fn the_busiest_come_first_idle_links_are_left_out_and_figures_are_of_the_run() {
        let loads = five();
        let r = LinksReport::new(&loads, 1e6, 2);
        assert_eq!((r.links, r.used), (5, 4));
        let names: Vec<&str> = r.busiest.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["b", "c"], "utilisation first");
        let r = LinksReport::new(&loads, 1e6, 4);
        let names: Vec<&str> = r.busiest.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["b", "c", "d", "a"], "then busy time");
        let b = &r.busiest[0];
        assert_eq!((b.busy_pct, b.utilisation_pct), (80.0, 50.0));
        assert_eq!((b.busy_s, b.slowed_s), (8e-4, 1e-4));
        let all: Vec<&str> = r.all.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(all, ["a", "b", "d", "c"], "the network's order");
    }

    #[test]
    fn each_tier_sums_its_links_idle_ones_included_and_names_its_busiest() {
        // "a" and "b" are up; "idle", "d" and "c" down.
        let loads = five();
        let r = LinksReport::new(&loads, 1e6, 1);
        let names: Vec<&str> = r.levels.iter().map(|l| l.level.as_str()).collect();
        assert_eq!(names, ["up", "down"], "in the order of their first link");
        let (up, down) = (&r.levels[0], &r.levels[1]);
        assert_eq!((up.links, up.used, down.links, down.used), (2, 2, 3, 2));
        assert_eq!((up.bytes, up.slowed_s), (7e5, 1e-4));
        assert_eq!((up.mean_utilisation_pct, up.max_utilisation_pct), (35.0, 50.0));
        assert!(
            (down.mean_utilisation_pct - 20.0).abs() < 1e-9,
            "idle counts: 60 % over 3 links"
        );
        assert!((down.mean_busy_pct - 110.0 / 3.0).abs() < 1e-9);
        assert_eq!(
            up.busiest.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(),
            ["b"]
        );
        assert_eq!(
            down.busiest.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(),
            ["c"]
        );
        assert!(r.svg("t").unwrap().contains("down (3 links)"));
    }
}
