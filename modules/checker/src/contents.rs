//! A derived datatype's constructor arguments, as
//! `MPI_Type_get_contents` gives them (called natively: the checker's own
//! queries). The derived types it returns are the caller's to free; a
//! [`Contents`] frees them when dropped, so every reader of contents
//! (signatures, block layouts, type maps) frees them alike.

use pnmpi_sdk::sys::combiner::{self, Combiner};
use pnmpi_sdk::sys::ffi::{self, MPI_Datatype};
use std::ffi::c_int;

/// Arguments past which a type is not read (a guard against a malformed
/// type, not a limit real codes reach: an indexed type of 4096 blocks).
const MAX_ARGS: c_int = 1 << 14;

/// `dt`'s combiner (`Named` for a predefined type); `None` if MPI refuses
/// the handle or names a combiner this MPI binding does not know.
pub fn envelope(dt: MPI_Datatype) -> Option<(Combiner, [c_int; 3])> {
    let e = combiner::envelope(dt).ok()?;
    Some((e.combiner?, e.counts))
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
        let (_, counts) = envelope(dt).filter(|(c, _)| *c != Combiner::Named)?;
        if counts.iter().any(|&n| n > MAX_ARGS) {
            return None;
        }
        // On an error nothing was returned to free.
        let (ints, addrs, types) = pnmpi_sdk::contents::of(dt, counts).ok()?;
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
            if envelope(t).is_some_and(|(c, _)| c != Combiner::Named) {
                let mut t = t;
                // SAFETY: a derived type's handle MPI_Type_get_contents
                // returned to us, freed once.
                unsafe { ffi::PMPI_Type_free(&mut t) };
            }
        }
    }
}
