//! The two clocks: the calling thread's CPU time, which the processor
//! model scales, and the monotonic wall clock, for the simulator's own
//! cost in the report.

/// `clock_gettime(id)` in ns.
fn read(id: libc::clockid_t) -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable timespec; both clocks exist on
    // every Linux pnmpi builds for.
    unsafe { libc::clock_gettime(id, &mut t) };
    (t.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(t.tv_nsec as u64)
}

/// CPU time consumed by the calling thread (`CLOCK_THREAD_CPUTIME_ID`),
/// ns: it does not advance while the thread waits for a core, so an
/// oversubscribed run measures what a run with a core per rank would.
pub fn thread_cpu() -> u64 {
    read(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// `CLOCK_MONOTONIC`, ns.
pub fn wall() -> u64 {
    read(libc::CLOCK_MONOTONIC)
}
