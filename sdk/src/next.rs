//! Safe calls one layer down the chain (`XMPI_`), for what a module does
//! on the application's behalf: a wrapper that passes a call on in another
//! form, or that wants the modules below to see what it does.
//!
//! Each call enters the chain of its own routine just below the calling
//! module, exactly like `XMPI_X` in C: the modules below see it, the
//! modules above and the application do not. Called outside any wrapper or
//! hook (from a thread the module started itself), it starts at the top of
//! the default stack, like an application call.
//!
//! A module's *housekeeping* (its set-up, a private communicator, datatype
//! sizes, a report gathered at `MPI_Finalize`) belongs in
//! [`crate::native`] instead, the same calls straight to the MPI library:
//! through `next`, every tool below would count them as the application's.
//!
//! Buffers are slices of [`Element`] types, whose MPI datatype is known,
//! so a count can never disagree with a buffer; errors are `Result`s.
//!
//! Handles are trusted, as in C: pass the wrapper's own arguments, handles
//! MPI returned, or [`crate::constants`]. Open MPI's handles are pointers
//! that MPI dereferences, and a Rust type cannot tell a real one from an
//! invented one (MPICH's are integers), hence the `allow` below.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

use crate::{Comm, Datatype, Op};
use pnmpi_mpi_sys::{constants, ffi};
use std::ffi::c_int;
use std::fmt;

/// Why a call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MpiError {
    /// MPI returned this error code instead of `MPI_SUCCESS`.
    Code(i32),
    /// A buffer of this many elements does not fit in an MPI `int` count.
    TooLong(usize),
}

impl fmt::Display for MpiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MpiError::Code(code) => write!(f, "MPI error code {code}"),
            MpiError::TooLong(n) => write!(f, "{n} elements do not fit in an MPI count"),
        }
    }
}

impl std::error::Error for MpiError {}

/// Turns an MPI return code into a `Result`.
pub(crate) fn check(code: c_int) -> Result<(), MpiError> {
    if code == constants::SUCCESS() {
        Ok(())
    } else {
        Err(MpiError::Code(code))
    }
}

/// A slice's length as an MPI count.
pub(crate) fn count(len: usize) -> Result<c_int, MpiError> {
    c_int::try_from(len).map_err(|_| MpiError::TooLong(len))
}

mod sealed {
    /// Only this crate chooses which Rust types map to which MPI datatype.
    pub trait SealedElement {}
}

/// A Rust type with an MPI datatype of exactly its size and layout, so
/// that a slice of it is a valid MPI buffer. Implemented by this crate
/// only (sealed): a wrong mapping would let MPI write out of bounds.
pub trait Element: sealed::SealedElement + Copy + Default {
    /// The MPI datatype of one element.
    fn datatype() -> Datatype;
}

macro_rules! elements {
    ($($t:ty => $dt:ident, $doc:literal;)*) => {
        $(
            impl sealed::SealedElement for $t {}
            #[doc = $doc]
            impl Element for $t {
                fn datatype() -> Datatype {
                    constants::$dt()
                }
            }
        )*
    };
}

elements! {
    u8 => BYTE, "`MPI_BYTE`";
    i32 => INT, "`MPI_INT`";
    i64 => LONG_LONG, "`MPI_LONG_LONG` (64 bits on every platform pnmpi builds for)";
    u64 => UINT64_T, "`MPI_UINT64_T`";
    f64 => DOUBLE, "`MPI_DOUBLE`";
}

/// What [`recv`] received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Received {
    /// The sender's rank (useful with `constants::ANY_SOURCE()`).
    pub source: i32,
    /// The message's tag (useful with `constants::ANY_TAG()`).
    pub tag: i32,
    /// How many elements arrived at the start of the buffer.
    pub len: usize,
}

/// Each routine's `XMPI_X`, under its `MPI_X` name, for `calls.rs`.
#[allow(unused_imports)]
mod layer {
    macro_rules! alias {
        ($id:literal, $mpi:ident, $pmpi:ident, $xmpi:ident, $newstack:ident,
         $kind:ident ($($a:ident : $t:ty),*) -> $r:ty) => {
            pub use crate::raw::$xmpi as $mpi;
        };
    }
    pnmpi_mpi_sys::for_each_routine!(alias);
}

include!("calls.rs");
