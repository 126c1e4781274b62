//! The handles the application holds for virtual objects: communicators,
//! groups and requests that exist only in this layer. Each is a number
//! the native MPI never hands out (under Open MPI, where handles are
//! pointers, a non-canonical address; under MPICH, where they are `int`s,
//! an object kind MPICH does not use), tagged by kind, with the object's
//! index below. The predefined communicators and `MPI_REQUEST_NULL` keep
//! their native values.

use pnmpi_mpi_sys::{constants as c, ffi, Handle};

/// Kinds of virtual object.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    Comm = 1,
    Group = 2,
    Request = 3,
    Win = 4,
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

/// How many objects of a kind handles of `width` bytes can name: the
/// bits below the tag (24 under MPICH, 48 under Open MPI).
fn capacity(width: usize) -> u64 {
    if width == 8 {
        1 << 48
    } else {
        1 << 24
    }
}

/// The bits of a handle of `width` bytes for `kind`'s object `index`, or
/// `None` when the index does not fit below the tag: its bits would
/// spill into the tag, and the handle would alias another object's, or
/// another kind's.
fn encode(kind: Kind, index: usize, width: usize) -> Option<u64> {
    let index = index as u64;
    (index < capacity(width)).then(|| tag(kind, width) | index)
}

/// The handle of object `index` of `kind`, or why there is none: too
/// many live objects of that kind for a handle to name them.
pub fn make<H: Handle>(kind: Kind, index: usize) -> Result<H, String> {
    let w = std::mem::size_of::<H>();
    encode(kind, index, w).map(H::from_bits).ok_or_else(|| {
        format!(
            "{kind:?} {index}: more live virtual objects of this kind than the MPI's {w}-byte handles can tell apart ({} at once); complete requests, or free groups and communicators, sooner",
            capacity(w)
        )
    })
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

/// The handle of virtual communicator `index` (see [`make`]).
pub fn comm_handle(index: usize) -> Result<ffi::MPI_Comm, String> {
    match index {
        0 => Ok(c::COMM_WORLD()),
        1 => Ok(c::COMM_SELF()),
        i => make(Kind::Comm, i),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_index_beyond_the_handle_bits_is_refused_not_aliased() {
        // MPICH's int handles keep 24 bits of index below the tag.
        let five = encode(Kind::Request, 5, 4).expect("fits");
        assert_eq!(five, 0x7b00_0005);
        assert_eq!(encode(Kind::Request, (1 << 24) - 1, 4), Some(0x7bff_ffff));
        assert_eq!(encode(Kind::Request, (1 << 24) + 5, 4), None);
        assert_eq!(encode(Kind::Group, 1 << 24, 4), None);
        // Open MPI's pointer handles keep 48.
        assert_eq!(encode(Kind::Comm, (1 << 48) - 1, 8), Some(0x5a01_ffff_ffff_ffff));
        assert_eq!(encode(Kind::Comm, 1 << 48, 8), None);
    }
}
