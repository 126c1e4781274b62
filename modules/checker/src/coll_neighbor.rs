//! Neighbourhood collectives (`MPI_Neighbor_allgather`, `_allgatherv`,
//! `_alltoall`, `_alltoallv`, `_alltoallw`) and their nonblocking forms:
//! the datatypes checked, the call compared across the communicator's
//! ranks by routine (pieces pair with each neighbour's, and legally differ
//! across the communicator), then made as `coll` makes the others, on the
//! checker's duplicate, which keeps the topology.

use crate::args;
use crate::coll::{kind, made, run, CollectiveCall};
use crate::desc::Desc;
use crate::gate::gate;
use crate::site::Here;
use pnmpi_sdk::raw::routine;
use pnmpi_sdk::sys::ffi::{MPI_Comm, MPI_Datatype, MPI_Request};
use std::ffi::c_int;

/// Checks the datatypes `types` (the ones a call passes, one or two),
/// then makes the call: a neighbourhood collective `blocking` or, started
/// (with its `request`), its nonblocking form `started`.
fn neighbor(
    here: &Here,
    request: Option<*mut MPI_Request>,
    (blocking, started): (usize, usize),
    comm: MPI_Comm,
    types: &[MPI_Datatype],
    call: CollectiveCall,
) -> c_int {
    let made = made(request);
    let kind = kind(made, blocking, started);
    run(
        here,
        made,
        comm,
        || {
            for &dt in types {
                args::datatype(dt)?;
            }
            Ok(Desc::new(kind))
        },
        |_, _| call(),
    )
}

/// A pair of routines: blocking, nonblocking.
macro_rules! pair {
    ($b:ident, $i:ident) => {
        (routine::$b, routine::$i)
    };
}

pnmpi_sdk::wrap! {
    /// Checked and compared across ranks; then made.
    fn MPI_Neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm) {
        let here = Here::new(routine::MPI_Neighbor_allgather);
        gate(&here).unwrap_or_else(|| neighbor(&here, None, pair!(MPI_Neighbor_allgather, MPI_Ineighbor_allgather), comm, &[sendtype, recvtype], &mut || next!()))
    }

    /// Checked and compared across ranks at its start; its request registered.
    fn MPI_Ineighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request) {
        let here = Here::new(routine::MPI_Ineighbor_allgather);
        gate(&here).unwrap_or_else(|| neighbor(&here, Some(request), pair!(MPI_Neighbor_allgather, MPI_Ineighbor_allgather), comm, &[sendtype, recvtype], &mut || next!()))
    }

    /// Checked and compared across ranks; then made.
    fn MPI_Neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm) {
        let here = Here::new(routine::MPI_Neighbor_allgatherv);
        gate(&here).unwrap_or_else(|| neighbor(&here, None, pair!(MPI_Neighbor_allgatherv, MPI_Ineighbor_allgatherv), comm, &[sendtype, recvtype], &mut || next!()))
    }

    /// Checked and compared across ranks at its start; its request registered.
    fn MPI_Ineighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request) {
        let here = Here::new(routine::MPI_Ineighbor_allgatherv);
        gate(&here).unwrap_or_else(|| neighbor(&here, Some(request), pair!(MPI_Neighbor_allgatherv, MPI_Ineighbor_allgatherv), comm, &[sendtype, recvtype], &mut || next!()))
    }

    /// Checked and compared across ranks; then made.
    fn MPI_Neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm) {
        let here = Here::new(routine::MPI_Neighbor_alltoall);
        gate(&here).unwrap_or_else(|| neighbor(&here, None, pair!(MPI_Neighbor_alltoall, MPI_Ineighbor_alltoall), comm, &[sendtype, recvtype], &mut || next!()))
    }

    /// Checked and compared across ranks at its start; its request registered.
    fn MPI_Ineighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request) {
        let here = Here::new(routine::MPI_Ineighbor_alltoall);
        gate(&here).unwrap_or_else(|| neighbor(&here, Some(request), pair!(MPI_Neighbor_alltoall, MPI_Ineighbor_alltoall), comm, &[sendtype, recvtype], &mut || next!()))
    }

    /// Checked and compared across ranks; then made.
    fn MPI_Neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm) {
        let here = Here::new(routine::MPI_Neighbor_alltoallv);
        gate(&here).unwrap_or_else(|| neighbor(&here, None, pair!(MPI_Neighbor_alltoallv, MPI_Ineighbor_alltoallv), comm, &[sendtype, recvtype], &mut || next!()))
    }

    /// Checked and compared across ranks at its start; its request registered.
    fn MPI_Ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, request) {
        let here = Here::new(routine::MPI_Ineighbor_alltoallv);
        gate(&here).unwrap_or_else(|| neighbor(&here, Some(request), pair!(MPI_Neighbor_alltoallv, MPI_Ineighbor_alltoallv), comm, &[sendtype, recvtype], &mut || next!()))
    }

    /// Compared across ranks; then made.
    fn MPI_Neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm) {
        let here = Here::new(routine::MPI_Neighbor_alltoallw);
        gate(&here).unwrap_or_else(|| neighbor(&here, None, pair!(MPI_Neighbor_alltoallw, MPI_Ineighbor_alltoallw), comm, &[], &mut || next!()))
    }

    /// Compared across ranks at its start; its request registered.
    fn MPI_Ineighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, request) {
        let here = Here::new(routine::MPI_Ineighbor_alltoallw);
        gate(&here).unwrap_or_else(|| neighbor(&here, Some(request), pair!(MPI_Neighbor_alltoallw, MPI_Ineighbor_alltoallw), comm, &[], &mut || next!()))
    }
}
