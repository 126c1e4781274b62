//! A stack overflow in a virtual rank is a clear error naming the rank,
//! never silent corruption: a `SIGSEGV` handler, on an alternate signal
//! stack (the faulting one is full), checks whether the fault hit the
//! running rank's guard page, and if so says which rank overflowed and
//! how to give it more. Any other fault goes to the handler that was
//! there before (the MPI library's, or the default one).

use crate::engine::{CURRENT, STACK_LIMIT};
use crate::stack::PAGE;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The stack size, for the message.
static SIZE: AtomicUsize = AtomicUsize::new(0);

/// The handler that was installed before ours.
static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();

/// Writes that rank `rank` overflowed its stack, and exits.
pub fn report(rank: usize) -> ! {
    let msg = format!(
        "pnmpi vranks: error: virtual rank {rank} overflowed its stack of {} KiB; give it more with --vrank-stack (or PNMPI_VRANK_STACK), e.g. --vrank-stack 16M\n",
        SIZE.load(Ordering::Relaxed) / 1024
    );
    // SAFETY: write(2) and _exit(2) are async-signal-safe; the message is
    // a valid buffer (formatting allocates, which a fault in a stack's
    // guard page, outside the allocator, allows in practice).
    unsafe {
        libc::write(2, msg.as_ptr() as *const libc::c_void, msg.len());
        libc::_exit(1)
    }
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
    SIZE.store(size, Ordering::Relaxed);
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
