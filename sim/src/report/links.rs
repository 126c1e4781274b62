//! Where the network hurts, for a replay under a model whose messages
//! share links (`cm02` on a `[network.topology]` or a SimGrid platform):
//! per link, the bytes it carried, the time it was busy, the time the
//! flows it held back lost to sharing it
//! ([`crate::network::load`]), and its utilisation over the run; the
//! busiest links by their names; and what sharing cost the run against
//! the same replay on private links ([`Machine::with_private_links`]).
//!
//! [`Machine::with_private_links`]: crate::machine::Machine::with_private_links

use crate::engine::Outcome;
use crate::network::load::LinkLoad;
use crate::units::Ns;
use serde::Serialize;

/// One link's line.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LinkLine {
    /// Its name (SimGrid's, on the same platform).
    pub name: String,
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

impl LinksReport {
    /// The section for `loads` (indexed by link) over a run of `runtime`
    /// ns, naming the `top` busiest links.
    pub fn new(loads: &[LinkLoad], runtime: Ns, top: usize) -> LinksReport {
        let pct = |v: f64, of: f64| if of > 0.0 { v / of * 100.0 } else { 0.0 };
        let all: Vec<LinkLine> = loads
            .iter()
            .filter(|l| l.bytes > 0.0)
            .map(|l| LinkLine {
                name: l.name.clone(),
                bandwidth: l.bandwidth,
                bytes: l.bytes,
                busy_s: l.busy / 1e9,
                slowed_s: l.slowed / 1e9,
                busy_pct: pct(l.busy, runtime),
                utilisation_pct: pct(l.bytes, l.bandwidth * runtime / 1e9),
            })
            .collect();
        let mut busiest = all.clone();
        busiest.sort_by(|a, b| {
            b.utilisation_pct
                .total_cmp(&a.utilisation_pct)
                .then(b.busy_s.total_cmp(&a.busy_s))
                .then_with(|| a.name.cmp(&b.name))
        });
        busiest.truncate(top);
        LinksReport {
            links: loads.len(),
            used: all.len(),
            busiest,
            all,
            slowdown: None,
        }
    }

    /// Sets the run on private links beside the `shared` one.
    pub fn against_private(&mut self, shared: &Outcome, private: &Outcome) {
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
        });
    }

    /// The busiest links as a bar chart: busy time and utilisation, % of
    /// the run.
    pub fn svg(&self, title: &str) -> anyhow::Result<String> {
        let of = |f: fn(&LinkLine) -> f64| self.busiest.iter().map(f).collect();
        pnmpi_plot::BarChart {
            title: title.to_owned(),
            y_label: "% of the run".into(),
            groups: self.busiest.iter().map(|l| l.name.clone()).collect(),
            bars: vec![
                ("busy".into(), of(|l| l.busy_pct)),
                ("utilisation".into(), of(|l| l.utilisation_pct)),
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
            bandwidth: 1e9,
            bytes,
            busy,
            slowed,
        }
    }

    #[test]
    fn the_busiest_come_first_idle_links_are_left_out_and_figures_are_of_the_run() {
        // A run of 1 ms: 1 GB/s carries 1 MB in it.
        let loads = [
            load("a", 2e5, 2e5, 0.0),
            load("idle", 0.0, 0.0, 0.0),
            load("b", 5e5, 8e5, 1e5),
            load("d", 2e5, 9e5, 0.0),
            load("c", 4e5, 2e5, 0.0),
        ];
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
}
