//! The exported entry points, one set per routine of the routine table:
//!
//! - `MPI_X`, which the application calls: one indirect jump through the
//!   entry table (see `entry`), to the first wrapper of X or to `PMPI_X`,
//!   so the first wrapper returns straight to the application's call site.
//!   `MPI_Init`, `MPI_Init_thread` and `MPI_Session_init` first make sure
//!   the modules are loaded, and `MPI_Pcontrol` first switches phase; they
//!   keep a frame of libpnmpi's.
//! - `XMPI_X`, which a module reaches when its call does not go through a
//!   bound GOT slot (dispatch binding, a `dlsym`'ed pointer): the next
//!   module below the caller that wraps X, or `PMPI_X` at the bottom.
//! - `XMPI_X_NewStack`, which enters a named stack at its top.
//!
//! The top of libpnmpi's layers, as the entry points every call comes in
//! by: start-up, the chain and its tables below know the stubs only by
//! the addresses handed to them ([`dispatcher`], [`application`]).

use crate::entry::Code;
use crate::{caller, chain, dispatch, level, startup};
use pnmpi_mpi_sys::{constants, ffi, ROUTINE_COUNT};

/// Runs when the dynamic loader has loaded libpnmpi, before `main`:
/// start-up's work at load, which points the Fortran bindings' `PMPI_X`
/// slots at these `MPI_X`.
#[used]
#[link_section = ".init_array"]
static AT_LOAD: extern "C" fn() = at_load;

extern "C" fn at_load() {
    startup::at_load(application);
}

macro_rules! tables {
    ($(($mpi:ident, $pmpi:ident)),* $(,)?) => {
        static DISPATCH: [Code; ROUTINE_COUNT] = [$(Code($mpi::enter as *const ())),*];
        static APPLICATION: [Code; ROUTINE_COUNT] = [$(Code($mpi::$mpi as *const ())),*];
    };
}

pnmpi_mpi_sys::all_routines!(tables);

/// The dispatcher's entry into X's link stack from the top.
pub fn dispatcher(id: usize) -> *const () {
    DISPATCH[id].0
}

/// libpnmpi's exported `MPI_X`, the application's entry point.
pub fn application(id: usize) -> *const () {
    APPLICATION[id].0
}

/// MPI has started: if modules select by rank, make sure the selection
/// used MPI's own world rank rather than the launcher's.
fn after_start(routine: &str) {
    let Some(chain) = chain::loaded().filter(|c| c.selects_ranks()) else {
        return;
    };
    if routine == "MPI_Session_init" {
        return;
    }
    let mut rank = 0;
    // SAFETY: MPI is initialised (the start routine returned); `rank` is a
    // local out-parameter.
    if unsafe { ffi::PMPI_Comm_rank(constants::COMM_WORLD(), &mut rank) } == constants::SUCCESS() {
        chain.set_rank(i64::from(rank));
    }
}

/// Level of the application, above every module.
const TOP: u32 = 0;

macro_rules! define_stub {
    // How the application's entry point behaves, by routine.
    (@entry starter, $id:expr, $mpi:ident, $fty:ty, ($($a:ident : $t:ty),*) -> $r:ty) => {
        /// The application's entry point: loads the modules first.
        ///
        /// # Safety
        /// Called by C with the arguments of the MPI routine it is named after.
        #[no_mangle]
        pub unsafe extern "C" fn $mpi($($a: $t),*) -> $r {
            startup::ensure_loaded(dispatcher);
            // SAFETY: the entry table holds only functions of this
            // routine's signature; the caller's arguments go on unchanged.
            let rc = unsafe { std::mem::transmute::<*const (), $fty>(crate::entry::get($id))($($a),*) };
            after_start(stringify!($mpi));
            rc
        }
    };
    (@entry pcontrol, $id:expr, $mpi:ident, $fty:ty, ($a0:ident : $t0:ty) -> $r:ty) => {
        /// The application's entry point: switches phase first.
        ///
        /// # Safety
        /// Called by C with the arguments of the MPI routine it is named after.
        #[no_mangle]
        pub unsafe extern "C" fn $mpi($a0: $t0) -> $r {
            if let Some(chain) = chain::loaded() {
                chain.set_phase(i64::from($a0));
            }
            // SAFETY: as for the starters above.
            unsafe { std::mem::transmute::<*const (), $fty>(crate::entry::get($id))($a0) }
        }
    };
    (@entry jump, $id:expr, $mpi:ident, $fty:ty, ($($a:ident : $t:ty),*) -> $r:ty) => {
        /// The application's entry point: one indirect jump, no frame.
        ///
        /// # Safety
        /// Called by C with the arguments of the MPI routine it is named after.
        #[cfg(target_arch = "x86_64")]
        #[unsafe(naked)]
        #[no_mangle]
        pub unsafe extern "C" fn $mpi($($a: $t),*) -> $r {
            core::arch::naked_asm!(
                "jmp qword ptr [rip + {entry} + {offset}]",
                entry = sym crate::entry::ENTRY,
                offset = const $id * std::mem::size_of::<usize>(),
            )
        }

        /// The application's entry point, through the entry table.
        ///
        /// # Safety
        /// Called by C with the arguments of the MPI routine it is named after.
        #[cfg(not(target_arch = "x86_64"))]
        #[no_mangle]
        pub unsafe extern "C" fn $mpi($($a: $t),*) -> $r {
            // SAFETY: as for the starters above.
            unsafe { std::mem::transmute::<*const (), $fty>(crate::entry::get($id))($($a),*) }
        }
    };
    (@entries $kind:ident, $id:expr, $mpi:ident, $pmpi:ident, $xmpi:ident, $newstack:ident, $fty:ty,
     ($($a:ident : $t:ty),*) -> $r:ty) => {
        #[allow(non_snake_case)]
        pub mod $mpi {
            use super::*;

            /// Calls the first layer of this routine's stack below level
            /// `from`, with the thread at that layer's level meanwhile.
            #[inline(always)]
            #[allow(clippy::too_many_arguments)] // MPI's own arity, plus three
            unsafe fn descend(slot: level::Slot, current: u32, from: u32, $($a: $t),*) -> $r {
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

            /// The dispatcher's entry from the application (the entry
            /// table holds it under dispatch binding).
            pub unsafe extern "C" fn enter($($a: $t),*) -> $r {
                let slot = level::Slot::current();
                // SAFETY: forwards the caller's arguments unchanged.
                unsafe { descend(slot, slot.get(), TOP, $($a),*) }
            }

            /// One layer below the module that called `XMPI_X`.
            unsafe extern "C" fn below_caller($($a: $t),*) -> $r {
                let from = chain::caller_level(caller::take());
                if !dispatch::is_wrapped($id) {
                    // SAFETY: forwards the caller's arguments unchanged.
                    return unsafe { ffi::$pmpi($($a),*) };
                }
                let slot = level::Slot::current();
                // SAFETY: forwards the caller's arguments unchanged.
                unsafe { descend(slot, slot.get(), from, $($a),*) }
            }

            caller::records_caller!(
                /// The entry point a module's unbound call reaches to go
                /// one layer down.
                ///
                /// # Safety
                /// Called by C with the arguments of the MPI routine it is named after.
                $xmpi($($a : $t),*) -> $r => below_caller
            );

            define_stub!(@entry $kind, $id, $mpi, $fty, ($($a : $t),*) -> $r);

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
                let slot = level::Slot::current();
                let current = slot.get();
                // SAFETY: forwards the caller's arguments unchanged.
                unsafe { descend(slot, current, stack as u32, $($a),*) }
            }
        }
    };
    (@fixed $kind:ident, $id:expr, $mpi:ident, $pmpi:ident, $xmpi:ident, $newstack:ident,
     fixed ($($a:ident : $t:ty),*) -> $r:ty) => {
        define_stub!(@entries $kind, $id, $mpi, $pmpi, $xmpi, $newstack,
                     unsafe extern "C" fn($($t),*) -> $r, ($($a : $t),*) -> $r);
    };
    // Only MPI_Pcontrol is variadic: its level also selects the phase.
    ($id:expr, $mpi:ident, $pmpi:ident, $xmpi:ident, $newstack:ident,
     variadic ($a0:ident : $t0:ty) -> $r:ty) => {
        define_stub!(@entries pcontrol, $id, $mpi, $pmpi, $xmpi, $newstack,
                     unsafe extern "C" fn($t0, ...) -> $r, ($a0 : $t0) -> $r);
    };
    // The routines that start MPI load the modules first.
    ($id:expr, MPI_Init, $($rest:tt)*) => { define_stub!(@fixed starter, $id, MPI_Init, $($rest)*); };
    ($id:expr, MPI_Init_thread, $($rest:tt)*) => {
        define_stub!(@fixed starter, $id, MPI_Init_thread, $($rest)*);
    };
    ($id:expr, MPI_Session_init, $($rest:tt)*) => {
        define_stub!(@fixed starter, $id, MPI_Session_init, $($rest)*);
    };
    ($id:expr, $mpi:ident, $($rest:tt)*) => { define_stub!(@fixed jump, $id, $mpi, $($rest)*); };
}

pnmpi_mpi_sys::for_each_routine!(define_stub);
