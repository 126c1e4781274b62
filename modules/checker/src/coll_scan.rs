//! Prefix reductions and reduce-scatters (`MPI_Scan`, `MPI_Exscan`,
//! `MPI_Reduce_scatter_block`, `MPI_Reduce_scatter`) and their
//! nonblocking forms: checked, compared across ranks by routine,
//! operation and type signature (of the whole vector every rank
//! reduces), then made as `coll` makes the others.

use crate::args;
use crate::coll::{data, kind, reduction, run, Made};
use crate::desc::Desc;
use crate::gate::gate;
use crate::site::Here;
use pnmpi_sdk::raw::{self as x, routine};
use pnmpi_sdk::sys::ffi::{MPI_Comm, MPI_Datatype, MPI_Op};
use std::ffi::{c_int, c_void};

/// `MPI_Scan` or `MPI_Exscan` (`exclusive`), or their nonblocking forms.
#[allow(clippy::too_many_arguments)]
fn scan(
    here: &Here,
    made: Made,
    exclusive: bool,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> c_int {
    let kind = match exclusive {
        false => kind(made, routine::MPI_Scan, routine::MPI_Iscan),
        true => kind(made, routine::MPI_Exscan, routine::MPI_Iexscan),
    };
    run(
        here,
        made,
        comm,
        || reduction(kind, sendbuf, recvbuf, count, datatype, op),
        |on, req| {
            // SAFETY: the application's arguments; the request is completed
            // by the loop or by the application.
            unsafe {
                match exclusive {
                    false => x::XMPI_Iscan(sendbuf, recvbuf, count, datatype, op, on, req),
                    true => x::XMPI_Iexscan(sendbuf, recvbuf, count, datatype, op, on, req),
                }
            }
        },
    )
}

/// `MPI_Reduce_scatter_block` or `MPI_Ireduce_scatter_block`.
#[allow(clippy::too_many_arguments)]
fn reduce_scatter_block(
    here: &Here,
    made: Made,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> c_int {
    let kind = kind(
        made,
        routine::MPI_Reduce_scatter_block,
        routine::MPI_Ireduce_scatter_block,
    );
    run(
        here,
        made,
        comm,
        || {
            data(recvbuf, recvcount, datatype)?;
            args::op(op)?;
            Ok(Desc::new(kind).op(op).data(recvcount, datatype))
        },
        |on, req| {
            // SAFETY: the application's arguments; the request is completed
            // by the loop or by the application.
            unsafe { x::XMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, on, req) }
        },
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

/// `MPI_Reduce_scatter` or `MPI_Ireduce_scatter`.
#[allow(clippy::too_many_arguments)]
fn reduce_scatter(
    here: &Here,
    made: Made,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> c_int {
    let kind = kind(made, routine::MPI_Reduce_scatter, routine::MPI_Ireduce_scatter);
    run(
        here,
        made,
        comm,
        || {
            args::datatype(datatype)?;
            args::op(op)?;
            Ok(Desc::new(kind).op(op).data(total(recvcounts, comm), datatype))
        },
        |on, req| {
            // SAFETY: the application's arguments; the request is completed
            // by the loop or by the application.
            unsafe { x::XMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, on, req) }
        },
    )
}

pnmpi_sdk::wrap! {
    /// Checked and compared across ranks; `MPI_Iscan` and a test loop.
    fn MPI_Scan(sendbuf, recvbuf, count, datatype, op, comm) {
        let here = Here::new(routine::MPI_Scan);
        gate(&here).unwrap_or_else(|| scan(&here, Made::Blocking, false, sendbuf, recvbuf, count, datatype, op, comm))
    }

    /// Checked and compared across ranks at its start; its request registered.
    fn MPI_Iscan(sendbuf, recvbuf, count, datatype, op, comm, request) {
        let here = Here::new(routine::MPI_Iscan);
        gate(&here).unwrap_or_else(|| scan(&here, Made::Started(request), false, sendbuf, recvbuf, count, datatype, op, comm))
    }

    /// Checked and compared across ranks; `MPI_Iexscan` and a test loop.
    fn MPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm) {
        let here = Here::new(routine::MPI_Exscan);
        gate(&here).unwrap_or_else(|| scan(&here, Made::Blocking, true, sendbuf, recvbuf, count, datatype, op, comm))
    }

    /// Checked and compared across ranks at its start; its request registered.
    fn MPI_Iexscan(sendbuf, recvbuf, count, datatype, op, comm, request) {
        let here = Here::new(routine::MPI_Iexscan);
        gate(&here).unwrap_or_else(|| scan(&here, Made::Started(request), true, sendbuf, recvbuf, count, datatype, op, comm))
    }

    /// Checked and compared across ranks; `MPI_Ireduce_scatter_block` and a test loop.
    fn MPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm) {
        let here = Here::new(routine::MPI_Reduce_scatter_block);
        gate(&here).unwrap_or_else(|| reduce_scatter_block(&here, Made::Blocking, sendbuf, recvbuf, recvcount, datatype, op, comm))
    }

    /// Checked and compared across ranks at its start; its request registered.
    fn MPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, request) {
        let here = Here::new(routine::MPI_Ireduce_scatter_block);
        gate(&here).unwrap_or_else(|| reduce_scatter_block(&here, Made::Started(request), sendbuf, recvbuf, recvcount, datatype, op, comm))
    }

    /// Checked and compared across ranks; `MPI_Ireduce_scatter` and a test loop.
    fn MPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm) {
        let here = Here::new(routine::MPI_Reduce_scatter);
        gate(&here).unwrap_or_else(|| reduce_scatter(&here, Made::Blocking, sendbuf, recvbuf, recvcounts, datatype, op, comm))
    }

    /// Checked and compared across ranks at its start; its request registered.
    fn MPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request) {
        let here = Here::new(routine::MPI_Ireduce_scatter);
        gate(&here).unwrap_or_else(|| reduce_scatter(&here, Made::Started(request), sendbuf, recvbuf, recvcounts, datatype, op, comm))
    }
}
