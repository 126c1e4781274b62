//! MPI 4's large-count blocking point-to-point routines (`MPI_Send_c`,
//! ...; the nonblocking ones are in `requests`; MPICH
//! 4 has them, Open MPI 4.1 not, and mpi4py sends every message through
//! them where they exist): checked as their `int` twins when the count
//! fits an `int` (the same call), else passed on unchecked. Without
//! them, a message sent by `MPI_Isend_c` had no signature, and its
//! receive waited for one.

// Where the MPI has none of these routines, nothing here is used.
#![allow(unused_imports, dead_code)]

use crate::args;
use crate::gate::gate;
use crate::matched;
use crate::p2p;
use crate::site::Here;
use pnmpi_sdk::raw::routine;

pnmpi_sdk::wrap_optional! {
    /// As `MPI_Send`.
    fn MPI_Send_c(buf, count, datatype, dest, tag, comm) {
        let here = Here::new(routine::MPI_Send_c);
        match (gate(&here), args::int_count(count)) {
            (Some(rc), _) => rc,
            (None, None) => next!(),
            (None, Some(n)) => p2p::send(&here, buf, n, datatype, dest, tag, comm, false),
        }
    }

    /// As `MPI_Ssend`.
    fn MPI_Ssend_c(buf, count, datatype, dest, tag, comm) {
        let here = Here::new(routine::MPI_Ssend_c);
        match (gate(&here), args::int_count(count)) {
            (Some(rc), _) => rc,
            (None, None) => next!(),
            (None, Some(n)) => p2p::send(&here, buf, n, datatype, dest, tag, comm, true),
        }
    }

    /// As `MPI_Rsend`.
    fn MPI_Rsend_c(buf, count, datatype, dest, tag, comm) {
        let here = Here::new(routine::MPI_Rsend_c);
        match (gate(&here), args::int_count(count)) {
            (Some(rc), _) => rc,
            (None, None) => next!(),
            (None, Some(n)) => p2p::passed_on(&here, (buf, n, datatype), (dest, tag, comm), || next!()),
        }
    }

    /// As `MPI_Bsend`.
    fn MPI_Bsend_c(buf, count, datatype, dest, tag, comm) {
        let here = Here::new(routine::MPI_Bsend_c);
        match (gate(&here), args::int_count(count)) {
            (Some(rc), _) => rc,
            (None, None) => next!(),
            (None, Some(n)) => p2p::passed_on(&here, (buf, n, datatype), (dest, tag, comm), || next!()),
        }
    }

    /// As `MPI_Recv`.
    fn MPI_Recv_c(buf, count, datatype, source, tag, comm, status) {
        let here = Here::new(routine::MPI_Recv_c);
        match (gate(&here), args::int_count(count)) {
            (Some(rc), _) => rc,
            (None, None) => next!(),
            (None, Some(n)) => p2p::recv(&here, buf, n, datatype, source, tag, comm, status),
        }
    }

    /// As `MPI_Sendrecv`.
    fn MPI_Sendrecv_c(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, status) {
        let here = Here::new(routine::MPI_Sendrecv_c);
        match (gate(&here), args::int_count(sendcount).zip(args::int_count(recvcount))) {
            (Some(rc), _) => rc,
            (None, None) => next!(),
            (None, Some((s, r))) => p2p::sendrecv(&here, (sendbuf, s, sendtype, dest, sendtag), (recvbuf, r, recvtype, source, recvtag), comm, status),
        }
    }

    /// As `MPI_Sendrecv_replace`.
    fn MPI_Sendrecv_replace_c(buf, count, datatype, dest, sendtag, source, recvtag, comm, status) {
        let here = Here::new(routine::MPI_Sendrecv_replace_c);
        match (gate(&here), args::int_count(count)) {
            (Some(rc), _) => rc,
            (None, None) => next!(),
            (None, Some(n)) => p2p::sendrecv_replace(&here, (buf, n, datatype), (dest, sendtag), (source, recvtag), comm, status),
        }
    }

    /// As `MPI_Mrecv`.
    fn MPI_Mrecv_c(buf, count, datatype, message, status) {
        let here = Here::new(routine::MPI_Mrecv_c);
        match (gate(&here), args::int_count(count)) {
            (Some(rc), _) => rc,
            (None, None) => next!(),
            (None, Some(n)) => matched::mrecv(&here, (buf, n, datatype), message, status, || next!()),
        }
    }

    /// As `MPI_Imrecv`.
    fn MPI_Imrecv_c(buf, count, datatype, message, request) {
        let here = Here::new(routine::MPI_Imrecv_c);
        match (gate(&here), args::int_count(count)) {
            (Some(rc), _) => rc,
            (None, None) => next!(),
            (None, Some(n)) => matched::imrecv(&here, (buf, n, datatype), message, request, || next!()),
        }
    }
}
