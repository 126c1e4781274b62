//! Which predefined operations reduce which predefined datatypes (the
//! MPI standard's table): `MPI_MAX` and `MPI_MIN` integers and floating
//! point, `MPI_SUM` and `MPI_PROD` those and complex numbers, the logical
//! ones integers and booleans, the bitwise ones integers and bytes,
//! `MPI_MAXLOC` and `MPI_MINLOC` pair types only; `MPI_REPLACE` and
//! `MPI_NO_OP` belong to one-sided accumulates, never to reductions. A
//! user operation, or a derived datatype, is not checked here.

use crate::args::{refuse, Checked};
use crate::consts::{self, Err};
use crate::types;
use pnmpi_sdk::constants as mpi;
use pnmpi_sdk::sys::ffi::{MPI_Datatype, MPI_Op};
use pnmpi_sdk::sys::Handle;
use pnmpi_trace::rma::OP_NAMES;

/// Whether the predefined operation named `op` (an index of `OP_NAMES`)
/// reduces a basic type of `kind` (see consts.c).
pub fn reduces(op: &str, kind: u8) -> bool {
    let integer = matches!(kind, b'i' | b'u' | b'r' | b'w');
    match op {
        "MPI_MAX" | "MPI_MIN" => integer || kind == b'f',
        "MPI_SUM" | "MPI_PROD" => integer || matches!(kind, b'f' | b'c'),
        "MPI_LAND" | "MPI_LOR" | "MPI_LXOR" => integer || matches!(kind, b'b' | b'l'),
        "MPI_BAND" | "MPI_BOR" | "MPI_BXOR" => integer,
        "MPI_MAXLOC" | "MPI_MINLOC" => kind == b'-',
        _ => false,
    }
}

/// A reduction's operation on `dt`.
pub fn reduction(op: MPI_Op, dt: MPI_Datatype) -> Checked {
    let Some(i) = mpi::predefined_ops().iter().position(|o| o.bits() == op.bits()) else {
        return Ok(());
    };
    let name = OP_NAMES[i];
    if matches!(name, "MPI_REPLACE" | "MPI_NO_OP") {
        let what = format!("{name} is an operation of one-sided accumulates, not of reductions");
        return Err(refuse(Err::Op, "op-type", what));
    }
    let id = types::predefined(dt);
    let Some(&kind) = consts::type_kinds().get((id as usize).wrapping_sub(1)) else {
        return Ok(());
    };
    if reduces(name, kind) {
        return Ok(());
    }
    let what = format!("{name} does not reduce {}", types::name(dt));
    Err(refuse(Err::Op, "op-type", what))
}
