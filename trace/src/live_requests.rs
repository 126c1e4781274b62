//! A rank's live requests by handle, as the merge's converter tracks them.
//!
//! A handle usually stands for one live request at a time (MPIs reuse
//! handles once a request completes), so the oldest request of each
//! handle is held in one map, inline, and only the rare later ones (Open
//! MPI hands out one shared handle for sends that completed at once) in a
//! second map of queues. A handle leaves the maps when its last request
//! completes, and the maps shrink when they are mostly empty, so memory
//! follows the requests live now, not every handle ever used: a folder's
//! replay keeps a converter per rank, tens of thousands of them at once.

use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// Capacity below which a map is not shrunk (shrinking a small map saves
/// little and would repeat at every burst).
const KEEP: usize = 64;

/// Live requests by handle, oldest first per handle.
pub(crate) struct LiveRequests<T> {
    /// Each handle's oldest live request.
    first: FxHashMap<u64, T>,
    /// The later ones, for handles with more than one.
    more: FxHashMap<u64, VecDeque<T>>,
}

impl<T> Default for LiveRequests<T> {
    fn default() -> Self {
        LiveRequests {
            first: FxHashMap::default(),
            more: FxHashMap::default(),
        }
    }
}

impl<T> LiveRequests<T> {
    /// The oldest live request of `handle`.
    pub(crate) fn front(&self, handle: u64) -> Option<&T> {
        self.first.get(&handle)
    }

    /// The oldest live request of `handle`, to update.
    pub(crate) fn front_mut(&mut self, handle: u64) -> Option<&mut T> {
        self.first.get_mut(&handle)
    }

    /// Adds a request of `handle`, after its live ones.
    pub(crate) fn push(&mut self, handle: u64, info: T) {
        use std::collections::hash_map::Entry;
        match self.first.entry(handle) {
            Entry::Vacant(e) => {
                e.insert(info);
            }
            Entry::Occupied(_) => self.more.entry(handle).or_default().push_back(info),
        }
    }

    /// Completes the oldest live request of `handle` (if any).
    pub(crate) fn pop_front(&mut self, handle: u64) {
        let queued = if self.more.is_empty() {
            None
        } else {
            self.more.get_mut(&handle)
        };
        let next = match queued {
            Some(q) => {
                let next = q.pop_front();
                if q.is_empty() {
                    self.more.remove(&handle);
                    shrink(&mut self.more);
                }
                next
            }
            None => None,
        };
        match next {
            Some(info) => {
                self.first.insert(handle, info);
            }
            None => {
                self.first.remove(&handle);
                shrink(&mut self.first);
            }
        }
    }

    /// Requests live.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.first.len() + self.more.values().map(VecDeque::len).sum::<usize>()
    }
}

/// Gives back most of `map`'s memory once it is at most an eighth full
/// (amortised: it must have grown to eight times its size since).
fn shrink<V>(map: &mut FxHashMap<u64, V>) {
    if map.capacity() > KEEP && map.len() * 8 < map.capacity() {
        map.shrink_to(2 * map.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_handle_completes_its_requests_in_creation_order() {
        let mut live = LiveRequests::default();
        for i in 0..5 {
            live.push(7, i);
        }
        live.push(8, 100);
        assert_eq!(live.len(), 6);
        *live.front_mut(7).unwrap() += 10;
        let mut seen = Vec::new();
        while let Some(&i) = live.front(7) {
            seen.push(i);
            live.pop_front(7);
        }
        assert_eq!(seen, [10, 1, 2, 3, 4]);
        assert_eq!(live.front(8), Some(&100));
        live.pop_front(8);
        live.pop_front(8);
        assert_eq!(live.len(), 0);
        assert!(live.more.is_empty());
    }

    #[test]
    fn memory_follows_the_live_requests_not_the_handles_ever_used() {
        let mut live = LiveRequests::default();
        // Fresh handles, a dozen live at a time, as a halo exchange whose
        // tracer never reuses a handle.
        for round in 0..10_000u64 {
            for k in 0..12 {
                live.push(round * 12 + k, k);
            }
            for k in 0..12 {
                live.pop_front(round * 12 + k);
            }
        }
        assert_eq!(live.len(), 0);
        assert!(live.first.capacity() <= KEEP, "{}", live.first.capacity());
        // A burst of 100,000 live requests, then a few: the maps shrink.
        for h in 0..100_000u64 {
            live.push(h, 0);
            live.push(h, 1);
        }
        assert!(live.first.capacity() >= 100_000);
        for h in 0..100_000u64 {
            live.pop_front(h);
            if h >= 10 {
                live.pop_front(h);
            }
        }
        assert_eq!(live.len(), 10);
        assert!(live.first.capacity() <= 2 * KEEP, "{}", live.first.capacity());
        assert!(live.more.capacity() <= 2 * KEEP, "{}", live.more.capacity());
    }
}
