//! Who called an exported function, by its return address.
//!
//! Under direct binding no thread-local position is kept while wrappers
//! run, so the functions whose meaning depends on the caller (the `XMPI_X`
//! fallback entries and the `...Self` services) find the calling module by
//! the code address they return to. A naked shim stores its return address
//! in a thread-local slot and jumps to the real function, which reads it
//! first thing; the shim adds no frame and touches no argument register,
//! so it fits any signature, variadic ones included.

#[cfg(target_arch = "x86_64")]
mod imp {
    crate::level::tls_slot!("pnmpi_tls_caller", 8);

    /// The return address the last shim on this thread recorded.
    #[inline(always)]
    pub fn take() -> usize {
        let caller: usize;
        // SAFETY: reads the calling thread's own 8-byte slot defined above,
        // through its initial-exec TLS offset.
        unsafe {
            core::arch::asm!(
                "mov {off}, qword ptr [rip + pnmpi_tls_caller@GOTTPOFF]",
                "mov {caller}, qword ptr fs:[{off}]",
                off = out(reg) _,
                caller = out(reg) caller,
                options(nostack, readonly, preserves_flags),
            );
        }
        caller
    }

    /// Defines the exported `$name`, which records its return address and
    /// tail-jumps to `$target` (same signature). r10 and r11 are scratch
    /// registers that carry no argument in the System V ABI, and `al`
    /// (the vector-register count of a variadic call) is left alone.
    macro_rules! records_caller {
        ($(#[$meta:meta])* $name:ident ($($a:ident : $t:ty),*) -> $r:ty => $target:path) => {
            $(#[$meta])*
            #[unsafe(naked)]
            #[no_mangle]
            pub unsafe extern "C" fn $name($($a: $t),*) -> $r {
                core::arch::naked_asm!(
                    "mov r11, qword ptr [rip + pnmpi_tls_caller@GOTTPOFF]",
                    "mov r10, qword ptr [rsp]",
                    "mov qword ptr fs:[r11], r10",
                    "jmp {target}",
                    target = sym $target,
                )
            }
        };
    }
    pub(crate) use records_caller;
}

#[cfg(not(target_arch = "x86_64"))]
mod imp {
    /// No return address is recorded on this architecture: callers are
    /// found by the thread-local level alone (dispatch binding).
    #[inline(always)]
    pub fn take() -> usize {
        0
    }

    /// Defines the exported `$name` as a plain call of `$target`.
    macro_rules! records_caller {
        ($(#[$meta:meta])* $name:ident ($($a:ident : $t:ty),*) -> $r:ty => $target:path) => {
            $(#[$meta])*
            #[no_mangle]
            pub unsafe extern "C" fn $name($($a: $t),*) -> $r {
                // SAFETY: forwards the caller's arguments unchanged.
                unsafe { $target($($a),*) }
            }
        };
    }
    pub(crate) use records_caller;
}

pub(crate) use imp::records_caller;
pub use imp::take;
