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
    /// Defines the hidden initial-exec TLS variable `$name` of `$size`
    /// zeroed bytes, 8-byte aligned, for code that reads it through its
    /// `@GOTTPOFF` offset.
    macro_rules! tls_slot {
        ($name:literal, $size:literal) => {
            core::arch::global_asm!(concat!(
                ".pushsection .tbss,\"awT\",@nobits\n.p2align 3\n.globl ",
                $name,
                "\n.hidden ",
                $name,
                "\n.type ",
                $name,
                ",@object\n.size ",
                $name,
                ",",
                $size,
                "\n",
                $name,
                ":\n.zero ",
                $size,
                "\n.popsection"
            ));
        };
    }
    pub(crate) use tls_slot;

    tls_slot!("pnmpi_tls_level", 4);

    /// Where this thread's level lives: its offset from the thread
    /// pointer. Read once per call, then used for every access.
    #[derive(Clone, Copy)]
    pub struct Slot(usize);

    impl Slot {
        /// The calling thread's slot.
        #[inline(always)]
        pub fn current() -> Slot {
            let offset: usize;
            // SAFETY: loads the TLS offset of the 4-byte slot defined above
            // from its GOT entry; it is the same for every thread.
            unsafe {
                core::arch::asm!(
                    "mov {off}, qword ptr [rip + pnmpi_tls_level@GOTTPOFF]",
                    off = out(reg) offset,
                    options(nostack, pure, readonly, preserves_flags),
                );
            }
            Slot(offset)
        }

        /// The level stored in this slot.
        #[inline(always)]
        pub fn get(self) -> u32 {
            let level: u32;
            // SAFETY: reads the calling thread's own slot at its TLS offset.
            unsafe {
                core::arch::asm!(
                    "mov {level:e}, dword ptr fs:[{off}]",
                    off = in(reg) self.0,
                    level = out(reg) level,
                    options(nostack, readonly, preserves_flags),
                );
            }
            level
        }

        /// Stores `level` in this slot.
        #[inline(always)]
        pub fn set(self, level: u32) {
            // SAFETY: writes the calling thread's own slot; no other thread
            // can see it.
            unsafe {
                core::arch::asm!(
                    "mov dword ptr fs:[{off}], {level:e}",
                    off = in(reg) self.0,
                    level = in(reg) level,
                    options(nostack, preserves_flags),
                );
            }
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod imp {
    use std::cell::Cell;

    thread_local! {
        static LEVEL: Cell<u32> = const { Cell::new(0) };
    }

    /// The calling thread's level (reached through `thread_local!`).
    #[derive(Clone, Copy)]
    pub struct Slot;

    impl Slot {
        /// The calling thread's slot.
        #[inline(always)]
        pub fn current() -> Slot {
            Slot
        }

        /// The level stored in this slot.
        #[inline(always)]
        pub fn get(self) -> u32 {
            LEVEL.with(Cell::get)
        }

        /// Stores `level` in this slot.
        #[inline(always)]
        pub fn set(self, level: u32) {
            LEVEL.with(|l| l.set(level))
        }
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) use imp::tls_slot;
pub use imp::Slot;

/// The current level of the calling thread.
#[inline(always)]
pub fn get() -> u32 {
    Slot::current().get()
}

/// Sets the current level of the calling thread.
#[inline(always)]
pub fn set(level: u32) {
    Slot::current().set(level)
}

/// Holds the thread at a module's level for the duration of its wrapper,
/// and puts the caller's level back afterwards, so that a wrapper's later
/// `XMPI_` calls (and the application after it) see the right position.
pub struct Guard {
    slot: Slot,
    previous: u32,
}

impl Guard {
    /// Moves the thread to `level` until the guard drops.
    #[inline(always)]
    pub fn enter(level: u32) -> Guard {
        let slot = Slot::current();
        Guard::switch(slot, slot.get(), level)
    }

    /// Moves the thread from `previous`, already read from `slot`, to
    /// `level` until the guard drops.
    #[inline(always)]
    pub fn switch(slot: Slot, previous: u32, level: u32) -> Guard {
        slot.set(level);
        Guard { slot, previous }
    }
}

impl Drop for Guard {
    #[inline(always)]
    fn drop(&mut self) {
        self.slot.set(self.previous);
    }
}
