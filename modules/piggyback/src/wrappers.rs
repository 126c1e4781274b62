//! The wrappers: every point-to-point call goes down with the
//! piggybacked bytes in its message ([`wire::Wire`]); completions deliver
//! a receive's bytes ([`record::completed`]).

use crate::record::{self, Record};
use crate::wire::{fix_count, Wire};
use crate::{around, outgoing, size, Around};
use pnmpi_sdk::llnl;
use pnmpi_sdk::sys::ffi::{MPI_Datatype, MPI_Request, MPI_Status};
use pnmpi_sdk::{constants, raw, Datatype};
use std::ffi::{c_int, c_void};

/// Calls `call` with the message `{pb, count x datatype at buf}` as one
/// element of a struct datatype, or with the application's own arguments
/// when piggybacking is off or MPI refused the datatype.
fn wired(
    buf: *const c_void,
    count: c_int,
    datatype: Datatype,
    pb: &[u8],
    call: impl FnOnce(c_int, MPI_Datatype) -> c_int,
) -> c_int {
    match Wire::new(buf, count, datatype, pb.as_ptr(), pb.len()) {
        Some(wire) => call(1, wire.datatype()),
        None => call(count, datatype),
    }
}

/// A blocking send carrying the current bytes.
fn send(
    buf: *const c_void,
    count: c_int,
    datatype: Datatype,
    call: impl FnOnce(c_int, MPI_Datatype) -> c_int,
) -> c_int {
    if around().is_none() {
        return call(count, datatype);
    }
    wired(buf, count, datatype, &outgoing(), call)
}

/// A call that makes a request, carrying (a send) or awaiting (a
/// receive) bytes kept in a record until it completes.
fn with_record(
    bytes: Vec<u8>,
    buf: *const c_void,
    count: c_int,
    datatype: Datatype,
    request: *mut MPI_Request,
    call: impl FnOnce(c_int, MPI_Datatype) -> c_int,
) -> c_int {
    let Some(around) = around() else {
        return call(count, datatype);
    };
    let record = Box::new(Record { bytes });
    let err = wired(buf, count, datatype, &record.bytes, call);
    // SAFETY: MPI wrote the new request there if the call succeeded.
    if let (true, Some(&r)) = (err == constants::SUCCESS(), unsafe { request.as_ref() }) {
        record::attach(around, r, record);
    }
    err
}

/// A blocking receive into `{pb, buf}`, delivering the bytes to the
/// extended `status`.
fn receive(
    pb: Vec<u8>,
    buf: *const c_void,
    count: c_int,
    datatype: Datatype,
    status: *mut MPI_Status,
    call: impl FnOnce(c_int, MPI_Datatype) -> c_int,
) -> c_int {
    let Some(around) = around() else {
        return call(count, datatype);
    };
    let extended = llnl::is_extended(status, 0);
    let err = wired(buf, count, datatype, &pb, call);
    deliver(around, extended, status, &pb);
    err
}

/// Puts a received message's bytes into its status's room and takes them
/// off its count.
fn deliver(around: &Around, extended: bool, status: *mut MPI_Status, pb: &[u8]) {
    if !extended {
        return;
    }
    let total = usize::try_from(around.total.load(std::sync::atomic::Ordering::Relaxed)).unwrap_or(0);
    // SAFETY: an array of one status the `status` module extended, with
    // `pb.len()` bytes reserved at `pb_offset`.
    unsafe {
        let room = llnl::extension(status, 1, total, 0, around.pb_offset);
        std::ptr::copy_nonoverlapping(pb.as_ptr(), room, pb.len());
    }
    fix_count(status, pb.len());
}

/// A completion of the requests at `nums` of an array of `count`
/// statuses, extended or not (as seen before the call).
fn completions(extended: bool, statuses: *mut MPI_Status, count: c_int, nums: impl Iterator<Item = usize>) {
    let (Some(around), true) = (around(), extended) else {
        return;
    };
    let count = usize::try_from(count).unwrap_or(0);
    nums.for_each(|num| record::completed(around, statuses, count, num));
}

/// A value MPI wrote; 0 for a null pointer.
fn read(value: *const c_int) -> c_int {
    // SAFETY: MPI wrote it during the call.
    unsafe { value.as_ref() }.copied().unwrap_or(0)
}

/// The requests of a call, read before it (MPI may null them).
fn requests(requests: *const MPI_Request, n: c_int) -> Vec<MPI_Request> {
    match usize::try_from(n) {
        // SAFETY: MPI's contract: the array holds `n` requests.
        Ok(n) if n > 0 && !requests.is_null() => unsafe { std::slice::from_raw_parts(requests, n) }.to_vec(),
        _ => Vec::new(),
    }
}

/// Persistent sends about to start carry the bytes of now.
fn refresh(started: &[MPI_Request]) {
    if let Some(around) = around() {
        let bytes = outgoing();
        started.iter().for_each(|&r| record::refresh(around, r, &bytes));
    }
}

macro_rules! blocking_sends {
    ($($name:ident => $xmpi:ident;)*) => {
        pnmpi_sdk::wrap! {
            $(
                fn $name(buf, count, datatype, dest, tag, comm) {
                    // SAFETY: the application's call, with its message as one struct element.
                    send(buf, count, datatype, |c, d| unsafe { raw::$xmpi(buf, c, d, dest, tag, comm) })
                }
            )*
        }
    };
}

blocking_sends! {
    MPI_Send => XMPI_Send;
    MPI_Bsend => XMPI_Bsend;
    MPI_Ssend => XMPI_Ssend;
    MPI_Rsend => XMPI_Rsend;
}

macro_rules! request_sends {
    ($($name:ident => $xmpi:ident;)*) => {
        pnmpi_sdk::wrap! {
            $(
                fn $name(buf, count, datatype, dest, tag, comm, request) {
                    with_record(outgoing(), buf, count, datatype, request, |c, d| {
                        // SAFETY: the application's call, with its message as one struct element.
                        unsafe { raw::$xmpi(buf, c, d, dest, tag, comm, request) }
                    })
                }
            )*
        }
    };
}

request_sends! {
    MPI_Isend => XMPI_Isend;
    MPI_Ibsend => XMPI_Ibsend;
    MPI_Issend => XMPI_Issend;
    MPI_Irsend => XMPI_Irsend;
    MPI_Send_init => XMPI_Send_init;
    MPI_Bsend_init => XMPI_Bsend_init;
    MPI_Ssend_init => XMPI_Ssend_init;
    MPI_Rsend_init => XMPI_Rsend_init;
}

pnmpi_sdk::wrap! {
    fn MPI_Init(_argc, _argv) {
        let data = crate::reserve_in_requests();
        let err = next!();
        crate::start(data);
        err
    }

    fn MPI_Init_thread(_argc, _argv, _required, _provided) {
        let data = crate::reserve_in_requests();
        let err = next!();
        crate::start(data);
        err
    }

    fn MPI_Irecv(buf, count, datatype, source, tag, comm, request) {
        with_record(vec![0; size()], buf, count, datatype, request, |c, d| {
            // SAFETY: the application's call, with room for the bytes in one struct element.
            unsafe { raw::XMPI_Irecv(buf, c, d, source, tag, comm, request) }
        })
    }

    fn MPI_Recv_init(buf, count, datatype, source, tag, comm, request) {
        with_record(vec![0; size()], buf, count, datatype, request, |c, d| {
            // SAFETY: as for MPI_Irecv.
            unsafe { raw::XMPI_Recv_init(buf, c, d, source, tag, comm, request) }
        })
    }

    fn MPI_Imrecv(buf, count, datatype, message, request) {
        with_record(vec![0; size()], buf, count, datatype, request, |c, d| {
            // SAFETY: as for MPI_Irecv.
            unsafe { raw::XMPI_Imrecv(buf, c, d, message, request) }
        })
    }

    fn MPI_Recv(buf, count, datatype, source, tag, comm, status) {
        receive(vec![0; size()], buf, count, datatype, status, |c, d| {
            // SAFETY: as for MPI_Irecv.
            unsafe { raw::XMPI_Recv(buf, c, d, source, tag, comm, status) }
        })
    }

    fn MPI_Mrecv(buf, count, datatype, message, status) {
        receive(vec![0; size()], buf, count, datatype, status, |c, d| {
            // SAFETY: as for MPI_Irecv.
            unsafe { raw::XMPI_Mrecv(buf, c, d, message, status) }
        })
    }

    fn MPI_Sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, status) {
        // One buffer both ways: the bytes go out of it and come back into it.
        receive(outgoing(), buf, count, datatype, status, |c, d| {
            // SAFETY: as for MPI_Irecv.
            unsafe { raw::XMPI_Sendrecv_replace(buf, c, d, dest, sendtag, source, recvtag, comm, status) }
        })
    }

    fn MPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, status) {
        let out = outgoing();
        receive(vec![0; size()], recvbuf, recvcount, recvtype, status, |rc, rt| {
            wired(sendbuf, sendcount, sendtype, &out, |sc, st| {
                // SAFETY: as for MPI_Irecv, both ways.
                unsafe { raw::XMPI_Sendrecv(sendbuf, sc, st, dest, sendtag, recvbuf, rc, rt, source, recvtag, comm, status) }
            })
        })
    }

    fn MPI_Pack_size(_incount, _datatype, _comm, size_) {
        // Buffers for MPI_Bsend are sized with it: each message is `size`
        // bytes longer.
        let err = next!();
        if around().is_some() && err == constants::SUCCESS() {
            // SAFETY: MPI wrote the size there.
            if let Some(packed) = unsafe { size_.as_mut() } {
                *packed += c_int::try_from(size()).unwrap_or(0);
            }
        }
        err
    }

    fn MPI_Probe(_source, _tag, _comm, status) {
        let err = next!();
        if around().is_some() {
            fix_count(status, size());
        }
        err
    }

    fn MPI_Iprobe(_source, _tag, _comm, flag, status) {
        let err = next!();
        if around().is_some() && read(flag) != 0 {
            fix_count(status, size());
        }
        err
    }

    fn MPI_Mprobe(_source, _tag, _comm, _message, status) {
        let err = next!();
        if around().is_some() {
            fix_count(status, size());
        }
        err
    }

    fn MPI_Improbe(_source, _tag, _comm, flag, _message, status) {
        let err = next!();
        if around().is_some() && read(flag) != 0 {
            fix_count(status, size());
        }
        err
    }

    fn MPI_Start(request) {
        refresh(&requests(request, 1));
        next!()
    }

    fn MPI_Startall(count, requests_) {
        refresh(&requests(requests_, count));
        next!()
    }

    fn MPI_Request_free(request) {
        if let Some(around) = around() {
            requests(request, 1).iter().for_each(|&r| record::free(around, r));
        }
        next!()
    }

    fn MPI_Wait(_request, status) {
        let extended = llnl::is_extended(status, 0);
        let err = next!();
        completions(extended, status, 1, 0..1);
        err
    }

    fn MPI_Test(_request, flag, status) {
        let extended = llnl::is_extended(status, 0);
        let err = next!();
        completions(extended && read(flag) != 0, status, 1, 0..1);
        err
    }

    fn MPI_Waitany(_count, _requests, index, status) {
        let extended = llnl::is_extended(status, 0);
        let err = next!();
        completions(extended && read(index) != constants::UNDEFINED(), status, 1, 0..1);
        err
    }

    fn MPI_Testany(_count, _requests, index, flag, status) {
        let extended = llnl::is_extended(status, 0);
        let err = next!();
        completions(extended && read(flag) != 0 && read(index) != constants::UNDEFINED(), status, 1, 0..1);
        err
    }

    fn MPI_Waitall(count, _requests, statuses) {
        let extended = llnl::is_extended(statuses, 0);
        let err = next!();
        completions(extended, statuses, count, 0..usize::try_from(count).unwrap_or(0));
        err
    }

    fn MPI_Testall(count, _requests, flag, statuses) {
        let extended = llnl::is_extended(statuses, 0);
        let err = next!();
        completions(extended && read(flag) != 0, statuses, count, 0..usize::try_from(count).unwrap_or(0));
        err
    }

    fn MPI_Waitsome(incount, _requests, outcount, _indices, statuses) {
        let extended = llnl::is_extended(statuses, 0);
        let err = next!();
        completions(extended, statuses, incount, 0..usize::try_from(read(outcount)).unwrap_or(0));
        err
    }

    fn MPI_Testsome(incount, _requests, outcount, _indices, statuses) {
        let extended = llnl::is_extended(statuses, 0);
        let err = next!();
        completions(extended, statuses, incount, 0..usize::try_from(read(outcount)).unwrap_or(0));
        err
    }
}
