//! The calling thread's position in the module chain: 0 while the
//! application runs, `i` while the wrapper of the i-th module (1-based,
//! configuration order) runs. `XMPI_X` reads it to find the next layer.
//!
//! On x86-64 it is an initial-exec TLS variable read with two instructions
//! (no `__tls_get_addr` call, which costs more than the rest of a layer).
//! libpnmpi is loaded at program start (linked or preloaded), so the static
//! TLS block always has room for it; a late `dlopen` still fits in glibc's
//! static TLS surplus.

#[cfg(target_arch = "x86_64")]
mod imp {
    core::arch::global_asm!(
        ".pushsection .tbss,\"awT\",@nobits",
        ".p2align 2",
        ".globl pnmpi_tls_level",
        ".hidden pnmpi_tls_level",
        ".type pnmpi_tls_level,@object",
        ".size pnmpi_tls_level,4",
        "pnmpi_tls_level:",
        ".zero 4",
        ".popsection",
    );

    /// The current level of this thread.
    #[inline(always)]
    pub fn get() -> u32 {
        let level: u32;
        // SAFETY: reads this thread's 4-byte TLS slot defined above, through
        // its GOT offset; the slot exists for every thread.
        unsafe {
            core::arch::asm!(
                "mov {off}, qword ptr [rip + pnmpi_tls_level@GOTTPOFF]",
                "mov {level:e}, dword ptr fs:[{off}]",
                off = out(reg) _,
                level = out(reg) level,
                options(nostack, readonly, preserves_flags),
            );
        }
        level
    }

    /// Sets the current level of this thread.
    #[inline(always)]
    pub fn set(level: u32) {
        // SAFETY: writes this thread's own TLS slot; no other thread can see it.
        unsafe {
            core::arch::asm!(
                "mov {off}, qword ptr [rip + pnmpi_tls_level@GOTTPOFF]",
                "mov dword ptr fs:[{off}], {level:e}",
                off = out(reg) _,
                level = in(reg) level,
                options(nostack, preserves_flags),
            );
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod imp {
    use std::cell::Cell;

    thread_local! {
        static LEVEL: Cell<u32> = const { Cell::new(0) };
    }

    /// The current level of this thread.
    #[inline(always)]
    pub fn get() -> u32 {
        LEVEL.with(Cell::get)
    }

    /// Sets the current level of this thread.
    #[inline(always)]
    pub fn set(level: u32) {
        LEVEL.with(|l| l.set(level))
    }
}

pub use imp::{get, set};

/// Holds the thread at a module's level for the duration of its wrapper,
/// and puts the caller's level back afterwards, so that a wrapper's later
/// `XMPI_` calls (and the application after it) see the right position.
pub struct Guard {
    previous: u32,
}

impl Guard {
    /// Moves the thread to `level` until the guard drops.
    #[inline(always)]
    pub fn enter(level: u32) -> Guard {
        let previous = imp::get();
        imp::set(level);
        Guard { previous }
    }
}

impl Drop for Guard {
    #[inline(always)]
    fn drop(&mut self) {
        imp::set(self.previous);
    }
}
