//! Moving typed data through the layer: a send packs its buffer into
//! bytes (a copy when the datatype is contiguous, else `PMPI_Pack`), a
//! receive unpacks them into its own buffer (`PMPI_Unpack`), in the
//! owning rank's context, so that a buffer among its private globals is
//! the rank's own copy. Reductions work on the data as it lies in memory
//! (`PMPI_Reduce_local`), so their contributions are copied by extent.

use pnmpi_mpi_sys::combiner::{envelope, Combiner};
use pnmpi_mpi_sys::{constants as c, ffi};
use pnmpi_sdk::contents::Contents;
use std::ffi::{c_int, c_void};

/// A datatype's packed size, memory span and whether it is contiguous.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    /// Bytes of data per element (`MPI_Type_size`).
    pub size: usize,
    /// Bytes between elements (`MPI_Type_get_extent`).
    pub extent: usize,
    /// Offset of the first byte (`true_lb`), and the bytes from it to the
    /// last (`true_extent`).
    pub lb: isize,
    pub true_extent: usize,
    /// The data of `n` elements is `n * size` bytes from the buffer.
    pub contiguous: bool,
}

/// The layout of `dt`.
pub fn layout(dt: ffi::MPI_Datatype) -> Layout {
    let mut size: c_int = 0;
    let (mut lb, mut extent, mut tlb, mut text): (
        ffi::MPI_Aint,
        ffi::MPI_Aint,
        ffi::MPI_Aint,
        ffi::MPI_Aint,
    ) = (0, 0, 0, 0);
    // SAFETY: out-pointers to locals; an invalid datatype returns an error
    // code and leaves them 0, which packs nothing.
    unsafe {
        ffi::PMPI_Type_size(dt, &mut size);
        ffi::PMPI_Type_get_extent(dt, &mut lb, &mut extent);
        ffi::PMPI_Type_get_true_extent(dt, &mut tlb, &mut text);
    }
    let size = size.max(0) as usize;
    Layout {
        size,
        extent: extent.max(0) as usize,
        // MPI_Aint is `isize` under Open MPI, `i64` under MPICH.
        #[allow(clippy::unnecessary_cast)]
        lb: tlb as isize,
        true_extent: text.max(0) as usize,
        contiguous: tlb == 0 && text as usize == size && extent as usize == size,
    }
}

/// The packed bytes of `count` elements of `dt` at `buf`.
///
/// # Safety
/// `buf` holds `count` elements of `dt`, as MPI requires of a send buffer.
pub unsafe fn pack(buf: *const c_void, count: c_int, dt: ffi::MPI_Datatype) -> Vec<u8> {
    let l = layout(dt);
    let count = count.max(0);
    let bytes = l.size * count as usize;
    if l.contiguous {
        let mut out = vec![0u8; bytes];
        if bytes > 0 {
            // SAFETY: the caller's buffer holds `bytes` contiguous bytes.
            unsafe { std::ptr::copy_nonoverlapping(buf as *const u8, out.as_mut_ptr(), bytes) };
        }
        return out;
    }
    let mut out = vec![0u8; bytes];
    let mut pos: c_int = 0;
    // SAFETY: `out` holds the packed size of `count` elements (MPI_Type_size
    // bytes each); the input is the caller's.
    unsafe {
        ffi::PMPI_Pack(
            buf,
            count,
            dt,
            out.as_mut_ptr() as *mut c_void,
            bytes as c_int,
            &mut pos,
            c::COMM_SELF(),
        )
    };
    out.truncate(pos.max(0) as usize);
    out
}

/// Unpacks `data` into `count` elements of `dt` at `buf`; returns the
/// bytes unpacked, or `Err` with the capacity when `data` does not fit.
///
/// # Safety
/// `buf` has room for `count` elements of `dt`, as MPI requires of a
/// receive buffer.
pub unsafe fn unpack(
    data: &[u8],
    buf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
) -> Result<usize, usize> {
    let l = layout(dt);
    let room = l.size * count.max(0) as usize;
    if data.len() > room {
        return Err(room);
    }
    if data.is_empty() {
        return Ok(0);
    }
    if l.contiguous {
        // SAFETY: the receive buffer has `room >= data.len()` bytes.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), buf as *mut u8, data.len()) };
        return Ok(data.len());
    }
    let elements = data.len().checked_div(l.size).unwrap_or(0) as c_int;
    let mut pos: c_int = 0;
    // SAFETY: `data` holds `elements` packed elements of `dt`, and the
    // receive buffer has room for them.
    unsafe {
        ffi::PMPI_Unpack(
            data.as_ptr() as *const c_void,
            data.len() as c_int,
            &mut pos,
            buf,
            elements,
            dt,
            c::COMM_SELF(),
        )
    };
    Ok(data.len())
}

/// `count` elements of `dt` at `buf` as they lie in memory (for
/// reductions).
///
/// # Safety
/// As for [`pack`].
pub unsafe fn raw(buf: *const c_void, count: c_int, dt: ffi::MPI_Datatype) -> Vec<u8> {
    let l = layout(dt);
    let span = l.extent * count.max(0) as usize;
    let mut out = vec![0u8; span];
    if span > 0 {
        // SAFETY: the buffer spans `count` extents from its lower bound.
        unsafe { std::ptr::copy_nonoverlapping((buf as *const u8).offset(l.lb), out.as_mut_ptr(), span) };
    }
    out
}

/// Writes memory-layout data back (the inverse of [`raw`]).
///
/// # Safety
/// `buf` spans `data.len()` bytes from `dt`'s lower bound.
pub unsafe fn put_raw(data: &[u8], buf: *mut c_void, dt: ffi::MPI_Datatype) {
    let l = layout(dt);
    if !data.is_empty() {
        // SAFETY: the caller's receive buffer spans these bytes.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), (buf as *mut u8).offset(l.lb), data.len()) };
    }
}

/// `inout = in op inout`, elementwise, by the native MPI.
pub fn reduce(input: &[u8], inout: &mut [u8], count: c_int, dt: ffi::MPI_Datatype, op: ffi::MPI_Op) {
    let lb = layout(dt).lb;
    // SAFETY: both buffers hold `count` elements of `dt` in memory layout,
    // moved so that their lower bound is the vector's start.
    unsafe {
        ffi::PMPI_Reduce_local(
            input.as_ptr().wrapping_offset(-lb) as *const c_void,
            inout.as_mut_ptr().wrapping_offset(-lb) as *mut c_void,
            count,
            dt,
            op,
        )
    };
}

/// The byte runs that `count` elements of `dt` occupy from a buffer, in
/// the type map's order: `(offset, length)`, adjacent bytes merged. A
/// contiguous type is one run; another type's map is read off
/// `PMPI_Pack` of an image whose every byte holds a byte of its own
/// offset, one pass per byte the offsets need.
pub fn runs(count: c_int, dt: ffi::MPI_Datatype) -> Vec<(i64, u64)> {
    let l = layout(dt);
    let n = count.max(0) as usize;
    let bytes = l.size * n;
    if bytes == 0 {
        return Vec::new();
    }
    if l.contiguous {
        return vec![(0, bytes as u64)];
    }
    let tlb = l.lb;
    let span = (n - 1) * l.extent + l.true_extent;
    let mut image = vec![0u8; span];
    let mut offsets = vec![0u64; bytes];
    let mut shift = 0;
    while shift == 0 || (span - 1) >> shift > 0 {
        for (i, b) in image.iter_mut().enumerate() {
            *b = (i >> shift) as u8;
        }
        // SAFETY: the image spans every byte of the `count` elements,
        // from the type's true lower bound.
        let packed = unsafe { pack(image.as_ptr().wrapping_offset(-tlb).cast(), count, dt) };
        for (o, &p) in offsets.iter_mut().zip(&packed) {
            *o |= u64::from(p) << shift;
        }
        shift += 8;
    }
    let mut out: Vec<(i64, u64)> = Vec::new();
    for o in offsets {
        let at = o as i64 + tlb as i64;
        match out.last_mut() {
            Some((start, len)) if *start + *len as i64 == at => *len += 1,
            _ => out.push((at, 1)),
        }
    }
    out
}

/// The predefined type `dt` is built of (`dt` itself when predefined),
/// which an accumulate combines; `None` when MPI cannot say. The first
/// type of each constructor's contents is followed (MPI requires one
/// basic type throughout an accumulate's types); the contents walked are
/// kept until then, their derived types freed with them.
pub fn basic(dt: ffi::MPI_Datatype) -> Option<ffi::MPI_Datatype> {
    let mut walked = Vec::new();
    let mut at = dt;
    for _ in 0..64 {
        if envelope(at).ok()?.combiner? == Combiner::Named {
            return Some(at);
        }
        let c = Contents::of(at)?;
        at = *c.types.first()?;
        walked.push(c);
    }
    None
}
