//! The completion calls (`MPI_Wait`, `MPI_Test` and their `all`, `any`
//! and `some` forms): the request handles are read before the call (MPI
//! sets completed ones to `MPI_REQUEST_NULL`), statuses are supplied when
//! the application ignores them (they name a receive's source and tag),
//! and each completed request is handed to [`p2p::completed`].

use crate::order;
use crate::p2p;
use crate::state;
use crate::state::blank_status;
use pnmpi_mpi_sys::ffi::{MPI_Request, MPI_Status};
use pnmpi_mpi_sys::Handle;
use pnmpi_sdk::constants;
use std::ffi::c_int;

/// Whether a call that returned `rc` completed something: it succeeded
/// and, for a test, set its flag.
///
/// # Safety
/// `flag` is null or the call's flag argument.
unsafe fn done(rc: c_int, flag: *const c_int) -> bool {
    // SAFETY: the caller's contract; MPI wrote the flag if rc is success.
    rc == constants::SUCCESS() && (flag.is_null() || unsafe { *flag } != 0)
}

/// `MPI_Wait(request, status)` and `MPI_Test(request, flag, status)`
/// (`flag` null for the wait); `real` is the call with the status to use.
///
/// # Safety
/// The arguments are the application's, valid for the MPI call.
pub unsafe fn one(
    request: *mut MPI_Request,
    flag: *mut c_int,
    status: *mut MPI_Status,
    real: impl FnOnce(*mut MPI_Status) -> c_int,
) -> c_int {
    state::call(|timed| {
        if !timed || !p2p::tracking() || request.is_null() {
            return real(status);
        }
        // SAFETY: the application's request.
        let handle = Handle::bits(unsafe { *request });
        let mut own = blank_status();
        let st = if status == constants::STATUS_IGNORE() {
            &raw mut own
        } else {
            status
        };
        let rc = real(st);
        // SAFETY: the call's flag; `st` is the status MPI filled.
        if unsafe { done(rc, flag) } {
            // SAFETY: `st` is the status MPI filled for this completion.
            unsafe { p2p::completed(handle, st) };
        }
        rc
    })
}

/// `MPI_Waitall(n, requests, statuses)` and `MPI_Testall(n, requests,
/// flag, statuses)`.
///
/// # Safety
/// The arguments are the application's, valid for the MPI call.
pub unsafe fn all(
    n: c_int,
    requests: *mut MPI_Request,
    flag: *mut c_int,
    statuses: *mut MPI_Status,
    real: impl FnOnce(*mut MPI_Status) -> c_int,
) -> c_int {
    state::call(|timed| {
        if !timed || !p2p::tracking() {
            return real(statuses);
        }
        let rc = p2p::scratch(|s| {
            // SAFETY: the application's `n` requests.
            unsafe { p2p::snapshot(requests, n, &mut s.handles) };
            let sts = p2p::statuses(statuses, n, &mut s.statuses);
            let rc = real(sts);
            // SAFETY: the call's flag.
            if unsafe { done(rc, flag) } {
                for (i, &h) in s.handles.iter().enumerate() {
                    // SAFETY: `sts` has a status per request, filled by MPI.
                    unsafe { p2p::completed(h, sts.add(i)) };
                }
            }
            rc
        });
        rc
    })
}

/// `MPI_Waitany(n, requests, index, status)` and `MPI_Testany(n,
/// requests, index, flag, status)`.
///
/// # Safety
/// The arguments are the application's, valid for the MPI call.
pub unsafe fn any(
    n: c_int,
    requests: *mut MPI_Request,
    index: *mut c_int,
    flag: *mut c_int,
    status: *mut MPI_Status,
    real: impl FnOnce(*mut MPI_Status) -> c_int,
) -> c_int {
    state::call(|timed| {
        if !timed || !p2p::tracking() || index.is_null() {
            return real(status);
        }
        let mut own = blank_status();
        let st = if status == constants::STATUS_IGNORE() {
            &raw mut own
        } else {
            status
        };
        let rc = p2p::scratch(|s| {
            // SAFETY: the application's `n` requests.
            unsafe { p2p::snapshot(requests, n, &mut s.handles) };
            // A wait takes the request that completes first in virtual
            // time: the real call sees the others as MPI_REQUEST_NULL.
            let pick = if flag.is_null() {
                order::first(&s.handles)
            } else {
                None
            };
            let rc = match pick {
                // SAFETY: `i` is below `n`, the application's count.
                Some(i) => unsafe { alone(requests, &s.handles, i, || real(st)) },
                None => real(st),
            };
            // SAFETY: the call's flag and index, written by MPI on success.
            if unsafe { done(rc, flag) } {
                // SAFETY: as above.
                let i = unsafe { *index };
                if i != constants::UNDEFINED() {
                    if let Some(&h) = usize::try_from(i).ok().and_then(|i| s.handles.get(i)) {
                        // SAFETY: `st` is the status MPI filled for request i.
                        unsafe { p2p::completed(h, st) };
                    }
                }
            }
            rc
        });
        rc
    })
}

/// Runs `real` on `requests` with every request but `i` set to
/// `MPI_REQUEST_NULL`, then puts those back (`handles` holds them).
///
/// # Safety
/// `requests` points to `handles.len()` requests, `i` below that.
unsafe fn alone(
    requests: *mut MPI_Request,
    handles: &[u64],
    i: usize,
    real: impl FnOnce() -> c_int,
) -> c_int {
    // SAFETY: the caller's contract.
    let reqs = unsafe { std::slice::from_raw_parts_mut(requests, handles.len()) };
    let null = constants::REQUEST_NULL();
    for (k, r) in reqs.iter_mut().enumerate() {
        if k != i {
            *r = null;
        }
    }
    let rc = real();
    // SAFETY: as above; `real` has returned, so nothing else holds them.
    let reqs = unsafe { std::slice::from_raw_parts_mut(requests, handles.len()) };
    for (k, (r, &h)) in reqs.iter_mut().zip(handles).enumerate() {
        if k != i {
            *r = MPI_Request::from_bits(h);
        }
    }
    rc
}

/// `MPI_Waitsome` and `MPI_Testsome(n, requests, outcount, indices,
/// statuses)`.
///
/// # Safety
/// The arguments are the application's, valid for the MPI call.
pub unsafe fn some(
    n: c_int,
    requests: *mut MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
    real: impl FnOnce(*mut MPI_Status) -> c_int,
) -> c_int {
    state::call(|timed| {
        if !timed || !p2p::tracking() || outcount.is_null() || indices.is_null() {
            return real(statuses);
        }
        let rc = p2p::scratch(|s| {
            // SAFETY: the application's `n` requests.
            unsafe { p2p::snapshot(requests, n, &mut s.handles) };
            let sts = p2p::statuses(statuses, n, &mut s.statuses);
            let rc = real(sts);
            if rc == constants::SUCCESS() {
                // SAFETY: MPI wrote the count of completed requests.
                let count = unsafe { *outcount };
                if count != constants::UNDEFINED() {
                    for k in 0..count.max(0) as usize {
                        // SAFETY: MPI wrote `count` indices, and a status for
                        // each at the same position.
                        let i = unsafe { *indices.add(k) };
                        if let Some(&h) = usize::try_from(i).ok().and_then(|i| s.handles.get(i)) {
                            // SAFETY: as above.
                            unsafe { p2p::completed(h, sts.add(k)) };
                        }
                    }
                }
            }
            rc
        });
        rc
    })
}
