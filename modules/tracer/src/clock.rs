//! The trace clock. Reading `CLOCK_MONOTONIC` costs about 40 ns here,
//! twice per traced call; the time-stamp counter costs about 13. Where the
//! counter is invariant and the kernel itself keeps time with it (so it
//! is synchronised across cores), the tracer records ticks and writes
//! (tick, ns) calibration pairs that the merge converts with; elsewhere it
//! records `CLOCK_MONOTONIC` ns directly.

use pnmpi_trace::rank::{Clock, ClockPair};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

static TSC: AtomicBool = AtomicBool::new(false);

/// `CLOCK_MONOTONIC` in ns.
pub fn mono_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// The trace clock.
#[inline(always)]
pub fn now() -> u64 {
    #[cfg(target_arch = "x86_64")]
    if TSC.load(Relaxed) {
        // SAFETY: RDTSC has no preconditions; `choose` enabled it only on
        // CPUs that have it.
        return unsafe { core::arch::x86_64::_rdtsc() };
    }
    mono_ns()
}

/// Both clocks, read back to back.
pub fn pair() -> ClockPair {
    let tick = now();
    ClockPair { tick, ns: mono_ns() }
}

/// Picks the clock once, before the first time is taken:
/// `PNMPI_TRACE_CLOCK=tsc|monotonic` forces one.
pub fn choose() -> Clock {
    let tsc = match std::env::var("PNMPI_TRACE_CLOCK").as_deref() {
        Ok("monotonic") => false,
        Ok("tsc") => tsc_available(),
        _ => tsc_available() && kernel_uses_tsc(),
    };
    TSC.store(tsc, Relaxed);
    if tsc {
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
