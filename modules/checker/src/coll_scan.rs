//! Prefix reductions and reduce-scatters (`MPI_Scan`, `MPI_Exscan`,
//! `MPI_Reduce_scatter_block`, `MPI_Reduce_scatter`) and their
//! nonblocking forms: checked, compared across ranks by routine,
//! operation and type signature (of the whole vector every rank
//! reduces), then made as the application called them.

use crate::args;
use crate::coll::{data, kind, made, reduction, run, CollectiveCall};
use crate::desc::Desc;
use crate::gate::gate;
use crate::site::Here;
use pnmpi_sdk::raw::routine;
use pnmpi_sdk::sys::ffi::{MPI_Comm, MPI_Datatype, MPI_Op, MPI_Request};
use std::ffi::{c_int, c_void};

/// A prefix reduction (`pair`: `MPI_Scan` or `MPI_Exscan` and its
/// nonblocking form), started if `request`.
#[allow(clippy::too_many_arguments)]
fn scan(
    here: &Here,
    request: Option<*mut MPI_Request>,
    pair: (usize, usize),
    (sendbuf, recvbuf): (*const c_void, *mut c_void),
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    call: CollectiveCall,
) -> c_int {
    let made = made(request);
    let kind = kind(made, pair.0, pair.1);
    run(
        here,
        made,
        comm,
        || reduction(kind, sendbuf, recvbuf, count, datatype, op),
        |_, _| call(),
    )
}

/// The sum of `recvcounts`, one per rank of an intracommunicator `comm`
/// (every rank passes the same ones); 0 on an intercommunicator.
fn total(recvcounts: *const c_int, comm: MPI_Comm) -> c_int {
    if recvcounts.is_null() || args::is_inter(comm) {
        return 0;
    }
    (0..args::comm_size(comm).max(0) as usize)
        // SAFETY: MPI requires one count per rank of the communicator.
        .map(|i| unsafe { *recvcounts.add(i) })
        .fold(0, c_int::saturating_add)
}

/// A reduce-scatter (`pair`), started if `request`: `block`, the count of
/// each rank's block, for `MPI_Reduce_scatter_block` (its receive buffer
/// `recvbuf` checked); else the counts `recvcounts` of each rank.
#[allow(clippy::too_many_arguments)]
fn reduce_scatter(
    here: &Here,
    request: Option<*mut MPI_Request>,
    pair: (usize, usize),
    recvbuf: *mut c_void,
    counts: Result<c_int, *const c_int>,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    call: CollectiveCall,
) -> c_int {
    let made = made(request);
    let kind = kind(made, pair.0, pair.1);
    run(
        here,
        made,
        comm,
        || {
            let count = match counts {
                Ok(block) => {
                    data(recvbuf, block, datatype)?;
                    block
                }
                Err(recvcounts) => {
                    args::datatype(datatype)?;
                    total(recvcounts, comm)
                }
            };
            args::op(op)?;
            crate::ops::reduction(op, datatype)?;
            Ok(Desc::new(kind).op(op).data(count, datatype))
        },
        |_, _| call(),
    )
}

pnmpi_sdk::wrap! {
    /// Checked and compared across ranks, then made.
    fn MPI_Scan(sendbuf, recvbuf, count, datatype, op, comm) {
        let here = Here::new(routine::MPI_Scan);
        gate(&here).unwrap_or_else(|| scan(&here, None, (routine::MPI_Scan, routine::MPI_Iscan), (sendbuf, recvbuf), count, datatype, op, comm, &mut || next!()))
    }

    /// Checked and compared across ranks at its start; its request registered.
    fn MPI_Iscan(sendbuf, recvbuf, count, datatype, op, comm, request) {
        let here = Here::new(routine::MPI_Iscan);
        gate(&here).unwrap_or_else(|| scan(&here, Some(request), (routine::MPI_Scan, routine::MPI_Iscan), (sendbuf, recvbuf), count, datatype, op, comm, &mut || next!()))
    }

    /// Checked and compared across ranks, then made.
    fn MPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm) {
        let here = Here::new(routine::MPI_Exscan);
        gate(&here).unwrap_or_else(|| scan(&here, None, (routine::MPI_Exscan, routine::MPI_Iexscan), (sendbuf, recvbuf), count, datatype, op, comm, &mut || next!()))
    }

    /// Checked and compared across ranks at its start; its request registered.
    fn MPI_Iexscan(sendbuf, recvbuf, count, datatype, op, comm, request) {
        let here = Here::new(routine::MPI_Iexscan);
        gate(&here).unwrap_or_else(|| scan(&here, Some(request), (routine::MPI_Exscan, routine::MPI_Iexscan), (sendbuf, recvbuf), count, datatype, op, comm, &mut || next!()))
    }

    /// Checked and compared across ranks, then made.
    fn MPI_Reduce_scatter_block(_sendbuf, recvbuf, recvcount, datatype, op, comm) {
        let here = Here::new(routine::MPI_Reduce_scatter_block);
        let pair = (routine::MPI_Reduce_scatter_block, routine::MPI_Ireduce_scatter_block);
        gate(&here).unwrap_or_else(|| reduce_scatter(&here, None, pair, recvbuf, Ok(recvcount), datatype, op, comm, &mut || next!()))
    }

    /// Checked and compared across ranks at its start; its request registered.
    fn MPI_Ireduce_scatter_block(_sendbuf, recvbuf, recvcount, datatype, op, comm, request) {
        let here = Here::new(routine::MPI_Ireduce_scatter_block);
        let pair = (routine::MPI_Reduce_scatter_block, routine::MPI_Ireduce_scatter_block);
        gate(&here).unwrap_or_else(|| reduce_scatter(&here, Some(request), pair, recvbuf, Ok(recvcount), datatype, op, comm, &mut || next!()))
    }

    /// Checked and compared across ranks, then made.
    fn MPI_Reduce_scatter(_sendbuf, recvbuf, recvcounts, datatype, op, comm) {
        let here = Here::new(routine::MPI_Reduce_scatter);
        let pair = (routine::MPI_Reduce_scatter, routine::MPI_Ireduce_scatter);
        gate(&here).unwrap_or_else(|| reduce_scatter(&here, None, pair, recvbuf, Err(recvcounts), datatype, op, comm, &mut || next!()))
    }

    /// Checked and compared across ranks at its start; its request registered.
    fn MPI_Ireduce_scatter(_sendbuf, recvbuf, recvcounts, datatype, op, comm, request) {
        let here = Here::new(routine::MPI_Ireduce_scatter);
        let pair = (routine::MPI_Reduce_scatter, routine::MPI_Ireduce_scatter);
        gate(&here).unwrap_or_else(|| reduce_scatter(&here, Some(request), pair, recvbuf, Err(recvcounts), datatype, op, comm, &mut || next!()))
    }
}
