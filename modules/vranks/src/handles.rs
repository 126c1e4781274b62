//! The handles the application holds for virtual objects: communicators,
//! groups and requests that exist only in this layer. Each is a number
//! the native MPI never hands out (under Open MPI, where handles are
//! pointers, a non-canonical address; under MPICH, where they are `int`s,
//! an object kind MPICH does not use), tagged by kind, with the object's
//! index below. The predefined communicators and `MPI_REQUEST_NULL` keep
//! their native values.

use pnmpi_mpi_sys::{constants as c, ffi, Handle};

/// Kinds of virtual object.
#[derive(Clone, Copy)]
pub enum Kind {
    Comm = 1,
    Group = 2,
    Request = 3,
}

/// The tag of `kind` in a handle of `width` bytes.
fn tag(kind: Kind, width: usize) -> u64 {
    if width == 8 {
        0x5a00_0000_0000_0000 | ((kind as u64) << 48)
    } else {
        0x7800_0000 | ((kind as u64) << 24)
    }
}

/// The mask that keeps the tag.
fn mask(width: usize) -> u64 {
    if width == 8 {
        0xffff_0000_0000_0000
    } else {
        0xff00_0000
    }
}

/// The handle of object `index` of `kind`.
pub fn make<H: Handle>(kind: Kind, index: usize) -> H {
    let w = std::mem::size_of::<H>();
    H::from_bits(tag(kind, w) | index as u64)
}

/// The index of the object `h` names, if it is a virtual one of `kind`.
pub fn index<H: Handle>(kind: Kind, h: H) -> Option<usize> {
    let w = std::mem::size_of::<H>();
    let bits = h.bits();
    (bits & mask(w) == tag(kind, w)).then(|| (bits & !mask(w)) as usize)
}

/// The virtual communicator `h` names: world is 0, self is 1, others by
/// their index; `None` for `MPI_COMM_NULL` or a handle not ours.
pub fn comm(h: ffi::MPI_Comm) -> Option<usize> {
    if h.bits() == c::COMM_WORLD().bits() {
        Some(0)
    } else if h.bits() == c::COMM_SELF().bits() {
        Some(1)
    } else {
        index(Kind::Comm, h)
    }
}

/// The handle of virtual communicator `index`.
pub fn comm_handle(index: usize) -> ffi::MPI_Comm {
    match index {
        0 => c::COMM_WORLD(),
        1 => c::COMM_SELF(),
        i => make(Kind::Comm, i),
    }
}
