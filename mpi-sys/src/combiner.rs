//! MPI's datatype combiners (`MPI_COMBINER_X`), whose values are macros
//! that bindgen cannot evaluate: `constants.c` lists them, compiled
//! against the native `mpi.h`, and [`combiner`] names a value; a type's
//! [`envelope`], asked natively (its contents: `pnmpi_sdk::contents`).
//! The checker, the datatype module and virtual ranks all decode
//! datatypes with them.

use crate::{constants, ffi};
use core::ffi::c_int;

/// A type constructor (`MPI_COMBINER_X`), in `constants.c`'s order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combiner {
    Named,
    Dup,
    Contiguous,
    Vector,
    Hvector,
    HvectorInteger,
    Indexed,
    Hindexed,
    HindexedInteger,
    IndexedBlock,
    HindexedBlock,
    Struct,
    StructInteger,
    Subarray,
    Darray,
    Resized,
    F90Real,
    F90Complex,
    F90Integer,
}

/// Every combiner, in `constants.c`'s order.
pub const COMBINERS: [Combiner; 19] = [
    Combiner::Named,
    Combiner::Dup,
    Combiner::Contiguous,
    Combiner::Vector,
    Combiner::Hvector,
    Combiner::HvectorInteger,
    Combiner::Indexed,
    Combiner::Hindexed,
    Combiner::HindexedInteger,
    Combiner::IndexedBlock,
    Combiner::HindexedBlock,
    Combiner::Struct,
    Combiner::StructInteger,
    Combiner::Subarray,
    Combiner::Darray,
    Combiner::Resized,
    Combiner::F90Real,
    Combiner::F90Complex,
    Combiner::F90Integer,
];

extern "C" {
    static pnmpi_sys_combiners: [i32; 19];
    static pnmpi_sys_combiner_count: i32;
}

/// The combiner whose MPI value is `value`, if MPI defines it.
pub fn combiner(value: i32) -> Option<Combiner> {
    // SAFETY: an immutable C array initialised at load time.
    let values = unsafe { &pnmpi_sys_combiners };
    // SAFETY: as above.
    debug_assert_eq!(unsafe { pnmpi_sys_combiner_count } as usize, COMBINERS.len());
    values.iter().position(|&v| v == value).map(|i| COMBINERS[i])
}

/// What `MPI_Type_get_envelope` says of a datatype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Envelope {
    /// Its combiner, if this binding knows the value MPI gave (`value`).
    pub combiner: Option<Combiner>,
    pub value: i32,
    /// How many integers, addresses and datatypes its contents hold.
    pub counts: [c_int; 3],
}

/// `dt`'s envelope, asked natively; the error code if MPI refuses the
/// handle. (A handle, which MPI checks, as in C: a pointer under Open
/// MPI, never dereferenced here.)
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn envelope(dt: ffi::MPI_Datatype) -> Result<Envelope, c_int> {
    let (mut ni, mut na, mut nd, mut value): (c_int, c_int, c_int, c_int) = (0, 0, 0, 0);
    // SAFETY: local out-parameters; MPI checks the handle.
    let rc = unsafe { ffi::PMPI_Type_get_envelope(dt, &mut ni, &mut na, &mut nd, &mut value) };
    if rc != constants::SUCCESS() {
        return Err(rc);
    }
    Ok(Envelope {
        combiner: combiner(value),
        value,
        counts: [ni, na, nd],
    })
}
