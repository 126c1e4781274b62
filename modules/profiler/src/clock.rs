//! Time stamps: the CPU's time-stamp counter on the hot path, converted to
//! seconds with a rate measured against `CLOCK_MONOTONIC_RAW` while
//! `MPI_Init` runs.
//!
//! Two `clock_gettime` calls per MPI call would cost about 60 ns on the
//! machines this was measured on, twice the whole budget of a profiled
//! call; `rdtsc` costs about 11 ns. Linux only exposes an invariant TSC
//! (`constant_tsc nonstop_tsc`) as its clock source, so a rate measured
//! once holds for the run. On other architectures the tick is the
//! nanosecond of `CLOCK_MONOTONIC_RAW` itself.
//!
//! The rate is measured over `MPI_Init` (tens to hundreds of ms) rather
//! than over the whole run, so that the accuracy check of the report, which
//! compares the sum of TSC intervals with the `CLOCK_MONOTONIC_RAW` wall
//! time between `MPI_Init` and `MPI_Finalize`, compares two clocks and not
//! a clock with itself.

use std::sync::OnceLock;

/// The shortest calibration window: a bracket of a few tens of ns at each
/// end keeps the rate's error near 1e-5 of it.
const MIN_WINDOW_NS: u64 = 10_000_000;

/// Reads the tick counter.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn ticks() -> u64 {
    // SAFETY: rdtsc exists on every x86-64 CPU and only reads a counter.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// Reads the tick counter.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub fn ticks() -> u64 {
    raw_ns()
}

/// `CLOCK_MONOTONIC_RAW` in ns: not slewed by NTP, like the TSC.
pub fn raw_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a local out-parameter; CLOCK_MONOTONIC_RAW exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_RAW, &mut t) };
    u64::try_from(t.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(t.tv_nsec).unwrap_or(0)
}

/// A moment read on both clocks.
#[derive(Clone, Copy, Debug)]
pub struct Stamp {
    /// Ticks, at the middle of the bracket around `ns`.
    pub ticks: u64,
    /// `CLOCK_MONOTONIC_RAW`, ns.
    pub ns: u64,
}

/// Reads both clocks at (nearly) the same moment: the tightest of a few
/// tick brackets around a `clock_gettime`, so that a preemption in between
/// does not skew the rate.
pub fn stamp() -> Stamp {
    let mut best: Option<(u64, Stamp)> = None;
    for _ in 0..5 {
        let before = ticks();
        let ns = raw_ns();
        let after = ticks();
        let width = after.wrapping_sub(before);
        if best.is_none_or(|(w, _)| width < w) {
            best = Some((
                width,
                Stamp {
                    ticks: before + width / 2,
                    ns,
                },
            ));
        }
    }
    best.map(|(_, s)| s).expect("five samples")
}

/// The profile's time base: where it starts and how fast ticks run.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    /// `MPI_Init`'s entry.
    pub start: Stamp,
    /// Ticks per second, measured over the calibration window.
    pub ticks_per_s: f64,
    /// The calibration window, seconds.
    pub window_s: f64,
}

impl Clock {
    /// Seconds in `ticks` ticks.
    pub fn seconds(&self, ticks: u64) -> f64 {
        ticks as f64 / self.ticks_per_s
    }

    /// Ticks in `s` seconds.
    pub fn ticks(&self, s: f64) -> f64 {
        s * self.ticks_per_s
    }
}

static CLOCK: OnceLock<Clock> = OnceLock::new();

/// Sets the time base from `start` (MPI_Init's entry) and now (its exit),
/// waiting until the window is at least [`MIN_WINDOW_NS`] long. Later calls
/// keep the first time base.
pub fn calibrate(start: Stamp) -> Clock {
    let mut end = stamp();
    while end.ns.saturating_sub(start.ns) < MIN_WINDOW_NS {
        end = stamp();
    }
    let window_ns = (end.ns - start.ns) as f64;
    let clock = Clock {
        start,
        ticks_per_s: end.ticks.wrapping_sub(start.ticks) as f64 * 1e9 / window_ns,
        window_s: window_ns / 1e9,
    };
    *CLOCK.get_or_init(|| clock)
}

/// The time base, once `MPI_Init` has returned.
pub fn get() -> Option<&'static Clock> {
    CLOCK.get()
}
