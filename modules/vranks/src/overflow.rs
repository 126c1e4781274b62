//! A stack overflow in a virtual rank is a clear error naming the rank,
//! never silent corruption: a `SIGSEGV` handler, on an alternate signal
//! stack (the faulting one is full), checks whether the fault hit the
//! running rank's guard page, and if so says which rank overflowed and
//! how to give it more. Any other fault goes to the handler that was
//! there before (the MPI library's, or the default one).

use crate::stack::PAGE;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The message's text before and after the rank's number, made when
/// the handler is installed: the handler must not allocate, since the
/// fault may come while the allocator is mid-call.
static MESSAGE: OnceLock<(&'static str, String)> = OnceLock::new();

/// The running rank's stack limit, kept by the scheduler for this
/// handler (which may read no other state).
pub static STACK_LIMIT: AtomicUsize = AtomicUsize::new(0);
/// The running rank, kept by the scheduler for this handler.
pub static CURRENT: AtomicUsize = AtomicUsize::new(usize::MAX);

/// The handler that was installed before ours.
static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();

/// `n` in decimal, at the end of `buf` (20 digits hold any `usize`).
fn decimal(mut n: usize, buf: &mut [u8; 20]) -> &[u8] {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[at..];
        }
    }
}

/// Writes that rank `rank` overflowed its stack, and exits. Safe in a
/// signal handler: it writes the preformatted message and the rank's
/// number with `write(2)`, and allocates nothing.
pub fn report(rank: usize) -> ! {
    let mut digits = [0u8; 20];
    let number = decimal(rank, &mut digits);
    let (head, tail) = MESSAGE.get().map_or(
        ("pnmpi vranks: error: virtual rank ", " overflowed its stack\n"),
        |(h, t)| (h, t.as_str()),
    );
    for part in [head.as_bytes(), number, tail.as_bytes()] {
        // SAFETY: write(2) is async-signal-safe; `part` is a valid
        // buffer of its length.
        unsafe { libc::write(2, part.as_ptr().cast(), part.len()) };
    }
    // SAFETY: _exit(2) is async-signal-safe.
    unsafe { libc::_exit(1) }
}

extern "C" fn on_segv(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for SIGSEGV.
    let addr = unsafe { (*info).si_addr() } as usize;
    let limit = STACK_LIMIT.load(Ordering::Relaxed);
    let rank = CURRENT.load(Ordering::Relaxed);
    if rank != usize::MAX && addr < limit && addr + 4 * PAGE >= limit {
        report(rank);
    }
    // Not ours: put the previous handler back; returning re-runs the
    // faulting instruction, which faults again into it.
    if let Some(prev) = PREVIOUS.get() {
        // SAFETY: restoring the action that was installed before ours.
        unsafe { libc::sigaction(sig, prev, std::ptr::null_mut()) };
    }
    let _ = ctx;
}

/// Installs the handler and its alternate stack, for stacks of `size`.
pub fn install(size: usize) {
    let _ = MESSAGE.set((
        "pnmpi vranks: error: virtual rank ",
        format!(
            " overflowed its stack of {} KiB; give it more with --vrank-stack (or PNMPI_VRANK_STACK), e.g. --vrank-stack 16M\n",
            size / 1024
        ),
    ));
    const ALT: usize = 64 * 1024;
    let alt = Box::leak(vec![0u8; ALT].into_boxed_slice());
    let ss = libc::stack_t {
        ss_sp: alt.as_mut_ptr() as *mut libc::c_void,
        ss_flags: 0,
        ss_size: ALT,
    };
    // SAFETY: a zeroed sigaction is valid to fill; the alternate stack is
    // leaked, so it lives as long as the process.
    unsafe {
        libc::sigaltstack(&ss, std::ptr::null_mut());
        let mut act: libc::sigaction = std::mem::zeroed();
        act.sa_sigaction = on_segv as *const () as usize;
        act.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        libc::sigemptyset(&mut act.sa_mask);
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGSEGV, &act, &mut old);
        let _ = PREVIOUS.set(old);
    }
}

#[cfg(test)]
mod tests {
    use super::decimal;

    #[test]
    fn a_rank_number_is_written_in_decimal_without_allocating() {
        let mut buf = [0u8; 20];
        assert_eq!(decimal(0, &mut buf), b"0");
        assert_eq!(decimal(3, &mut buf), b"3");
        assert_eq!(decimal(1_048_576, &mut buf), b"1048576");
        assert_eq!(decimal(usize::MAX, &mut buf), usize::MAX.to_string().as_bytes());
    }
}
