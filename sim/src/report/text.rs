//! The report as text: what `pnmpi sim replay` prints.

use super::{Bucket, Report};
use std::fmt;

/// Ranks listed one by one; more are summarised (min, mean, max).
const RANK_LINES: usize = 64;

fn size(b: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.0} {}", UNITS[u])
}

fn rate(b: f64) -> String {
    format!("{}/s", size(b))
}

fn secs(v: f64) -> String {
    if v >= 1.0 {
        format!("{v:.4} s")
    } else if v >= 1e-3 {
        format!("{:.4} ms", v * 1e3)
    } else {
        format!("{:.3} us", v * 1e6)
    }
}

fn pct(e: Option<f64>) -> String {
    e.map_or("-".into(), |e| format!("{e:+.2} %"))
}

fn histogram(f: &mut fmt::Formatter, title: &str, b: &[Bucket], label: fn(f64) -> String) -> fmt::Result {
    if b.is_empty() {
        return Ok(());
    }
    writeln!(f, "\n{title}")?;
    let max = b.iter().map(|x| x.count).max().unwrap_or(1).max(1);
    for x in b {
        let bar = "#".repeat(((x.count * 40).div_ceil(max)) as usize);
        writeln!(f, "  from {:>12}  {:>10}  {bar}", label(x.from), x.count)?;
    }
    Ok(())
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        writeln!(
            f,
            "pnmpi sim: {} on {}, model {}",
            self.trace, self.machine, self.model
        )?;
        write!(f, "predicted runtime: {}", secs(self.runtime_s))?;
        let word = self.comparison.map_or("error", |c| c.word());
        if let Some(m) = self.measured_runtime_s {
            write!(f, "   traced: {}   {word}: {}", secs(m), pct(self.error_pct))?;
        }
        writeln!(f, "\n(from the end of MPI_Init to the start of MPI_Finalize)")?;
        if self.comparison == Some(super::Comparison::Difference) {
            writeln!(
                f,
                "(the machine file does not say it describes the traced machine, so the % beside the\n \
                 traced figures are differences between two machines, not the simulator's error;\n \
                 `traced_on = \"...\"` under [machine] says a file describes it, as `pnmpi sim calibrate` writes)"
            )?;
        }
        let compare = self.ranks.iter().any(|r| r.measured.is_some());
        let short = if word == "error" { "   error" } else { "    diff." };
        writeln!(
            f,
            "\nper rank      node      compute         comm         wait          end{}",
            if compare {
                format!("   traced span{short}")
            } else {
                String::new()
            }
        )?;
        let line = |f: &mut fmt::Formatter, r: &super::RankReport| -> fmt::Result {
            let who = if r.thread > 0 {
                format!("{}.{}", r.rank, r.thread)
            } else {
                r.rank.to_string()
            };
            write!(
                f,
                "{who:>8} {:>9} {:>12} {:>12} {:>12} {:>12}",
                r.node,
                secs(r.compute_s),
                secs(r.comm_s),
                secs(r.wait_s),
                secs(r.end_s)
            )?;
            if let Some(m) = &r.measured {
                write!(f, " {:>14} {:>8}", secs(m.span_s), pct(m.error_pct))?;
            }
            writeln!(f)
        };
        for r in self.ranks.iter().take(RANK_LINES) {
            line(f, r)?;
        }
        if self.ranks.len() > RANK_LINES {
            let n = self.ranks.len() as f64;
            let stat = |g: fn(&super::RankReport) -> f64| {
                let v: Vec<f64> = self.ranks.iter().map(g).collect();
                let min = v.iter().copied().fold(f64::INFINITY, f64::min);
                let max = v.iter().copied().fold(0.0, f64::max);
                (min, v.iter().sum::<f64>() / n, max)
            };
            writeln!(
                f,
                "  ... {} more ranks; over all ranks (min / mean / max):",
                self.ranks.len() - RANK_LINES
            )?;
            for (name, g) in [
                (
                    "compute",
                    (|r: &super::RankReport| r.compute_s) as fn(&super::RankReport) -> f64,
                ),
                ("comm", |r| r.comm_s),
                ("wait", |r| r.wait_s),
            ] {
                let (a, b, c) = stat(g);
                writeln!(f, "  {name:>8}  {} / {} / {}", secs(a), secs(b), secs(c))?;
            }
        }
        writeln!(
            f,
            "\nper routine                  count         time         wait{}",
            if compare {
                format!("       traced{short}")
            } else {
                String::new()
            }
        )?;
        for r in &self.routines {
            write!(
                f,
                "{:<24} {:>10} {:>12} {:>12}",
                r.name,
                r.count,
                secs(r.time_s),
                secs(r.wait_s)
            )?;
            if let Some(m) = r.measured_s {
                write!(f, " {:>12} {:>8}", secs(m), pct(r.error_pct))?;
            }
            writeln!(f)?;
        }
        histogram(f, "message sizes", &self.message_sizes, size)?;
        histogram(f, "achieved bandwidth", &self.bandwidths, rate)?;
        writeln!(
            f,
            "\n{} messages, {} waiting for network resources; peak {} unmatched",
            self.messages,
            secs(self.resource_wait_s),
            self.peak_in_flight
        )?;
        write!(
            f,
            "replayed {} events in {} ({:.2} M events/s",
            self.events,
            secs(self.sim_wall_s),
            self.events_per_s / 1e6
        )?;
        if self.processes > 1 {
            write!(f, " on {} processes", self.processes)?;
        }
        if self.peak_memory_bytes > 0 {
            let per = if self.processes > 1 { " per process" } else { "" };
            write!(f, "; peak memory {}{per}", size(self.peak_memory_bytes as f64))?;
        }
        writeln!(f, ")")?;
        if let Some(p) = &self.protocol {
            writeln!(
                f,
                "parallel protocol (process 0): {} windows, {} exchanges, {} records out ({} bytes), {} in exchanges; set-up {}, events {} (processes {} to {}), gathering {}",
                p.windows,
                p.exchanges,
                p.records,
                p.bytes,
                secs(p.exchange_s),
                secs(p.setup_s),
                secs(p.replay_s),
                secs(p.replay_min_s),
                secs(p.replay_max_s),
                secs(p.finish_s)
            )?;
        }
        if let Some(l) = &self.links {
            write!(f, "{l}")?;
        }
        for w in &self.warnings {
            writeln!(f, "warning: {w}")?;
        }
        Ok(())
    }
}

/// Ranks the links section names, the most slowed first.
const SLOWED_RANKS: usize = 5;

impl fmt::Display for super::links::LinksReport {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        writeln!(
            f,
            "\nbusiest links ({} of {} that carried bytes, {} in the network; by utilisation)",
            self.busiest.len(),
            self.used,
            self.links
        )?;
        let w = super::column_width(self.busiest.iter().map(|l| l.name.as_str()), 4);
        writeln!(
            f,
            "  {:<w$} {:>10} {:>12} {:>7} {:>7} {:>12}",
            "link", "bytes", "busy", "busy %", "util %", "slowed"
        )?;
        for l in &self.busiest {
            writeln!(
                f,
                "  {:<w$} {:>10} {:>12} {:>7.1} {:>7.1} {:>12}",
                l.name,
                size(l.bytes),
                secs(l.busy_s),
                l.busy_pct,
                l.utilisation_pct,
                secs(l.slowed_s)
            )?;
        }
        writeln!(
            f,
            "  (slowed: the time the flows whose rate the link set lost to sharing it)"
        )?;
        writeln!(f, "links by level")?;
        let lw = super::column_width(self.levels.iter().map(|l| l.level.as_str()), 5);
        writeln!(
            f,
            "  {:<lw$} {:>13} {:>10} {:>7} {:>7} {:>7} {:>12}  busiest",
            "level", "used / links", "bytes", "util %", "max %", "busy %", "slowed"
        )?;
        for l in &self.levels {
            writeln!(
                f,
                "  {:<lw$} {:>13} {:>10} {:>7.1} {:>7.1} {:>7.1} {:>12}  {}",
                l.level,
                format!("{} / {}", l.used, l.links),
                size(l.bytes),
                l.mean_utilisation_pct,
                l.max_utilisation_pct,
                l.mean_busy_pct,
                secs(l.slowed_s),
                l.busiest.first().map_or("-", |b| b.name.as_str())
            )?;
        }
        writeln!(
            f,
            "  (util % and busy % averaged over the level's links, idle ones included; max %: its busiest link's)"
        )?;
        if let Some(s) = &self.slowdown {
            writeln!(
                f,
                "sharing against private links: runtime {} against {}: x{:.4}",
                secs(s.shared_runtime_s),
                secs(s.private_runtime_s),
                s.ratio
            )?;
            let mut ranks: Vec<&super::links::RankSlowdown> = s.ranks.iter().collect();
            ranks.sort_by(|a, b| b.ratio.total_cmp(&a.ratio).then(a.rank.cmp(&b.rank)));
            for r in ranks.iter().take(SLOWED_RANKS) {
                writeln!(
                    f,
                    "  rank {:>6}: ends at {} against {}: x{:.4}",
                    r.rank,
                    secs(r.shared_end_s),
                    secs(r.private_end_s),
                    r.ratio
                )?;
            }
            if !s.sites.is_empty() {
                writeln!(f, "call sites that sharing slowed (MPI time over every rank)")?;
            }
            for c in &s.sites {
                writeln!(
                    f,
                    "  {} {}: {} calls, {} against {}: +{}",
                    c.site,
                    c.routine,
                    c.calls,
                    secs(c.shared_s),
                    secs(c.private_s),
                    secs(c.extra_s)
                )?;
            }
        }
        Ok(())
    }
}
