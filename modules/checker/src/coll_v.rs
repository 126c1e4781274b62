//! The collectives whose pieces differ by rank (`MPI_Gatherv`,
//! `MPI_Scatterv`, `MPI_Allgatherv`, `MPI_Alltoallv`, `MPI_Alltoallw`)
//! and their nonblocking forms: the scalar arguments checked, the call
//! compared across ranks by routine and root (the pieces legally differ),
//! then made as `coll` makes the others.

use crate::args;
use crate::coll::{contributes, data, is_root, kind, run, Made};
use crate::desc::Desc;
use crate::gate::gate;
use crate::site::Here;
use pnmpi_sdk::constants as mpi;
use pnmpi_sdk::raw::{self as x, routine};
use pnmpi_sdk::sys::ffi::{MPI_Comm, MPI_Datatype};
use std::ffi::{c_int, c_void};

/// A datatype's check, unless its buffer is `MPI_IN_PLACE`.
fn typed(buf: *const c_void, dt: MPI_Datatype) -> args::Checked {
    if std::ptr::eq(buf, mpi::IN_PLACE()) {
        return Ok(());
    }
    args::datatype(dt)
}

/// `MPI_Gatherv` or `MPI_Igatherv`.
#[allow(clippy::too_many_arguments)]
fn gatherv(
    here: &Here,
    made: Made,
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    let kind = kind(made, routine::MPI_Gatherv, routine::MPI_Igatherv);
    run(
        here,
        made,
        comm,
        || {
            if contributes(root, comm) {
                data(sendbuf, sendcount, sendtype)?;
            }
            args::root(root, comm)?;
            if is_root(root, comm) {
                args::datatype(recvtype)?;
            }
            Ok(Desc::new(kind).root(root))
        },
        |on, req| {
            // SAFETY: the application's arguments; the request is completed
            // by the loop or by the application.
            unsafe {
                x::XMPI_Igatherv(
                    sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, on, req,
                )
            }
        },
    )
}

/// `MPI_Scatterv` or `MPI_Iscatterv`.
#[allow(clippy::too_many_arguments)]
fn scatterv(
    here: &Here,
    made: Made,
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    displs: *const c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    let kind = kind(made, routine::MPI_Scatterv, routine::MPI_Iscatterv);
    run(
        here,
        made,
        comm,
        || {
            if contributes(root, comm) {
                data(recvbuf, recvcount, recvtype)?;
            }
            args::root(root, comm)?;
            if is_root(root, comm) {
                args::datatype(sendtype)?;
            }
            Ok(Desc::new(kind).root(root))
        },
        |on, req| {
            // SAFETY: the application's arguments; the request is completed
            // by the loop or by the application.
            unsafe {
                x::XMPI_Iscatterv(
                    sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, on, req,
                )
            }
        },
    )
}

/// `MPI_Allgatherv` or `MPI_Iallgatherv`.
#[allow(clippy::too_many_arguments)]
fn allgatherv(
    here: &Here,
    made: Made,
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> c_int {
    let kind = kind(made, routine::MPI_Allgatherv, routine::MPI_Iallgatherv);
    run(
        here,
        made,
        comm,
        || {
            data(sendbuf, sendcount, sendtype)?;
            args::datatype(recvtype)?;
            Ok(Desc::new(kind))
        },
        |on, req| {
            // SAFETY: the application's arguments; the request is completed
            // by the loop or by the application.
            unsafe {
                x::XMPI_Iallgatherv(
                    sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, on, req,
                )
            }
        },
    )
}

/// `MPI_Alltoallv` or `MPI_Ialltoallv`.
#[allow(clippy::too_many_arguments)]
fn alltoallv(
    here: &Here,
    made: Made,
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> c_int {
    let kind = kind(made, routine::MPI_Alltoallv, routine::MPI_Ialltoallv);
    run(
        here,
        made,
        comm,
        || {
            typed(sendbuf, sendtype)?;
            args::datatype(recvtype)?;
            Ok(Desc::new(kind))
        },
        |on, req| {
            // SAFETY: the application's arguments; the request is completed
            // by the loop or by the application.
            unsafe {
                x::XMPI_Ialltoallv(
                    sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, on, req,
                )
            }
        },
    )
}

/// `MPI_Alltoallw` or `MPI_Ialltoallw`: a datatype per rank.
#[allow(clippy::too_many_arguments)]
fn alltoallw(
    here: &Here,
    made: Made,
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
) -> c_int {
    let kind = kind(made, routine::MPI_Alltoallw, routine::MPI_Ialltoallw);
    run(
        here,
        made,
        comm,
        || Ok(Desc::new(kind)),
        |on, req| {
            // SAFETY: the application's arguments; the request is completed
            // by the loop or by the application.
            unsafe {
                x::XMPI_Ialltoallw(
                    sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, on, req,
                )
            }
        },
    )
}

pnmpi_sdk::wrap! {
    /// Checked and compared across ranks; `MPI_Igatherv` and a test loop.
    fn MPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm) {
        let here = Here::new(routine::MPI_Gatherv);
        gate(&here).unwrap_or_else(|| gatherv(&here, Made::Blocking, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm))
    }

    /// Checked and compared across ranks at its start; its request registered.
    fn MPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, request) {
        let here = Here::new(routine::MPI_Igatherv);
        gate(&here).unwrap_or_else(|| gatherv(&here, Made::Started(request), sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm))
    }

    /// Checked and compared across ranks; `MPI_Iscatterv` and a test loop.
    fn MPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm) {
        let here = Here::new(routine::MPI_Scatterv);
        gate(&here).unwrap_or_else(|| scatterv(&here, Made::Blocking, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm))
    }

    /// Checked and compared across ranks at its start; its request registered.
    fn MPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, request) {
        let here = Here::new(routine::MPI_Iscatterv);
        gate(&here).unwrap_or_else(|| scatterv(&here, Made::Started(request), sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm))
    }

    /// Checked and compared across ranks; `MPI_Iallgatherv` and a test loop.
    fn MPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm) {
        let here = Here::new(routine::MPI_Allgatherv);
        gate(&here).unwrap_or_else(|| allgatherv(&here, Made::Blocking, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm))
    }

    /// Checked and compared across ranks at its start; its request registered.
    fn MPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request) {
        let here = Here::new(routine::MPI_Iallgatherv);
        gate(&here).unwrap_or_else(|| allgatherv(&here, Made::Started(request), sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm))
    }

    /// Checked and compared across ranks; `MPI_Ialltoallv` and a test loop.
    fn MPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm) {
        let here = Here::new(routine::MPI_Alltoallv);
        gate(&here).unwrap_or_else(|| alltoallv(&here, Made::Blocking, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm))
    }

    /// Checked and compared across ranks at its start; its request registered.
    fn MPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, request) {
        let here = Here::new(routine::MPI_Ialltoallv);
        gate(&here).unwrap_or_else(|| alltoallv(&here, Made::Started(request), sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm))
    }

    /// Compared across ranks; `MPI_Ialltoallw` and a test loop.
    fn MPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm) {
        let here = Here::new(routine::MPI_Alltoallw);
        gate(&here).unwrap_or_else(|| alltoallw(&here, Made::Blocking, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm))
    }

    /// Compared across ranks at its start; its request registered.
    fn MPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, request) {
        let here = Here::new(routine::MPI_Ialltoallw);
        gate(&here).unwrap_or_else(|| alltoallw(&here, Made::Started(request), sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm))
    }
}
