//! The constants of `consts.c`, read from Rust.

use crate::contents::Consts;
use pnmpi_sdk::sys::ffi::MPI_Datatype;
use std::ffi::c_int;

/// A predefined pair type and its parts, as `consts.c` lays it out.
#[repr(C)]
pub struct Pair {
    pub pair: MPI_Datatype,
    pub first: MPI_Datatype,
    pub second: MPI_Datatype,
    /// A C `long`: 64 bits on the LP64 targets pnmpi builds for.
    pub second_at: i64,
}

// SAFETY: immutable C data initialised at load time; the handles are
// never dereferenced here.
unsafe impl Sync for Pair {}

extern "C" {
    static pnmpi_datatype_order_c: c_int;
    static pnmpi_datatype_order_fortran: c_int;
    static pnmpi_datatype_distribute_block: c_int;
    static pnmpi_datatype_distribute_cyclic: c_int;
    static pnmpi_datatype_distribute_none: c_int;
    static pnmpi_datatype_distribute_dflt_darg: c_int;
    static pnmpi_datatype_pairs: [Pair; 9];
    static pnmpi_datatype_pair_count: c_int;
}

/// The array orders and distributions.
pub fn consts() -> Consts {
    // SAFETY: immutable C objects initialised at load time.
    unsafe {
        Consts {
            order_c: pnmpi_datatype_order_c,
            order_fortran: pnmpi_datatype_order_fortran,
            block: pnmpi_datatype_distribute_block,
            cyclic: pnmpi_datatype_distribute_cyclic,
            none: pnmpi_datatype_distribute_none,
            dflt_darg: pnmpi_datatype_distribute_dflt_darg,
        }
    }
}

/// The predefined pair types.
pub fn pairs() -> &'static [Pair] {
    // SAFETY: an immutable C array initialised at load time, of the
    // length consts.c states.
    unsafe { &pnmpi_datatype_pairs[..pnmpi_datatype_pair_count as usize] }
}
