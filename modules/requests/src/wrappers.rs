//! The wrappers: requests are recorded where they are made and handed to
//! their statuses where they complete.

use crate::table::{self, Call, BSEND, RECV, RSEND, SEND, SSEND};
use crate::{into_status, reserve_in_statuses};
use pnmpi_sdk::sys::ffi::{MPI_Request, MPI_Status};
use pnmpi_sdk::{constants, llnl, native, services};
use std::ffi::c_int;

/// Reads `n` request handles (before MPI nulls the completed ones).
fn handles(requests: *const MPI_Request, n: c_int) -> Vec<MPI_Request> {
    let n = usize::try_from(n).unwrap_or(0);
    if requests.is_null() || n == 0 {
        return Vec::new();
    }
    // SAFETY: MPI's contract: the array holds `n` requests.
    unsafe { std::slice::from_raw_parts(requests, n) }.to_vec()
}

/// A value MPI wrote during the call; 0 for a null pointer.
fn read(value: *const c_int) -> c_int {
    // SAFETY: MPI wrote it during the call.
    unsafe { value.as_ref() }.copied().unwrap_or(0)
}

/// After a successful call on the requests `saved` before it, applies `f`
/// to each; returns the call's result.
fn on_success(err: c_int, saved: &[MPI_Request], f: impl Fn(MPI_Request)) -> c_int {
    if err == constants::SUCCESS() {
        saved.iter().for_each(|&r| f(r));
    }
    err
}

/// Records the request at `request` after a successful call.
fn record(err: c_int, request: *mut MPI_Request, call: Call) -> c_int {
    if err == constants::SUCCESS() {
        // SAFETY: MPI just wrote the new request there.
        if let Some(&r) = unsafe { request.as_ref() } {
            table::associate(r, &call);
        }
    }
    err
}

/// The application's status array and whether the `status` module
/// extended it, read before the call (MPI may overwrite `MPI_ERROR`).
#[derive(Clone, Copy)]
struct Statuses {
    array: *mut MPI_Status,
    extended: bool,
}

impl Statuses {
    fn before(array: *mut MPI_Status) -> Statuses {
        Statuses {
            array,
            extended: llnl::is_extended(array, 0),
        }
    }
}

/// The requests at `indices` of `saved` completed, into statuses `0..` of
/// an array of `count`.
fn completed(statuses: Statuses, count: c_int, saved: &[MPI_Request], indices: impl Iterator<Item = usize>) {
    let count = usize::try_from(count).unwrap_or(0);
    for (num, i) in indices.enumerate() {
        if let Some(&r) = saved.get(i) {
            into_status(statuses.extended.then_some(statuses.array), count, num, r);
        }
    }
}

/// The one request a completion gave the index of (`MPI_UNDEFINED`
/// when nothing completed).
fn one_of(statuses: Statuses, saved: &[MPI_Request], index: c_int) {
    if let Ok(i) = usize::try_from(index) {
        completed(statuses, 1, saved, std::iter::once(i));
    }
}

macro_rules! sends {
    ($($name:ident => $kind:expr, $persistent:expr;)*) => {
        pnmpi_sdk::wrap! {
            $(
                fn $name(buf, count, datatype, dest, tag, comm, request) {
                    let err = next!();
                    record(err, request, Call { kind: $kind, buf, count, datatype, peer: dest, tag, comm, persistent: $persistent })
                }
            )*
        }
    };
}

sends! {
    MPI_Isend => SEND, false;
    MPI_Ibsend => BSEND, false;
    MPI_Issend => SSEND, false;
    MPI_Irsend => RSEND, false;
    MPI_Send_init => SEND, true;
    MPI_Bsend_init => BSEND, true;
    MPI_Ssend_init => SSEND, true;
    MPI_Rsend_init => RSEND, true;
}

pnmpi_sdk::wrap! {
    fn MPI_Init(_argc, _argv) {
        let err = next!();
        reserve_in_statuses();
        err
    }

    fn MPI_Init_thread(_argc, _argv, _required, _provided) {
        let err = next!();
        reserve_in_statuses();
        err
    }

    fn MPI_Irecv(buf, count, datatype, source, tag, comm, request) {
        let err = next!();
        record(err, request, Call { kind: RECV, buf, count, datatype, peer: source, tag, comm, persistent: false })
    }

    fn MPI_Imrecv(buf, count, datatype, _message, request) {
        let err = next!();
        let (peer, tag, comm) = (constants::ANY_SOURCE(), constants::ANY_TAG(), constants::COMM_NULL());
        record(err, request, Call { kind: RECV, buf, count, datatype, peer, tag, comm, persistent: false })
    }

    fn MPI_Recv_init(buf, count, datatype, source, tag, comm, request) {
        let err = next!();
        record(err, request, Call { kind: RECV, buf, count, datatype, peer: source, tag, comm, persistent: true })
    }

    fn MPI_Start(request) {
        let saved = handles(request, 1);
        on_success(next!(), &saved, |r| {
            table::with(r, |e| e.params.active = 1);
        })
    }

    fn MPI_Startall(count, requests) {
        let saved = handles(requests, count);
        on_success(next!(), &saved, |r| {
            table::with(r, |e| e.params.active = 1);
        })
    }

    fn MPI_Cancel(request) {
        let saved = handles(request, 1);
        on_success(next!(), &saved, |r| {
            table::with(r, |e| e.params.cancelled = 1);
        })
    }

    fn MPI_Request_free(request) {
        let saved = handles(request, 1);
        on_success(next!(), &saved, table::forget)
    }

    fn MPI_Wait(request, status) {
        let saved = handles(request, 1);
        let statuses = Statuses::before(status);
        let err = next!();
        completed(statuses, 1, &saved, 0..1);
        err
    }

    fn MPI_Test(request, flag, status) {
        let saved = handles(request, 1);
        let statuses = Statuses::before(status);
        let err = next!();
        if read(flag) != 0 {
            completed(statuses, 1, &saved, 0..1);
        }
        err
    }

    fn MPI_Waitany(count, requests, index, status) {
        let saved = handles(requests, count);
        let statuses = Statuses::before(status);
        let err = next!();
        one_of(statuses, &saved, read(index));
        err
    }

    fn MPI_Testany(count, requests, index, flag, status) {
        let saved = handles(requests, count);
        let statuses = Statuses::before(status);
        let err = next!();
        if read(flag) != 0 {
            one_of(statuses, &saved, read(index));
        }
        err
    }

    fn MPI_Waitall(count, requests, statuses) {
        let saved = handles(requests, count);
        let statuses = Statuses::before(statuses);
        let err = next!();
        completed(statuses, count, &saved, 0..saved.len());
        err
    }

    fn MPI_Testall(count, requests, flag, statuses) {
        let saved = handles(requests, count);
        let statuses = Statuses::before(statuses);
        let err = next!();
        if read(flag) != 0 {
            completed(statuses, count, &saved, 0..saved.len());
        }
        err
    }

    fn MPI_Waitsome(incount, requests, outcount, indices, statuses) {
        let saved = handles(requests, incount);
        let statuses = Statuses::before(statuses);
        let err = next!();
        completed_some(statuses, incount, &saved, outcount, indices);
        err
    }

    fn MPI_Testsome(incount, requests, outcount, indices, statuses) {
        let saved = handles(requests, incount);
        let statuses = Statuses::before(statuses);
        let err = next!();
        completed_some(statuses, incount, &saved, outcount, indices);
        err
    }

    fn MPI_Finalize() {
        if services::argument("check").is_some_and(|v| v.trim() != "0") {
            report_leftovers();
        }
        next!()
    }
}

/// `Waitsome`, `Testsome`: the requests at the first `outcount` of
/// `indices` completed.
fn completed_some(
    statuses: Statuses,
    incount: c_int,
    saved: &[MPI_Request],
    outcount: *const c_int,
    indices: *const c_int,
) {
    let done = handles_of_indices(indices, read(outcount));
    completed(statuses, incount, saved, done.into_iter());
}

/// The first `outcount` entries of `indices` (none for `MPI_UNDEFINED`).
fn handles_of_indices(indices: *const c_int, outcount: c_int) -> Vec<usize> {
    let n = usize::try_from(outcount).unwrap_or(0);
    if indices.is_null() || n == 0 {
        return Vec::new();
    }
    // SAFETY: MPI wrote `outcount` indices.
    let indices = unsafe { std::slice::from_raw_parts(indices, n) };
    indices.iter().filter_map(|&i| usize::try_from(i).ok()).collect()
}

/// `argument check 1`: one line per request never completed or freed.
fn report_leftovers() {
    let rank = native::comm_rank(constants::COMM_WORLD()).unwrap_or(-1);
    let left = table::leftovers();
    println!(
        "requests: rank {rank}: {} request(s) never completed or freed",
        left.len()
    );
    for p in left {
        let call = match p.kind {
            SEND => "send",
            BSEND => "bsend",
            SSEND => "ssend",
            RSEND => "rsend",
            RECV => "recv",
            _ => "unknown",
        };
        println!(
            "requests: rank {rank}: {call} peer {} tag {} count {} persistent {}",
            p.node, p.tag, p.count, p.persistent
        );
    }
}
