//! The clocks modules time with: the monotonic wall clock, and the
//! calling thread's CPU time, which does not advance while the thread
//! waits for a core. A processor model (`vtime`) and a trace of a run with
//! more ranks than cores (the tracer's `cpu` clock) both count compute
//! with it, and both take off what reading it costs.

/// `clock_gettime(id)` in ns.
#[inline]
fn read(id: libc::clockid_t) -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable timespec; both clocks read here
    // exist on every Linux pnmpi builds for.
    unsafe { libc::clock_gettime(id, &mut t) };
    (t.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(t.tv_nsec as u64)
}

/// `CLOCK_MONOTONIC`, ns.
#[inline]
pub fn monotonic_ns() -> u64 {
    read(libc::CLOCK_MONOTONIC)
}

/// CPU time consumed by the calling thread (`CLOCK_THREAD_CPUTIME_ID`),
/// ns. A system call, not a vDSO read: some hundreds of ns in a VM.
#[inline]
pub fn thread_cpu_ns() -> u64 {
    read(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// The CPU time an interval between two reads of [`thread_cpu_ns`] gains
/// from the reads themselves (about half of each read falls on each side
/// of its sample): the lower quartile of 257 back-to-back reads, so that
/// a preempted read does not count.
pub fn thread_cpu_read_cost() -> u64 {
    let mut deltas: Vec<u64> = (0..257)
        .map(|_| {
            let a = thread_cpu_ns();
            thread_cpu_ns().saturating_sub(a)
        })
        .collect();
    deltas.sort_unstable();
    deltas[deltas.len() / 4]
}
