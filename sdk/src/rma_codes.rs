//! A one-sided call's MPI constants as the trace's codes
//! ([`pnmpi_trace::rma`]), the same on every MPI: for every layer that
//! records one-sided calls (the tracer module, virtual ranks' tracer).

use pnmpi_mpi_sys::constants as mpi;
use pnmpi_mpi_sys::ffi::MPI_Op;
use pnmpi_mpi_sys::Handle;
use pnmpi_trace::rma::{LOCK_EXCLUSIVE, LOCK_SHARED, OP_USER};
use std::ffi::c_int;

/// The trace's code of operation `op`: its index among the predefined
/// operations, else [`OP_USER`].
pub fn op_code(op: MPI_Op) -> i64 {
    mpi::predefined_ops()
        .iter()
        .position(|o| o.bits() == op.bits())
        .map_or(OP_USER, |i| i as i64)
}

/// The trace's bits of the assertion `assert`.
pub fn assert_bits(assert: c_int) -> i64 {
    mpi::modes()
        .iter()
        .enumerate()
        .filter(|&(_, &m)| assert & m != 0)
        .map(|(i, _)| 1 << i)
        .sum()
}

/// The trace's code of lock type `lock` (0 for a value MPI does not define).
pub fn lock_code(lock: c_int) -> i64 {
    if lock == mpi::LOCK_EXCLUSIVE() {
        LOCK_EXCLUSIVE
    } else if lock == mpi::LOCK_SHARED() {
        LOCK_SHARED
    } else {
        0
    }
}
