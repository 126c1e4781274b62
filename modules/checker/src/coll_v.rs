//! The collectives whose pieces differ by rank (`MPI_Gatherv`,
//! `MPI_Scatterv`, `MPI_Allgatherv`, `MPI_Alltoallv`, `MPI_Alltoallw`)
//! and their nonblocking forms: the scalar arguments checked, the call
//! compared across ranks by routine and root (the pieces legally differ),
//! then made as the application called it.

use crate::args::{self, Checked};
use crate::coll::{contributes, data, is_root, kind, made, run, CollectiveCall, Made};
use crate::desc::Desc;
use crate::gate::gate;
use crate::site::Here;
use pnmpi_sdk::constants as mpi;
use pnmpi_sdk::raw::routine;
use pnmpi_sdk::sys::ffi::{MPI_Comm, MPI_Datatype};
use std::ffi::{c_int, c_void};

/// A datatype's check, unless its buffer is `MPI_IN_PLACE`.
fn typed(buf: *const c_void, dt: MPI_Datatype) -> Checked {
    if std::ptr::eq(buf, mpi::IN_PLACE()) {
        return Ok(());
    }
    args::datatype(dt)
}

/// A rooted exchange (`MPI_Gatherv`, `MPI_Scatterv` and their
/// nonblocking forms, `pair`): `leaf`, the piece every rank has, is
/// checked where it is used, `whole`'s datatype at the root.
#[allow(clippy::too_many_arguments)]
fn rooted(
    here: &Here,
    made: Made,
    pair: (usize, usize),
    leaf: (*const c_void, c_int, MPI_Datatype),
    whole: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    call: CollectiveCall,
) -> c_int {
    let kind = kind(made, pair.0, pair.1);
    run(
        here,
        made,
        comm,
        || {
            if contributes(root, comm) {
                data(leaf.0, leaf.1, leaf.2)?;
            }
            args::root(root, comm)?;
            if is_root(root, comm) {
                args::datatype(whole)?;
            }
            Ok(Desc::new(kind).root(root))
        },
        |_, _| call(),
    )
}

/// An exchange among all ranks (`MPI_Allgatherv`, `MPI_Alltoallv`,
/// `MPI_Alltoallw` and their nonblocking forms, `pair`): the datatypes
/// `types` checked (none for `w`, one per rank), then the call.
fn among_all(
    here: &Here,
    made: Made,
    pair: (usize, usize),
    comm: MPI_Comm,
    types: Checked,
    call: CollectiveCall,
) -> c_int {
    let kind = kind(made, pair.0, pair.1);
    run(
        here,
        made,
        comm,
        || types.map(|()| Desc::new(kind)),
        |_, _| call(),
    )
}

pnmpi_sdk::wrap! {
    /// Checked and compared across ranks, then made.
    fn MPI_Gatherv(sendbuf, sendcount, sendtype, _recvbuf, _recvcounts, _displs, recvtype, root, comm) {
        let here = Here::new(routine::MPI_Gatherv);
        gate(&here).unwrap_or_else(|| rooted(&here, made(None), (routine::MPI_Gatherv, routine::MPI_Igatherv), (sendbuf, sendcount, sendtype), recvtype, root, comm, &mut || next!()))
    }

    /// Checked and compared across ranks at its start; its request registered.
    fn MPI_Igatherv(sendbuf, sendcount, sendtype, _recvbuf, _recvcounts, _displs, recvtype, root, comm, request) {
        let here = Here::new(routine::MPI_Igatherv);
        gate(&here).unwrap_or_else(|| rooted(&here, made(Some(request)), (routine::MPI_Gatherv, routine::MPI_Igatherv), (sendbuf, sendcount, sendtype), recvtype, root, comm, &mut || next!()))
    }

    /// Checked and compared across ranks, then made.
    fn MPI_Scatterv(_sendbuf, _sendcounts, _displs, sendtype, recvbuf, recvcount, recvtype, root, comm) {
        let here = Here::new(routine::MPI_Scatterv);
        gate(&here).unwrap_or_else(|| rooted(&here, made(None), (routine::MPI_Scatterv, routine::MPI_Iscatterv), (recvbuf.cast_const(), recvcount, recvtype), sendtype, root, comm, &mut || next!()))
    }

    /// Checked and compared across ranks at its start; its request registered.
    fn MPI_Iscatterv(_sendbuf, _sendcounts, _displs, sendtype, recvbuf, recvcount, recvtype, root, comm, request) {
        let here = Here::new(routine::MPI_Iscatterv);
        gate(&here).unwrap_or_else(|| rooted(&here, made(Some(request)), (routine::MPI_Scatterv, routine::MPI_Iscatterv), (recvbuf.cast_const(), recvcount, recvtype), sendtype, root, comm, &mut || next!()))
    }

    /// Checked and compared across ranks, then made.
    fn MPI_Allgatherv(sendbuf, sendcount, sendtype, _recvbuf, _recvcounts, _displs, recvtype, comm) {
        let here = Here::new(routine::MPI_Allgatherv);
        let types = data(sendbuf, sendcount, sendtype).and_then(|()| args::datatype(recvtype));
        gate(&here).unwrap_or_else(|| among_all(&here, made(None), (routine::MPI_Allgatherv, routine::MPI_Iallgatherv), comm, types, &mut || next!()))
    }

    /// Checked and compared across ranks at its start; its request registered.
    fn MPI_Iallgatherv(sendbuf, sendcount, sendtype, _recvbuf, _recvcounts, _displs, recvtype, comm, request) {
        let here = Here::new(routine::MPI_Iallgatherv);
        let types = data(sendbuf, sendcount, sendtype).and_then(|()| args::datatype(recvtype));
        gate(&here).unwrap_or_else(|| among_all(&here, made(Some(request)), (routine::MPI_Allgatherv, routine::MPI_Iallgatherv), comm, types, &mut || next!()))
    }

    /// Checked and compared across ranks, then made.
    fn MPI_Alltoallv(sendbuf, _sendcounts, _sdispls, sendtype, _recvbuf, _recvcounts, _rdispls, recvtype, comm) {
        let here = Here::new(routine::MPI_Alltoallv);
        let types = typed(sendbuf, sendtype).and_then(|()| args::datatype(recvtype));
        gate(&here).unwrap_or_else(|| among_all(&here, made(None), (routine::MPI_Alltoallv, routine::MPI_Ialltoallv), comm, types, &mut || next!()))
    }

    /// Checked and compared across ranks at its start; its request registered.
    fn MPI_Ialltoallv(sendbuf, _sendcounts, _sdispls, sendtype, _recvbuf, _recvcounts, _rdispls, recvtype, comm, request) {
        let here = Here::new(routine::MPI_Ialltoallv);
        let types = typed(sendbuf, sendtype).and_then(|()| args::datatype(recvtype));
        gate(&here).unwrap_or_else(|| among_all(&here, made(Some(request)), (routine::MPI_Alltoallv, routine::MPI_Ialltoallv), comm, types, &mut || next!()))
    }

    /// Compared across ranks, then made.
    fn MPI_Alltoallw(_sendbuf, _sendcounts, _sdispls, _sendtypes, _recvbuf, _recvcounts, _rdispls, _recvtypes, comm) {
        let here = Here::new(routine::MPI_Alltoallw);
        gate(&here).unwrap_or_else(|| among_all(&here, made(None), (routine::MPI_Alltoallw, routine::MPI_Ialltoallw), comm, Ok(()), &mut || next!()))
    }

    /// Compared across ranks at its start; its request registered.
    fn MPI_Ialltoallw(_sendbuf, _sendcounts, _sdispls, _sendtypes, _recvbuf, _recvcounts, _rdispls, _recvtypes, comm, request) {
        let here = Here::new(routine::MPI_Ialltoallw);
        gate(&here).unwrap_or_else(|| among_all(&here, made(Some(request)), (routine::MPI_Alltoallw, routine::MPI_Ialltoallw), comm, Ok(()), &mut || next!()))
    }
}
