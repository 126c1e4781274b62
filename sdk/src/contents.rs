//! A derived datatype's constructor arguments, as
//! `MPI_Type_get_contents` gives them, asked natively with the counts of
//! its envelope (`pnmpi_mpi_sys::combiner::envelope`): what the checker,
//! the datatype module and virtual ranks decode types with. The derived
//! types it hands out are the caller's to free: [`raw`] leaves that to
//! the caller, a [`Contents`] frees them when dropped, so that every
//! reader of contents frees them alike.

use crate::constants;
use crate::sys::combiner::{envelope, Combiner};
use crate::sys::ffi;
use std::ffi::c_int;

/// The integers, the addresses and the datatypes of a type's contents
/// (the derived datatypes handed out to the caller, to free).
pub type Raw = (Vec<c_int>, Vec<i64>, Vec<ffi::MPI_Datatype>);

/// `dt`'s [`Raw`] contents, of the counts its envelope gave; the error
/// code if MPI refuses. (A handle, which MPI checks, as in C.)
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn raw(dt: ffi::MPI_Datatype, [ni, na, nd]: [c_int; 3]) -> Result<Raw, c_int> {
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

/// Arguments past which a type is not read (a guard against a malformed
/// type, not a limit real codes reach: an indexed type of 4096 blocks).
const MAX_ARGS: c_int = 1 << 14;

/// Whether MPI names `dt` a derived type (one whose handle is freed).
fn derived(dt: ffi::MPI_Datatype) -> bool {
    envelope(dt).is_ok_and(|e| e.combiner.is_some_and(|c| c != Combiner::Named))
}

/// A derived type's contents, whose derived types are freed with it.
pub struct Contents {
    pub ints: Vec<c_int>,
    pub addrs: Vec<i64>,
    pub types: Vec<ffi::MPI_Datatype>,
}

impl Contents {
    /// The contents of `dt`; `None` for a predefined type, or if MPI
    /// refuses.
    pub fn of(dt: ffi::MPI_Datatype) -> Option<Contents> {
        let e = envelope(dt).ok()?;
        if e.combiner? == Combiner::Named || e.counts.iter().any(|&n| n > MAX_ARGS) {
            return None;
        }
        // On an error nothing was returned to free.
        let (ints, addrs, types) = raw(dt, e.counts).ok()?;
        Some(Contents { ints, addrs, types })
    }

    /// The `i`-th integer argument (0 past the end).
    pub fn int(&self, i: usize) -> i64 {
        i64::from(self.ints.get(i).copied().unwrap_or(0))
    }

    /// The `i`-th address argument (0 past the end).
    pub fn addr(&self, i: usize) -> i64 {
        self.addrs.get(i).copied().unwrap_or(0)
    }
}

impl Drop for Contents {
    fn drop(&mut self) {
        for &t in &self.types {
            if derived(t) {
                let mut t = t;
                // SAFETY: a derived type's handle MPI_Type_get_contents
                // returned to us, freed once.
                unsafe { ffi::PMPI_Type_free(&mut t) };
            }
        }
    }
}
