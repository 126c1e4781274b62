//! A thread's last datatype and its size, for wrappers that turn a
//! `count` into bytes on every call.
//!
//! Point-to-point calls repeat their datatype, and `MPI_Type_size` (a
//! call into the MPI library, past the chain: [`crate::native`]) is most
//! of what a send's or a receive's bytes cost. A datatype's size is fixed for as long as
//! its handle names it, and both MPIs hand a freed handle to the next new
//! type, so a module that caches sizes calls [`forget_sizes`] from its
//! `MPI_Type_free` wrapper once the type is gone. A type freed with
//! `PMPI_Type_free` directly, past the chain, is not seen: a new type
//! that takes its handle would be counted with the old size until the
//! thread uses another datatype.

use crate::{native, Datatype};
use pnmpi_mpi_sys::Handle;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Acquire, Ordering::Relaxed, Ordering::Release};

/// Bumped by [`forget_sizes`]: every [`SizeCache`] of the module starts
/// over. Each module has its own (the SDK is linked into each).
static TYPES_FREED: AtomicU64 = AtomicU64::new(0);

/// Forgets every thread's cached datatype size; a module's
/// `MPI_Type_free` wrapper calls it once the type is gone.
pub fn forget_sizes() {
    TYPES_FREED.fetch_add(1, Release);
}

/// One thread's last datatype and its size. Its owner thread alone uses
/// it; the fields are relaxed atomics (plain moves on x86-64) so that it
/// can sit in a per-thread block that other threads may see at the end.
pub struct SizeCache {
    handle: AtomicU64,
    /// `TYPES_FREED` when the size was measured; [`UNMEASURED`] before
    /// the first measure and after a failed or zero one, so that the next
    /// call measures again.
    freed: AtomicU64,
    size: AtomicI64,
}

/// A `freed` that `TYPES_FREED` never reaches.
const UNMEASURED: u64 = u64::MAX;

impl Default for SizeCache {
    fn default() -> SizeCache {
        SizeCache {
            handle: AtomicU64::new(0),
            freed: AtomicU64::new(UNMEASURED),
            size: AtomicI64::new(0),
        }
    }
}

impl SizeCache {
    /// The size of one element of `dt` in bytes; 0 if MPI cannot say.
    #[inline(always)]
    pub fn size(&self, dt: Datatype) -> i64 {
        let freed = TYPES_FREED.load(Acquire);
        let handle = dt.bits();
        if self.handle.load(Relaxed) == handle && self.freed.load(Relaxed) == freed {
            return self.size.load(Relaxed);
        }
        // Laid out of the way of the repeated datatype.
        std::hint::cold_path();
        self.measure(dt, handle, freed)
    }

    #[inline(never)]
    fn measure(&self, dt: Datatype, handle: u64, freed: u64) -> i64 {
        let size = native::type_size(dt).map_or(0, i64::from).max(0);
        self.handle.store(handle, Relaxed);
        self.freed
            .store(if size > 0 { freed } else { UNMEASURED }, Relaxed);
        self.size.store(size, Relaxed);
        size
    }

    /// `count` elements of `dt`, in bytes.
    #[inline(always)]
    pub fn bytes<C: Into<i64>>(&self, count: C, dt: Datatype) -> i64 {
        count.into().saturating_mul(self.size(dt))
    }
}
