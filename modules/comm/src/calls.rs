//! The wrappers that call LLNL's communication callbacks (see
//! `events.rs`); without registered callbacks each only calls on.

use crate::events::{callbacks, complete, kind, pending, Callbacks, Pending};
use pnmpi_sdk::constants;
use pnmpi_sdk::raw;
use pnmpi_sdk::sys::ffi::{MPI_Comm, MPI_Datatype, MPI_Request, MPI_Status};
use std::ffi::{c_int, c_void};
use std::ptr::null_mut;

/// A blocking send between its `SEND_P2P_START` and `_END`.
fn send(mut p: Pending, call: impl FnOnce() -> c_int) -> c_int {
    let Some(cb) = callbacks() else { return call() };
    p.start(cb, kind::P2P);
    let err = call();
    p.send_end(cb, err, null_mut(), kind::P2P);
    err
}

/// A blocking call's send or receive (`buf`: the application's).
#[allow(clippy::too_many_arguments)]
fn call(
    send: bool,
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    node: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> Pending {
    Pending {
        send,
        buf: buf.cast_mut(),
        count,
        datatype,
        node,
        tag,
        comm,
        ptr: null_mut(),
    }
}

/// Whether `s` is one of the ignore constants (or null).
fn ignored(s: *mut MPI_Status) -> bool {
    s.is_null() || s == constants::STATUS_IGNORE() || s == constants::STATUSES_IGNORE()
}

/// `n` zeroed statuses, for a call whose caller ignores them.
fn local_statuses(n: usize) -> Vec<MPI_Status> {
    // SAFETY: MPI_Status is plain integers; all zeros is a valid value.
    (0..n.max(1)).map(|_| unsafe { std::mem::zeroed() }).collect()
}

/// A nonblocking send or receive: `_START`, the call, `_ASYNC_MID1`, and
/// the request remembered for its completion.
fn start_async(
    cb: &Callbacks,
    mut p: Pending,
    request: *mut MPI_Request,
    run: impl FnOnce() -> c_int,
) -> c_int {
    p.start(cb, kind::ASYNC_P2P);
    let err = run();
    p.mid1(cb, err);
    if err == constants::SUCCESS() {
        // SAFETY: MPI just wrote the new request there.
        if let Some(&r) = unsafe { request.as_ref() } {
            pending(r, p);
        }
    }
    err
}

/// A wait or test on `n` requests (`how`: `WAIT`/`TEST` | `ONE`/`ANY`/
/// `SOME`/`ALL`) into `nstat` statuses: `COMM_P2P_ASYNC_MID2`, the call
/// (on statuses of its own if the caller ignores them), the `_END` of
/// each completed request (`done` gives, after the call, the request's
/// and the status's positions), and `COMM_P2P_ASYNC_COMPLETION`.
fn completion(
    requests: *mut MPI_Request,
    n: c_int,
    user: *mut MPI_Status,
    nstat: usize,
    how: c_int,
    call: impl FnOnce(*mut MPI_Status) -> c_int,
    done: impl FnOnce() -> Vec<(usize, usize)>,
) -> c_int {
    let Some(cb) = callbacks() else { return call(user) };
    let count = usize::try_from(n).unwrap_or(0);
    let saved: Vec<MPI_Request> = if requests.is_null() {
        Vec::new()
    } else {
        // SAFETY: MPI's contract: the array holds `n` requests.
        unsafe { std::slice::from_raw_parts(requests, count) }.to_vec()
    };
    let mut mid = null_mut();
    if let Some(f) = cb.async_mid2 {
        f(n, requests, how, &mut mid);
    }
    let mut own = Vec::new();
    let statuses = if ignored(user) {
        own = local_statuses(nstat);
        own.as_mut_ptr()
    } else {
        user
    };
    let err = call(statuses);
    let completed = done();
    let numindex = c_int::try_from(completed.len()).unwrap_or(c_int::MAX);
    for (r, s) in completed {
        if let (Some(&request), true) = (saved.get(r), s < nstat.max(1)) {
            // SAFETY: `s` is within the `nstat` statuses the call filled.
            let status = unsafe { statuses.add(s) };
            complete(cb, request, err, status, &mut mid, numindex, s as c_int);
        }
    }
    drop(own);
    if let Some(f) = cb.async_completion {
        f(how);
    }
    err
}

/// A value MPI wrote during the call; 0 for a null pointer.
fn read(value: *const c_int) -> c_int {
    // SAFETY: MPI wrote it during the call.
    unsafe { value.as_ref() }.copied().unwrap_or(0)
}

/// The completion at `index` (none for `MPI_UNDEFINED`).
fn one(index: c_int) -> Vec<(usize, usize)> {
    usize::try_from(index).map(|i| vec![(i, 0)]).unwrap_or_default()
}

/// The first `outcount` of `indices`, each into status `k`.
fn some(outcount: c_int, indices: *const c_int) -> Vec<(usize, usize)> {
    let n = usize::try_from(outcount).unwrap_or(0);
    if indices.is_null() || n == 0 {
        return Vec::new();
    }
    // SAFETY: MPI wrote `outcount` indices.
    let indices = unsafe { std::slice::from_raw_parts(indices, n) };
    indices
        .iter()
        .enumerate()
        .filter_map(|(k, &i)| Some((usize::try_from(i).ok()?, k)))
        .collect()
}

/// A collective between its `COMM_COLL_START` and `_END`.
fn collective(comm: MPI_Comm, root: c_int, ty: c_int, call: impl FnOnce() -> c_int) -> c_int {
    let Some(cb) = callbacks() else { return call() };
    let mut ptr = null_mut();
    if let Some(f) = cb.coll_start {
        f(comm, root, ty, &mut ptr);
    }
    let err = call();
    if let Some(f) = cb.coll_end {
        f(comm, root, ty, &mut ptr);
    }
    err
}

macro_rules! blocking_sends {
    ($($name:ident),*) => {
        pnmpi_sdk::wrap! {
            $(
                fn $name(buf, count, datatype, dest, tag, comm) {
                    send(call(true, buf, count, datatype, dest, tag, comm), || next!())
                }
            )*
        }
    };
}

blocking_sends!(MPI_Send, MPI_Bsend, MPI_Rsend, MPI_Ssend);

macro_rules! async_sends {
    ($($name:ident),*) => {
        pnmpi_sdk::wrap! {
            $(
                fn $name(buf, count, datatype, dest, tag, comm, request) {
                    let Some(cb) = callbacks() else { return next!() };
                    start_async(cb, call(true, buf, count, datatype, dest, tag, comm), request, || next!())
                }
            )*
        }
    };
}

async_sends!(MPI_Isend, MPI_Ibsend, MPI_Irsend, MPI_Issend);

macro_rules! collectives {
    ($($name:ident ($($arg:ident),*) => $comm:ident, $root:expr, $ty:expr;)*) => {
        pnmpi_sdk::wrap! {
            $(
                fn $name($($arg),*) {
                    collective($comm, $root, $ty, || next!())
                }
            )*
        }
    };
}

collectives! {
    MPI_Barrier(comm) => comm, -1, kind::COLL_BARRIER | kind::BARRIER;
    MPI_Bcast(_b, _c, _t, root, comm) => comm, root, kind::COLL_FANOUT | kind::BCAST;
    MPI_Gather(_sb, _sc, _st, _rb, _rc, _rt, root, comm) => comm, root, kind::COLL_FANIN | kind::GATHER;
    MPI_Gatherv(_sb, _sc, _st, _rb, _rc, _d, _rt, root, comm) => comm, root, kind::COLL_FANIN | kind::GATHERV;
    MPI_Scatter(_sb, _sc, _st, _rb, _rc, _rt, root, comm) => comm, root, kind::COLL_FANOUT | kind::SCATTER;
    MPI_Scatterv(_sb, _sc, _d, _st, _rb, _rc, _rt, root, comm) => comm, root, kind::COLL_FANOUT | kind::SCATTERV;
    MPI_Allgather(_sb, _sc, _st, _rb, _rc, _rt, comm) => comm, -1, kind::COLL_ALL2ALL | kind::ALLGATHER;
    MPI_Allgatherv(_sb, _sc, _st, _rb, _rc, _d, _rt, comm) => comm, -1, kind::COLL_ALL2ALL | kind::ALLGATHERV;
    MPI_Alltoall(_sb, _sc, _st, _rb, _rc, _rt, comm) => comm, -1, kind::COLL_ALL2ALL | kind::ALL2ALL;
    MPI_Alltoallv(_sb, _sc, _sd, _st, _rb, _rc, _rd, _rt, comm) => comm, -1, kind::COLL_ALL2ALL | kind::ALL2ALLV;
    MPI_Reduce(_sb, _rb, _c, _t, _op, root, comm) => comm, root, kind::COLL_FANIN | kind::COLL_REDUCE | kind::REDUCE;
    MPI_Allreduce(_sb, _rb, _c, _t, _op, comm) => comm, -1, kind::COLL_ALL2ALL | kind::COLL_REDUCE | kind::ALLREDUCE;
    MPI_Reduce_scatter(_sb, _rb, _rc, _t, _op, comm) => comm, -1, kind::COLL_ALL2ALL | kind::COLL_REDUCE | kind::REDUCESCATTER;
    MPI_Scan(_sb, _rb, _c, _t, _op, comm) => comm, -1, kind::COLL_OTHER | kind::COLL_REDUCE | kind::SCAN;
}

pnmpi_sdk::wrap! {
    fn MPI_Irecv(buf, count, datatype, source, tag, comm, request) {
        let Some(cb) = callbacks() else { return next!() };
        start_async(cb, call(false, buf, count, datatype, source, tag, comm), request, || next!())
    }

    fn MPI_Recv(buf, count, datatype, source, tag, comm, status) {
        let Some(cb) = callbacks() else { return next!() };
        let mut recv = call(false, buf, count, datatype, source, tag, comm);
        recv.start(cb, kind::P2P);
        let mut own = local_statuses(1);
        let s = if ignored(status) { own.as_mut_ptr() } else { status };
        // SAFETY: the application's arguments, with a status MPI fills.
        let err = unsafe { raw::XMPI_Recv(buf, count, datatype, source, tag, comm, s) };
        recv.recv_end(cb, err, null_mut(), kind::P2P, s, 1, 0);
        err
    }

    fn MPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, status) {
        let Some(cb) = callbacks() else { return next!() };
        let mut send = call(true, sendbuf, sendcount, sendtype, dest, sendtag, comm);
        let mut recv = call(false, recvbuf, recvcount, recvtype, source, recvtag, comm);
        send.start(cb, kind::P2P);
        recv.start(cb, kind::P2P);
        let mut own = local_statuses(1);
        let s = if ignored(status) { own.as_mut_ptr() } else { status };
        // SAFETY: the application's arguments, with a status MPI fills.
        let err = unsafe {
            raw::XMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, s)
        };
        send.send_end(cb, err, null_mut(), kind::P2P);
        recv.recv_end(cb, err, null_mut(), kind::P2P, s, 1, 0);
        err
    }

    fn MPI_Wait(request, status) {
        completion(request, 1, status, 1, kind::WAIT | kind::ONE,
            // SAFETY (each call below): the application's arguments, with statuses MPI fills.
            |s| unsafe { raw::XMPI_Wait(request, s) }, || vec![(0, 0)])
    }

    fn MPI_Test(request, flag, status) {
        completion(request, 1, status, 1, kind::TEST | kind::ONE,
            |s| unsafe { raw::XMPI_Test(request, flag, s) },
            || if read(flag) != 0 { vec![(0, 0)] } else { Vec::new() })
    }

    fn MPI_Waitany(count, requests, index, status) {
        completion(requests, count, status, 1, kind::WAIT | kind::ANY,
            |s| unsafe { raw::XMPI_Waitany(count, requests, index, s) }, || one(read(index)))
    }

    fn MPI_Testany(count, requests, index, flag, status) {
        completion(requests, count, status, 1, kind::TEST | kind::ANY,
            |s| unsafe { raw::XMPI_Testany(count, requests, index, flag, s) },
            || if read(flag) != 0 { one(read(index)) } else { Vec::new() })
    }

    fn MPI_Waitall(count, requests, statuses) {
        let n = usize::try_from(count).unwrap_or(0);
        completion(requests, count, statuses, n, kind::WAIT | kind::ALL,
            |s| unsafe { raw::XMPI_Waitall(count, requests, s) }, || (0..n).map(|i| (i, i)).collect())
    }

    fn MPI_Testall(count, requests, flag, statuses) {
        let n = usize::try_from(count).unwrap_or(0);
        completion(requests, count, statuses, n, kind::TEST | kind::ALL,
            |s| unsafe { raw::XMPI_Testall(count, requests, flag, s) },
            || if read(flag) != 0 { (0..n).map(|i| (i, i)).collect() } else { Vec::new() })
    }

    fn MPI_Waitsome(incount, requests, outcount, indices, statuses) {
        let n = usize::try_from(incount).unwrap_or(0);
        completion(requests, incount, statuses, n, kind::WAIT | kind::SOME,
            |s| unsafe { raw::XMPI_Waitsome(incount, requests, outcount, indices, s) }, || some(read(outcount), indices))
    }

    fn MPI_Testsome(incount, requests, outcount, indices, statuses) {
        let n = usize::try_from(incount).unwrap_or(0);
        completion(requests, incount, statuses, n, kind::TEST | kind::SOME,
            |s| unsafe { raw::XMPI_Testsome(incount, requests, outcount, indices, s) }, || some(read(outcount), indices))
    }

    fn MPI_Finalize() {
        if let Some(f) = callbacks().and_then(|c| c.all_finalize) {
            f();
        }
        next!()
    }
}
