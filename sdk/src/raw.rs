//! Every `XMPI_X` and `XMPI_X_NewStack` entry point of libpnmpi, declared
//! from the routine table, with the C types of the native `mpi.h`.
//!
//! They are the module's way down the chain; [`crate::next`] and the
//! wrappers of [`crate::wrap!`] call them safely. Call one directly for a
//! routine [`crate::next`] does not cover; the contract is the MPI
//! routine's own (valid buffers of the right size, handles from MPI).
//!
//! A module links against none of them: they stay undefined in the
//! module's `.so` and resolve against libpnmpi when it loads the module.
//!
//! MPI_Pcontrol is declared with its fixed argument only, as libpnmpi
//! defines it: pnmpi passes only the level down.

use std::ffi::c_int;

macro_rules! declare {
    ($id:literal, $mpi:ident, $pmpi:ident, $xmpi:ident, $newstack:ident,
     $kind:ident ($($a:ident : $t:ty),*) -> $r:ty) => {
        extern "C" {
            #[doc = concat!(
                "Calls `", stringify!($mpi), "` in the next layer below the calling module: the next ",
                "module that wraps it, or `", stringify!($pmpi), "`."
            )]
            pub fn $xmpi($($a: $t),*) -> $r;
            #[doc = concat!(
                "Calls `", stringify!($mpi), "` at the top of the stack whose handle is `stack` (see ",
                "[`crate::services::stack_by_name`]), and returns to the caller's own place in its chain."
            )]
            pub fn $newstack(stack: c_int, $($a: $t),*) -> $r;
        }
    };
}

pnmpi_mpi_sys::for_each_routine!(declare);

/// Each routine's id (its index in [`pnmpi_mpi_sys::ROUTINE_NAMES`]), by
/// its `MPI_` name. [`crate::wrap!`] refers to the wrapped routine's entry
/// here, so that a name this MPI does not have is a compile error.
#[allow(non_upper_case_globals)]
pub mod routine {
    macro_rules! id {
        ($id:literal, $mpi:ident, $pmpi:ident, $xmpi:ident, $newstack:ident,
         $kind:ident ($($a:ident : $t:ty),*) -> $r:ty) => {
            #[doc = concat!("The id of `", stringify!($mpi), "`.")]
            pub const $mpi: usize = $id;
        };
    }

    pnmpi_mpi_sys::for_each_routine!(id);
}
