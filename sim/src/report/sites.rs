//! Time in MPI per call site and routine, summed over the ranks, for
//! what sharing the links cost each place in the program: the links
//! report replays the trace twice, on the shared links and on private
//! ones, with a [`SiteTimes`] each, and [`slowdown`] names the sites
//! whose calls took longer on the shared links.

use crate::engine::{CallSpan, Observer};
use crate::input::NO_SITE;
use crate::units::Ns;
use rustc_hash::FxHashMap;
use serde::Serialize;

/// Calls and their time per (site, routine) over a replay.
#[derive(Default)]
pub struct SiteTimes {
    per: FxHashMap<(u32, u32), (u64, Ns)>,
}

impl Observer for SiteTimes {
    fn call(&mut self, _: usize, c: &CallSpan) {
        let e = self.per.entry((c.site, c.routine)).or_default();
        e.0 += 1;
        e.1 += c.end - c.start;
    }

    fn message(&mut self, _: usize, _: usize, _: Ns, _: Ns, _: u64, _: Ns) {}
}

/// One call site's time in MPI, shared and private.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SiteSlowdown {
    /// The site as the trace names it (file:line and function), or
    /// `(no site)` for a trace that records none.
    pub site: String,
    /// The routine called there.
    pub routine: String,
    /// Its calls, over every rank.
    pub calls: u64,
    /// Their time on the shared links, s.
    pub shared_s: f64,
    /// On private links, s.
    pub private_s: f64,
    /// `shared_s - private_s`: what sharing cost there.
    pub extra_s: f64,
}

/// The `top` sites whose calls lost the most time to sharing, the most
/// first (sites of no loss left out): `shared` and `private` observed the
/// two replays, `sites` and `routines` name their indices.
pub fn slowdown(
    shared: &SiteTimes,
    private: &SiteTimes,
    sites: &[String],
    routines: &[String],
    top: usize,
) -> Vec<SiteSlowdown> {
    let name = |i: u32, of: &[String], none: &str| {
        of.get(i as usize).cloned().unwrap_or_else(|| {
            if i == NO_SITE {
                none.into()
            } else {
                format!("#{i}")
            }
        })
    };
    let mut out: Vec<SiteSlowdown> = shared
        .per
        .iter()
        .map(|(&(site, routine), &(calls, t))| {
            let alone = private.per.get(&(site, routine)).map_or(0.0, |p| p.1);
            SiteSlowdown {
                site: name(site, sites, "(no site)"),
                routine: name(routine, routines, "?"),
                calls,
                shared_s: t / 1e9,
                private_s: alone / 1e9,
                extra_s: (t - alone) / 1e9,
            }
        })
        .filter(|s| s.extra_s > 0.0)
        .collect();
    out.sort_by(|a, b| {
        b.extra_s
            .total_cmp(&a.extra_s)
            .then_with(|| a.site.cmp(&b.site))
            .then_with(|| a.routine.cmp(&b.routine))
    });
    out.truncate(top);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(routine: u32, site: u32, start: Ns, end: Ns) -> CallSpan {
        CallSpan {
            routine,
            site,
            start,
            end,
            wait: 0.0,
        }
    }

    #[test]
    fn the_sites_that_lost_most_come_first_and_sites_that_lost_nothing_are_left_out() {
        let (mut shared, mut private) = (SiteTimes::default(), SiteTimes::default());
        // Site 0 (MPI_Wait): 2 calls, 30 ns against 10; site 1 (MPI_Send):
        // 5 against 5; no site (MPI_Barrier): 100 against 40.
        for o in [&mut shared, &mut private] {
            o.call(0, &span(1, 1, 0.0, 5.0));
        }
        shared.call(0, &span(0, 0, 0.0, 10.0));
        shared.call(1, &span(0, 0, 10.0, 30.0));
        private.call(0, &span(0, 0, 0.0, 5.0));
        private.call(1, &span(0, 0, 10.0, 15.0));
        shared.call(0, &span(2, NO_SITE, 0.0, 100.0));
        private.call(0, &span(2, NO_SITE, 0.0, 40.0));
        let sites = ["a.c:1 (main)".to_string(), "a.c:2 (main)".into()];
        let routines = ["MPI_Wait".to_string(), "MPI_Send".into(), "MPI_Barrier".into()];
        let s = slowdown(&shared, &private, &sites, &routines, 5);
        let got: Vec<(&str, &str, u64)> = s
            .iter()
            .map(|s| (s.site.as_str(), s.routine.as_str(), s.calls))
            .collect();
        assert_eq!(
            got,
            [("(no site)", "MPI_Barrier", 1), ("a.c:1 (main)", "MPI_Wait", 2)]
        );
        assert_eq!((s[1].shared_s, s[1].private_s), (30e-9, 10e-9));
        assert!((s[0].extra_s - 60e-9).abs() < 1e-18);
        assert_eq!(slowdown(&shared, &private, &sites, &routines, 1).len(), 1);
    }
}
