//! [`Slab`]: a fixed table of default values, which starts as all-zero
//! bytes in anonymous pages of its own when its type allows
//! ([`Zeroable`]); [`Zeroed`]: one such value (a per-routine array). A thread's call-site tables take a few hundred KiB;
//! from the allocator (its `mmap` threshold raised by the MPI's own
//! allocations during `MPI_Init`) each was cleared with a `memset`, 50 K
//! of the tracer's start-up instructions. The kernel hands anonymous
//! pages out zeroed, and touches only those a thread uses.

use crate::counter::Counter;
use std::cell::Cell;
use std::ops::Deref;
use std::ptr::NonNull;

/// Types whose all-zero bytes are a value of theirs: their empty one.
///
/// # Safety
/// All-zero bytes must be a valid value of the type, its `Default` where
/// it has one, and the type must need no `Drop` (a [`Slab`] unmaps its
/// pages without dropping the values in them).
pub unsafe trait Zeroable {}

// SAFETY: an `AtomicU64` of zero bytes is 0, `Counter::default()`; no Drop.
unsafe impl Zeroable for Counter {}
// SAFETY: a `usize` of zero bytes is 0, its default; no Drop.
unsafe impl Zeroable for Cell<usize> {}
// SAFETY: `SiteCode::NONE` (the default) is two zero words; no Drop.
unsafe impl Zeroable for Cell<pnmpi_trace::rank::SiteCode> {}
// SAFETY: an array of zeroable values is all-zero bytes, each its default.
unsafe impl<T: Zeroable, const N: usize> Zeroable for [T; N] {}

/// `len` values of `T` that never move: a slice read on every call's path
/// (one pointer, whichever memory holds it).
pub struct Slab<T> {
    start: NonNull<T>,
    len: usize,
    /// The map holding the values (unmapped when dropped), or none: the
    /// box `start` came from holds them.
    map: Option<memmap2::MmapMut>,
}

// SAFETY: the values are owned as a `Box<[T]>` owns them (the map or the
// box is the slab's alone), so the slab may move to another thread when
// `T` may.
unsafe impl<T: Send> Send for Slab<T> {}
// SAFETY: shared access gives `&[T]` only, as `Box<[T]>` does.
unsafe impl<T: Sync> Sync for Slab<T> {}

impl<T: Default> Slab<T> {
    /// `len` default values, from the allocator.
    pub fn new(len: usize) -> Slab<T> {
        let values: Box<[T]> = (0..len).map(|_| T::default()).collect();
        let start = NonNull::from(Box::leak(values)).cast::<T>();
        Slab {
            start,
            len,
            map: None,
        }
    }
}

impl<T: Zeroable> Slab<T> {
    /// `len` values of zero bytes: zeroed pages (from the allocator if
    /// they cannot be mapped).
    pub fn zeroed(len: usize) -> Slab<T> {
        let mapped = len
            .checked_mul(size_of::<T>())
            .filter(|&bytes| bytes > 0 && align_of::<T>() <= 4096)
            .and_then(|bytes| memmap2::MmapMut::map_anon(bytes).ok())
            .and_then(|mut map| NonNull::new(map.as_mut_ptr().cast::<T>()).map(|start| (map, start)));
        if let Some((map, start)) = mapped {
            return Slab {
                start,
                len,
                map: Some(map),
            };
        }
        // SAFETY: zero bytes are valid `T`s (`Zeroable`).
        let values = unsafe { Box::<[T]>::new_zeroed_slice(len).assume_init() };
        Slab {
            start: NonNull::from(Box::leak(values)).cast::<T>(),
            len,
            map: None,
        }
    }
}

/// One value of `T`, all zero bytes, in pages of its own (a [`Slab`] of
/// one): a per-routine array indexed on every call's path keeps its
/// length in its type.
pub struct Zeroed<T: Zeroable>(Slab<T>);

impl<T: Zeroable> Zeroed<T> {
    /// The value of zero bytes.
    pub fn new() -> Zeroed<T> {
        Zeroed(Slab::zeroed(1))
    }
}

impl<T: Zeroable> Default for Zeroed<T> {
    fn default() -> Zeroed<T> {
        Zeroed::new()
    }
}

impl<T: Zeroable> Deref for Zeroed<T> {
    type Target = T;

    #[inline(always)]
    fn deref(&self) -> &T {
        // SAFETY: the slab holds one value (`new`), valid as its `Deref`
        // says, for as long as `self`.
        unsafe { &*self.0.start.as_ptr() }
    }
}

impl<T> Deref for Slab<T> {
    type Target = [T];

    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: `start` holds `len` valid `T`s that live as long as
        // `self`: a leaked box's (`new`, or `zeroed`'s zero bytes, valid
        // `T`s), or a map's, page-aligned (so
        // aligned for `T`, checked in `zeroed`) and all zero when mapped,
        // valid `T`s (`Zeroable`), written since only through these
        // shared references' own interior mutability.
        unsafe { std::slice::from_raw_parts(self.start.as_ptr(), self.len) }
    }
}

impl<T> Drop for Slab<T> {
    fn drop(&mut self) {
        if self.map.is_none() {
            let values = std::ptr::slice_from_raw_parts_mut(self.start.as_ptr(), self.len);
            // SAFETY: `start` and `len` are the box `new` leaked, not
            // used again after this.
            drop(unsafe { Box::from_raw(values) });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_start_as_their_default_and_keep_what_is_written() {
        for table in [Slab::<[Counter; 3]>::zeroed(5000), Slab::new(5000)] {
            assert_eq!(table.len(), 5000);
            assert!(table.iter().flatten().all(|c| c.get() == 0));
            table[4999][2].set(7);
            table[0][0].add(1);
            assert_eq!(
                (table[4999][2].get(), table[0][0].get(), table[1][0].get()),
                (7, 1, 0)
            );
        }
        assert!(Slab::<Cell<usize>>::zeroed(0).is_empty());
        let big: Zeroed<[Counter; 1000]> = Zeroed::new();
        big[999].set(3);
        assert_eq!((big[999].get(), big[998].get()), (3, 0));
        assert!(Slab::<String>::new(0).is_empty());
    }

    #[test]
    fn values_from_the_allocator_are_dropped_with_the_slab() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static LIVE: AtomicUsize = AtomicUsize::new(0);
        struct Live;
        impl Default for Live {
            fn default() -> Live {
                LIVE.fetch_add(1, Ordering::Relaxed);
                Live
            }
        }
        impl Drop for Live {
            fn drop(&mut self) {
                LIVE.fetch_sub(1, Ordering::Relaxed);
            }
        }
        let table = Slab::<Live>::new(3);
        assert_eq!(LIVE.load(Ordering::Relaxed), 3);
        drop(table);
        assert_eq!(LIVE.load(Ordering::Relaxed), 0);
    }
}
