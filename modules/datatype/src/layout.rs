//! LLNL PnMPI's walk state, in the C layout of its `datatype.h`
//! (`PNMPIMOD_Datatype_Parameters_t` and the structures under it), which
//! the `PNMPIMOD_Datatype_getItem` and `_nextItem` macros read and
//! advance in the caller's code. A walk here is always two levels deep:
//! the top lists one entry per run, at the run's offset, and each entry's
//! type is a homogeneous leaf (`count` elements of one basic type of
//! `homogeneous` bytes). The state handed out is the one LLNL's walk is
//! in on its first item, so that modules compiled against LLNL's header
//! walk it too.

use crate::flatten::{Block, Error};
use pnmpi_sdk::constants;
use pnmpi_sdk::sys::ffi::{MPI_Aint, MPI_Datatype};
use std::ffi::{c_char, c_int};
use std::ptr::null_mut;

/// `PNMPIMOD_Datatype_storage_t`: a type in the walk.
#[repr(C)]
pub struct Storage {
    pub count: c_int,
    pub depth: c_int,
    pub size: c_int,
    pub realsize: c_int,
    pub homogeneous: c_int,
    pub usage: c_int,
    pub native: c_int,
    pub mpi_dt: MPI_Datatype,
    pub store_dt: MPI_Datatype,
    pub list: *mut Entry,
}

/// `PNMPIMOD_Datatype_entry_t`: a part of a type.
#[repr(C)]
pub struct Entry {
    pub start: MPI_Aint,
    pub block: c_int,
    pub repeat: c_int,
    pub step: c_int,
    pub dt: *mut Storage,
}

/// `PNMPIMOD_Datatype_stack_t`: the walk's position at one level.
#[repr(C)]
pub struct Level {
    pub i: c_int,
    pub j: c_int,
    pub b: c_int,
    pub buf: *mut c_char,
    pub startbuf: *mut c_char,
    pub blockbuf: *mut c_char,
    pub dt: *mut Storage,
}

/// `PNMPIMOD_Datatype_Parameters_t`: the caller's handle on a walk.
#[repr(C)]
pub struct Parameters {
    pub level: c_int,
    pub top: *mut Storage,
    pub stack: *mut Level,
}

/// Everything a walk points into, in one allocation whose first field is
/// the top (so that `top` finds the whole when the walk is deleted).
#[repr(C)]
pub struct Walk {
    top: Storage,
    stack: [Level; 2],
    entries: Vec<Entry>,
    leaves: Vec<Storage>,
}

fn int(v: i64) -> Result<c_int, Error> {
    c_int::try_from(v).map_err(|_| Error::TooLarge)
}

/// A homogeneous leaf: `count` elements of `basic`, `size` bytes each.
fn leaf(basic: MPI_Datatype, count: u64, size: i64) -> Result<Storage, Error> {
    let count = i64::try_from(count).map_err(|_| Error::TooLarge)?;
    Ok(Storage {
        count: int(count)?,
        depth: 1,
        size: int(count * size)?,
        realsize: int(count * size)?,
        // A leaf is told by a non-zero element size.
        homogeneous: int(size.max(1))?,
        usage: 1,
        native: 1,
        mpi_dt: basic,
        store_dt: constants::DATATYPE_NULL(),
        list: null_mut(),
    })
}

/// Builds the walk of `blocks` (of a type `dt`) over `buf`, and points
/// `params` at its first item. An empty walk has one item of no
/// elements of `empty` (a basic type and its size).
pub fn start(
    params: &mut Parameters,
    buf: *mut c_char,
    dt: MPI_Datatype,
    blocks: &[Block<MPI_Datatype>],
    empty: (MPI_Datatype, i64),
) -> Result<(), Error> {
    let mut leaves = blocks
        .iter()
        .map(|b| leaf(b.basic, b.count, b.size))
        .collect::<Result<Vec<_>, _>>()?;
    let mut offsets: Vec<i64> = blocks.iter().map(|b| b.offset).collect();
    if leaves.is_empty() {
        leaves.push(leaf(empty.0, 0, empty.1)?);
        offsets.push(0);
    }
    let bytes: i64 = blocks.iter().map(|b| b.count as i64 * b.size).sum();
    let span = blocks
        .iter()
        .map(|b| b.offset + b.count as i64 * b.size)
        .max()
        .unwrap_or(0);
    let mut walk = Box::new(Walk {
        top: Storage {
            count: int(leaves.len() as i64)?,
            depth: 2,
            size: int(span)?,
            realsize: int(bytes)?,
            homogeneous: 0,
            usage: 1,
            native: 0,
            mpi_dt: dt,
            store_dt: constants::DATATYPE_NULL(),
            list: null_mut(),
        },
        stack: [Level::empty(), Level::empty()],
        entries: Vec::with_capacity(leaves.len()),
        leaves,
    });
    // The vectors are never resized again: the pointers into them stay.
    let leaf_ptr = walk.leaves.as_mut_ptr();
    for (k, &offset) in offsets.iter().enumerate() {
        // MPI_Aint is `isize` under Open MPI, `i64` under MPICH.
        #[allow(clippy::unnecessary_cast)]
        let start = offset as MPI_Aint;
        walk.entries.push(Entry {
            start,
            block: 1,
            repeat: 1,
            step: 0,
            // `k` is in bounds: one entry per leaf.
            dt: leaf_ptr.wrapping_add(k),
        });
    }
    walk.top.list = walk.entries.as_mut_ptr();
    let first = buf.wrapping_offset(offsets[0] as isize);
    let top: *mut Storage = &mut walk.top;
    walk.stack[0] = Level {
        buf: first,
        startbuf: buf,
        blockbuf: first,
        dt: top,
        ..Level::empty()
    };
    walk.stack[1] = Level {
        buf: first,
        startbuf: first,
        blockbuf: first,
        dt: leaf_ptr,
        ..Level::empty()
    };
    let walk = Box::into_raw(walk);
    params.level = 1;
    params.top = walk.cast::<Storage>();
    // SAFETY: `walk` was just leaked from a live Box; `stack` is a field.
    params.stack = unsafe { (*walk).stack.as_mut_ptr() };
    Ok(())
}

/// Frees the walk `params` points at (made by [`start`]); a second call
/// finds `top` null and does nothing.
///
/// # Safety
/// `params.top` is null or the `top` that [`start`] set, not yet freed.
pub unsafe fn end(params: &mut Parameters) {
    if params.top.is_null() {
        return;
    }
    // SAFETY: by the contract, `top` is the first field of a Walk leaked
    // by `start` (repr(C): same address).
    drop(unsafe { Box::from_raw(params.top.cast::<Walk>()) });
    params.top = null_mut();
    params.stack = null_mut();
    params.level = -1;
}

impl Level {
    fn empty() -> Level {
        Level {
            i: 0,
            j: 0,
            b: 0,
            buf: null_mut(),
            startbuf: null_mut(),
            blockbuf: null_mut(),
            dt: null_mut(),
        }
    }
}
