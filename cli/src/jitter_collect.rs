//! `pnmpi jitter collect`: the paper's TraceCollector. One thread per
//! chosen core, pinned there, reads the timestamp counter in a tight loop
//! and keeps each delta between successive reads that exceeds the jitter
//! threshold (`t_min` x factor, or an absolute time). The loop allocates
//! nothing, writes nothing and makes no system call: events go to a
//! buffer reserved before it starts, written out after it ends.

use crate::output::write_atomic;
use anyhow::{bail, Context, Result};
use clap::Args;
use pnmpi_jitter::format::Trace;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Options of `pnmpi jitter collect`.
#[derive(Args)]
pub struct CollectArgs {
    /// How long to collect, seconds.
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// Cores to collect on, e.g. 0,1 or 0-3 (default: every core this
    /// process may run on).
    #[arg(long)]
    cores: Option<String>,
    /// A delta above t_min x this is noise.
    #[arg(long, default_value_t = 10.0, conflicts_with = "threshold")]
    threshold_factor: f64,
    /// A delta above this time is noise (instead of the factor), e.g. 1us.
    #[arg(long, value_name = "TIME")]
    threshold: Option<String>,
    /// Most noise events kept per core (the buffer reserved up front).
    #[arg(long, default_value_t = 4_000_000)]
    max_events: usize,
    /// Output folder: core-N.txt and core-N.pnj per core, summary.txt, summary.svg.
    #[arg(long, short)]
    output: PathBuf,
}

/// The timestamp counter.
#[inline(always)]
fn tsc() -> u64 {
    // SAFETY: RDTSC reads a counter; it has no memory effects and every
    // x86_64 CPU has it.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// Pins the calling thread to `core`.
fn pin(core: usize) -> Result<()> {
    // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET writes within
    // it for core < CPU_SETSIZE (checked); sched_setaffinity reads it.
    let rc = unsafe {
        if core >= libc::CPU_SETSIZE as usize {
            bail!("core {core} is beyond what this system can address");
        }
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(core, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if rc != 0 {
        bail!(
            "cannot pin a thread to core {core}: {}",
            std::io::Error::last_os_error()
        );
    }
    Ok(())
}

/// The cores this process may run on.
fn allowed_cores() -> Vec<usize> {
    // SAFETY: as in `pin`; sched_getaffinity fills the set.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return vec![0];
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

fn parse_cores(s: &str) -> Result<Vec<usize>> {
    let mut v = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        let bad = || format!("--cores: `{part}` is not a core or a range (0,2-3)");
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.parse().with_context(bad)?, b.parse().with_context(bad)?);
                v.extend(a..=b);
            }
            None => v.push(part.parse().with_context(bad)?),
        }
    }
    Ok(v)
}

/// TSC ticks per second, against the monotonic clock over `d`.
fn tsc_hz(d: Duration) -> f64 {
    let (t0, c0) = (Instant::now(), tsc());
    while t0.elapsed() < d {}
    let (c1, e) = (tsc(), t0.elapsed());
    (c1 - c0) as f64 / e.as_secs_f64()
}

/// The undisturbed delta between two reads: the median over `reads`
/// reads. Not the minimum, as netgauge takes it: under a hypervisor the
/// counter may advance in steps, and this machine's VM shows deltas of 1
/// cycle in more than 10 % of reads against 26 for the rest, so that a
/// minimum-based threshold (10 cycles) would count every read as noise.
fn t_min(reads: usize) -> u64 {
    let mut deltas = Vec::with_capacity(reads);
    let mut prev = tsc();
    for _ in 0..reads {
        let t = tsc();
        deltas.push(t - prev);
        prev = t;
    }
    let middle = deltas.len() / 2;
    deltas.select_nth_unstable(middle).1.to_owned().max(1)
}

/// One core's measurement: noise events as (start tick, duration ticks).
struct Collected {
    core: usize,
    t_min: u64,
    threshold: u64,
    start: u64,
    end: u64,
    events: Vec<(u64, u64)>,
    full: bool,
}

/// The loop: nothing but reads, a compare and a store into `events`.
fn collect_loop(until: u64, threshold: u64, events: &mut Vec<(u64, u64)>) -> (u64, bool) {
    let cap = events.capacity();
    let mut prev = tsc();
    loop {
        let t = tsc();
        let d = t - prev;
        if d > threshold {
            if events.len() == cap {
                return (t, true);
            }
            events.push((prev, d));
        }
        if t >= until {
            return (t, false);
        }
        prev = t;
    }
}

fn collect_core(
    core: usize,
    hz: f64,
    seconds: f64,
    threshold_ns: Option<f64>,
    factor: f64,
    max: usize,
) -> Result<Collected> {
    pin(core)?;
    let t_min = t_min(1_000_000);
    let threshold = match threshold_ns {
        Some(ns) => (ns * hz / 1e9).round() as u64,
        None => (t_min as f64 * factor).round() as u64,
    };
    let mut events = Vec::with_capacity(max);
    let start = tsc();
    let (end, full) = collect_loop(start + (seconds * hz) as u64, threshold, &mut events);
    Ok(Collected {
        core,
        t_min,
        threshold,
        start,
        end,
        events,
        full,
    })
}

impl Collected {
    /// `(jitter, cycles_to_next)` rows; the first row is the free time
    /// before the first event, the last runs to the end of the collection.
    fn trace(&self, hz: f64) -> Trace {
        let mut rows = Vec::with_capacity(self.events.len() + 1);
        let first = self.events.first().map_or(self.end, |e| e.0);
        rows.push((0, first - self.start));
        for (i, &(s, d)) in self.events.iter().enumerate() {
            let next = self.events.get(i + 1).map_or(self.end, |e| e.0);
            rows.push((d, next.saturating_sub(s + d)));
        }
        Trace {
            tsc_hz: hz,
            core: self.core as u32,
            t_min: self.t_min,
            threshold: self.threshold,
            rows,
        }
    }
}

/// The summary as text (per core the noise fraction and counts, the
/// largest events) and its chart (a histogram of durations per core, in
/// powers of two of ns).
fn summary(all: &[Collected], hz: f64) -> (String, pnmpi_plot::BarChart) {
    let ns = |c: u64| c as f64 * 1e9 / hz;
    let mut text = format!("pnmpi jitter collect: TSC {:.3} GHz\n\n", hz / 1e9);
    text += "core   seconds    events   noise %    t_min (ns)  threshold (ns)   largest (us)\n";
    let buckets: Vec<String> = (0..24)
        .map(|b| format!("<{}", fmt_ns(f64::from(1u32 << b))))
        .collect();
    let mut bars = Vec::new();
    for c in all {
        let span = ns(c.end - c.start);
        let noise: f64 = c.events.iter().map(|e| ns(e.1)).sum();
        let largest = c.events.iter().map(|e| e.1).max().map_or(0.0, ns);
        text += &format!(
            "{:<6} {:>7.2} {:>9} {:>9.4} {:>13.1} {:>15.1} {:>14.2}{}\n",
            c.core,
            span / 1e9,
            c.events.len(),
            100.0 * noise / span,
            ns(c.t_min),
            ns(c.threshold),
            largest / 1e3,
            if c.full {
                "  (buffer full: stopped early)"
            } else {
                ""
            }
        );
        let mut h = vec![0.0; buckets.len()];
        for e in &c.events {
            let d = ns(e.1).max(1.0);
            let b = (d.log2().ceil() as usize).min(buckets.len() - 1);
            h[b] += 1.0;
        }
        bars.push((format!("core {}", c.core), h));
    }
    text += "\nlargest events (core, at s, duration us):\n";
    let mut big: Vec<(usize, f64, f64)> = all
        .iter()
        .flat_map(|c| {
            c.events
                .iter()
                .map(move |e| (c.core, ns(e.0 - c.start) / 1e9, ns(e.1) / 1e3))
        })
        .collect();
    big.sort_by(|a, b| b.2.total_cmp(&a.2));
    for (core, at, us) in big.iter().take(10) {
        text += &format!("  core {core:<4} {at:>9.4} s {us:>10.2} us\n");
    }
    let chart = pnmpi_plot::BarChart {
        title: "noise events by duration".into(),
        y_label: "events".into(),
        groups: buckets,
        bars,
        references: Vec::new(),
    };
    (text, chart)
}

fn fmt_ns(v: f64) -> String {
    if v >= 1e6 {
        format!("{}ms", v / 1e6)
    } else if v >= 1e3 {
        format!("{}us", v / 1e3)
    } else {
        format!("{v}ns")
    }
}

/// Runs the collection.
pub fn run(a: &CollectArgs) -> Result<()> {
    if !(a.seconds > 0.0 && a.seconds.is_finite()) {
        bail!("--seconds must be a positive number");
    }
    let cores = match &a.cores {
        Some(s) => parse_cores(s)?,
        None => allowed_cores(),
    };
    let threshold_ns = match &a.threshold {
        Some(s) => Some(
            pnmpi_sim::units::parse_time(s)
                .map_err(|e| anyhow::anyhow!("--threshold: {e}"))?
                .0,
        ),
        None => None,
    };
    std::fs::create_dir_all(&a.output).with_context(|| format!("cannot create {}", a.output.display()))?;
    eprintln!("pnmpi jitter collect: measuring the TSC frequency");
    let hz = tsc_hz(Duration::from_millis(200));
    eprintln!(
        "pnmpi jitter collect: {:.1} s on core(s) {:?} at {:.3} GHz",
        a.seconds,
        cores,
        hz / 1e9
    );
    let (factor, max, seconds) = (a.threshold_factor, a.max_events, a.seconds);
    let handles: Vec<_> = cores
        .iter()
        .map(|&c| std::thread::spawn(move || collect_core(c, hz, seconds, threshold_ns, factor, max)))
        .collect();
    let t0 = Instant::now();
    while handles.iter().any(|h| !h.is_finished()) {
        std::thread::sleep(Duration::from_millis(200));
        if t0.elapsed().as_secs_f64() >= 1.0 {
            eprint!(
                "\r  {:.0} / {:.0} s",
                t0.elapsed().as_secs_f64().min(seconds),
                seconds
            );
        }
    }
    eprintln!();
    let mut all = Vec::new();
    for h in handles {
        let c = h
            .join()
            .map_err(|_| anyhow::anyhow!("a collector thread failed"))??;
        let t = c.trace(hz);
        write_atomic(
            &a.output.join(format!("core-{}.txt", c.core)),
            t.to_text().as_bytes(),
        )?;
        write_atomic(&a.output.join(format!("core-{}.pnj", c.core)), t.to_binary())?;
        all.push(c);
    }
    let (text, chart) = summary(&all, hz);
    write_atomic(&a.output.join("summary.txt"), text.as_bytes())?;
    write_atomic(&a.output.join("summary.svg"), chart.svg()?.as_bytes())?;
    print!("{text}");
    eprintln!("pnmpi jitter collect: wrote {}", a.output.display());
    Ok(())
}
