//! A derived datatype's constructor arguments, as
//! `MPI_Type_get_contents` gives them (called natively: the checker's own
//! queries). The derived types it returns are the caller's to free; a
//! [`Contents`] frees them when dropped, so every reader of contents
//! (signatures, block layouts, type maps) frees them alike.

use pnmpi_sdk::sys::combiner::{combiner, Combiner};
use pnmpi_sdk::sys::ffi::{self, MPI_Aint, MPI_Datatype};
use std::ffi::c_int;

/// Arguments past which a type is not read (a guard against a malformed
/// type, not a limit real codes reach: an indexed type of 4096 blocks).
const MAX_ARGS: c_int = 1 << 14;

/// `dt`'s combiner (`Named` for a predefined type); `None` if MPI refuses
/// the handle or names a combiner this MPI binding does not know.
pub fn envelope(dt: MPI_Datatype) -> Option<(Combiner, [c_int; 3])> {
    let (mut ni, mut na, mut nd, mut comb): (c_int, c_int, c_int, c_int) = (0, 0, 0, 0);
    // SAFETY: local out-parameters; MPI checks the handle.
    let rc = unsafe { ffi::PMPI_Type_get_envelope(dt, &mut ni, &mut na, &mut nd, &mut comb) };
    if rc != pnmpi_sdk::constants::SUCCESS() {
        return None;
    }
    combiner(comb).map(|c| (c, [ni, na, nd]))
}

/// A derived type's contents.
pub struct Contents {
    pub ints: Vec<c_int>,
    pub addrs: Vec<i64>,
    pub types: Vec<MPI_Datatype>,
}

impl Contents {
    /// The contents of `dt`; `None` for a predefined type, or if MPI
    /// refuses.
    pub fn of(dt: MPI_Datatype) -> Option<Contents> {
        let (_, [ni, na, nd]) = envelope(dt).filter(|(c, _)| *c != Combiner::Named)?;
        if ni > MAX_ARGS || na > MAX_ARGS || nd > MAX_ARGS {
            return None;
        }
        let mut ints = vec![0 as c_int; ni.max(0) as usize];
        let mut addrs = vec![0 as MPI_Aint; na.max(0) as usize];
        let mut types = vec![pnmpi_sdk::constants::DATATYPE_NULL(); nd.max(0) as usize];
        // SAFETY: arrays of the lengths the envelope gave.
        let rc = unsafe {
            ffi::PMPI_Type_get_contents(
                dt,
                ni,
                na,
                nd,
                ints.as_mut_ptr(),
                addrs.as_mut_ptr(),
                types.as_mut_ptr(),
            )
        };
        // MPI_Aint is `isize` under Open MPI, `i64` under MPICH.
        #[allow(clippy::unnecessary_cast)]
        let mut contents = Contents {
            ints,
            addrs: addrs.into_iter().map(|a| a as i64).collect(),
            types,
        };
        if rc != pnmpi_sdk::constants::SUCCESS() {
            // Nothing was returned to free.
            contents.types.clear();
            return None;
        }
        Some(contents)
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
            if envelope(t).is_some_and(|(c, _)| c != Combiner::Named) {
                let mut t = t;
                // SAFETY: a derived type's handle MPI_Type_get_contents
                // returned to us, freed once.
                unsafe { ffi::PMPI_Type_free(&mut t) };
            }
        }
    }
}
