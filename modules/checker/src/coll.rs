//! Collective wrappers: arguments checked on the ranks that use them,
//! the call compared across ranks (`collective::agree`), then made as its
//! nonblocking twin (`MPI_Ibcast` for `MPI_Bcast`...) and a test loop.

use crate::args::{self, Checked};
use crate::collective::{self, Desc};
use crate::lifecycle::gate;
use crate::p2p;
use crate::site::Here;
use crate::wait::block_on;
use pnmpi_sdk::constants as mpi;
use pnmpi_sdk::raw::routine;
use pnmpi_sdk::sys::ffi::{MPI_Comm, MPI_Datatype, MPI_Op, MPI_Request};
use std::ffi::{c_int, c_void};

/// Runs the checks, then the nonblocking twin `start` and its test loop.
///
/// The twin runs on the checker's duplicate of `comm` (its same ranks),
/// when it has one: there it follows only the blocking collectives, in
/// their order. On `comm` itself it would match the application's own
/// nonblocking collectives, which MPI keeps apart from blocking ones
/// (mpi4py's `Iagree` on Open MPI, an `MPI_Iallreduce` that one rank
/// starts before an `MPI_Barrier` and the others after it, would get
/// the barrier's message: `MPI_ERR_TRUNCATE`).
fn run(
    here: &Here,
    comm: MPI_Comm,
    checks: impl FnOnce() -> Checked,
    start: impl FnOnce(MPI_Comm, &mut MPI_Request) -> c_int,
) -> c_int {
    if let Err(r) = args::comm(comm).and_then(|()| checks()) {
        return r.report(here);
    }
    let on = crate::registry::shadow(comm).unwrap_or(comm);
    let mut req = pnmpi_sdk::constants::REQUEST_NULL();
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

/// A buffer's checks: count, datatype, and not NULL with data.
fn data(buf: *const c_void, count: c_int, dt: MPI_Datatype) -> Checked {
    if std::ptr::eq(buf, mpi::IN_PLACE()) {
        return args::count(count);
    }
    args::count(count)?;
    args::datatype(dt)?;
    args::buffer(buf, count, dt)
}

/// Whether this rank is `root` of `comm`.
fn is_root(root: c_int, comm: MPI_Comm) -> bool {
    if args::is_inter(comm) {
        return root == mpi::ROOT();
    }
    pnmpi_sdk::native::comm_rank(comm).is_ok_and(|r| r == root)
}

/// Whether this rank's data goes to the root: not on an
/// intercommunicator's root group, whose ranks pass `MPI_ROOT` or
/// `MPI_PROC_NULL` and whose send (or, for a scatter, receive) arguments
/// MPI ignores.
fn contributes(root: c_int, comm: MPI_Comm) -> bool {
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

/// A buffer: address, count, datatype.
type Buffer = (*const c_void, c_int, MPI_Datatype);

/// The checks of a rooted exchange (`MPI_Gather`, `MPI_Scatter`, named
/// `kind`): `leaf`, the piece every rank has (a gather's send, a
/// scatter's receive), and at the root `whole`, its buffer for every
/// rank's piece, the two pieces against each other unless the leaf is in
/// place, and the call across ranks.
fn rooted(here: &Here, kind: usize, comm: MPI_Comm, root: c_int, leaf: Buffer, whole: Buffer) -> Checked {
    if contributes(root, comm) {
        data(leaf.0, leaf.1, leaf.2)?;
    }
    args::root(root, comm)?;
    let mine = if is_root(root, comm) {
        data(whole.0, whole.1, whole.2)?;
        if std::ptr::eq(leaf.0, mpi::IN_PLACE()) {
            (whole.1, whole.2)
        } else {
            // The message text names the send piece first.
            let (send, recv) = if kind == routine::MPI_Gather {
                (leaf, whole)
            } else {
                (whole, leaf)
            };
            collective::pieces_agree(comm, (send.1, send.2), (recv.1, recv.2))?;
            (leaf.1, leaf.2)
        }
    } else {
        (leaf.1, leaf.2)
    };
    collective::agree(here, comm, Desc::new(kind).root(root).data(mine.0, mine.1))
}

/// The checks of an exchange from every rank to every rank
/// (`MPI_Allgather`, `MPI_Alltoall`): both buffers, this rank's pieces
/// against each other, and the call across ranks.
fn every_to_every(
    here: &Here,
    kind: usize,
    comm: MPI_Comm,
    sendbuf: *const c_void,
    send: (c_int, MPI_Datatype),
    recvbuf: *mut c_void,
    recv: (c_int, MPI_Datatype),
) -> Checked {
    data(sendbuf, send.0, send.1)?;
    data(recvbuf, recv.0, recv.1)?;
    if !std::ptr::eq(sendbuf, mpi::IN_PLACE()) {
        collective::pieces_agree(comm, send, recv)?;
    }
    let mine = piece(sendbuf, send, recv);
    collective::agree(here, comm, Desc::new(kind).data(mine.0, mine.1))
}

/// `MPI_Bcast`, checked and compared across ranks: `MPI_Ibcast` and a test loop.
#[allow(clippy::too_many_arguments)]
fn bcast(
    here: &Here,
    buffer: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    run(
        here,
        comm,
        || {
            if root != mpi::PROC_NULL() || !args::is_inter(comm) {
                data(buffer, count, datatype)?;
            }
            args::root(root, comm)?;
            collective::agree(
                here,
                comm,
                Desc::new(routine::MPI_Bcast).root(root).data(count, datatype),
            )
        },
        |on, req| {
            // SAFETY: the application's arguments; the loop completes the request.
            unsafe { pnmpi_sdk::raw::XMPI_Ibcast(buffer, count, datatype, root, on, req) }
        },
    )
}

/// `MPI_Reduce`, checked and compared across ranks: `MPI_Ireduce` and a test loop.
#[allow(clippy::too_many_arguments)]
fn reduce(
    here: &Here,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    run(
        here,
        comm,
        || {
            if contributes(root, comm) {
                data(sendbuf, count, datatype)?;
            }
            args::op(op)?;
            args::root(root, comm)?;
            if is_root(root, comm) {
                data(recvbuf, count, datatype)?;
                args::disjoint(
                    args::span(sendbuf, count, datatype),
                    args::span(recvbuf, count, datatype),
                )?;
            }
            collective::agree(
                here,
                comm,
                Desc::new(routine::MPI_Reduce)
                    .root(root)
                    .op(op)
                    .data(count, datatype),
            )
        },
        |on, req| {
            // SAFETY: the application's arguments; the loop completes the request.
            unsafe { pnmpi_sdk::raw::XMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, on, req) }
        },
    )
}

/// `MPI_Allreduce`, checked and compared across ranks: `MPI_Iallreduce` and a test loop.
#[allow(clippy::too_many_arguments)]
fn allreduce(
    here: &Here,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> c_int {
    run(
        here,
        comm,
        || {
            data(sendbuf, count, datatype)?;
            data(recvbuf, count, datatype)?;
            args::op(op)?;
            args::disjoint(
                args::span(sendbuf, count, datatype),
                args::span(recvbuf, count, datatype),
            )?;
            collective::agree(
                here,
                comm,
                Desc::new(routine::MPI_Allreduce).op(op).data(count, datatype),
            )
        },
        |on, req| {
            // SAFETY: the application's arguments; the loop completes the request.
            unsafe { pnmpi_sdk::raw::XMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, on, req) }
        },
    )
}

/// `MPI_Gather`, checked and compared across ranks: `MPI_Igather` and a test loop.
#[allow(clippy::too_many_arguments)]
fn gather(
    here: &Here,
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    run(
        here,
        comm,
        || {
            let send = (sendbuf, sendcount, sendtype);
            let recv = (recvbuf.cast_const(), recvcount, recvtype);
            rooted(here, routine::MPI_Gather, comm, root, send, recv)
        },
        |on, req| {
            // SAFETY: the application's arguments; the loop completes the request.
            unsafe {
                pnmpi_sdk::raw::XMPI_Igather(
                    sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, on, req,
                )
            }
        },
    )
}

/// `MPI_Scatter`, checked and compared across ranks: `MPI_Iscatter` and a test loop.
#[allow(clippy::too_many_arguments)]
fn scatter(
    here: &Here,
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    run(
        here,
        comm,
        || {
            let recv = (recvbuf.cast_const(), recvcount, recvtype);
            rooted(
                here,
                routine::MPI_Scatter,
                comm,
                root,
                recv,
                (sendbuf, sendcount, sendtype),
            )
        },
        |on, req| {
            // SAFETY: the application's arguments; the loop completes the request.
            unsafe {
                pnmpi_sdk::raw::XMPI_Iscatter(
                    sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, on, req,
                )
            }
        },
    )
}

/// `MPI_Allgather`, checked and compared across ranks: `MPI_Iallgather` and a test loop.
#[allow(clippy::too_many_arguments)]
fn allgather(
    here: &Here,
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> c_int {
    run(
        here,
        comm,
        || {
            every_to_every(
                here,
                routine::MPI_Allgather,
                comm,
                sendbuf,
                (sendcount, sendtype),
                recvbuf,
                (recvcount, recvtype),
            )
        },
        |on, req| {
            // SAFETY: the application's arguments; the loop completes the request.
            unsafe {
                pnmpi_sdk::raw::XMPI_Iallgather(
                    sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, on, req,
                )
            }
        },
    )
}

/// `MPI_Alltoall`, checked and compared across ranks: `MPI_Ialltoall` and a test loop.
#[allow(clippy::too_many_arguments)]
fn alltoall(
    here: &Here,
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> c_int {
    run(
        here,
        comm,
        || {
            every_to_every(
                here,
                routine::MPI_Alltoall,
                comm,
                sendbuf,
                (sendcount, sendtype),
                recvbuf,
                (recvcount, recvtype),
            )
        },
        |on, req| {
            // SAFETY: the application's arguments; the loop completes the request.
            unsafe {
                pnmpi_sdk::raw::XMPI_Ialltoall(
                    sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, on, req,
                )
            }
        },
    )
}

pnmpi_sdk::wrap! {
    /// Compared across ranks; `MPI_Ibarrier` and a test loop.
    fn MPI_Barrier(comm) {
        let here = Here::new(routine::MPI_Barrier);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        run(&here, comm, || collective::agree(&here, comm, Desc::new(here.routine)), |on, req| {
            // SAFETY: a nonblocking barrier the loop completes.
            unsafe { pnmpi_sdk::raw::XMPI_Ibarrier(on, req) }
        })
    }

    /// Checked and compared across ranks; `MPI_Ibcast` and a test loop.
    fn MPI_Bcast(buffer, count, datatype, root, comm) {
        let here = Here::new(routine::MPI_Bcast);
        gate(&here).unwrap_or_else(|| bcast(&here, buffer, count, datatype, root, comm))
    }

    /// Checked and compared across ranks; `MPI_Ireduce` and a test loop.
    fn MPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm) {
        let here = Here::new(routine::MPI_Reduce);
        gate(&here).unwrap_or_else(|| reduce(&here, sendbuf, recvbuf, count, datatype, op, root, comm))
    }

    /// Checked and compared across ranks; `MPI_Iallreduce` and a test loop.
    fn MPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm) {
        let here = Here::new(routine::MPI_Allreduce);
        gate(&here).unwrap_or_else(|| allreduce(&here, sendbuf, recvbuf, count, datatype, op, comm))
    }

    /// Checked and compared across ranks; `MPI_Igather` and a test loop.
    fn MPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm) {
        let here = Here::new(routine::MPI_Gather);
        gate(&here).unwrap_or_else(|| gather(&here, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm))
    }

    /// Checked and compared across ranks; `MPI_Iscatter` and a test loop.
    fn MPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm) {
        let here = Here::new(routine::MPI_Scatter);
        gate(&here).unwrap_or_else(|| scatter(&here, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm))
    }

    /// Checked and compared across ranks; `MPI_Iallgather` and a test loop.
    fn MPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm) {
        let here = Here::new(routine::MPI_Allgather);
        gate(&here).unwrap_or_else(|| allgather(&here, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
    }

    /// Checked and compared across ranks; `MPI_Ialltoall` and a test loop.
    fn MPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm) {
        let here = Here::new(routine::MPI_Alltoall);
        gate(&here).unwrap_or_else(|| alltoall(&here, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
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
            (None, Some(n)) => bcast(&here, buffer, n, datatype, root, comm),
        }
    }

    /// As `MPI_Reduce`.
    fn MPI_Reduce_c(sendbuf, recvbuf, count, datatype, op, root, comm) {
        let here = Here::new(routine::MPI_Reduce_c);
        match (gate(&here), args::int_count(count)) {
            (Some(rc), _) => rc,
            (None, None) => next!(),
            (None, Some(n)) => reduce(&here, sendbuf, recvbuf, n, datatype, op, root, comm),
        }
    }

    /// As `MPI_Allreduce`.
    fn MPI_Allreduce_c(sendbuf, recvbuf, count, datatype, op, comm) {
        let here = Here::new(routine::MPI_Allreduce_c);
        match (gate(&here), args::int_count(count)) {
            (Some(rc), _) => rc,
            (None, None) => next!(),
            (None, Some(n)) => allreduce(&here, sendbuf, recvbuf, n, datatype, op, comm),
        }
    }

    /// As `MPI_Gather`.
    fn MPI_Gather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm) {
        let here = Here::new(routine::MPI_Gather_c);
        match (gate(&here), args::int_count(sendcount).zip(args::int_count(recvcount))) {
            (Some(rc), _) => rc,
            (None, None) => next!(),
            (None, Some((s, r))) => gather(&here, sendbuf, s, sendtype, recvbuf, r, recvtype, root, comm),
        }
    }

    /// As `MPI_Scatter`.
    fn MPI_Scatter_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm) {
        let here = Here::new(routine::MPI_Scatter_c);
        match (gate(&here), args::int_count(sendcount).zip(args::int_count(recvcount))) {
            (Some(rc), _) => rc,
            (None, None) => next!(),
            (None, Some((s, r))) => scatter(&here, sendbuf, s, sendtype, recvbuf, r, recvtype, root, comm),
        }
    }

    /// As `MPI_Allgather`.
    fn MPI_Allgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm) {
        let here = Here::new(routine::MPI_Allgather_c);
        match (gate(&here), args::int_count(sendcount).zip(args::int_count(recvcount))) {
            (Some(rc), _) => rc,
            (None, None) => next!(),
            (None, Some((s, r))) => allgather(&here, sendbuf, s, sendtype, recvbuf, r, recvtype, comm),
        }
    }

    /// As `MPI_Alltoall`.
    fn MPI_Alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm) {
        let here = Here::new(routine::MPI_Alltoall_c);
        match (gate(&here), args::int_count(sendcount).zip(args::int_count(recvcount))) {
            (Some(rc), _) => rc,
            (None, None) => next!(),
            (None, Some((s, r))) => alltoall(&here, sendbuf, s, sendtype, recvbuf, r, recvtype, comm),
        }
    }
}
