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
use pnmpi_sdk::sys::ffi::{MPI_Comm, MPI_Datatype, MPI_Request};
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

/// The checks of an exchange from every rank to every rank
/// (`MPI_Allgather`, `MPI_Alltoall`): both buffers, this rank's pieces
/// against each other, and the call across ranks.
fn every_to_every(
    here: &Here,
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
    collective::agree(here, comm, Desc::new(here.routine).data(mine.0, mine.1))
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
        if let Some(rc) = gate(&here) {
            return rc;
        }
        run(&here, comm, || {
            if root != mpi::PROC_NULL() || !args::is_inter(comm) {
                data(buffer, count, datatype)?;
            }
            args::root(root, comm)?;
            collective::agree(&here, comm, Desc::new(here.routine).root(root).data(count, datatype))
        }, |on, req| {
            // SAFETY: the application's arguments; the loop completes the request.
            unsafe { pnmpi_sdk::raw::XMPI_Ibcast(buffer, count, datatype, root, on, req) }
        })
    }

    /// Checked and compared across ranks; `MPI_Ireduce` and a test loop.
    fn MPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm) {
        let here = Here::new(routine::MPI_Reduce);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        run(&here, comm, || {
            if contributes(root, comm) {
                data(sendbuf, count, datatype)?;
            }
            args::op(op)?;
            args::root(root, comm)?;
            if is_root(root, comm) {
                data(recvbuf, count, datatype)?;
                args::disjoint(args::span(sendbuf, count, datatype), args::span(recvbuf, count, datatype))?;
            }
            collective::agree(&here, comm, Desc::new(here.routine).root(root).op(op).data(count, datatype))
        }, |on, req| {
            // SAFETY: the application's arguments; the loop completes the request.
            unsafe { pnmpi_sdk::raw::XMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, on, req) }
        })
    }

    /// Checked and compared across ranks; `MPI_Iallreduce` and a test loop.
    fn MPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm) {
        let here = Here::new(routine::MPI_Allreduce);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        run(&here, comm, || {
            data(sendbuf, count, datatype)?;
            data(recvbuf, count, datatype)?;
            args::op(op)?;
            args::disjoint(args::span(sendbuf, count, datatype), args::span(recvbuf, count, datatype))?;
            collective::agree(&here, comm, Desc::new(here.routine).op(op).data(count, datatype))
        }, |on, req| {
            // SAFETY: the application's arguments; the loop completes the request.
            unsafe { pnmpi_sdk::raw::XMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, on, req) }
        })
    }

    /// Checked and compared across ranks; `MPI_Igather` and a test loop.
    fn MPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm) {
        let here = Here::new(routine::MPI_Gather);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        run(&here, comm, || {
            if contributes(root, comm) {
                data(sendbuf, sendcount, sendtype)?;
            }
            args::root(root, comm)?;
            let mine = if is_root(root, comm) {
                data(recvbuf, recvcount, recvtype)?;
                if !std::ptr::eq(sendbuf, mpi::IN_PLACE()) {
                    collective::pieces_agree(comm, (sendcount, sendtype), (recvcount, recvtype))?;
                }
                piece(sendbuf, (sendcount, sendtype), (recvcount, recvtype))
            } else {
                (sendcount, sendtype)
            };
            collective::agree(&here, comm, Desc::new(here.routine).root(root).data(mine.0, mine.1))
        }, |on, req| {
            // SAFETY: the application's arguments; the loop completes the request.
            unsafe { pnmpi_sdk::raw::XMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, on, req) }
        })
    }

    /// Checked and compared across ranks; `MPI_Iscatter` and a test loop.
    fn MPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm) {
        let here = Here::new(routine::MPI_Scatter);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        run(&here, comm, || {
            if contributes(root, comm) {
                data(recvbuf, recvcount, recvtype)?;
            }
            args::root(root, comm)?;
            let mine = if is_root(root, comm) {
                data(sendbuf, sendcount, sendtype)?;
                if recvbuf != mpi::IN_PLACE() {
                    collective::pieces_agree(comm, (sendcount, sendtype), (recvcount, recvtype))?;
                    (recvcount, recvtype)
                } else {
                    (sendcount, sendtype)
                }
            } else {
                (recvcount, recvtype)
            };
            collective::agree(&here, comm, Desc::new(here.routine).root(root).data(mine.0, mine.1))
        }, |on, req| {
            // SAFETY: the application's arguments; the loop completes the request.
            unsafe { pnmpi_sdk::raw::XMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, on, req) }
        })
    }

    /// Checked and compared across ranks; `MPI_Iallgather` and a test loop.
    fn MPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm) {
        let here = Here::new(routine::MPI_Allgather);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        run(&here, comm, || every_to_every(&here, comm, sendbuf, (sendcount, sendtype), recvbuf, (recvcount, recvtype)), |on, req| {
            // SAFETY: the application's arguments; the loop completes the request.
            unsafe { pnmpi_sdk::raw::XMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, on, req) }
        })
    }

    /// Checked and compared across ranks; `MPI_Ialltoall` and a test loop.
    fn MPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm) {
        let here = Here::new(routine::MPI_Alltoall);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        run(&here, comm, || every_to_every(&here, comm, sendbuf, (sendcount, sendtype), recvbuf, (recvcount, recvtype)), |on, req| {
            // SAFETY: the application's arguments; the loop completes the request.
            unsafe { pnmpi_sdk::raw::XMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, on, req) }
        })
    }
}
