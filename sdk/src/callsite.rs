//! Call sites: the application's return address of each MPI call, as
//! mpiP records it, found in a few loads on the hot path, kept in a
//! preallocated table and resolved to function, file and line only when
//! a report is written ([`resolve`]). The profiler counts its statistics
//! per site with it; the checker names the site of each error.
//!
//! Use: in a wrapper, read [`stack_pointer`] (inlined, so it is the
//! wrapper's), then [`Table::locate`] with the routine's [`Routes`] while
//! the wrapper runs; the slot's [`Table::ra`] is the site, and
//! [`resolve`] names it later. A `Table` and its `Routes` belong to one
//! thread at a time (their counters are single-writer).
//!
//! A wrapper's own return address is the call site when the application
//! calls it directly (first in the chain under direct binding). Otherwise
//! libpnmpi's entry point and dispatcher, the MPI's Fortran bindings (for
//! a Fortran application), or the modules above it, sit between. The
//! slow path walks the stack with the `backtrace` crate: past the calling
//! module's frames (this crate is linked into each module, so "this
//! object" is that module), past libpnmpi's and the Fortran bindings',
//! past any module that forwards the same routine (a frame inside that
//! module's exported `MPI_X`), to the first other frame.
//!
//! Unwinding costs microseconds, so the walk also *learns the route*: the
//! offset from the wrapper's stack pointer to its own return address, and
//! then either that the return address is the site (direct), or, keyed by
//! that return address (an instruction of libpnmpi or of a module above),
//! the offset to the slot that held the site's return address. Frames have
//! fixed sizes, so on the next call the site is one or two stack loads
//! away, whatever the depth of the application's stack. A site read that
//! way is trusted only if it is already in the table, i.e. a walk has
//! classified it before; anything else walks again.

mod elf;
mod resolve;
mod walk;

pub use crate::counter::Counter;
use crate::zeroed::{Slab, Zeroable};
pub use elf::{loaded_bases, object_base};
pub use resolve::{object_of, resolve, Location, Resolver};
use walk::{walk, Route};

/// Linear probes before a table counts a site as dropped.
const MAX_PROBES: usize = 16;

/// The stack pointer of the calling function (inlined into it).
#[inline(always)]
pub fn stack_pointer() -> usize {
    let sp: usize;
    #[cfg(target_arch = "x86_64")]
    // SAFETY: copies a register; touches no memory.
    unsafe {
        core::arch::asm!("mov {}, rsp", out(reg) sp, options(nomem, nostack, preserves_flags));
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let anchor = 0u8;
        sp = std::hint::black_box(&anchor) as *const u8 as usize;
    }
    sp
}

/// Reads a word of this thread's stack, above the caller's frame.
///
/// # Safety
/// `addr` must be a mapped, 8-byte aligned address of the calling thread's
/// stack.
#[inline(always)]
unsafe fn read_stack(addr: usize) -> usize {
    // SAFETY: the caller guarantees a readable stack word; a volatile read
    // through an integer address keeps the compiler from reasoning about
    // which Rust object it belongs to.
    unsafe { std::ptr::read_volatile(addr as *const usize) }
}

/// One learned route into a wrapper: its return address into libpnmpi and
/// where the call site's return address then lies.
#[derive(Default)]
struct Way {
    /// The wrapper's return address; 0: not learned.
    ra: Counter,
    /// Offset from the wrapper's stack pointer to the call site's return address.
    site: Counter,
}

/// The routes learned for one routine's wrapper (two, so that a routine
/// reached both from the application and from a module above does not
/// thrash).
#[derive(Default)]
pub struct Routes {
    /// Offset from the wrapper's stack pointer to its own return address; 0: none yet.
    own: Counter,
    /// 1 once a walk found the wrapper's own return address to be the call
    /// site (first in the chain under direct binding: the application
    /// calls the wrapper itself).
    direct: Counter,
    ways: [Way; 2],
    /// Which way the next route replaces.
    next: Counter,
    /// The last site of this routine and its slot in the table: a loop
    /// calls from the same site again and again, and this skips the hash.
    last: Counter,
    last_slot: Counter,
}

impl Routes {
    /// The wrapper's own return address, read where a walk found it; None
    /// before a walk learned that offset. Call it while the wrapper whose
    /// stack pointer is `sp` runs.
    #[inline(always)]
    pub fn return_address(&self, sp: usize) -> Option<usize> {
        let own = self.own.get() as usize;
        if own == 0 {
            return None;
        }
        // SAFETY: `own` was measured by unwinding this routine's wrapper,
        // whose frame has the same size on every call: sp + own is the
        // wrapper's own return-address slot, in this thread's live stack.
        Some(unsafe { read_stack(sp + own) })
    }

    /// The call site's return address, read through a learned route when
    /// the wrapper whose stack pointer is `sp` returns to `ra` (its
    /// [`Routes::return_address`]); None if no route comes that way. Not
    /// yet checked: only a site a walk placed in a [`Table`] counts.
    #[inline(always)]
    pub fn site(&self, sp: usize, ra: usize) -> Option<usize> {
        match self.ways.iter().find(|w| w.ra.get() as usize == ra) {
            // SAFETY: the call came back through the same instruction (of
            // libpnmpi or of a module above) as when the route was learned,
            // so the same fixed-size frames lie above, and sp + site is the
            // slot that held the call site's return address.
            Some(way) => Some(unsafe { read_stack(sp + way.site.get() as usize) }),
            // Called straight from the site: the return address is it.
            None if self.direct.get() != 0 => Some(ra),
            None => None,
        }
    }

    fn learn(&self, route: Route) {
        self.own.set(route.own as u64);
        if route.direct {
            self.direct.set(1);
            return;
        }
        if let Some(way) = self.ways.iter().find(|w| w.ra.get() == route.ra as u64) {
            way.site.set(route.site as u64);
            return;
        }
        let way = &self.ways[(self.next.get() & 1) as usize];
        way.ra.set(route.ra as u64);
        way.site.set(route.site as u64);
        self.next.add(1);
    }
}

/// One slot of a table: a (routine, return address) pair and what the
/// module keeps about the calls made from there.
#[derive(Default)]
pub struct Site<T> {
    /// The call site's return address; 0: free slot.
    ra: Counter,
    routine: Counter,
    /// The module's record of the calls made from here.
    pub stats: T,
}

/// A thread's call sites: open addressing, preallocated, never resized
/// (no allocation on the hot path). A call placed at a site is counted
/// there only; its routine's statistics are the sum of its sites'.
pub struct Table<T> {
    slots: Slab<Site<T>>,
    /// Calls whose site found no slot, or that no walk could place (their
    /// routine counts them instead).
    pub dropped: Counter,
}

impl<T: Zeroable> Table<T> {
    /// [`Table::new`] for statistics whose default is all-zero bytes: the
    /// slots in zeroed pages, never cleared by hand.
    pub fn zeroed(capacity: usize) -> Table<T> {
        debug_assert!(capacity.is_power_of_two());
        Table {
            slots: Slab::zeroed(capacity),
            dropped: Counter::default(),
        }
    }
}

// SAFETY: every field of `Routes` (and of its `Way`s) is a `Counter`,
// whose zero bytes are its default 0: routes not learned yet; no Drop.
unsafe impl Zeroable for Routes {}

// SAFETY: a site of zero bytes is a free slot (`ra` 0) with default
// statistics, `Site::default()`; its fields need no Drop.
unsafe impl<T: Zeroable> Zeroable for Site<T> {}

impl<T: Default> Table<T> {
    /// A table of `capacity` slots (a power of two).
    pub fn new(capacity: usize) -> Table<T> {
        debug_assert!(capacity.is_power_of_two());
        Table {
            slots: Slab::new(capacity),
            dropped: Counter::default(),
        }
    }

    /// The sites in use: (routine id, return address, stats).
    pub fn sites(&self) -> impl Iterator<Item = (usize, usize, &T)> {
        self.slots
            .iter()
            .filter(|s| s.ra.get() != 0)
            .map(|s| (s.routine.get() as usize, s.ra.get() as usize, &s.stats))
    }

    /// The slots where (routine, ra) may be, in probing order.
    #[inline(always)]
    fn probe(&self, routine: usize, ra: usize) -> impl Iterator<Item = usize> {
        let mask = self.slots.len() - 1;
        let hash = ((ra as u64) ^ ((routine as u64) << 47)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let start = (hash >> 40) as usize;
        (0..MAX_PROBES.min(self.slots.len())).map(move |i| (start + i) & mask)
    }

    /// The slot of (routine, ra), if a walk has put it in the table.
    #[inline(always)]
    fn find(&self, routine: usize, ra: usize) -> Option<usize> {
        self.lookup::<false>(routine, ra)
    }

    fn find_or_insert(&self, routine: usize, ra: usize) -> Option<usize> {
        self.lookup::<true>(routine, ra)
    }

    /// Probes for (routine, ra); at the first free slot, claims it when
    /// `INSERT`, else stops. None when the probes run out.
    #[inline(always)]
    fn lookup<const INSERT: bool>(&self, routine: usize, ra: usize) -> Option<usize> {
        for i in self.probe(routine, ra) {
            let slot = &self.slots[i];
            let key = slot.ra.get() as usize;
            if key == ra && slot.routine.get() as usize == routine {
                return Some(i);
            }
            if key == 0 {
                if !INSERT {
                    return None;
                }
                slot.routine.set(routine as u64);
                slot.ra.set(ra as u64);
                return Some(i);
            }
        }
        None
    }

    /// Remembers slot `i`, of site `ra`, as the routine's last site.
    #[inline(always)]
    fn hit(&self, routes: &Routes, i: usize, ra: usize) -> usize {
        routes.last.set(ra as u64);
        routes.last_slot.set(i as u64);
        i
    }

    /// The record of slot `i` (from [`Table::locate`]).
    #[inline(always)]
    pub fn stats(&self, i: usize) -> &T {
        &self.slots[i].stats
    }

    /// The call site's return address in slot `i` (from
    /// [`Table::locate`]), for [`resolve`].
    #[inline(always)]
    pub fn ra(&self, i: usize) -> usize {
        self.slots[i].ra.get() as usize
    }

    /// The slot of the site of the call of `routine` whose wrapper read
    /// `sp` as its stack pointer; None if it could not be placed. Call it
    /// while that wrapper runs: it reads the wrapper's stack.
    #[inline(always)]
    pub fn locate(&self, routes: &Routes, routine: usize, sp: usize) -> Option<usize> {
        let site = routes.return_address(sp).and_then(|ra| routes.site(sp, ra));
        // A site read this way counts only if a walk placed it before.
        if let Some(site) = site {
            if site as u64 == routes.last.get() {
                return Some(routes.last_slot.get() as usize);
            }
            if let Some(i) = self.find(routine, site) {
                return Some(self.hit(routes, i, site));
            }
        }
        self.locate_slow(routes, routine, sp)
    }

    /// Walks the stack to find the site and learns the route.
    #[cold]
    #[inline(never)]
    fn locate_slow(&self, routes: &Routes, routine: usize, sp: usize) -> Option<usize> {
        let walk = walk(sp, routine);
        if let Some(route) = walk.route {
            routes.learn(route);
        }
        match walk
            .site
            .and_then(|ra| Some((ra, self.find_or_insert(routine, ra)?)))
        {
            Some((ra, i)) => Some(self.hit(routes, i, ra)),
            None => {
                self.dropped.add(1);
                None
            }
        }
    }
}
