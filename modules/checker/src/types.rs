//! Datatypes as MPI describes them: a type's signature from its envelope
//! and contents (`MPI_Type_get_envelope`, `MPI_Type_get_contents`, called
//! natively: the checker's own queries), its size, and whether its data
//! is one contiguous span (for checksums).

use crate::config::{self, Types};
use crate::consts;
use crate::contents::{envelope, Contents};
use crate::registry;
use crate::sig::Sig;
use pnmpi_sdk::sys::combiner::Combiner;
use pnmpi_sdk::sys::ffi::{self, MPI_Aint, MPI_Datatype};
use pnmpi_sdk::sys::Handle;
use std::ffi::c_int;
use std::sync::OnceLock;

/// Nesting depth past which a type counts as opaque (a guard against a
/// malformed type, not a limit real codes reach).
const MAX_DEPTH: u32 = 16;

/// The predefined types by handle, sorted for a binary search: each
/// one's handle, name in signatures (its first index in
/// `consts::predefined_types` + 1) and signature. Built at the first
/// checked call (after `MPI_Init`, as `MPI_Type_size` needs), since a
/// checked call asks about a datatype one to three times.
static PREDEFINED: OnceLock<Vec<(u64, u64, Sig)>> = OnceLock::new();

fn table() -> &'static [(u64, u64, Sig)] {
    PREDEFINED.get_or_init(|| {
        let mut all: Vec<(u64, u64, Sig)> = consts::predefined_types()
            .iter()
            .zip(consts::type_kinds())
            .enumerate()
            .map(|(i, (&t, &kind))| (t.bits(), i as u64 + 1, named(t, i as u64 + 1, kind)))
            .collect();
        // Aliases (one handle under two names) keep their first name.
        all.sort_by_key(|&(bits, id, _)| (bits, id));
        all.dedup_by_key(|e| e.0);
        all
    })
}

/// A predefined type's entry, if `dt` is one.
#[inline]
fn lookup(dt: MPI_Datatype) -> Option<&'static (u64, u64, Sig)> {
    let t = table();
    t.binary_search_by_key(&dt.bits(), |e| e.0).ok().map(|i| &t[i])
}

/// The predefined type's index + 1 (its name in signatures), or 0.
pub fn predefined(dt: MPI_Datatype) -> u64 {
    lookup(dt).map_or(0, |e| e.1)
}

/// What a predefined type holds (its kind letter, see consts.c) and its
/// size; `None` for a derived type or a pair type (`MPI_DOUBLE_INT`),
/// which hold more than one kind.
pub fn kind(dt: MPI_Datatype) -> Option<(u8, u64)> {
    let &(_, id, sig) = lookup(dt)?;
    let kind = *consts::type_kinds().get(id as usize - 1)?;
    (kind != b'-').then_some((kind, sig.bytes))
}

/// The size of `dt` in bytes, 0 if MPI refuses it.
pub fn size(dt: MPI_Datatype) -> u64 {
    match lookup(dt) {
        Some(&(_, _, sig)) => sig.bytes,
        None => native_size(dt),
    }
}

/// `MPI_Type_size` of `dt`, 0 if MPI refuses it.
fn native_size(dt: MPI_Datatype) -> u64 {
    let mut size: c_int = 0;
    // SAFETY: `size` is a local out-parameter; MPI checks the handle.
    let rc = unsafe { ffi::PMPI_Type_size(dt, &mut size) };
    if rc == pnmpi_sdk::constants::SUCCESS() {
        size.max(0) as u64
    } else {
        0
    }
}

/// `(lb, extent)` of `dt`.
pub fn extent(dt: MPI_Datatype) -> (i64, i64) {
    let (mut lb, mut extent): (MPI_Aint, MPI_Aint) = (0, 0);
    // SAFETY: local out-parameters; MPI checks the handle.
    unsafe { ffi::PMPI_Type_get_true_extent(dt, &mut lb, &mut extent) };
    // MPI_Aint is `isize` under Open MPI, `i64` under MPICH.
    #[allow(clippy::unnecessary_cast)]
    (lb as i64, extent as i64)
}

/// The byte span of `count` elements of `dt` at `buf`, if their data is
/// contiguous (size equals true extent): `(start, len)`.
pub fn contiguous_span(buf: usize, count: i32, dt: MPI_Datatype) -> Option<(usize, usize)> {
    let size = size(dt);
    let (lb, extent) = extent(dt);
    if count <= 0 || size == 0 || size as i64 != extent || buf == 0 {
        return None;
    }
    let start = (buf as i64).checked_add(lb)? as usize;
    Some((start, size as usize * count as usize))
}

/// The signature of one element of `dt`: the registry's (computed at
/// commit) for a derived type, else computed now.
pub fn signature(dt: MPI_Datatype) -> Sig {
    if let Some(&(_, _, sig)) = lookup(dt) {
        return sig;
    }
    if let Some(sig) = registry::lock().types.get(&dt.bits()).and_then(|t| t.sig) {
        return sig;
    }
    walk(dt, 0)
}

/// The name MPI gives `dt` (`MPI_INT`, a name the application set, or
/// "" for a derived type without one), for reports.
pub fn name(dt: MPI_Datatype) -> String {
    let mut buf = [0u8; 256];
    let mut len: c_int = 0;
    // SAFETY: room for MPI_MAX_OBJECT_NAME (at most 256 bytes here) and
    // its length; MPI checks the handle.
    let rc = unsafe { ffi::PMPI_Type_get_name(dt, buf.as_mut_ptr().cast(), &mut len) };
    if rc != pnmpi_sdk::constants::SUCCESS() {
        return String::new();
    }
    String::from_utf8_lossy(&buf[..len.clamp(0, 255) as usize]).into_owned()
}

/// A predefined type's signature: named `id`, or under `types native`
/// by what it holds (`kind`, see consts.c) and its size.
fn named(dt: MPI_Datatype, id: u64, kind: u8) -> Sig {
    let size = native_size(dt);
    let native = config::get().types == Types::Native;
    if consts::untyped().iter().any(|t| t.bits() == dt.bits()) || (native && kind == b'r') {
        Sig::opaque(size)
    } else if native && kind != b'-' {
        // Above the ids of named types (1 to the number of them).
        Sig::basic(1 << 16 | u64::from(kind) << 8 | size, size)
    } else {
        Sig::basic(id, size)
    }
}

/// Computes the signature of `dt` from its envelope and contents.
pub fn walk(dt: MPI_Datatype, depth: u32) -> Sig {
    let opaque = || Sig::opaque(size(dt));
    if depth > MAX_DEPTH {
        return opaque();
    }
    // The MPI-1 `_INTEGER` forms, darray and the F90 types are not
    // walked: opaque, as a combiner MPI does not name.
    let unwalked = |c: &Combiner| {
        matches!(
            c,
            Combiner::HvectorInteger
                | Combiner::HindexedInteger
                | Combiner::StructInteger
                | Combiner::Darray
                | Combiner::F90Real
                | Combiner::F90Complex
                | Combiner::F90Integer
        )
    };
    let Some((combiner, _)) = envelope(dt).filter(|(c, _)| !unwalked(c)) else {
        return opaque();
    };
    if combiner == Combiner::Named {
        return lookup(dt).map_or_else(opaque, |e| e.2);
    }
    let Some(c) = Contents::of(dt) else {
        return opaque();
    };
    let sub: Vec<Sig> = c.types.iter().map(|&t| walk(t, depth + 1)).collect();
    let n = |i: usize| c.int(i).max(0) as u64;
    let Some(&first) = sub.first() else {
        return opaque();
    };
    match combiner {
        Combiner::Dup | Combiner::Resized => first,
        Combiner::Contiguous => first.times(n(0)),
        Combiner::Vector | Combiner::Hvector => first.times(n(1)).times(n(0)),
        Combiner::IndexedBlock | Combiner::HindexedBlock => first.times(n(1)).times(n(0)),
        Combiner::Indexed | Combiner::Hindexed => {
            (0..n(0) as usize).fold(Sig::default(), |acc, i| acc.then(first.times(n(1 + i))))
        }
        Combiner::Struct => (0..n(0) as usize).fold(Sig::default(), |acc, i| {
            acc.then(sub.get(i).copied().unwrap_or_else(opaque).times(n(1 + i)))
        }),
        Combiner::Subarray => {
            let dims = n(0) as usize;
            let elements = (0..dims).map(|d| n(1 + dims + d)).product::<u64>();
            first.times(elements)
        }
        // Named types returned above; the unwalked ones never get here.
        _ => opaque(),
    }
}

/// The blocks of basic elements of `dt`, when it is a struct or a vector
/// of predefined types (`layout`): MPI's contents, one level deep.
pub fn blocks(dt: MPI_Datatype) -> Option<Vec<crate::layout::Block>> {
    use crate::layout::{self, Block};
    let (combiner, _) =
        envelope(dt).filter(|(c, _)| matches!(c, Combiner::Struct | Combiner::Vector | Combiner::Hvector))?;
    let c = Contents::of(dt)?;
    // Only predefined element types.
    if c.types.iter().any(|&t| lookup(t).is_none()) {
        return None;
    }
    let old = *c.types.first()?;
    Some(match combiner {
        Combiner::Struct => (0..c.int(0).max(0) as usize)
            .map(|i| Block {
                disp: c.addr(i),
                len: c.int(1 + i).saturating_mul(extent_of(c.types[i])),
            })
            .collect(),
        Combiner::Vector => {
            let extent = extent_of(old);
            layout::vector(c.int(0), c.int(1), c.int(2).saturating_mul(extent), extent)
        }
        _ => layout::vector(c.int(0), c.int(1), c.addr(0), extent_of(old)),
    })
}

/// The extent of `dt` (`MPI_Type_get_extent`).
pub fn extent_of(dt: MPI_Datatype) -> i64 {
    let (mut lb, mut extent): (MPI_Aint, MPI_Aint) = (0, 0);
    // SAFETY: local out-parameters; MPI checks the handle.
    unsafe { ffi::PMPI_Type_get_extent(dt, &mut lb, &mut extent) };
    #[allow(clippy::unnecessary_cast)]
    let extent = extent as i64;
    extent
}
