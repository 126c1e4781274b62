//! Safe calls straight to the MPI library (`PMPI_`), past every module
//! below the caller: for a module's own housekeeping, which no other tool
//! should count as the application's. The bundled modules make all their
//! own calls this way: the tracer's set-up and clock alignment, the
//! profiler's private communicator and report, vtime's shadow messages,
//! and every module's datatype sizes ([`crate::sizes`]).
//!
//! The functions are those of [`crate::next`], with the same types and
//! errors; only the route differs. `next::send` is seen by the modules
//! below the caller, `native::send` by none. Neither is seen by the
//! modules above the caller or by the application. For a routine this
//! module does not cover, call `PMPI_X` from [`crate::sys::ffi`] (in C:
//! `PMPI_X` itself).
//!
//! Handles are trusted, as in C (see [`crate::next`]), hence the `allow`
//! below.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

pub use crate::next::{Element, MpiError, Received};

use crate::next::{check, count};
use crate::{Comm, Datatype, Op};
use pnmpi_mpi_sys::{constants, ffi};

/// Each routine's `PMPI_X`, under its `MPI_X` name, for `calls.rs`.
#[allow(unused_imports)]
mod layer {
    macro_rules! alias {
        ($id:literal, $mpi:ident, $pmpi:ident, $xmpi:ident, $newstack:ident,
         $kind:ident ($($a:ident : $t:ty),*) -> $r:ty) => {
            pub use pnmpi_mpi_sys::ffi::$pmpi as $mpi;
        };
    }
    pnmpi_mpi_sys::for_each_routine!(alias);
}

include!("calls.rs");
