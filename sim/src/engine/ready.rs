//! The actors ready to run, in (clock, actor) order: the serial replay's
//! event queue.
//!
//! Most actors of a bulk-synchronous trace become ready in the order in
//! which they will run: a halo's receivers are woken rank after rank, at
//! the same time or later, and so are a collective's members. Those go
//! to a first-in-first-out lane, in O(1) and in memory order; the others
//! (a boundary rank woken early, an actor that yields to an earlier one)
//! go to a 4-ary heap, whose pops at a million actors walk half the levels
//! of a binary heap, four children to a cache line. A pop takes the lesser
//! of the two fronts, so the order is exactly the heap's alone: the
//! replay's results do not depend on which of the two held an actor.

use dary_heap::QuaternaryHeap;
use std::cmp::Reverse;
use std::collections::VecDeque;

/// A ready actor: its clock's key (see `key` in the engine) and index.
pub type Ready = (u64, u32);

/// The ready actors.
#[derive(Default)]
pub struct ReadyQueue {
    /// The lane's first entries when they are consecutive actors at one
    /// key, `(key, first, end)`: every actor at the start, and the members
    /// of a collective that ends, held as a range rather than an entry
    /// each (at a million actors, 16 MiB that the lane would touch).
    run: (u64, u32, u32),
    /// The lane's other entries, after the run; keys in increasing order.
    lane: VecDeque<Ready>,
    heap: QuaternaryHeap<Reverse<Ready>>,
}

impl ReadyQueue {
    fn run_len(&self) -> u32 {
        self.run.2 - self.run.1
    }

    /// The lane's first entry.
    fn front(&self) -> Option<Ready> {
        if self.run_len() > 0 {
            Some((self.run.0, self.run.1))
        } else {
            self.lane.front().copied()
        }
    }

    /// The lane's last entry.
    fn back(&self) -> Option<Ready> {
        match self.lane.back() {
            Some(&r) => Some(r),
            None => (self.run_len() > 0).then(|| (self.run.0, self.run.2 - 1)),
        }
    }

    /// Actor `r.1` is ready at key `r.0`.
    pub fn push(&mut self, r: Ready) {
        if self.back().is_some_and(|last| r <= last) {
            self.heap.push(Reverse(r));
        } else if !self.lane.is_empty() || r.1 == u32::MAX {
            self.lane.push_back(r);
        } else if self.run_len() == 0 {
            self.run = (r.0, r.1, r.1 + 1);
        } else if (r.0, r.1) == (self.run.0, self.run.2) {
            self.run.2 += 1;
        } else {
            self.lane.push_back(r);
        }
    }

    /// The first ready actor.
    pub fn peek(&self) -> Option<Ready> {
        match (self.front(), self.heap.peek()) {
            (Some(l), Some(&Reverse(h))) => Some(l.min(h)),
            (Some(l), None) => Some(l),
            (None, h) => h.map(|&Reverse(h)| h),
        }
    }

    /// Takes the first ready actor.
    pub fn pop(&mut self) -> Option<Ready> {
        match (self.front(), self.heap.peek()) {
            (Some(l), Some(&Reverse(h))) if h < l => self.heap.pop().map(|Reverse(h)| h),
            (Some(l), _) => {
                if self.run_len() > 0 {
                    self.run.1 += 1;
                } else {
                    self.lane.pop_front();
                }
                Some(l)
            }
            (None, _) => self.heap.pop().map(|Reverse(h)| h),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_the_order_of_a_heap_whatever_the_pushes() {
        let mut q = ReadyQueue::default();
        // Every actor ready at the start: a run.
        for a in 0..100 {
            q.push((0, a));
        }
        let mut h: QuaternaryHeap<_> = (0..100).map(|a| Reverse((0, a))).collect();
        let mut rng = fastrand::Rng::with_seed(1);
        let mut now = 0u64;
        for step in 0..200_000u32 {
            let x = rng.u64(..);
            // Runs of pushes in order (a halo's wake-ups), then scattered
            // ones, some at the time just popped, some earlier.
            // A collective's members woken together: consecutive actors
            // at one key.
            if (x >> 58).is_multiple_of(16) {
                let (key, first) = (now + (x >> 40) % 5, (x >> 20) as u32 % 5000);
                for a in first..first + (x >> 8) as u32 % 40 {
                    q.push((key, a));
                    h.push(Reverse((key, a)));
                }
            }
            let r = match (x >> 60) % 4 {
                0 | 1 => (now + (step as u64 % 7), step),
                2 => (now + (x >> 40) % 1000, (x >> 20) as u32 % 5000),
                _ => (now.saturating_sub((x >> 50) % 3), (x >> 10) as u32 % 5000),
            };
            q.push(r);
            h.push(Reverse(r));
            if (x >> 33).is_multiple_of(3) {
                assert_eq!(q.peek(), h.peek().map(|&Reverse(r)| r));
                let got = q.pop();
                assert_eq!(got, h.pop().map(|Reverse(r)| r), "step {step}");
                now = got.map_or(now, |g| g.0);
            }
        }
        while let Some(Reverse(want)) = h.pop() {
            assert_eq!(q.pop(), Some(want));
        }
        assert_eq!(q.pop(), None);
    }
}
