//! The exported entry points, one pair per routine of the routine table:
//!
//! - `MPI_X`, which the application calls. If no module wraps X it costs one
//!   load and one branch, then jumps to `PMPI_X`. Otherwise it enters the
//!   first layer of X's link stack.
//! - `XMPI_X`, which a module's wrapper calls to go one layer down: the next
//!   module below the caller's level that wraps X, or `PMPI_X` at the
//!   bottom.
//!
//! `MPI_Init`, `MPI_Init_thread` and `MPI_Session_init` first make sure the
//! modules are loaded, so that the modules' own Init wrappers run.

use crate::{dispatch, level, startup};
use pnmpi_mpi_sys::ffi;

/// Is `name` one of the routines that start MPI (and so load modules)?
const fn starts_mpi(name: &str) -> bool {
    const STARTERS: [&str; 3] = ["MPI_Init", "MPI_Init_thread", "MPI_Session_init"];
    let mut i = 0;
    while i < STARTERS.len() {
        if const_eq(name.as_bytes(), STARTERS[i].as_bytes()) {
            return true;
        }
        i += 1;
    }
    false
}

const fn const_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Level of the application, above every module.
const TOP: u32 = 0;

macro_rules! define_stub {
    ($id:expr, $mpi:ident, $pmpi:ident, $xmpi:ident, $newstack:ident,
     fixed ($($a:ident : $t:ty),*) -> $r:ty) => {
        define_stub!(@entries $id, $mpi, $pmpi, $xmpi, $newstack, unsafe extern "C" fn($($t),*) -> $r,
                     {}, ($($a : $t),*) -> $r);
    };
    // Only MPI_Pcontrol is variadic: its level also selects the phase.
    ($id:expr, $mpi:ident, $pmpi:ident, $xmpi:ident, $newstack:ident,
     variadic ($a0:ident : $t0:ty) -> $r:ty) => {
        define_stub!(@entries $id, $mpi, $pmpi, $xmpi, $newstack, unsafe extern "C" fn($t0, ...) -> $r,
                     { startup::pcontrol(i64::from($a0)); }, ($a0 : $t0) -> $r);
    };
    (@entries $id:expr, $mpi:ident, $pmpi:ident, $xmpi:ident, $newstack:ident, $fty:ty, $before:block,
     ($($a:ident : $t:ty),*) -> $r:ty) => {
        #[allow(non_snake_case)]
        mod $mpi {
            use super::*;

            /// Calls the first layer of this routine's stack below the
            /// application (`FROM_TOP`) or below the calling thread's level.
            /// Taking the same arguments as the entry points lets them
            /// tail-call it.
            #[inline(never)]
            unsafe extern "C" fn descend<const FROM_TOP: bool>($($a: $t),*) -> $r {
                let slot = level::Slot::current();
                let current = slot.get();
                let from = if FROM_TOP { TOP } else { current };
                match dispatch::next($id, from) {
                    Some(hop) => {
                        // SAFETY: the loader only stores addresses of
                        // functions named after this routine, which have its
                        // C signature.
                        let wrapper: $fty = unsafe { std::mem::transmute(hop.func) };
                        let _level = level::Guard::switch(slot, current, hop.level);
                        // SAFETY: forwards the caller's arguments unchanged.
                        unsafe { wrapper($($a),*) }
                    }
                    // SAFETY: forwards the caller's arguments unchanged to
                    // the native routine of the same signature.
                    None => unsafe { ffi::$pmpi($($a),*) },
                }
            }

            /// The application's entry point.
            ///
            /// # Safety
            /// Called by C with the arguments of the MPI routine it is named after.
            #[no_mangle]
            pub unsafe extern "C" fn $mpi($($a: $t),*) -> $r {
                $before
                if starts_mpi(stringify!($mpi)) {
                    startup::ensure_loaded();
                    // SAFETY: forwards the caller's arguments unchanged.
                    let rc = unsafe { descend::<true>($($a),*) };
                    startup::after_start(stringify!($mpi));
                    return rc;
                }
                if !dispatch::is_wrapped($id) {
                    // SAFETY: forwards the caller's arguments unchanged to
                    // the native routine of the same signature.
                    return unsafe { ffi::$pmpi($($a),*) };
                }
                // SAFETY: as above, through the link stack.
                unsafe { descend::<true>($($a),*) }
            }

            /// The entry point a module calls to reach the next layer.
            ///
            /// # Safety
            /// Called by C with the arguments of the MPI routine it is named after.
            #[no_mangle]
            pub unsafe extern "C" fn $xmpi($($a: $t),*) -> $r {
                if !dispatch::is_wrapped($id) {
                    // SAFETY: forwards the caller's arguments unchanged.
                    return unsafe { ffi::$pmpi($($a),*) };
                }
                // SAFETY: forwards the caller's arguments unchanged.
                unsafe { descend::<false>($($a),*) }
            }

            /// Enters the stack whose handle is `stack` (from
            /// `PNMPI_Service_GetStackByName`) at its top, and comes back to
            /// the caller's own level afterwards. A handle that is no
            /// stack's enters below that level, or MPI.
            ///
            /// # Safety
            /// Called by C with a stack handle and the arguments of the MPI
            /// routine it is named after.
            #[no_mangle]
            pub unsafe extern "C" fn $newstack(stack: std::ffi::c_int, $($a: $t),*) -> $r {
                let _level = level::Guard::enter(stack as u32);
                // SAFETY: forwards the caller's arguments unchanged.
                unsafe { descend::<false>($($a),*) }
            }
        }
    };
}

pnmpi_mpi_sys::for_each_routine!(define_stub);

#[cfg(test)]
mod tests {
    use super::starts_mpi;

    #[test]
    fn only_init_routines_start_mpi() {
        assert!(starts_mpi("MPI_Init"));
        assert!(starts_mpi("MPI_Init_thread"));
        assert!(!starts_mpi("MPI_Initialized"));
        assert!(!starts_mpi("MPI_Send"));
    }
}
