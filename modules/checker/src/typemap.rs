//! A datatype's type map, as MPI defines it: each basic element's
//! displacement, with what it holds and its size, read from the type's
//! contents. The buffer check (`buftype`) lays it over the C variable the
//! buffer points into.

use crate::contents::{envelope, Contents};
use crate::types;
use pnmpi_sdk::sys::combiner::Combiner;
use pnmpi_sdk::sys::ffi::MPI_Datatype;
use pnmpi_sdk::sys::Handle;

/// Elements past which a type map is cut: the buffer check compares the
/// first ones (a wrong type shows in its first elements).
pub const MAX_ELEMS: usize = 256;
/// Nesting past which a type is not read.
const MAX_DEPTH: u32 = 16;

/// A basic element of a type map: its kind is a predefined type's
/// (consts.c), or `x` for the untyped `MPI_BYTE` and `MPI_PACKED`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Elem {
    pub disp: i64,
    pub kind: u8,
    pub size: u64,
}

/// The first [`MAX_ELEMS`] elements of one `dt`, in the type map's
/// order; `None` if a part of it is not read (a pair type such as
/// `MPI_DOUBLE_INT`, a subarray or darray, the Fortran types).
pub fn of(dt: MPI_Datatype) -> Option<Vec<Elem>> {
    let mut out = Vec::new();
    flatten(dt, 0, 0, &mut out)?;
    Some(out)
}

/// Appends `dt`'s elements at displacement `base` to `out` until it is
/// full; `None` if a part is not read.
fn flatten(dt: MPI_Datatype, base: i64, depth: u32, out: &mut Vec<Elem>) -> Option<()> {
    if depth > MAX_DEPTH {
        return None;
    }
    let (combiner, _) = envelope(dt)?;
    if combiner == Combiner::Named {
        let (kind, size) = types::kind(dt)?;
        // Untyped: MPI_BYTE and MPI_PACKED go anywhere.
        let kind = if crate::consts::untyped().iter().any(|t| t.bits() == dt.bits()) {
            b'x'
        } else {
            kind
        };
        if out.len() < MAX_ELEMS {
            out.push(Elem {
                disp: base,
                kind,
                size,
            });
        }
        return Some(());
    }
    let c = Contents::of(dt)?;
    let old = *c.types.first()?;
    let ext = types::extent_of(old);
    let n = |i: usize| c.int(i).max(0);
    // Blocks of `len` elements of `t` at byte displacements.
    let mut blocks = |blocks: &mut dyn Iterator<Item = (i64, i64, MPI_Datatype)>| -> Option<()> {
        for (disp, len, t) in blocks {
            let e = types::extent_of(t);
            for j in 0..len {
                if out.len() >= MAX_ELEMS {
                    return Some(());
                }
                flatten(t, base + disp + j * e, depth + 1, out)?;
            }
        }
        Some(())
    };
    match combiner {
        Combiner::Dup | Combiner::Resized => blocks(&mut std::iter::once((0, 1, old))),
        Combiner::Contiguous => blocks(&mut std::iter::once((0, n(0), old))),
        Combiner::Vector => blocks(&mut (0..n(0)).map(|i| (i * c.int(2) * ext, n(1), old))),
        Combiner::Hvector => blocks(&mut (0..n(0)).map(|i| (i * c.addr(0), n(1), old))),
        Combiner::Indexed => {
            let count = n(0) as usize;
            blocks(&mut (0..count).map(|i| (c.int(1 + count + i) * ext, n(1 + i), old)))
        }
        Combiner::Hindexed => blocks(&mut (0..n(0) as usize).map(|i| (c.addr(i), n(1 + i), old))),
        Combiner::IndexedBlock => blocks(&mut (0..n(0) as usize).map(|i| (c.int(2 + i) * ext, n(1), old))),
        Combiner::HindexedBlock => blocks(&mut (0..n(0) as usize).map(|i| (c.addr(i), n(1), old))),
        Combiner::Struct => {
            let types = &c.types;
            blocks(&mut (0..n(0) as usize).map(|i| (c.addr(i), n(1 + i), types[i])))
        }
        _ => None,
    }
}
