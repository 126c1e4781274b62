//! A member's share of a finished collective, copied out to its own
//! buffers when its request completes: the broadcast or scattered
//! block, the reduced result, the gathered blocks, the new communicator.

use crate::coll::Gift;
use crate::dtype::{layout, put_raw, unpack};
use crate::engine::with;
use crate::p2p::Out;
use pnmpi_mpi_sys::constants as c;
use std::ffi::{c_int, c_void};

/// `buf` moved by `elems` elements of extent `ext`.
pub(super) fn at(buf: *const c_void, elems: i64, ext: usize) -> *mut c_void {
    (buf as *mut u8).wrapping_offset((elems * ext as i64) as isize) as *mut c_void
}

/// Entry `i` of a counts/displacements array, or `default`.
///
/// # Safety
/// `a` is null or has more than `i` entries.
pub(super) unsafe fn nth(a: *const c_int, i: usize, default: i64) -> i64 {
    if a.is_null() {
        default
    } else {
        // SAFETY: the caller's array.
        i64::from(unsafe { *a.add(i) })
    }
}

/// Copies member `me`'s result of collective call `id` out to `out` (in
/// its own context).
///
/// # Safety
/// The buffers of `out` are the member's, valid until completion.
pub unsafe fn copy_out(id: usize, me: u32, out: Out) {
    // A new communicator's handle is made once the engine is released
    // (making one may stop the run).
    let new_comm = with(|e| {
        let call = e.colls().call(id);
        let me = me as usize;
        let one = |g: &Gift| match g {
            Gift::One(v) => v.clone(),
            _ => Vec::new(),
        };
        // SAFETY: every unpack and copy below writes the member's own
        // buffers, valid until its request completes, as MPI requires
        // them for this collective.
        unsafe {
            match out {
                Out::Nothing => {}
                Out::Bcast(buf, count, dt) => {
                    let _ = unpack(&one(&call.gifts[call.root as usize]), buf, count, dt);
                }
                Out::Scatter(buf, count, dt) => {
                    if let Gift::Many(blocks) = &call.gifts[call.root as usize] {
                        let _ = unpack(&blocks[me], buf, count, dt);
                    }
                }
                Out::Result {
                    buf,
                    dtype,
                    own,
                    range,
                } => {
                    let r = if own {
                        call.results.get(me)
                    } else {
                        call.results.first()
                    };
                    if let Some(r) = r {
                        match range {
                            Some((off, len)) => put_raw(&r[off..off + len], buf, dtype),
                            None => put_raw(r, buf, dtype),
                        }
                    }
                }
                Out::Gather(buf, count, dt, counts, displs) => {
                    let ext = layout(dt).extent;
                    for (i, g) in call.gifts.iter().enumerate() {
                        let n = nth(counts, i, i64::from(count));
                        let d = nth(displs, i, i as i64 * i64::from(count));
                        if let Gift::One(v) = g {
                            let _ = unpack(v, at(buf, d, ext), n as c_int, dt);
                        }
                    }
                }
                Out::Alltoall(buf, count, dt, counts, displs) => {
                    let ext = layout(dt).extent;
                    for (i, g) in call.gifts.iter().enumerate() {
                        let n = nth(counts, i, i64::from(count));
                        let d = nth(displs, i, i as i64 * i64::from(count));
                        if let Gift::Many(blocks) = g {
                            let _ = unpack(&blocks[me], at(buf, d, ext), n as c_int, dt);
                        }
                    }
                }
                Out::Comm(out) => return Some((out, call.comms.get(me).copied().flatten())),
            }
        }
        None
    });
    if let Some((out, comm)) = new_comm {
        // SAFETY: the member's out-pointer, as for the constructor.
        unsafe {
            *out = match comm {
                Some(i) => super::comm_handle(i),
                None => c::COMM_NULL(),
            }
        };
    }
}
