//! A datatype's envelope and a derived datatype's constructor arguments,
//! as the checker reads them (natively: the checker's own queries). The
//! contents are the SDK's [`Contents`], which frees the derived types it
//! was handed when dropped, so every reader of contents (signatures,
//! block layouts, type maps) frees them alike.

pub use pnmpi_sdk::contents::Contents;
use pnmpi_sdk::sys::combiner::{self, Combiner};
use pnmpi_sdk::sys::ffi::MPI_Datatype;
use std::ffi::c_int;

/// `dt`'s combiner (`Named` for a predefined type); `None` if MPI refuses
/// the handle or names a combiner this MPI binding does not know.
pub fn envelope(dt: MPI_Datatype) -> Option<(Combiner, [c_int; 3])> {
    let e = combiner::envelope(dt).ok()?;
    Some((e.combiner?, e.counts))
}
