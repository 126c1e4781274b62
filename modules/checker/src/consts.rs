//! The constants of `consts.c`, read from Rust.

use pnmpi_sdk::sys::ffi::{MPI_Datatype, MPI_Group, MPI_Op};
use std::ffi::c_int;

extern "C" {
    static pnmpi_checker_err: [c_int; 16];
    static pnmpi_checker_thread_levels: [c_int; 4];
    static pnmpi_checker_tag_ub_key: c_int;
    static pnmpi_checker_op_null: MPI_Op;
    static pnmpi_checker_group_null: MPI_Group;
    static pnmpi_checker_group_empty: MPI_Group;
    static pnmpi_checker_byte: MPI_Datatype;
    static pnmpi_checker_packed: MPI_Datatype;
    static pnmpi_checker_type_kinds: [u8; 46];
}

/// An MPI error class the checker returns for a call it refused.
#[derive(Clone, Copy, Debug)]
pub enum Err {
    Rank = 0,
    Tag,
    Count,
    Root,
    Type,
    Comm,
    Op,
    Buffer,
    Other,
    Truncate,
    Request,
    Size,
    Disp,
    RmaSync,
    RmaRange,
    Win,
}

/// The MPI error code of `e`.
pub fn err(e: Err) -> c_int {
    // SAFETY: an immutable C array initialised at load time.
    unsafe { pnmpi_checker_err[e as usize] }
}

/// The thread level `provided` as its place in MPI's order: 0
/// `MPI_THREAD_SINGLE`, 1 `_FUNNELED`, 2 `_SERIALIZED`, 3 `_MULTIPLE`
/// (an unknown value: 0, the strictest).
pub fn thread_level(provided: c_int) -> u8 {
    // SAFETY: an immutable C array initialised at load time.
    let levels = unsafe { &pnmpi_checker_thread_levels };
    levels.iter().position(|&l| l == provided).map_or(0, |i| i as u8)
}

/// `MPI_TAG_UB`, the attribute key.
pub fn tag_ub_key() -> c_int {
    // SAFETY: an immutable C object initialised at load time.
    unsafe { pnmpi_checker_tag_ub_key }
}

/// `MPI_OP_NULL`.
pub fn op_null() -> MPI_Op {
    // SAFETY: an immutable C object initialised at load time.
    unsafe { pnmpi_checker_op_null }
}

/// `MPI_GROUP_NULL` and `MPI_GROUP_EMPTY`, which are never leaks.
pub fn group_constants() -> [MPI_Group; 2] {
    // SAFETY: immutable C objects initialised at load time.
    unsafe { [pnmpi_checker_group_null, pnmpi_checker_group_empty] }
}

/// `MPI_BYTE` and `MPI_PACKED`: they match any signature's bytes.
pub fn untyped() -> [MPI_Datatype; 2] {
    // SAFETY: immutable C objects initialised at load time.
    unsafe { [pnmpi_checker_byte, pnmpi_checker_packed] }
}

/// The predefined datatypes (pnmpi-mpi-sys's); a type's index is its
/// name in a signature.
pub fn predefined_types() -> &'static [MPI_Datatype] {
    pnmpi_sdk::sys::constants::predefined_types()
}

/// What each of [`predefined_types`] holds, one letter each (see
/// consts.c): what `types native` compares.
pub fn type_kinds() -> &'static [u8] {
    // SAFETY: an immutable C array initialised at load time, as long as
    // the predefined types (both arrays' types say so).
    unsafe { &pnmpi_checker_type_kinds }
}

extern "C" {
    static pnmpi_checker_message_null: pnmpi_sdk::sys::ffi::MPI_Message;
}

/// `MPI_MESSAGE_NULL`.
pub fn message_null() -> pnmpi_sdk::sys::ffi::MPI_Message {
    // SAFETY: an immutable C object initialised at load time.
    unsafe { pnmpi_checker_message_null }
}
