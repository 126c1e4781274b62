//! The data the hot path reads: the per-routine bit vector and the
//! per-routine link stacks. Both are built once by the loader and then only
//! read, without locks: a new table is published with one atomic pointer
//! store and the old one is never freed, so a thread still inside a call
//! can keep using it.

use pnmpi_mpi_sys::ROUTINE_COUNT;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

const WORDS: usize = ROUTINE_COUNT.div_ceil(64);

/// Bit `id` is set when at least one module wraps routine `id`; a clear bit
/// sends the call straight to `PMPI_`.
static WRAPPED: [AtomicU64; WORDS] = [const { AtomicU64::new(0) }; WORDS];

/// The published link stacks; null until the modules are loaded.
static TABLE: AtomicPtr<Table> = AtomicPtr::new(std::ptr::null_mut());

/// Does any module wrap routine `id`? One load and one bit test.
#[inline(always)]
pub fn is_wrapped(id: usize) -> bool {
    WRAPPED[id / 64].load(Ordering::Acquire) & (1 << (id % 64)) != 0
}

/// One layer of a link stack: a module's wrapper and the module's level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hop {
    pub func: *const (),
    pub level: u32,
}

/// Where the link stacks of one routine lie in the table's two arrays,
/// over every configured stack.
#[derive(Clone, Copy, Debug, Default)]
struct RoutineStacks {
    /// Its hops: `hops[hops_at .. hops_at + depth]`.
    hops_at: u32,
    depth: u32,
    /// `first_below[below_at + l]`: index in `hops` of the next wrapper
    /// below level `l` in `l`'s own stack, or `NONE`; `levels` entries, or
    /// none (`below_at` is `NONE`) for a routine no module wraps. Dense
    /// over all levels so that finding the next layer is two loads,
    /// whatever the depth; this is the M * N term of the memory model.
    below_at: u32,
}

const NONE: u32 = u32::MAX;

/// Link stacks of every routine, indexed by routine id (a fixed-size
/// array, so that indexing by a routine's constant id needs no check).
/// Every routine's hops and levels share one array each: building the
/// table allocates twice, not twice per wrapped routine.
#[derive(Debug)]
pub struct Table {
    stacks: Box<[RoutineStacks; ROUTINE_COUNT]>,
    hops: Box<[Hop]>,
    first_below: Box<[u32]>,
    levels: usize,
}

// SAFETY: the table holds code addresses of loaded modules, which stay
// mapped for the life of the process and are only called, never written.
unsafe impl Send for Table {}
// SAFETY: as above; the table is immutable once built.
unsafe impl Sync for Table {}

/// The modules of one stack, as the table needs them.
pub struct StackLayout<'a> {
    /// The level calls into this stack start from: 0 for the default
    /// stack (the application), a pseudo-level for a named one.
    pub top: u32,
    /// `(level, wrappers as (routine id, address))` of each member, in
    /// chain order; each member's wrappers sorted by routine id.
    pub members: Vec<(u32, &'a [(usize, *const ())])>,
}

impl Table {
    /// Builds every routine's link stacks; `levels` bounds every level and
    /// top used in `stacks`. Each member's wrappers are sorted by routine
    /// id (as the loader lists them), so one cursor per member walks them
    /// all in one pass over the routines, appending each wrapped routine's
    /// hops and levels to the table's two arrays.
    pub fn build(levels: usize, stacks: &[StackLayout]) -> Table {
        let mut cursors: Vec<Vec<usize>> = stacks.iter().map(|s| vec![0; s.members.len()]).collect();
        // The hops of the routine being built, by stack: (start, end) in
        // `hops`, from the routine's first hop.
        let mut spans = vec![(0usize, 0usize); stacks.len()];
        // Every wrapper is one hop, and each routine with hops one row of
        // levels: reserved once, not grown routine by routine.
        let wrappers: usize = stacks.iter().flat_map(|s| &s.members).map(|m| m.1.len()).sum();
        let mut hops = Vec::with_capacity(wrappers);
        let mut first_below = Vec::with_capacity(wrappers.min(ROUTINE_COUNT) * levels);
        let mut routines = Box::new([RoutineStacks::default(); ROUTINE_COUNT]);
        for (id, routine) in routines.iter_mut().enumerate() {
            let hops_at = hops.len();
            for ((stack, cursors), span) in stacks.iter().zip(&mut cursors).zip(&mut spans) {
                span.0 = hops.len() - hops_at;
                for (&(level, wraps), at) in stack.members.iter().zip(cursors.iter_mut()) {
                    while let Some(&(wrapped, func)) = wraps.get(*at).filter(|w| w.0 <= id) {
                        *at += 1;
                        if wrapped == id {
                            hops.push(Hop { func, level });
                        }
                    }
                }
                span.1 = hops.len() - hops_at;
            }
            if hops.len() == hops_at {
                *routine = RoutineStacks {
                    hops_at: 0,
                    depth: 0,
                    below_at: NONE,
                };
                continue;
            }
            let below_at = first_below.len();
            first_below.resize(below_at + levels, NONE);
            let below = &mut first_below[below_at..];
            for (stack, &(start, end)) in stacks.iter().zip(&spans) {
                let own = &hops[hops_at + start..hops_at + end];
                // A named stack's top is numbered after every module;
                // entering at the top always reaches its first member.
                below[stack.top as usize] = if own.is_empty() { NONE } else { start as u32 };
                // Members and their hops both go down the chain, so one
                // walk finds the first hop below each member.
                let mut next = 0;
                for &(level, _) in &stack.members {
                    while next < own.len() && own[next].level <= level {
                        next += 1;
                    }
                    below[level as usize] = if next < own.len() {
                        (start + next) as u32
                    } else {
                        NONE
                    };
                }
            }
            *routine = RoutineStacks {
                hops_at: hops_at as u32,
                depth: (hops.len() - hops_at) as u32,
                below_at: below_at as u32,
            };
        }
        Table {
            stacks: routines,
            hops: hops.into(),
            first_below: first_below.into(),
            levels,
        }
    }

    /// The next layer of routine `id` below level `from`, or `None` for the
    /// native routine.
    #[inline(always)]
    pub fn next(&self, id: usize, from: u32) -> Option<Hop> {
        let stack = self.stacks[id];
        if stack.below_at == NONE || from as usize >= self.levels {
            return None;
        }
        let index = *self.first_below.get(stack.below_at as usize + from as usize)?;
        if index == NONE {
            return None;
        }
        self.hops.get(stack.hops_at as usize + index as usize).copied()
    }

    /// How many modules wrap routine `id`, over all stacks.
    pub fn depth(&self, id: usize) -> usize {
        self.stacks[id].depth as usize
    }
}

/// Makes `table` the live one and sets the bit vector to match. Tables
/// live for the whole run (see the module doc).
pub fn publish(table: &'static Table) {
    let mut wrapped = [0u64; WORDS];
    for (id, stack) in table.stacks.iter().enumerate() {
        wrapped[id / 64] |= u64::from(stack.depth > 0) << (id % 64);
    }
    TABLE.store(std::ptr::from_ref(table).cast_mut(), Ordering::Release);
    for (word, bits) in WRAPPED.iter().zip(wrapped) {
        word.store(bits, Ordering::Release);
    }
}

/// The next layer of routine `id` below level `from` in the live table.
#[inline(always)]
pub fn next(id: usize, from: u32) -> Option<Hop> {
    let table = TABLE.load(Ordering::Acquire);
    // SAFETY: a non-null TABLE points to a `'static` Table.
    unsafe { table.as_ref() }?.next(id, from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(n: usize) -> *const () {
        n as *const ()
    }

    #[test]
    fn next_skips_modules_that_do_not_wrap_the_routine() {
        // Three modules: 1 and 3 wrap routine 0, 2 wraps routine 1.
        let (w1, w2, w3) = ([(0, f(10))], [(1, f(20))], [(0, f(30))]);
        let default = StackLayout {
            top: 0,
            members: vec![(1, &w1[..]), (2, &w2[..]), (3, &w3[..])],
        };
        let t = Table::build(4, &[default]);
        assert_eq!(
            t.next(0, 0),
            Some(Hop {
                func: f(10),
                level: 1
            })
        );
        assert_eq!(
            t.next(0, 1),
            Some(Hop {
                func: f(30),
                level: 3
            })
        );
        // From module 2's level (it does not wrap routine 0), the next is 3.
        assert_eq!(
            t.next(0, 2),
            Some(Hop {
                func: f(30),
                level: 3
            })
        );
        assert_eq!(t.next(0, 3), None);
        assert_eq!(
            t.next(1, 0),
            Some(Hop {
                func: f(20),
                level: 2
            })
        );
        assert_eq!(t.next(1, 2), None);
        assert_eq!(t.next(2, 0), None);
        assert_eq!(t.depth(0), 2);
    }

    #[test]
    fn stacks_do_not_fall_through_into_each_other() {
        // Default stack: module 1. Named stack (top 3): module 2.
        let (w1, w2) = ([(0, f(10))], [(0, f(20))]);
        let default = StackLayout {
            top: 0,
            members: vec![(1, &w1[..])],
        };
        let named = StackLayout {
            top: 3,
            members: vec![(2, &w2[..])],
        };
        let t = Table::build(4, &[default, named]);
        assert_eq!(
            t.next(0, 0),
            Some(Hop {
                func: f(10),
                level: 1
            })
        );
        // The bottom of the default stack is MPI, not the named stack.
        assert_eq!(t.next(0, 1), None);
        assert_eq!(
            t.next(0, 3),
            Some(Hop {
                func: f(20),
                level: 2
            })
        );
        assert_eq!(t.next(0, 2), None);
    }

    #[test]
    fn empty_table_sends_everything_native() {
        let t = Table::build(
            1,
            &[StackLayout {
                top: 0,
                members: vec![],
            }],
        );
        assert_eq!(t.next(0, 0), None);
    }
}
