//! The report as text, for a terminal.

use super::Report;
use crate::summary::{CallName, Share};
use crate::whatif::Prediction;
use std::fmt::{self, Display, Formatter};

/// Rows of the longer tables printed.
const ROWS: usize = 10;

fn ms(s: f64) -> String {
    format!("{:.3} ms", s * 1e3)
}

impl Display for CallName {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "rank {}", self.rank)?;
        if self.thread > 0 {
            write!(f, ".{}", self.thread)?;
        }
        write!(f, " {} (call {}, at {:.6} s", self.routine, self.call, self.at_s)?;
        if let Some(s) = &self.site {
            write!(f, ", {s}")?;
        }
        write!(f, ")")
    }
}

fn shares(f: &mut Formatter<'_>, title: &str, v: &[Share]) -> fmt::Result {
    if v.is_empty() {
        return Ok(());
    }
    writeln!(f, "  {title}:")?;
    for s in v.iter().take(ROWS) {
        writeln!(f, "    {:<44} {:>14} {:>6.1} %", s.name, ms(s.time_s), s.percent)?;
    }
    if v.len() > ROWS {
        writeln!(f, "    ... {} more (--json has them all)", v.len() - ROWS)?;
    }
    Ok(())
}

fn prediction(f: &mut Formatter<'_>, p: &Prediction) -> fmt::Result {
    writeln!(
        f,
        "  {:<28} predicted {:.6} s, gain {} ({:+.2} %)",
        p.change,
        p.runtime_s,
        ms(p.gain_s),
        p.gain_percent
    )?;
    for w in p.waits.iter().take(4) {
        writeln!(
            f,
            "      {:<16} {:<16} wait {} -> {}",
            w.routine,
            w.pattern,
            ms(w.before_s),
            ms(w.after_s)
        )?;
    }
    Ok(())
}

impl Display for Report {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}: {} ranks, {} calls, runtime {:.6} s (end of MPI_Init to the last MPI_Finalize)",
            self.trace, self.ranks, self.calls, self.runtime_s
        )?;
        let w = &self.waits;
        writeln!(
            f,
            "\nwait states: {} in all, {:.2} % of the run's rank-time (runtime x ranks)",
            ms(w.total_s),
            w.percent
        )?;
        for p in w.by_pattern.iter().filter(|p| p.calls > 0) {
            writeln!(
                f,
                "  {:<16} {:>14} {:>6.2} %  in {} calls",
                p.pattern,
                ms(p.time_s),
                p.percent,
                p.calls
            )?;
        }
        if !w.by_routine.is_empty() {
            writeln!(f, "  by routine:")?;
            for r in w.by_routine.iter().take(ROWS) {
                writeln!(
                    f,
                    "    {:<20} {:<16} {:>14} in {} calls",
                    r.name,
                    r.pattern,
                    ms(r.time_s),
                    r.calls
                )?;
            }
        }
        let mut ranks: Vec<_> = w.by_rank.iter().filter(|r| r.total_s > 0.0).collect();
        ranks.sort_by(|a, b| b.total_s.total_cmp(&a.total_s));
        if !ranks.is_empty() {
            writeln!(f, "  by rank (most first):")?;
            for r in ranks.iter().take(ROWS) {
                writeln!(f, "    rank {:<6} {:>14}", r.rank, ms(r.total_s))?;
            }
        }
        if w.sites_recorded {
            writeln!(f, "  by call site:")?;
            for s in w.by_site.iter().take(ROWS) {
                writeln!(f, "    {:<20} {:<16} {:>14}", s.name, s.pattern, ms(s.time_s))?;
            }
        } else {
            writeln!(f, "  by call site: the trace records no call sites")?;
        }
        if !w.worst.is_empty() {
            writeln!(f, "  longest waits, and what each waited for:")?;
            for x in &w.worst {
                writeln!(f, "    {} {} in {}", ms(x.wait_s), x.pattern, x.call)?;
                writeln!(f, "        waiting for {}", x.cause)?;
            }
        }
        let p = &self.path;
        writeln!(
            f,
            "\ncritical path: {:.6} s, from rank {} at {:.6} s to rank {} at {:.6} s, {} changes of rank",
            p.length_s, p.from.0, p.from.1, p.to.0, p.to.1, p.hops
        )?;
        let pct = |x: f64| 100.0 * x / p.length_s.max(1e-12);
        writeln!(
            f,
            "  compute {} ({:.1} %), MPI {} ({:.1} %)",
            ms(p.compute_s),
            pct(p.compute_s),
            ms(p.mpi_s),
            pct(p.mpi_s)
        )?;
        let mut on: Vec<_> = p.by_rank.iter().collect();
        on.sort_by(|a, b| (b.compute_s + b.mpi_s).total_cmp(&(a.compute_s + a.mpi_s)));
        writeln!(f, "  ranks on it (most first):")?;
        for r in on.iter().take(ROWS) {
            writeln!(
                f,
                "    rank {:<6} compute {:>14}  MPI {:>14}",
                r.rank,
                ms(r.compute_s),
                ms(r.mpi_s)
            )?;
        }
        shares(f, "compute per region (between the calls named)", &p.by_region)?;
        shares(f, "MPI per routine", &p.by_routine)?;
        shares(f, "compute per call site", &p.by_site)?;
        let i = &p.imbalance;
        writeln!(
            f,
            "  imbalance: compute per rank max {} (rank {}), mean {}, min {}: {:.1} % of the slowest rank's compute idles elsewhere; the path computes {} more than the mean rank",
            ms(i.max_compute_s),
            i.max_rank,
            ms(i.mean_compute_s),
            ms(i.min_compute_s),
            i.percent,
            ms(i.path_excess_s)
        )?;
        if let Some(r) = &self.replays {
            writeln!(
                f,
                "\nwhat-if (replayed on {}, model {}; the run as recorded replays in {:.6} s):",
                r.machine, r.model, r.baseline_s
            )?;
            for p in &r.what_if {
                prediction(f, p)?;
            }
            if !r.opportunities.is_empty() {
                writeln!(f, "  opportunities, largest gain first:")?;
                for p in &r.opportunities {
                    prediction(f, p)?;
                }
            }
        }
        for w in &self.warnings {
            writeln!(f, "warning: {w}")?;
        }
        Ok(())
    }
}
