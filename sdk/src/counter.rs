//! [`Counter`]: a counter that only its own thread writes, for tables a
//! thread fills on its hot path and another reads at the end.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// A counter that only its own thread writes: a relaxed load and store
/// (plain moves, no `lock` prefix), so no contention, and a reader on
/// another thread (a report at `MPI_Finalize`) sees no data race.
#[derive(Default)]
pub struct Counter(AtomicU64);

impl Counter {
    /// A counter holding `value`.
    pub fn new(value: u64) -> Counter {
        Counter(value.into())
    }

    /// The value.
    #[inline(always)]
    pub fn get(&self) -> u64 {
        self.0.load(Relaxed)
    }

    /// Sets the value (owning thread only).
    #[inline(always)]
    pub fn set(&self, value: u64) {
        self.0.store(value, Relaxed)
    }

    /// Adds to the value (owning thread only).
    #[inline(always)]
    pub fn add(&self, value: u64) {
        self.set(self.get().wrapping_add(value))
    }
}
