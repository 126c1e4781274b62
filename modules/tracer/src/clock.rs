//! The trace clock. Reading `CLOCK_MONOTONIC` costs about 40 ns here,
//! twice per traced call; the time-stamp counter costs about 13. Where the
//! counter is invariant and the kernel itself keeps time with it (so it
//! is synchronised across cores), the tracer records ticks and writes
//! (tick, ns) calibration pairs that the merge converts with; elsewhere it
//! records `CLOCK_MONOTONIC` ns directly.
//!
//! A third clock, `PNMPI_TRACE_CLOCK=vtime`, is the virtual clock of the
//! `vtime` module below the tracer: each call is recorded with the
//! virtual bounds vtime gave it (its globals `vtime_call_start` and
//! `vtime_call_end`), so the trace is the run as the modelled machine
//! would have timed it, and its gaps are exactly the compute vtime
//! charged (docs/vtime.md). Virtual time is global: no offsets are
//! measured.

use pnmpi_sdk::{say, services};
use pnmpi_trace::rank::{Clock, ClockPair};
use std::sync::atomic::{AtomicI64, AtomicU8, Ordering::Relaxed};
use std::sync::OnceLock;

/// Which clock [`now`] reads: [`TSC`], [`MONOTONIC`] or [`VTIME`].
static MODE: AtomicU8 = AtomicU8::new(MONOTONIC);
const TSC: u8 = 0;
const MONOTONIC: u8 = 1;
const VTIME: u8 = 2;
/// vtime's `vtime_call_start` and `vtime_call_end`, virtual ns.
static VIRTUAL: OnceLock<(&'static AtomicI64, &'static AtomicI64)> = OnceLock::new();

/// `CLOCK_MONOTONIC` in ns.
#[inline(always)]
pub fn mono_ns() -> u64 {
    pnmpi_sdk::clock::monotonic_ns()
}

/// The virtual bounds of the latest call vtime timed, ns. `MPI_Finalize`
/// leaves only a start: it is also the end.
fn vtime_bounds() -> (u64, u64) {
    let Some((start, end)) = VIRTUAL.get() else {
        return (0, 0);
    };
    let start = start.load(Relaxed).max(0) as u64;
    (start, (end.load(Relaxed).max(0) as u64).max(start))
}

/// The trace clock.
#[inline(always)]
pub fn now() -> u64 {
    read(MODE.load(Relaxed))
}

/// The clock of `mode`, read now.
#[inline(always)]
fn read(mode: u8) -> u64 {
    match mode {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: RDTSC has no preconditions; `choose` picked it only on
        // CPUs that have it.
        TSC => unsafe { core::arch::x86_64::_rdtsc() },
        // Laid out of the way of the counter, the clock of most runs.
        VTIME => {
            std::hint::cold_path();
            vtime_bounds().1
        }
        _ => {
            std::hint::cold_path();
            mono_ns()
        }
    }
}

/// Runs `call` (the traced routine, one layer down) between two reads of
/// the clock: `(start, result, end)`. Under the vtime clock the bounds
/// are vtime's own for the call.
#[inline(always)]
pub fn timed<R>(call: impl FnOnce() -> R) -> (u64, R, u64) {
    // Read once: only `MPI_Init`'s set-up, which is not timed here, sets it.
    let mode = MODE.load(Relaxed);
    let t0 = read(mode);
    let r = call();
    if mode == VTIME {
        let (start, end) = vtime_bounds();
        return (start, r, end);
    }
    (t0, r, read(mode))
}

/// Both clocks, read back to back (an ns clock is its own pair).
pub fn pair() -> ClockPair {
    let tick = now();
    let ns = if is_virtual() { tick } else { mono_ns() };
    ClockPair { tick, ns }
}

/// Whether the trace clock is vtime's virtual one: global by
/// construction, so ranks measure no offset to rank 0's.
pub fn is_virtual() -> bool {
    MODE.load(Relaxed) == VTIME
}

/// vtime's published call bounds, if vtime sits below this module.
fn find_vtime() -> Result<(&'static AtomicI64, &'static AtomicI64), String> {
    let me =
        services::module_self().map_err(|e| format!("the tracer cannot find itself in the chain ({e})"))?;
    let vtime = services::module_by_name("vtime").map_err(|_| "no vtime module in the chain".to_string())?;
    if vtime.handle() <= me.handle() {
        return Err("vtime must come after the tracer in the configuration (below it in the chain)".into());
    }
    let start =
        services::global_by_name(vtime, "vtime_call_start").map_err(|e| format!("vtime_call_start: {e}"))?;
    let end =
        services::global_by_name(vtime, "vtime_call_end").map_err(|e| format!("vtime_call_end: {e}"))?;
    Ok((start, end))
}

/// Picks the clock once, in `MPI_Init` before the first time is taken:
/// `PNMPI_TRACE_CLOCK=tsc|monotonic|vtime` forces one. The vtime clock is
/// recorded as an ns clock.
pub fn choose() -> Clock {
    let default = || {
        if tsc_available() && kernel_uses_tsc() {
            TSC
        } else {
            MONOTONIC
        }
    };
    let mode = match std::env::var("PNMPI_TRACE_CLOCK").as_deref() {
        Ok("monotonic") => MONOTONIC,
        Ok("tsc") if tsc_available() => TSC,
        Ok("tsc") => MONOTONIC,
        Ok("vtime") => match find_vtime() {
            Ok(bounds) => {
                let _ = VIRTUAL.set(bounds);
                VTIME
            }
            Err(e) => {
                say::warn(
                    "tracer",
                    format_args!("PNMPI_TRACE_CLOCK=vtime: {e}; using the default clock"),
                );
                default()
            }
        },
        Ok(other) if !other.is_empty() => {
            say::warn(
                "tracer",
                format_args!(
                    "PNMPI_TRACE_CLOCK={other} is not tsc, monotonic or vtime; using the default clock"
                ),
            );
            default()
        }
        _ => default(),
    };
    MODE.store(mode, Relaxed);
    if mode == TSC {
        Clock::Tsc
    } else {
        Clock::Monotonic
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(unused_unsafe)] // `__cpuid` is safe from Rust 1.94 on, unsafe before
fn tsc_available() -> bool {
    use core::arch::x86_64::__cpuid;
    // SAFETY: CPUID exists on every x86-64 CPU; leaf 0x80000000 gives the
    // highest extended leaf, checked before leaf 0x80000007 is read.
    let max = unsafe { __cpuid(0x8000_0000) }.eax;
    // SAFETY: as above; the leaf is within the supported range.
    max >= 0x8000_0007 && unsafe { __cpuid(0x8000_0007) }.edx & (1 << 8) != 0
}

#[cfg(not(target_arch = "x86_64"))]
fn tsc_available() -> bool {
    false
}

/// The kernel trusts the TSC across CPUs only if it keeps time with it.
fn kernel_uses_tsc() -> bool {
    std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
        .is_ok_and(|s| s.trim() == "tsc")
}
