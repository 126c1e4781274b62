//! MPI handles as numbers, for the module's maps: Open MPI's handles are
//! pointers, MPICH's are `int`s. A number is `Send`, which a pointer is
//! not, and both MPIs compare handles by value.

use std::ffi::c_int;

/// A handle type (`MPI_Comm`, `MPI_Request`, `MPI_Message`).
pub trait Handle: Copy {
    /// Its bits.
    fn bits(self) -> u64;
    /// The handle with these bits (made by [`Handle::bits`]).
    fn from_bits(bits: u64) -> Self;
}

impl<T> Handle for *mut T {
    fn bits(self) -> u64 {
        self as usize as u64
    }
    fn from_bits(bits: u64) -> Self {
        bits as usize as *mut T
    }
}

impl Handle for c_int {
    fn bits(self) -> u64 {
        u64::from(self as u32)
    }
    fn from_bits(bits: u64) -> Self {
        bits as u32 as c_int
    }
}
