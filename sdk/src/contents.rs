//! A derived datatype's constructor arguments, as
//! `MPI_Type_get_contents` gives them, asked natively with the counts of
//! its envelope (`pnmpi_mpi_sys::combiner::envelope`): what the checker,
//! the datatype module and virtual ranks decode types with.

use crate::constants;
use crate::sys::ffi;
use std::ffi::c_int;

/// The integers, the addresses and the datatypes of a type's contents
/// (the derived datatypes handed out to the caller, to free).
pub type Contents = (Vec<c_int>, Vec<i64>, Vec<ffi::MPI_Datatype>);

/// `dt`'s [`Contents`], of the counts its envelope gave; the error code
/// if MPI refuses. (A handle, which MPI checks, as in C.)
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn of(dt: ffi::MPI_Datatype, [ni, na, nd]: [c_int; 3]) -> Result<Contents, c_int> {
    let mut ints = vec![0 as c_int; ni.max(0) as usize];
    let mut addrs = vec![0 as ffi::MPI_Aint; na.max(0) as usize];
    let mut types = vec![constants::DATATYPE_NULL(); nd.max(0) as usize];
    // SAFETY: arrays of the lengths given, which the envelope gave.
    let rc = unsafe {
        ffi::PMPI_Type_get_contents(
            dt,
            ni.max(0),
            na.max(0),
            nd.max(0),
            ints.as_mut_ptr(),
            addrs.as_mut_ptr(),
            types.as_mut_ptr(),
        )
    };
    if rc != constants::SUCCESS() {
        return Err(rc);
    }
    // MPI_Aint is `isize` under Open MPI, `i64` under MPICH.
    #[allow(clippy::unnecessary_cast)]
    Ok((ints, addrs.into_iter().map(|a| a as i64).collect(), types))
}
