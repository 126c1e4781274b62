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

/// The link stack of one routine.
#[derive(Debug, Default)]
struct Stack {
    hops: Box<[Hop]>,
    /// `first_below[l]`: index in `hops` of the first wrapper whose level
    /// is greater than `l`, or `hops.len()` when none is. Dense over all
    /// levels so that finding the next layer is two loads, whatever the
    /// depth; this is the M * N term of the memory model.
    first_below: Box<[u32]>,
}

/// Link stacks of every routine, indexed by routine id.
#[derive(Debug)]
pub struct Table {
    stacks: Box<[Stack]>,
}

// SAFETY: the table holds code addresses of loaded modules, which stay
// mapped for the life of the process and are only called, never written.
unsafe impl Send for Table {}
// SAFETY: as above; the table is immutable once built.
unsafe impl Sync for Table {}

impl Table {
    /// Builds the stacks from `(routine id, wrapper address)` lists, one per
    /// module in chain order; module `i` (0-based) gets level `i + 1`.
    pub fn build(modules: &[Vec<(usize, *const ())>]) -> Table {
        let mut hops: Vec<Vec<Hop>> = vec![Vec::new(); ROUTINE_COUNT];
        for (i, wraps) in modules.iter().enumerate() {
            let level = u32::try_from(i + 1).expect("fewer than 2^32 modules");
            for &(id, func) in wraps {
                hops[id].push(Hop { func, level });
            }
        }
        let levels = modules.len() + 1;
        let stacks = hops
            .into_iter()
            .map(|hops| {
                if hops.is_empty() {
                    return Stack::default();
                }
                let first_below = (0..levels as u32)
                    .map(|l| hops.partition_point(|h| h.level <= l) as u32)
                    .collect();
                Stack {
                    hops: hops.into_boxed_slice(),
                    first_below,
                }
            })
            .collect();
        Table { stacks }
    }

    /// The next layer of routine `id` below level `from`, or `None` for the
    /// native routine.
    #[inline(always)]
    pub fn next(&self, id: usize, from: u32) -> Option<Hop> {
        let stack = &self.stacks[id];
        let index = *stack.first_below.get(from as usize)?;
        stack.hops.get(index as usize).copied()
    }

    /// How many modules wrap routine `id`.
    pub fn depth(&self, id: usize) -> usize {
        self.stacks[id].hops.len()
    }
}

/// Makes `table` the live one and sets the bit vector to match. The table
/// is leaked on purpose (see the module doc).
pub fn publish(table: Table) {
    let wrapped: Vec<bool> = (0..ROUTINE_COUNT).map(|id| table.depth(id) > 0).collect();
    TABLE.store(Box::into_raw(Box::new(table)), Ordering::Release);
    for (w, word) in WRAPPED.iter().enumerate() {
        let bits = (0..64)
            .filter(|b| wrapped.get(w * 64 + b).copied().unwrap_or(false))
            .fold(0u64, |acc, b| acc | (1 << b));
        word.store(bits, Ordering::Release);
    }
}

/// The next layer of routine `id` below level `from` in the live table.
#[inline(always)]
pub fn next(id: usize, from: u32) -> Option<Hop> {
    let table = TABLE.load(Ordering::Acquire);
    // SAFETY: a non-null TABLE points to a leaked, never-freed Table.
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
        let t = Table::build(&[vec![(0, f(10))], vec![(1, f(20))], vec![(0, f(30))]]);
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
    fn empty_table_sends_everything_native() {
        let t = Table::build(&[]);
        assert_eq!(t.next(0, 0), None);
    }
}
