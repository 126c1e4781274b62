//! The piggybacked bytes of a nonblocking or persistent call, kept until
//! its request completes. A pointer to them rides in the `requests`
//! module's `data` of the request, so it comes back, with the request's
//! parameters, in the extension of the status that completes it.

use crate::{wire, Around};
use pnmpi_sdk::llnl::{self, kind, RequestParameters};
use pnmpi_sdk::sys::ffi::{MPI_Request, MPI_Status};
use std::mem::size_of;
use std::sync::atomic::Ordering::Relaxed;

/// The bytes a send carries, or a receive's room for them.
pub struct Record {
    pub bytes: Vec<u8>,
}

/// The pointer slot of the request whose parameters are `params`.
///
/// # Safety
/// `params` is what `map-request` returned; its `data`, unless null, has
/// the pointer's room this module reserved at `data_offset`.
unsafe fn slot(params: *mut RequestParameters, data_offset: usize) -> Option<*mut usize> {
    // SAFETY: by the contract.
    let params = unsafe { params.as_ref() }?;
    if params.kind == kind::NULL || params.data.is_null() {
        return None;
    }
    // SAFETY: by the contract, the reserved room.
    Some(unsafe { params.data.add(data_offset) }.cast::<usize>())
}

/// Attaches `record` to `request`, just made; it is dropped if the
/// `requests` module does not know the request.
pub fn attach(around: &Around, request: MPI_Request, record: Box<Record>) {
    // SAFETY: map-request's answer for a request just made.
    if let Some(slot) = unsafe { slot((around.map)(request), around.data_offset) } {
        // SAFETY: the slot is this module's; the record lives until the
        // request completes or is freed ([`completed`], [`free`]).
        unsafe { slot.write_unaligned(Box::into_raw(record) as usize) };
    }
}

/// A persistent send about to start carries `bytes`.
pub fn refresh(around: &Around, request: MPI_Request, bytes: &[u8]) {
    // SAFETY: map-request's answer for a live request.
    let Some(slot) = (unsafe { slot((around.map)(request), around.data_offset) }) else {
        return;
    };
    // SAFETY: the slot holds 0 or a record attached by `attach`.
    if let Some(record) = unsafe { (slot.read_unaligned() as *mut Record).as_mut() } {
        let n = record.bytes.len().min(bytes.len());
        record.bytes[..n].copy_from_slice(&bytes[..n]);
    }
}

/// Frees the record of an inactive request about to be freed.
pub fn free(around: &Around, request: MPI_Request) {
    let params = (around.map)(request);
    // SAFETY: map-request's answer.
    let (Some(slot), Some(p)) = (unsafe { slot(params, around.data_offset) }, unsafe {
        params.as_ref()
    }) else {
        return;
    };
    if p.active == 0 {
        // SAFETY: the slot holds 0 or a record attached by `attach`, taken out here once.
        unsafe { take(slot.read_unaligned()) };
        // SAFETY: this module's slot.
        unsafe { slot.write_unaligned(0) };
    }
}

/// Reclaims a record from its pointer.
///
/// # Safety
/// `at` is 0 or a pointer from `attach` not yet taken.
unsafe fn take(at: usize) -> Option<Box<Record>> {
    // SAFETY: by the contract.
    (at != 0).then(|| unsafe { Box::from_raw(at as *mut Record) })
}

/// The request completed in status `num` of the extended array
/// `statuses` of `count`: a receive's bytes go to the status's
/// piggyback room and its count loses them; a non-persistent request's
/// record is freed.
pub fn completed(around: &Around, statuses: *mut MPI_Status, count: usize, num: usize) {
    let total = usize::try_from(around.total.load(Relaxed)).unwrap_or(0);
    let Ok(request_offset) = usize::try_from(around.request_offset.load(Relaxed)) else {
        return;
    };
    // SAFETY: the array was extended by the `status` module (checked by
    // the caller before the call); `requests` wrote the parameters and
    // data at `request_offset`, this module reserved `size` bytes at
    // `pb_offset`.
    unsafe {
        let block = llnl::extension(statuses, count, total, num, request_offset);
        let params = block.cast::<RequestParameters>().read_unaligned();
        if params.kind == kind::NULL {
            return;
        }
        let at = block
            .add(size_of::<RequestParameters>() + around.data_offset)
            .cast::<usize>()
            .read_unaligned();
        let Some(record) = (at as *const Record).as_ref() else {
            return;
        };
        if params.kind == kind::RECV && params.cancelled == 0 {
            let room = llnl::extension(statuses, count, total, num, around.pb_offset);
            std::ptr::copy_nonoverlapping(record.bytes.as_ptr(), room, record.bytes.len());
            wire::fix_count(statuses.add(num), record.bytes.len());
        }
        if params.persistent == 0 {
            take(at);
        }
    }
}
