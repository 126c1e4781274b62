//! Calibration (PSINSBench's role): turns the raw measurements of
//! `pnmpi-calibrate` (sim/calibrate/calibrate.c, run on every rank by
//! `pnmpi sim calibrate`) into a machine file for `pnmpi sim replay`.
//!
//! What is fitted, and how:
//! - point-to-point, per level (intra, inter node): `latency` is the
//!   one-way time of a 1-byte message; `bandwidth` is a step table with,
//!   at each measured size `s`, `s / (t(s) - latency)`, so that
//!   `latency + s / bandwidth(s)` gives back every measured time;
//! - the eager threshold: the largest size whose send returned before a
//!   receive posted late;
//! - LogGP: `o` the time in `MPI_Send` of one byte, `g` the interval of
//!   back-to-back sends, `L` the 1-byte one-way time minus `2o`, `G` the
//!   time per byte that fits all sizes best (of the slopes
//!   `(t(s) - t(1)) / (s - 1)`, the one with the least squared relative
//!   error over every measured size: LogGP is linear in the size, real
//!   networks are not);
//! - PMaC's collective curves, per routine: at each task count `P`,
//!   `alpha_P` the time at the smallest size and `beta_P` the least-squares
//!   slope over the sizes with that intercept; then `alpha(P)` and
//!   `beta(P)` as lines in `log2 P` (flat when only one `P` was measured).
//!   Every fitted value is clamped at 0.

use std::fmt::Write as _;
use std::path::Path;

/// Where a point-to-point measurement was taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Both ranks on one node.
    Intra,
    /// Ranks on different nodes.
    Inter,
}

/// The raw measurements, as `pnmpi-calibrate` writes them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Raw {
    /// Ranks that took part.
    pub ranks: u32,
    /// Distinct processor names.
    pub hosts: u32,
    /// The MPI library's version line.
    pub mpi: String,
    /// Processor name per rank.
    pub host_of: Vec<String>,
    /// (level, bytes, one-way seconds).
    pub p2p: Vec<(Level, u64, f64)>,
    /// Largest eager size, bytes (0: none measured).
    pub eager: u64,
    /// Seconds in `MPI_Send` of one byte.
    pub send_overhead: f64,
    /// Seconds between back-to-back sends.
    pub gap: f64,
    /// (routine, tasks, bytes, seconds).
    pub colls: Vec<(String, u32, u64, f64)>,
}

fn field<T: std::str::FromStr>(v: Option<&str>, what: &str) -> Result<T, String> {
    let v = v.ok_or_else(|| format!("missing {what}"))?;
    v.parse().map_err(|_| format!("bad {what} `{v}`"))
}

impl Raw {
    /// Parses the raw file's text; errors say `file:line: what`.
    pub fn parse(text: &str, file: &Path) -> Result<Raw, String> {
        let mut raw = Raw::default();
        for (i, line) in text.lines().enumerate() {
            let at = |e: String| format!("{}:{}: {e}", file.display(), i + 1);
            let mut w = line.split_whitespace();
            let Some(key) = w.next() else { continue };
            match key {
                "ranks" => raw.ranks = field(w.next(), "rank count").map_err(at)?,
                "hosts" => raw.hosts = field(w.next(), "host count").map_err(at)?,
                "mpi" => raw.mpi = line[3..].trim().to_string(),
                "host" => {
                    let _: u32 = field(w.next(), "rank").map_err(at)?;
                    raw.host_of.push(field(w.next(), "host name").map_err(at)?);
                }
                "p2p" => {
                    let level = match w.next() {
                        Some("intra") => Level::Intra,
                        Some("inter") => Level::Inter,
                        other => return Err(at(format!("bad level {other:?}"))),
                    };
                    let bytes = field(w.next(), "size").map_err(at)?;
                    let t = field(w.next(), "time").map_err(at)?;
                    raw.p2p.push((level, bytes, t));
                }
                "eager" => raw.eager = field(w.next(), "size").map_err(at)?,
                "send_overhead" => raw.send_overhead = field(w.next(), "time").map_err(at)?,
                "gap" => raw.gap = field(w.next(), "time").map_err(at)?,
                "coll" => {
                    let name: String = field(w.next(), "routine").map_err(at)?;
                    let p = field(w.next(), "task count").map_err(at)?;
                    let bytes = field(w.next(), "size").map_err(at)?;
                    let t = field(w.next(), "time").map_err(at)?;
                    raw.colls.push((name, p, bytes, t));
                }
                _ => return Err(at(format!("unknown record `{key}`"))),
            }
        }
        if raw.ranks < 2 || raw.p2p.is_empty() {
            return Err(format!(
                "{}: incomplete calibration (no point-to-point figures); run it again",
                file.display()
            ));
        }
        Ok(raw)
    }

    /// The points of one level, by size.
    fn level(&self, level: Level) -> Vec<(u64, f64)> {
        let mut v: Vec<(u64, f64)> = self
            .p2p
            .iter()
            .filter(|p| p.0 == level)
            .map(|p| (p.1, p.2))
            .collect();
        v.sort_by_key(|p| p.0);
        v
    }
}

/// A fitted level: latency (s) and bandwidth steps (from bytes, B/s).
#[derive(Clone, Debug, PartialEq)]
pub struct LevelFit {
    /// One-way time of the smallest message, s.
    pub latency: f64,
    /// (from size, bytes/s), by size; the first from 0.
    pub bandwidth: Vec<(u64, f64)>,
}

/// Bandwidths above this (B/s) mean "time within the latency".
const MAX_BANDWIDTH: f64 = 1e12;

/// Fits latency and a bandwidth step table to (bytes, one-way s) points.
pub fn fit_level(points: &[(u64, f64)]) -> Option<LevelFit> {
    let &(_, latency) = points.first()?;
    let mut steps: Vec<(u64, f64)> = points
        .iter()
        .skip(1)
        .map(|&(b, t)| {
            let bw = if t > latency {
                (b as f64 / (t - latency)).min(MAX_BANDWIDTH)
            } else {
                MAX_BANDWIDTH
            };
            (b, bw)
        })
        .collect();
    let first = steps.first().map_or(MAX_BANDWIDTH, |s| s.1);
    steps.insert(0, (0, first));
    Some(LevelFit {
        latency,
        bandwidth: steps,
    })
}

/// LogGP's G for (bytes, one-way s) points: of the slopes from the
/// smallest message to each other one, the one with the least squared
/// relative error over all points.
pub fn fit_g(points: &[(u64, f64)]) -> f64 {
    let Some(&(b0, t0)) = points.first() else {
        return 0.0;
    };
    let err = |g: f64| -> f64 {
        points
            .iter()
            .map(|&(b, t)| ((t0 + (b - b0) as f64 * g - t) / t).powi(2))
            .sum()
    };
    points
        .iter()
        .skip(1)
        .map(|&(b, t)| ((t - t0) / (b - b0) as f64).max(0.0))
        .min_by(|x, y| err(*x).total_cmp(&err(*y)))
        .unwrap_or(0.0)
}

/// PMaC's fitted curve for one collective, seconds and seconds per byte.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CollFit {
    /// Zero-byte time at log2 P = 0.
    pub alpha: f64,
    /// Its growth per doubling of P.
    pub alpha_log: f64,
    /// Time per byte at log2 P = 0.
    pub beta: f64,
    /// Its growth per doubling of P.
    pub beta_log: f64,
}

/// A least-squares line `a + b x`, clamped so that both are >= 0
/// (a single x gives a flat line).
fn line(points: &[(f64, f64)]) -> (f64, f64) {
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let b = if sxx > 0.0 { (sxy / sxx).max(0.0) } else { 0.0 };
    let a = (my - b * mx).max(0.0);
    (a, b)
}

/// Fits one routine's (tasks, bytes, seconds) points.
pub fn fit_collective(points: &[(u32, u64, f64)]) -> Option<CollFit> {
    let mut ps: Vec<u32> = points.iter().map(|p| p.0).collect();
    ps.sort_unstable();
    ps.dedup();
    let mut alphas = Vec::new();
    let mut betas = Vec::new();
    for &p in &ps {
        let mut at: Vec<(u64, f64)> = points.iter().filter(|q| q.0 == p).map(|q| (q.1, q.2)).collect();
        at.sort_by_key(|q| q.0);
        let &(b0, alpha) = at.first()?;
        let (num, den) = at.iter().skip(1).fold((0.0, 0.0), |(n, d), &(b, t)| {
            let s = (b - b0) as f64;
            (n + s * (t - alpha), d + s * s)
        });
        let beta = if den > 0.0 { (num / den).max(0.0) } else { 0.0 };
        let l = f64::from(p).log2();
        alphas.push((l, alpha));
        betas.push((l, beta));
    }
    let (alpha, alpha_log) = line(&alphas);
    let (beta, beta_log) = line(&betas);
    Some(CollFit {
        alpha,
        alpha_log,
        beta,
        beta_log,
    })
}

fn time(s: f64) -> String {
    format!("\"{:.3}ns\"", s.max(0.0) * 1e9)
}

fn per_byte(s: f64) -> String {
    format!("\"{:.4}ps\"", s.max(0.0) * 1e12)
}

fn bandwidth(bps: f64) -> String {
    format!("\"{:.3}MB/s\"", bps / 1e6)
}

fn write_level(out: &mut String, name: &str, fit: &LevelFit) {
    let _ = writeln!(out, "\n[network.{name}]\nlatency = {}", time(fit.latency));
    let _ = writeln!(out, "bandwidth = [");
    for &(from, bw) in &fit.bandwidth {
        let _ = writeln!(out, "  {{ size = \"{from}B\", value = {} }},", bandwidth(bw));
    }
    let _ = writeln!(out, "]");
}

/// The machine file for `raw`, with a header saying where and when
/// (`when`: a UTC time stamp) it was measured.
pub fn machine_toml(raw: &Raw, when: &str) -> Result<String, String> {
    let intra = fit_level(&raw.level(Level::Intra));
    let inter = fit_level(&raw.level(Level::Inter));
    let (Some(near), far) = (intra.clone().or(inter.clone()), inter.clone()) else {
        return Err("no point-to-point figures to fit".into());
    };
    let far = far.unwrap_or_else(|| near.clone());
    let mut per_host: Vec<(&str, u32)> = Vec::new();
    for h in &raw.host_of {
        match per_host.iter_mut().find(|e| e.0 == h) {
            Some(e) => e.1 += 1,
            None => per_host.push((h, 1)),
        }
    }
    let cores = per_host.iter().map(|e| e.1).max().unwrap_or(raw.ranks);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Measured by `pnmpi sim calibrate` on {when}, {} ranks on {} node(s) ({}),\n\
         # with {}.\n\
         # Point-to-point: one-way times of a ping-pong (median), fitted as latency\n\
         # + size / bandwidth(size); {}.\n\
         # Collectives: [model.pmac.collectives] curves; loggp: [model.loggp].",
        raw.ranks,
        raw.hosts,
        per_host.iter().map(|e| e.0).collect::<Vec<_>>().join(", "),
        raw.mpi,
        if inter.is_some() && intra.is_some() {
            "intra and inter node measured apart"
        } else if inter.is_some() {
            "every rank on its own node: intra-node figures copied from inter-node"
        } else {
            "one node: inter-node figures copied from intra-node (not measurable here)"
        }
    );
    let _ = writeln!(
        out,
        "\n[machine]\nname = \"calibrated {when}\"\n\
         # this file describes the machine measured: --compare reports errors, not differences\n\
         traced_on = \"{}\"\nnodes = {}\ncores_per_node = {cores}\ncpu_ratio = 1.0",
        per_host.iter().map(|e| e.0).collect::<Vec<_>>().join(", "),
        raw.hosts.max(1)
    );
    let _ = writeln!(out, "\n[network]");
    if raw.eager > 0 {
        let _ = writeln!(out, "eager_threshold = \"{}B\"", raw.eager);
    } else {
        let _ = writeln!(out, "# no size was sent eagerly: the default threshold stays");
    }
    write_level(&mut out, "intra", &near);
    write_level(&mut out, "inter", &far);
    let loggp = |level: Level, fit: &LevelFit| {
        let o = raw.send_overhead;
        format!(
            "L = {}\no = {}\ng = {}\nG = {}",
            time((fit.latency - 2.0 * o).max(0.0)),
            time(o),
            time(raw.gap.max(o)),
            per_byte(fit_g(&raw.level(level)))
        )
    };
    let (near_level, far_level) = match (intra.is_some(), inter.is_some()) {
        (true, true) => (Level::Intra, Level::Inter),
        (true, false) => (Level::Intra, Level::Intra),
        _ => (Level::Inter, Level::Inter),
    };
    let _ = writeln!(out, "\n[model.loggp]\n{}", loggp(far_level, &far));
    if raw.eager > 0 {
        let _ = writeln!(out, "S = \"{}B\"", raw.eager);
    }
    let _ = writeln!(out, "\n[model.loggp.intra]\n{}", loggp(near_level, &near));
    // LogGOPS in whole ns, as LogGOPSim takes them, from the same fit.
    let whole = |s: f64| format!("\"{}ns\"", (s.max(0.0) * 1e9).round());
    let o = raw.send_overhead;
    let _ = writeln!(
        out,
        "\n# loggops: whole ns, as LogGOPSim's (G below 0.5 ns a byte rounds to 0: loggp keeps it).\n\
         [model.loggops]\nL = {}\no = {}\ng = {}\nG = {}\nO = \"0ns\"",
        whole((far.latency - 2.0 * o).max(0.0)),
        whole(o),
        whole(raw.gap.max(o)),
        whole(fit_g(&raw.level(far_level)))
    );
    if raw.eager > 0 {
        let _ = writeln!(out, "S = \"{}B\"", raw.eager);
    }
    let _ = writeln!(
        out,
        "\n# Not measured: BCS-MPI's time slice is a property of the runtime.\n[model.bcs]\ntime_slice = \"500us\""
    );
    let mut names: Vec<&str> = raw.colls.iter().map(|c| c.0.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    for name in names {
        let points: Vec<(u32, u64, f64)> = raw
            .colls
            .iter()
            .filter(|c| c.0 == name)
            .map(|c| (c.1, c.2, c.3))
            .collect();
        if let Some(f) = fit_collective(&points) {
            let _ = writeln!(
                out,
                "\n[model.pmac.collectives.{name}]\nalpha = {}\nalpha_log = {}\nbeta = {}\nbeta_log = {}",
                time(f.alpha),
                time(f.alpha_log),
                per_byte(f.beta),
                per_byte(f.beta_log)
            );
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_level_fit_gives_back_every_measured_time() {
        let pts = [(1, 1e-6), (1024, 1.5e-6), (1 << 20, 101e-6)];
        let f = fit_level(&pts).unwrap();
        assert_eq!(f.latency, 1e-6);
        for &(b, t) in &pts[1..] {
            let bw = f.bandwidth.iter().rev().find(|s| s.0 <= b).unwrap().1;
            assert!((f.latency + b as f64 / bw - t).abs() < 1e-15, "{b}");
        }
        assert_eq!(f.bandwidth[0], (0, f.bandwidth[1].1));
    }

    #[test]
    fn g_is_the_slope_that_fits_all_sizes_best() {
        // A network twice as slow per byte below 64 KiB: taking the small
        // messages' slope would double every large message's time (100 %
        // off), taking the large ones' is at most 50 % off for the small.
        let pts: Vec<(u64, f64)> = (0..=22)
            .map(|k| {
                let b = 1u64 << k;
                let g = if b < 65536 { 0.5e-9 } else { 0.25e-9 };
                (b, 1e-6 + (b - 1) as f64 * g)
            })
            .collect();
        let g = fit_g(&pts);
        assert!((g - 0.25e-9).abs() < 1e-20, "{g}");
        assert_eq!(fit_g(&[(1, 1e-6), (101, 2e-6)]), 1e-8);
    }

    #[test]
    fn collective_fits_recover_a_log_p_law() {
        // t = (2 + 1 log2 P) us + (1 + 0.5 log2 P) ns/byte
        let mut pts = Vec::new();
        for p in [2u32, 4, 8] {
            let l = f64::from(p).log2();
            for b in [8u64, 1024, 65536] {
                pts.push((p, b, (2.0 + l) * 1e-6 + (1.0 + 0.5 * l) * 1e-9 * (b - 8) as f64));
            }
        }
        let f = fit_collective(&pts).unwrap();
        assert!(
            (f.alpha - 2e-6).abs() < 1e-12 && (f.alpha_log - 1e-6).abs() < 1e-12,
            "{f:?}"
        );
        assert!(
            (f.beta - 1e-9).abs() < 1e-15 && (f.beta_log - 0.5e-9).abs() < 1e-15,
            "{f:?}"
        );
    }

    #[test]
    fn fits_never_go_negative() {
        let f = fit_collective(&[(2, 8, 5e-6), (2, 1024, 4e-6), (4, 8, 1e-6), (4, 1024, 1e-6)]).unwrap();
        assert!(f.alpha >= 0.0 && f.alpha_log >= 0.0 && f.beta >= 0.0 && f.beta_log >= 0.0);
    }

    #[test]
    fn bad_raw_lines_name_the_file_and_line() {
        let e = Raw::parse("ranks 2\np2p intra x 1e-6\n", Path::new("r.raw")).unwrap_err();
        assert_eq!(e, "r.raw:2: bad size `x`");
        let e = Raw::parse("ranks 2\n", Path::new("r.raw")).unwrap_err();
        assert!(e.contains("incomplete calibration"), "{e}");
    }

    #[test]
    fn the_written_machine_file_loads_and_every_model_builds() {
        let mut text = String::from("ranks 2\nhosts 1\nmpi Test MPI 1.0\nhost 0 n0\nhost 1 n0\n");
        for (b, t) in [(1, 0.5e-6), (1024, 0.8e-6), (1 << 20, 120e-6)] {
            text += &format!("p2p intra {b} {t:e}\n");
        }
        text += "eager 4096\nsend_overhead 1e-7\ngap 2e-7\n";
        for c in ["barrier", "allreduce", "alltoall"] {
            text += &format!("coll {c} 2 8 1e-6\ncoll {c} 2 1048576 2e-4\n");
        }
        let raw = Raw::parse(&text, Path::new("r.raw")).unwrap();
        let toml = machine_toml(&raw, "2026-11-24T00:00Z").unwrap();
        let m = crate::machine::Machine::parse("m.toml", &toml).unwrap_or_else(|e| panic!("{e}\n{toml}"));
        assert_eq!(m.network.eager_threshold.0, 4096);
        for (name, _, _) in crate::model::MODELS {
            crate::model::build(name, &m).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }
}
