//! Nonblocking operations: each request is registered at its start with
//! its site, peer and, for a send of contiguous data, a checksum of its
//! buffer; at its completion the checksum is computed again. Reported: a
//! request started over an active one (the variable still held an active
//! request), a send buffer written before completion; at `MPI_Finalize`
//! (see `lifecycle`), requests never completed.

use crate::args;
use crate::checksum::checksum;
use crate::gate::gate;
use crate::origin::Origin;
use crate::p2p::{self, give, to_world};
use crate::p2psig;
use crate::registry::{self, key, RequestInfo};
use crate::report::{self, Class};
use crate::site::{self, Here};
use crate::types;
use crate::wait::{self, block_on};
use pnmpi_sdk::constants as mpi;
use pnmpi_sdk::raw::{self as x, routine};
use pnmpi_sdk::sys::ffi::{MPI_Comm, MPI_Datatype, MPI_Request, MPI_Status};
use pnmpi_sdk::sys::Handle;
use std::ffi::{c_int, c_void};

/// The checksum record of a send of `count` elements of `dt` at `buf`.
fn sum_of(buf: *const c_void, count: c_int, dt: MPI_Datatype) -> Option<(usize, usize, u64)> {
    let (start, len) = types::contiguous_span(buf as usize, count, dt)?;
    // SAFETY: the application's send buffer, which MPI reads too.
    Some((start, len, unsafe { checksum(start, len) }))
}

/// Before a call writes `*request`: reports if it still holds an active
/// request (which is then lost).
pub fn check_reuse(here: &Here, request: *mut MPI_Request) {
    if request.is_null() {
        return;
    }
    // SAFETY: the caller's request variable.
    let h = key(unsafe { *request });
    let old = registry::lock().requests.get(&h).copied();
    if let Some(old) = old.filter(|o| o.active && !o.persistent) {
        report::report(
            Class::Nonblocking,
            "request-reused",
            here.call(),
            &here.site(),
            format!(
                "the request variable still holds the active request of the {} at {}; it can no longer be completed",
                pnmpi_mpi_sys::ROUTINE_NAMES[old.origin.routine],
                site::name(old.origin.ra)
            ),
        );
    }
}

/// Registers the request a call just started.
pub fn started(here: &Here, request: *mut MPI_Request, info: RequestInfo) {
    // SAFETY: the caller's request variable, which MPI just set.
    let h = key(unsafe { *request });
    if h == key(mpi::REQUEST_NULL()) {
        return;
    }
    let mut info = info;
    info.origin = Origin::of(here);
    registry::lock().requests.insert(h, info);
}

/// Records the completion of request `h` (its handle before the call)
/// with `status`: checks a send buffer's checksum, a receive's signature.
fn completed(here: &Here, h: u64, status: &MPI_Status) {
    let info = {
        let mut reg = registry::lock();
        let Some(info) = reg.requests.get_mut(&h) else {
            return;
        };
        let copy = *info;
        if info.persistent {
            info.active = false;
        } else {
            reg.requests.remove(&h);
        }
        copy
    };
    // MPICH's status of a receive from MPI_PROC_NULL may name rank 0.
    if let (true, Some((_, count, dt)), Some((peer, _, comm))) = (info.recv, info.args, info.env) {
        let comm = MPI_Comm::from_bits(comm);
        let dt = MPI_Datatype::from_bits(dt);
        let freed = registry::lock().freed_types.contains(&dt.bits());
        if peer == mpi::PROC_NULL() {
            // Nothing was sent.
        } else if freed {
            // The application freed the datatype while the receive was
            // active (legal: MPI frees it once unused); MPI can no longer
            // describe it.
        } else if let Err(r) = p2psig::verify(status, comm, count, dt) {
            r.report(here);
        }
    }
    if let Some((start, len, sum)) = info.checksum {
        // SAFETY: the send buffer the application gave, still its own.
        if unsafe { checksum(start, len) } != sum {
            report::report(
                Class::Nonblocking,
                "buffer-modified",
                here.call(),
                &here.site(),
                format!(
                    "the send buffer of the {} at {} was written before the send completed",
                    pnmpi_mpi_sys::ROUTINE_NAMES[info.origin.routine],
                    site::name(info.origin.ra)
                ),
            );
        }
    }
}

/// What waiting on the requests `hs` waits for.
fn waits_on(hs: &[u64]) -> crate::graph::Blocked {
    let reg = registry::lock();
    let mut peers = Vec::new();
    let mut any = false;
    for h in hs {
        // The peer's world rank, found only now that the call blocks.
        if let Some(comm) = reg.requests.get(h).and_then(|info| info.coll) {
            let comm = MPI_Comm::from_bits(comm);
            let me = crate::report::rank();
            peers.extend(
                (0..args::comm_size(comm))
                    .map(|r| to_world(comm, r))
                    .filter(|&r| r != me && r >= 0),
            );
        }
        if let Some((peer, _, comm)) = reg.requests.get(h).and_then(|info| info.env) {
            if peer == mpi::ANY_SOURCE() || peer == mpi::PROC_NULL() {
                any = true;
            } else {
                peers.push(to_world(MPI_Comm::from_bits(comm), peer));
            }
        }
    }
    let text = if peers.is_empty() && !any {
        "requests the checker does not know".to_string()
    } else {
        format!(
            "its requests to complete (peers {peers:?}{})",
            if any { ", and any rank" } else { "" }
        )
    };
    wait::waiting_for(peers, any, text)
}

/// Starts a nonblocking point-to-point call after its checks.
#[allow(clippy::too_many_arguments)]
fn start(
    here: &Here,
    buf: *const c_void,
    count: c_int,
    dt: MPI_Datatype,
    peer: c_int,
    tag: c_int,
    comm: MPI_Comm,
    recv: bool,
    request: *mut MPI_Request,
    persistent: bool,
    call: impl FnOnce() -> c_int,
) -> c_int {
    if let Err(r) =
        args::p2p(buf, count, dt, peer, tag, comm, recv).and_then(|()| args::out_param(request, "request"))
    {
        return r.report(here);
    }
    check_reuse(here, request);
    if !persistent {
        crate::concurrency::check(here, buf, count, dt, recv);
    }
    if !recv && !persistent {
        p2psig::announce(count, dt, peer, tag, comm);
    }
    let rc = call();
    if rc == mpi::SUCCESS() {
        let info = RequestInfo {
            origin: Origin::default(),
            persistent,
            active: !persistent,
            recv,
            checksum: if recv || persistent {
                None
            } else {
                sum_of(buf, count, dt)
            },
            args: Some((buf as usize, count, dt.bits())),
            env: Some((peer, tag, comm.bits())),
            coll: None,
            span: args::span(buf, count, dt),
        };
        started(here, request, info);
    }
    rc
}

/// The handles of `count` requests at `reqs`.
fn handles(count: c_int, reqs: *const MPI_Request) -> Vec<u64> {
    (0..count.max(0) as usize)
        // SAFETY: the caller's array of `count` requests.
        .map(|i| key(unsafe { *reqs.add(i) }))
        .collect()
}

/// Activates the persistent request `h` (`MPI_Start`).
fn activate(here: &Here, h: u64) {
    let mut reg = registry::lock();
    let Some(info) = reg.requests.get_mut(&h) else {
        return;
    };
    if info.active {
        let origin = info.origin;
        drop(reg);
        report::report(
            Class::Nonblocking,
            "request-reused",
            here.call(),
            &here.site(),
            format!(
                "the persistent request of the {} at {} is started while still active",
                pnmpi_mpi_sys::ROUTINE_NAMES[origin.routine],
                site::name(origin.ra)
            ),
        );
        return;
    }
    info.active = true;
    if let (false, Some((buf, count, dt)), Some((peer, tag, comm))) = (info.recv, info.args, info.env) {
        let dt = MPI_Datatype::from_bits(dt);
        info.checksum = sum_of(buf as *const c_void, count, dt);
        drop(reg);
        p2psig::announce(count, dt, peer, tag, MPI_Comm::from_bits(comm));
    }
}

/// Wrappers of nonblocking and persistent point-to-point calls (`wrap`,
/// or `wrap_optional` for MPI 4's large-count ones, checked as their
/// `int` twins when the count fits an `int`, else passed on).
macro_rules! nonblocking {
    ($wrap:ident: $($(#[$doc:meta])* $name:ident, recv: $recv:literal, persistent: $persistent:literal;)*) => {
        pnmpi_sdk::$wrap! {
            $(
                $(#[$doc])*
                fn $name(buf, count, datatype, peer, tag, comm, request) {
                    let here = Here::new(routine::$name);
                    match (gate(&here), args::int_count(count)) {
                        (Some(rc), _) => rc,
                        (None, None) => next!(),
                        (None, Some(n)) => start(&here, buf as *const c_void, n, datatype, peer, tag, comm, $recv, request, $persistent, || next!()),
                    }
                }
            )*
        }
    };
}

nonblocking! { wrap:
    /// Checked and registered, its buffer's checksum taken.
    MPI_Isend, recv: false, persistent: false;
    /// Checked and registered, its buffer's checksum taken.
    MPI_Issend, recv: false, persistent: false;
    /// Checked and registered, its buffer's checksum taken.
    MPI_Irsend, recv: false, persistent: false;
    /// Checked and registered, its buffer's checksum taken.
    MPI_Ibsend, recv: false, persistent: false;
    /// Checked and registered.
    MPI_Irecv, recv: true, persistent: false;
    /// Checked and registered, inactive.
    MPI_Send_init, recv: false, persistent: true;
    /// Checked and registered, inactive.
    MPI_Ssend_init, recv: false, persistent: true;
    /// Checked and registered, inactive.
    MPI_Bsend_init, recv: false, persistent: true;
    /// Checked and registered, inactive.
    MPI_Rsend_init, recv: false, persistent: true;
    /// Checked and registered, inactive.
    MPI_Recv_init, recv: true, persistent: true;
}

// MPI 4's large-count twins (MPICH 4 has them, Open MPI 4.1 not).
nonblocking! { wrap_optional:
    /// As `MPI_Isend`.
    MPI_Isend_c, recv: false, persistent: false;
    /// As `MPI_Issend`.
    MPI_Issend_c, recv: false, persistent: false;
    /// As `MPI_Irsend`.
    MPI_Irsend_c, recv: false, persistent: false;
    /// As `MPI_Ibsend`.
    MPI_Ibsend_c, recv: false, persistent: false;
    /// As `MPI_Irecv`.
    MPI_Irecv_c, recv: true, persistent: false;
    /// As `MPI_Send_init`.
    MPI_Send_init_c, recv: false, persistent: true;
    /// As `MPI_Ssend_init`.
    MPI_Ssend_init_c, recv: false, persistent: true;
    /// As `MPI_Bsend_init`.
    MPI_Bsend_init_c, recv: false, persistent: true;
    /// As `MPI_Rsend_init`.
    MPI_Rsend_init_c, recv: false, persistent: true;
    /// As `MPI_Recv_init`.
    MPI_Recv_init_c, recv: true, persistent: true;
}

/// Waits for one request as a test loop.
fn wait_one(here: &Here, request: *mut MPI_Request, status: *mut MPI_Status) -> c_int {
    // SAFETY: the caller's request variable.
    let h = key(unsafe { *request });
    if h == key(mpi::REQUEST_NULL()) {
        // SAFETY: the application's own call, unchanged.
        return unsafe { x::XMPI_Wait(request, status) };
    }
    if let Some(rc) = crate::thread_rules::waiting(here, &[h], key(mpi::REQUEST_NULL())) {
        return rc;
    }
    let mut own = p2p::empty_status();
    // SAFETY: the caller's request variable, which MPI updates.
    let rc = block_on(
        here,
        || waits_on(&[h]),
        || p2p::test(unsafe { &mut *request }, &mut own),
    );
    give(status, &own);
    if rc == mpi::SUCCESS() {
        completed(here, h, &own);
    }
    rc
}

/// `n` statuses to fill.
fn statuses(n: c_int) -> Vec<MPI_Status> {
    (0..n.max(0)).map(|_| p2p::empty_status()).collect()
}

/// Copies the first `n` of the checker's statuses to the application's
/// array, unless ignored.
fn give_all(statuses: *mut MPI_Status, own: &[MPI_Status], n: usize) {
    if statuses.is_null() || statuses == mpi::STATUSES_IGNORE() {
        return;
    }
    for (i, st) in own.iter().take(n).enumerate() {
        // SAFETY: the caller's array has room for as many statuses as the
        // call may fill (its count).
        unsafe { *statuses.add(i) = *st };
    }
}

/// Records the completions a call reported: (index into `hs`, status).
fn completed_all<'a>(here: &Here, hs: &[u64], done: impl Iterator<Item = (usize, &'a MPI_Status)>) {
    for (i, st) in done {
        if let Some(&h) = hs.get(i) {
            completed(here, h, st);
        }
    }
}

/// After `MPI_Waitany` or `MPI_Testany` returned `rc` with index `i`
/// (`MPI_UNDEFINED`: none): the status given to the application, the
/// completion recorded; returns `rc`.
fn any_done(
    here: &Here,
    hs: &[u64],
    rc: c_int,
    i: c_int,
    status: *mut MPI_Status,
    own: &MPI_Status,
) -> c_int {
    give(status, own);
    if rc == mpi::SUCCESS() && i != mpi::UNDEFINED() && i >= 0 {
        completed_all(here, hs, std::iter::once((i as usize, own)));
    }
    rc
}

/// The indices `Waitsome`/`Testsome` wrote: `outcount` of `indices`.
fn some(outcount: *const c_int, indices: *const c_int) -> Vec<usize> {
    // SAFETY: the caller's out-parameters, which MPI just wrote.
    let n = unsafe { *outcount };
    if n == mpi::UNDEFINED() || n <= 0 {
        return Vec::new();
    }
    // SAFETY: MPI wrote `n` indices.
    (0..n as usize)
        .map(|i| unsafe { *indices.add(i) } as usize)
        .collect()
}

pnmpi_sdk::wrap! {
    /// A test loop; the request's completion checked.
    fn MPI_Wait(request, status) {
        let here = Here::new(routine::MPI_Wait);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        wait_one(&here, request, status)
    }

    /// A test loop; the completions checked.
    fn MPI_Waitall(count, array_of_requests, array_of_statuses) {
        let here = Here::new(routine::MPI_Waitall);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        let hs = handles(count, array_of_requests);
        if let Some(rc) = crate::thread_rules::waiting(&here, &hs, key(mpi::REQUEST_NULL())) {
            return rc;
        }
        let mut own = statuses(count);
        let rc = block_on(&here, || waits_on(&hs), || {
            // SAFETY: the application's requests; room for their statuses.
            crate::wait::flagged(|flag| unsafe { x::XMPI_Testall(count, array_of_requests, flag, own.as_mut_ptr()) })
        });
        give_all(array_of_statuses, &own, own.len());
        if rc == mpi::SUCCESS() {
            completed_all(&here, &hs, own.iter().enumerate());
        }
        rc
    }

    /// A test loop; the completion checked.
    fn MPI_Waitany(count, array_of_requests, index, status) {
        let here = Here::new(routine::MPI_Waitany);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        let hs = handles(count, array_of_requests);
        if let Some(rc) = crate::thread_rules::waiting(&here, &hs, key(mpi::REQUEST_NULL())) {
            return rc;
        }
        let mut own = p2p::empty_status();
        let rc = block_on(&here, || waits_on(&hs), || {
            // SAFETY: the application's arguments; our status.
            crate::wait::flagged(|flag| unsafe { x::XMPI_Testany(count, array_of_requests, index, flag, &mut own) })
        });
        // SAFETY: MPI wrote the index.
        any_done(&here, &hs, rc, unsafe { *index }, status, &own)
    }

    /// A test loop; the completions checked.
    fn MPI_Waitsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses) {
        let here = Here::new(routine::MPI_Waitsome);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        let hs = handles(incount, array_of_requests);
        if let Some(rc) = crate::thread_rules::waiting(&here, &hs, key(mpi::REQUEST_NULL())) {
            return rc;
        }
        let mut own = statuses(incount);
        let rc = block_on(&here, || waits_on(&hs), || {
            // SAFETY: the application's arguments; room for the statuses.
            let rc = unsafe { x::XMPI_Testsome(incount, array_of_requests, outcount, array_of_indices, own.as_mut_ptr()) };
            if rc != mpi::SUCCESS() {
                return Err(rc);
            }
            // SAFETY: MPI wrote the count.
            Ok(unsafe { *outcount } != 0)
        });
        let done = some(outcount, array_of_indices);
        give_all(array_of_statuses, &own, done.len());
        if rc == mpi::SUCCESS() {
            completed_all(&here, &hs, done.into_iter().zip(own.iter()));
        }
        rc
    }

    /// The completion checked.
    fn MPI_Test(request, flag, status) {
        let here = Here::new(routine::MPI_Test);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        crate::pending::progress();
        if let Err(r) = args::out_param(flag, "flag") {
            return r.report(&here);
        }
        // SAFETY: the caller's request variable.
        let h = key(unsafe { *request });
        if let Some(rc) = crate::thread_rules::waiting(&here, &[h], key(mpi::REQUEST_NULL())) {
            return rc;
        }
        let mut own = p2p::empty_status();
        // SAFETY: the application's request and flag; our status.
        let rc = unsafe { x::XMPI_Test(request, flag, &mut own) };
        give(status, &own);
        // SAFETY: MPI wrote the flag.
        if rc == mpi::SUCCESS() && unsafe { *flag } != 0 {
            completed(&here, h, &own);
        }
        rc
    }

    /// The completions checked.
    fn MPI_Testall(count, array_of_requests, flag, array_of_statuses) {
        let here = Here::new(routine::MPI_Testall);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        crate::pending::progress();
        if let Err(r) = args::out_param(flag, "flag") {
            return r.report(&here);
        }
        let hs = handles(count, array_of_requests);
        if let Some(rc) = crate::thread_rules::waiting(&here, &hs, key(mpi::REQUEST_NULL())) {
            return rc;
        }
        let mut own = statuses(count);
        // SAFETY: the application's requests and flag; room for the statuses.
        let rc = unsafe { x::XMPI_Testall(count, array_of_requests, flag, own.as_mut_ptr()) };
        // SAFETY: MPI wrote the flag.
        if rc == mpi::SUCCESS() && unsafe { *flag } != 0 {
            give_all(array_of_statuses, &own, own.len());
            completed_all(&here, &hs, own.iter().enumerate());
        }
        rc
    }

    /// The completion checked.
    fn MPI_Testany(count, array_of_requests, index, flag, status) {
        let here = Here::new(routine::MPI_Testany);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        crate::pending::progress();
        if let Err(r) = args::out_param(flag, "flag") {
            return r.report(&here);
        }
        let hs = handles(count, array_of_requests);
        if let Some(rc) = crate::thread_rules::waiting(&here, &hs, key(mpi::REQUEST_NULL())) {
            return rc;
        }
        let mut own = p2p::empty_status();
        // SAFETY: the application's arguments; our status.
        let rc = unsafe { x::XMPI_Testany(count, array_of_requests, index, flag, &mut own) };
        // SAFETY: MPI wrote the flag and index.
        let i = if unsafe { *flag } != 0 { unsafe { *index } } else { mpi::UNDEFINED() };
        any_done(&here, &hs, rc, i, status, &own)
    }

    /// The completions checked.
    fn MPI_Testsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses) {
        let here = Here::new(routine::MPI_Testsome);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        crate::pending::progress();
        let hs = handles(incount, array_of_requests);
        if let Some(rc) = crate::thread_rules::waiting(&here, &hs, key(mpi::REQUEST_NULL())) {
            return rc;
        }
        let mut own = statuses(incount);
        // SAFETY: the application's arguments; room for the statuses.
        let rc = unsafe { x::XMPI_Testsome(incount, array_of_requests, outcount, array_of_indices, own.as_mut_ptr()) };
        let done = some(outcount, array_of_indices);
        give_all(array_of_statuses, &own, done.len());
        if rc == mpi::SUCCESS() {
            completed_all(&here, &hs, done.into_iter().zip(own.iter()));
        }
        rc
    }

    /// Starts a persistent request; reported if it is still active.
    fn MPI_Start(request) {
        let here = Here::new(routine::MPI_Start);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        // SAFETY: the caller's request variable.
        activate(&here, key(unsafe { *request }));
        next!()
    }

    /// Starts persistent requests; reported if one is still active.
    fn MPI_Startall(count, array_of_requests) {
        let here = Here::new(routine::MPI_Startall);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        for h in handles(count, array_of_requests) {
            activate(&here, h);
        }
        next!()
    }

    /// Forgets the request (MPI completes an active one by itself).
    fn MPI_Request_free(request) {
        let here = Here::new(routine::MPI_Request_free);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        // SAFETY: the caller's request variable.
        let h = key(unsafe { *request });
        registry::lock().requests.remove(&h);
        next!()
    }
}
