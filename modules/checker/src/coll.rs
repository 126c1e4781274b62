//! Collective wrappers: arguments checked on the ranks that use them,
//! the call compared across ranks (`collective::agree`), then a blocking
//! one made as its nonblocking twin (`MPI_Ibcast` for `MPI_Bcast`...) and
//! a test loop, a nonblocking one (`MPI_Ibcast`...) started as the
//! application asked, compared at its start without waiting
//! (`collective::agree_at_start`) and its request registered. The eight
//! commonest collectives are here, the others in `coll_v`, `coll_scan`
//! and `coll_neighbor`, with the same machinery.

use crate::args::{self, Buffer, Checked, Refusal};
use crate::collective;
use crate::desc::Desc;
use crate::gate::gate;
use crate::p2p;
use crate::registry::RequestInfo;
use crate::requests;
use crate::site::Here;
use crate::wait::block_on;
use pnmpi_sdk::constants as mpi;
use pnmpi_sdk::raw::routine;
use pnmpi_sdk::sys::ffi::{MPI_Comm, MPI_Datatype, MPI_Op, MPI_Request};
use pnmpi_sdk::sys::Handle;
use std::ffi::{c_int, c_void};

/// How a checked collective is made.
#[derive(Clone, Copy)]
pub enum Made {
    /// A blocking call: compared, then its nonblocking twin on the
    /// checker's duplicate of the communicator and a test loop.
    Blocking,
    /// A blocking call: compared, then made as the application called it
    /// (every rank is then in it: it completes as it would natively).
    Agreed,
    /// A nonblocking call, the application's request: started as asked,
    /// compared at its start without waiting.
    Started(*mut MPI_Request),
}

/// A collective compared, then made as the application called it
/// (`Made::Agreed`) or started (`Made::Started`, with its request).
pub fn made(request: Option<*mut MPI_Request>) -> Made {
    request.map_or(Made::Agreed, Made::Started)
}

/// The application's own call of a collective, for `Made::Agreed` and
/// `Made::Started`.
pub type CollectiveCall<'a> = &'a mut dyn FnMut() -> c_int;

/// The checks of a collective: its descriptor, or the refusal.
pub type Described = Result<Desc, Refusal>;

/// Runs the checks, then the collective: `start` starts it (its
/// nonblocking form) on the communicator and request it is given.
///
/// A blocking one's twin runs on the checker's duplicate of `comm` (its
/// same ranks), when it has one: there it follows only the checker's
/// own operations, in their order. On `comm` itself it would match the
/// application's own nonblocking collectives, which MPI keeps apart from
/// blocking ones (mpi4py's `Iagree` on Open MPI, an `MPI_Iallreduce`
/// that one rank starts before an `MPI_Barrier` and the others after it,
/// would get the barrier's message: `MPI_ERR_TRUNCATE`).
pub fn run(
    here: &Here,
    made: Made,
    comm: MPI_Comm,
    checks: impl FnOnce() -> Described,
    start: impl FnOnce(MPI_Comm, &mut MPI_Request) -> c_int,
) -> c_int {
    let desc = match args::comm(comm).and_then(|()| checks()) {
        Ok(desc) => desc,
        Err(r) => return r.report(here),
    };
    crate::thread_rules::collective(here, comm.bits());
    match made {
        Made::Blocking => {
            if let Err(r) = collective::agree(here, comm, desc) {
                return r.report(here);
            }
            let on = crate::registry::shadow(comm).unwrap_or(comm);
            let mut req = mpi::REQUEST_NULL();
            let rc = start(on, &mut req);
            if rc != mpi::SUCCESS() {
                return rc;
            }
            block_on(
                here,
                || p2p::collective_waits(comm),
                || p2p::test(&mut req, mpi::STATUS_IGNORE()),
            )
        }
        Made::Agreed => {
            if let Err(r) = collective::agree(here, comm, desc) {
                return r.report(here);
            }
            start(comm, &mut mpi::REQUEST_NULL())
        }
        Made::Started(request) => {
            if let Err(r) = args::out_param(request, "request") {
                return r.report(here);
            }
            requests::check_reuse(here, request);
            collective::agree_at_start(here, comm, desc);
            // SAFETY: the application's request variable, which MPI sets.
            let rc = start(comm, unsafe { &mut *request });
            if rc == mpi::SUCCESS() {
                requests::started(here, request, RequestInfo::collective(comm.bits()));
            }
            rc
        }
    }
}

/// A buffer's checks: count, datatype, and not NULL with data.
pub fn data(buf: *const c_void, count: c_int, dt: MPI_Datatype) -> Checked {
    if std::ptr::eq(buf, mpi::IN_PLACE()) {
        // MPI ignores the count and datatype of a buffer in place.
        return Ok(());
    }
    args::count(count)?;
    args::datatype(dt)?;
    args::buffer(buf, count, dt)
}

/// Whether this rank is `root` of `comm`.
pub fn is_root(root: c_int, comm: MPI_Comm) -> bool {
    if args::is_inter(comm) {
        return root == mpi::ROOT();
    }
    pnmpi_sdk::native::comm_rank(comm).is_ok_and(|r| r == root)
}

/// Whether this rank's data goes to the root: not on an
/// intercommunicator's root group, whose ranks pass `MPI_ROOT` or
/// `MPI_PROC_NULL` and whose send (or, for a scatter, receive) arguments
/// MPI ignores.
pub fn contributes(root: c_int, comm: MPI_Comm) -> bool {
    !(root == mpi::ROOT() || root == mpi::PROC_NULL()) || !args::is_inter(comm)
}

/// The piece a rank contributes to a rooted or all-to-all exchange: its
/// send piece, or its receive piece when it sends in place.
fn piece(
    sendbuf: *const c_void,
    send: (c_int, MPI_Datatype),
    recv: (c_int, MPI_Datatype),
) -> (c_int, MPI_Datatype) {
    if std::ptr::eq(sendbuf, mpi::IN_PLACE()) {
        recv
    } else {
        send
    }
}

/// The checks of a rooted exchange (`MPI_Gather`, `MPI_Scatter` and
/// their nonblocking forms, `kind`, a gather if `gathers`): `leaf`, the
/// piece every rank has (a gather's send, a scatter's receive), and at the
/// root `whole`, its buffer for every rank's piece, the two pieces against
/// each other unless the leaf is in place; the descriptor.
fn rooted(kind: usize, gathers: bool, comm: MPI_Comm, root: c_int, leaf: Buffer, whole: Buffer) -> Described {
    if contributes(root, comm) {
        data(leaf.0, leaf.1, leaf.2)?;
    }
    args::root(root, comm)?;
    let mine = if is_root(root, comm) {
        data(whole.0, whole.1, whole.2)?;
        per_rank(whole, comm);
        if std::ptr::eq(leaf.0, mpi::IN_PLACE()) {
            (whole.1, whole.2)
        } else {
            // The message text names the send piece first.
            let (send, recv) = if gathers { (leaf, whole) } else { (whole, leaf) };
            collective::pieces_agree(comm, (send.1, send.2), (recv.1, recv.2))?;
            (leaf.1, leaf.2)
        }
    } else {
        (leaf.1, leaf.2)
    };
    Ok(Desc::new(kind).root(root).data(mine.0, mine.1))
}

/// A buffer of a piece for each rank of `comm` (a gather's at the root,
/// an all-to-all's) against the variable it points into: `count` for
/// each rank (an intercommunicator's remote ranks are not counted).
fn per_rank(b: Buffer, comm: MPI_Comm) {
    if !std::ptr::eq(b.0, mpi::IN_PLACE()) && !args::is_inter(comm) {
        crate::buftype::check(b.0, i64::from(b.1) * i64::from(args::comm_size(comm)), b.2);
    }
}

/// The checks of an exchange from every rank to every rank
/// (`MPI_Allgather`, `MPI_Alltoall` and their nonblocking forms, `kind`):
/// both buffers, this rank's pieces against each other; the descriptor.
fn every_to_every(
    kind: usize,
    comm: MPI_Comm,
    sendbuf: *const c_void,
    send: (c_int, MPI_Datatype),
    recvbuf: *mut c_void,
    recv: (c_int, MPI_Datatype),
) -> Described {
    data(sendbuf, send.0, send.1)?;
    data(recvbuf, recv.0, recv.1)?;
    per_rank((recvbuf, recv.0, recv.1), comm);
    if matches!(kind, routine::MPI_Alltoall | routine::MPI_Ialltoall) {
        per_rank((sendbuf, send.0, send.1), comm);
    }
    if !std::ptr::eq(sendbuf, mpi::IN_PLACE()) {
        collective::pieces_agree(comm, send, recv)?;
    }
    let mine = piece(sendbuf, send, recv);
    Ok(Desc::new(kind).data(mine.0, mine.1))
}

/// The routine a call is compared as: `blocking` made blocking, its
/// nonblocking form `started` else (a rank's `MPI_Bcast` never matches
/// another's `MPI_Ibcast`).
pub fn kind(made: Made, blocking: usize, started: usize) -> usize {
    match made {
        Made::Blocking | Made::Agreed => blocking,
        Made::Started(_) => started,
    }
}

/// `MPI_Bcast` or `MPI_Ibcast`.
fn bcast(
    here: &Here,
    made: Made,
    buffer: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    let kind = kind(made, routine::MPI_Bcast, routine::MPI_Ibcast);
    run(
        here,
        made,
        comm,
        || {
            if root != mpi::PROC_NULL() || !args::is_inter(comm) {
                data(buffer, count, datatype)?;
            }
            args::root(root, comm)?;
            Ok(Desc::new(kind).root(root).data(count, datatype))
        },
        |on, req| {
            // SAFETY: the application's arguments; the request is completed
            // by the loop or by the application.
            unsafe { pnmpi_sdk::raw::XMPI_Ibcast(buffer, count, datatype, root, on, req) }
        },
    )
}

/// `MPI_Reduce` or `MPI_Ireduce`.
#[allow(clippy::too_many_arguments)]
fn reduce(
    here: &Here,
    made: Made,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    let kind = kind(made, routine::MPI_Reduce, routine::MPI_Ireduce);
    run(
        here,
        made,
        comm,
        || {
            if contributes(root, comm) {
                data(sendbuf, count, datatype)?;
            }
            args::op(op)?;
            crate::ops::reduction(op, datatype)?;
            args::root(root, comm)?;
            if is_root(root, comm) {
                data(recvbuf, count, datatype)?;
                args::disjoint(
                    args::span(sendbuf, count, datatype),
                    args::span(recvbuf, count, datatype),
                )?;
            }
            Ok(Desc::new(kind).root(root).op(op).data(count, datatype))
        },
        |on, req| {
            // SAFETY: the application's arguments; the request is completed
            // by the loop or by the application.
            unsafe { pnmpi_sdk::raw::XMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, on, req) }
        },
    )
}

/// The checks of a reduction every rank gets a result of (`MPI_Allreduce`,
/// `MPI_Scan`, `MPI_Exscan` and their nonblocking forms, `kind`).
pub fn reduction(
    kind: usize,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
) -> Described {
    data(sendbuf, count, datatype)?;
    data(recvbuf, count, datatype)?;
    args::op(op)?;
    crate::ops::reduction(op, datatype)?;
    args::disjoint(
        args::span(sendbuf, count, datatype),
        args::span(recvbuf, count, datatype),
    )?;
    Ok(Desc::new(kind).op(op).data(count, datatype))
}

/// `MPI_Allreduce` or `MPI_Iallreduce`.
#[allow(clippy::too_many_arguments)]
fn allreduce(
    here: &Here,
    made: Made,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> c_int {
    let kind = kind(made, routine::MPI_Allreduce, routine::MPI_Iallreduce);
    run(
        here,
        made,
        comm,
        || reduction(kind, sendbuf, recvbuf, count, datatype, op),
        |on, req| {
            // SAFETY: the application's arguments; the request is completed
            // by the loop or by the application.
            unsafe { pnmpi_sdk::raw::XMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, on, req) }
        },
    )
}

/// `MPI_Gather` or `MPI_Igather`.
#[allow(clippy::too_many_arguments)]
fn gather(
    here: &Here,
    made: Made,
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    let kind = kind(made, routine::MPI_Gather, routine::MPI_Igather);
    run(
        here,
        made,
        comm,
        || {
            let send = (sendbuf, sendcount, sendtype);
            let recv = (recvbuf.cast_const(), recvcount, recvtype);
            rooted(kind, true, comm, root, send, recv)
        },
        |on, req| {
            // SAFETY: the application's arguments; the request is completed
            // by the loop or by the application.
            unsafe {
                pnmpi_sdk::raw::XMPI_Igather(
                    sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, on, req,
                )
            }
        },
    )
}

/// `MPI_Scatter` or `MPI_Iscatter`.
#[allow(clippy::too_many_arguments)]
fn scatter(
    here: &Here,
    made: Made,
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    let kind = kind(made, routine::MPI_Scatter, routine::MPI_Iscatter);
    run(
        here,
        made,
        comm,
        || {
            let recv = (recvbuf.cast_const(), recvcount, recvtype);
            rooted(kind, false, comm, root, recv, (sendbuf, sendcount, sendtype))
        },
        |on, req| {
            // SAFETY: the application's arguments; the request is completed
            // by the loop or by the application.
            unsafe {
                pnmpi_sdk::raw::XMPI_Iscatter(
                    sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, on, req,
                )
            }
        },
    )
}

/// `MPI_Allgather` or `MPI_Iallgather`.
#[allow(clippy::too_many_arguments)]
fn allgather(
    here: &Here,
    made: Made,
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> c_int {
    let kind = kind(made, routine::MPI_Allgather, routine::MPI_Iallgather);
    run(
        here,
        made,
        comm,
        || {
            every_to_every(
                kind,
                comm,
                sendbuf,
                (sendcount, sendtype),
                recvbuf,
                (recvcount, recvtype),
            )
        },
        |on, req| {
            // SAFETY: the application's arguments; the request is completed
            // by the loop or by the application.
            unsafe {
                pnmpi_sdk::raw::XMPI_Iallgather(
                    sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, on, req,
                )
            }
        },
    )
}

/// `MPI_Alltoall` or `MPI_Ialltoall`.
#[allow(clippy::too_many_arguments)]
fn alltoall(
    here: &Here,
    made: Made,
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> c_int {
    let kind = kind(made, routine::MPI_Alltoall, routine::MPI_Ialltoall);
    run(
        here,
        made,
        comm,
        || {
            every_to_every(
                kind,
                comm,
                sendbuf,
                (sendcount, sendtype),
                recvbuf,
                (recvcount, recvtype),
            )
        },
        |on, req| {
            // SAFETY: the application's arguments; the request is completed
            // by the loop or by the application.
            unsafe {
                pnmpi_sdk::raw::XMPI_Ialltoall(
                    sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, on, req,
                )
            }
        },
    )
}

/// `MPI_Barrier` or `MPI_Ibarrier`.
fn barrier(here: &Here, made: Made, comm: MPI_Comm) -> c_int {
    let kind = kind(made, routine::MPI_Barrier, routine::MPI_Ibarrier);
    run(
        here,
        made,
        comm,
        || Ok(Desc::new(kind)),
        |on, req| {
            // SAFETY: a nonblocking barrier, completed by the loop or by the
            // application.
            unsafe { pnmpi_sdk::raw::XMPI_Ibarrier(on, req) }
        },
    )
}

pnmpi_sdk::wrap! {
    /// Compared across ranks; `MPI_Ibarrier` and a test loop.
    fn MPI_Barrier(comm) {
        let here = Here::new(routine::MPI_Barrier);
        gate(&here).unwrap_or_else(|| barrier(&here, Made::Blocking, comm))
    }

    /// Compared across ranks at its start; its request registered.
    fn MPI_Ibarrier(comm, request) {
        let here = Here::new(routine::MPI_Ibarrier);
        gate(&here).unwrap_or_else(|| barrier(&here, Made::Started(request), comm))
    }

    /// Checked and compared across ranks; `MPI_Ibcast` and a test loop.
    fn MPI_Bcast(buffer, count, datatype, root, comm) {
        let here = Here::new(routine::MPI_Bcast);
        gate(&here).unwrap_or_else(|| bcast(&here, Made::Blocking, buffer, count, datatype, root, comm))
    }

    /// Checked and compared across ranks at its start; its request registered.
    fn MPI_Ibcast(buffer, count, datatype, root, comm, request) {
        let here = Here::new(routine::MPI_Ibcast);
        gate(&here).unwrap_or_else(|| bcast(&here, Made::Started(request), buffer, count, datatype, root, comm))
    }

    /// Checked and compared across ranks; `MPI_Ireduce` and a test loop.
    fn MPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm) {
        let here = Here::new(routine::MPI_Reduce);
        gate(&here).unwrap_or_else(|| reduce(&here, Made::Blocking, sendbuf, recvbuf, count, datatype, op, root, comm))
    }

    /// Checked and compared across ranks at its start; its request registered.
    fn MPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request) {
        let here = Here::new(routine::MPI_Ireduce);
        gate(&here).unwrap_or_else(|| reduce(&here, Made::Started(request), sendbuf, recvbuf, count, datatype, op, root, comm))
    }

    /// Checked and compared across ranks; `MPI_Iallreduce` and a test loop.
    fn MPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm) {
        let here = Here::new(routine::MPI_Allreduce);
        gate(&here).unwrap_or_else(|| allreduce(&here, Made::Blocking, sendbuf, recvbuf, count, datatype, op, comm))
    }

    /// Checked and compared across ranks at its start; its request registered.
    fn MPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request) {
        let here = Here::new(routine::MPI_Iallreduce);
        gate(&here).unwrap_or_else(|| allreduce(&here, Made::Started(request), sendbuf, recvbuf, count, datatype, op, comm))
    }

    /// Checked and compared across ranks; `MPI_Igather` and a test loop.
    fn MPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm) {
        let here = Here::new(routine::MPI_Gather);
        gate(&here).unwrap_or_else(|| gather(&here, Made::Blocking, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm))
    }

    /// Checked and compared across ranks at its start; its request registered.
    fn MPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request) {
        let here = Here::new(routine::MPI_Igather);
        gate(&here).unwrap_or_else(|| gather(&here, Made::Started(request), sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm))
    }

    /// Checked and compared across ranks; `MPI_Iscatter` and a test loop.
    fn MPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm) {
        let here = Here::new(routine::MPI_Scatter);
        gate(&here).unwrap_or_else(|| scatter(&here, Made::Blocking, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm))
    }

    /// Checked and compared across ranks at its start; its request registered.
    fn MPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request) {
        let here = Here::new(routine::MPI_Iscatter);
        gate(&here).unwrap_or_else(|| scatter(&here, Made::Started(request), sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm))
    }

    /// Checked and compared across ranks; `MPI_Iallgather` and a test loop.
    fn MPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm) {
        let here = Here::new(routine::MPI_Allgather);
        gate(&here).unwrap_or_else(|| allgather(&here, Made::Blocking, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
    }

    /// Checked and compared across ranks at its start; its request registered.
    fn MPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request) {
        let here = Here::new(routine::MPI_Iallgather);
        gate(&here).unwrap_or_else(|| allgather(&here, Made::Started(request), sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
    }

    /// Checked and compared across ranks; `MPI_Ialltoall` and a test loop.
    fn MPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm) {
        let here = Here::new(routine::MPI_Alltoall);
        gate(&here).unwrap_or_else(|| alltoall(&here, Made::Blocking, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
    }

    /// Checked and compared across ranks at its start; its request registered.
    fn MPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request) {
        let here = Here::new(routine::MPI_Ialltoall);
        gate(&here).unwrap_or_else(|| alltoall(&here, Made::Started(request), sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
    }
}

// MPI 4's large-count collectives (MPICH 4 has them, Open MPI 4.1 not):
// checked as their `int` twins, whose routine they are compared as, when
// the counts fit an `int`, else passed on unchecked.
pnmpi_sdk::wrap_optional! {
    /// As `MPI_Bcast`.
    fn MPI_Bcast_c(buffer, count, datatype, root, comm) {
        let here = Here::new(routine::MPI_Bcast_c);
        match (gate(&here), args::int_count(count)) {
            (Some(rc), _) => rc,
            (None, None) => next!(),
            (None, Some(n)) => bcast(&here, Made::Blocking, buffer, n, datatype, root, comm),
        }
    }

    /// As `MPI_Reduce`.
    fn MPI_Reduce_c(sendbuf, recvbuf, count, datatype, op, root, comm) {
        let here = Here::new(routine::MPI_Reduce_c);
        match (gate(&here), args::int_count(count)) {
            (Some(rc), _) => rc,
            (None, None) => next!(),
            (None, Some(n)) => reduce(&here, Made::Blocking, sendbuf, recvbuf, n, datatype, op, root, comm),
        }
    }

    /// As `MPI_Allreduce`.
    fn MPI_Allreduce_c(sendbuf, recvbuf, count, datatype, op, comm) {
        let here = Here::new(routine::MPI_Allreduce_c);
        match (gate(&here), args::int_count(count)) {
            (Some(rc), _) => rc,
            (None, None) => next!(),
            (None, Some(n)) => allreduce(&here, Made::Blocking, sendbuf, recvbuf, n, datatype, op, comm),
        }
    }

    /// As `MPI_Gather`.
    fn MPI_Gather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm) {
        let here = Here::new(routine::MPI_Gather_c);
        match (gate(&here), args::int_count(sendcount).zip(args::int_count(recvcount))) {
            (Some(rc), _) => rc,
            (None, None) => next!(),
            (None, Some((s, r))) => gather(&here, Made::Blocking, sendbuf, s, sendtype, recvbuf, r, recvtype, root, comm),
        }
    }

    /// As `MPI_Scatter`.
    fn MPI_Scatter_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm) {
        let here = Here::new(routine::MPI_Scatter_c);
        match (gate(&here), args::int_count(sendcount).zip(args::int_count(recvcount))) {
            (Some(rc), _) => rc,
            (None, None) => next!(),
            (None, Some((s, r))) => scatter(&here, Made::Blocking, sendbuf, s, sendtype, recvbuf, r, recvtype, root, comm),
        }
    }

    /// As `MPI_Allgather`.
    fn MPI_Allgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm) {
        let here = Here::new(routine::MPI_Allgather_c);
        match (gate(&here), args::int_count(sendcount).zip(args::int_count(recvcount))) {
            (Some(rc), _) => rc,
            (None, None) => next!(),
            (None, Some((s, r))) => allgather(&here, Made::Blocking, sendbuf, s, sendtype, recvbuf, r, recvtype, comm),
        }
    }

    /// As `MPI_Alltoall`.
    fn MPI_Alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm) {
        let here = Here::new(routine::MPI_Alltoall_c);
        match (gate(&here), args::int_count(sendcount).zip(args::int_count(recvcount))) {
            (Some(rc), _) => rc,
            (None, None) => next!(),
            (None, Some((s, r))) => alltoall(&here, Made::Blocking, sendbuf, s, sendtype, recvbuf, r, recvtype, comm),
        }
    }
}
