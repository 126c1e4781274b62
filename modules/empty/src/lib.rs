//! The "empty" module of the paper's section 5: it wraps every MPI routine
//! and only calls the next layer. It measures the cost of a layer, and
//! tests that every routine passes through a chain intact.
//!
//! Its wrappers come from the same routine table as libpnmpi's stubs, so it
//! always wraps exactly the routines libpnmpi exports.
//!
//! Built with `panic = "abort"` (`cargo build --profile compact`), it drops
//! std: std's runtime would map 380 KiB per layer, and a chain of 1000
//! private copies would then spend its time in page walks, not in layers.

#![cfg_attr(panic = "abort", no_std)]

#[cfg(panic = "abort")]
extern "C" {
    fn abort() -> !;
}

/// The wrappers cannot panic; this only satisfies `no_std`.
#[cfg(panic = "abort")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: libc's abort takes no arguments and never returns.
    unsafe { abort() }
}

macro_rules! forward {
    ($id:expr, $mpi:ident, $pmpi:ident, $xmpi:ident, $newstack:ident, $kind:ident ($($a:ident : $t:ty),*) -> $r:ty) => {
        extern "C" {
            fn $xmpi($($a: $t),*) -> $r;
        }

        /// Calls the next layer with the same arguments.
        ///
        /// # Safety
        /// Called by C with the arguments of the MPI routine it is named after.
        #[no_mangle]
        pub unsafe extern "C" fn $mpi($($a: $t),*) -> $r {
            // SAFETY: forwards the caller's arguments unchanged to libpnmpi's
            // entry point of the same signature.
            unsafe { $xmpi($($a),*) }
        }
    };
}

pnmpi_mpi_sys::for_each_routine!(forward);

/// Read by libpnmpi: this module's `MPI_Wtime` and `MPI_Wtick` are called
/// too, so that every routine passes through it (what it measures).
#[no_mangle]
pub static PNMPI_WrapsClock: core::ffi::c_int = 1;
