//! Call sites of the application's calls, found as the profiler finds
//! them (`pnmpi_sdk::callsite`): a wrapper reads its stack pointer on
//! entry ([`Here::new`]); the site is located only when it is needed (a
//! report, or an object whose creation a leak report will name).

use crate::origin::Origin;
use crate::report::{self, Class};
use crate::threads::{self, CallInProgress, Entry};
use parking_lot::Mutex;
use pnmpi_mpi_sys::{ROUTINE_COUNT, ROUTINE_NAMES};
use pnmpi_sdk::callsite::{self, Resolver, Routes, Table};
use std::cell::Cell;

/// Slots of the process's call-site table.
const SITES: usize = 4096;

/// The table and the routes learned per routine, shared by the threads
/// under one lock (a checked call is not a hot path).
struct Sites {
    table: Table<()>,
    routes: Vec<Routes>,
    resolver: Resolver,
}

static SITES_: Mutex<Option<Sites>> = Mutex::new(None);

/// A call in progress: its routine and its wrapper's stack pointer; at
/// its end (the wrapper's), a call that `threads` noted is forgotten.
pub struct Here {
    pub routine: usize,
    sp: usize,
    /// Noted by `threads::note`: a call under `MPI_THREAD_SERIALIZED` or
    /// `_MULTIPLE`, or of another thread than the one that initialized MPI.
    tracked: bool,
}

impl Here {
    /// The call of `routine` whose wrapper is running; inlined, so that the
    /// stack pointer is the wrapper's.
    #[inline(always)]
    pub fn new(routine: usize) -> Here {
        let mut here = Here {
            routine,
            sp: callsite::stack_pointer(),
            tracked: false,
        };
        CURRENT.set((routine, here.sp, 0));
        if !crate::threads::untracked() {
            here.tracked = enter(&here);
        }
        here
    }

    /// Whether `threads` noted the call (its rules on objects apply).
    #[inline]
    pub fn tracked(&self) -> bool {
        self.tracked
    }

    /// The routine's name.
    pub fn call(&self) -> &'static str {
        ROUTINE_NAMES[self.routine]
    }

    /// The site's return address, 0 if it cannot be placed. Call it while
    /// the wrapper runs.
    pub fn ra(&self) -> usize {
        match CURRENT.get() {
            (_, sp, ra) if sp == self.sp && ra != 0 => ra,
            _ => ra_of(self.routine, self.sp),
        }
    }

    /// The application's stack pointer at the call, and the lowest
    /// address of this thread's stack: a local variable below the first
    /// belongs to a function that has returned. Found by scanning the
    /// stack up from the wrapper's frame for the slot that holds the
    /// site's return address; `None` if it is not found. Call it while
    /// the wrapper runs.
    pub fn caller_stack(&self) -> Option<(usize, usize)> {
        let ra = self.ra();
        let (low, high) = stack_bounds()?;
        if ra == 0 || self.sp < low || self.sp >= high {
            return None;
        }
        let end = high.min(self.sp.saturating_add(1 << 16));
        (self.sp..end.saturating_sub(8))
            .step_by(8)
            // SAFETY: inside this thread's stack mapping, at or above the
            // wrapper's own stack pointer: live, readable memory.
            .find(|&slot| unsafe { std::ptr::read(slot as *const usize) } == ra)
            .map(|slot| (slot + 8, low))
    }

    /// The site as `file:line (function)`. Call it while the wrapper runs.
    pub fn site(&self) -> String {
        name(self.ra())
    }
}

impl Drop for Here {
    #[inline]
    fn drop(&mut self) {
        if self.tracked {
            crate::threads::leave();
        }
    }
}

thread_local! {
    /// The routine, wrapper's stack pointer and site's return address (0
    /// until asked for) of this thread's call in progress (its latest
    /// [`Here`]), for checks made below the wrapper that name the call's
    /// site (`buftype`): a call with two buffers locates its site once.
    static CURRENT: Cell<(usize, usize, usize)> = const { Cell::new((0, 0, 0)) };
}

/// This thread's call in progress: its routine, its wrapper's stack
/// pointer and its site's return address (0 if it cannot be placed),
/// `None` outside a wrapper.
pub fn current() -> Option<(usize, usize, usize)> {
    // One lookup of the thread-local's address for its read and write.
    CURRENT.with(|current| {
        let (routine, sp, ra) = current.get();
        if sp == 0 || sp < callsite::stack_pointer() {
            return None;
        }
        if ra == 0 {
            current.set((routine, sp, ra_of(routine, sp)));
        }
        Some(current.get())
    })
}

/// The return address of the site of a call of `routine` whose wrapper's
/// stack pointer is `sp`, 0 if it cannot be placed. Call it while that
/// wrapper runs.
fn ra_of(routine: usize, sp: usize) -> usize {
    let mut guard = SITES_.lock();
    let sites = guard.get_or_insert_with(|| Sites {
        table: Table::new(SITES),
        routes: (0..ROUTINE_COUNT).map(|_| Routes::default()).collect(),
        resolver: Resolver::default(),
    });
    match sites.table.locate(&sites.routes[routine], routine, sp) {
        Some(slot) => sites.table.ra(slot),
        None => 0,
    }
}

/// Names the site whose return address is `ra` (0: unknown).
pub fn name(ra: usize) -> String {
    if ra == 0 {
        return "an unknown site".into();
    }
    let mut guard = SITES_.lock();
    match guard.as_mut() {
        Some(sites) => sites.resolver.resolve(ra).to_string(),
        None => callsite::resolve(ra).to_string(),
    }
}

/// `thread T is inside MPI_X at SITE`, for reports that name another
/// thread's call.
pub fn inside(c: &CallInProgress) -> String {
    format!(
        "thread {} is inside {} at {}",
        c.thread,
        ROUTINE_NAMES[c.routine],
        name(c.ra)
    )
}

/// At the entry of a call that `threads::untracked` did not let through:
/// notes it ([`threads::note`]) and reports a call above the granted
/// level: another thread than 0 under `MPI_THREAD_SINGLE` or `_FUNNELED`
/// (once per thread), a second thread inside MPI under `_SERIALIZED`.
/// Returns whether the call was noted (then `threads::leave` at its end).
#[cold]
fn enter(here: &Here) -> bool {
    match threads::note(here.routine, here.ra()) {
        Entry::Unnoted(above) => {
            if let Some((thread, level)) = above {
                let only = if threads::is_single(level) {
                    "only one thread may call MPI"
                } else {
                    "only the thread that initialized MPI (thread 0) may call MPI"
                };
                report::report(
                    Class::Thread,
                    "above-level",
                    here.call(),
                    &here.site(),
                    format!(
                        "thread {thread} calls {} under {}, which MPI granted: {only}",
                        here.call(),
                        threads::level_name(level)
                    ),
                );
            }
            false
        }
        Entry::Noted(thread, other) => {
            if let Some(other) = other {
                report::report(
                    Class::Thread,
                    "above-level",
                    here.call(),
                    &here.site(),
                    format!(
                        "thread {thread} calls {} while {}, under MPI_THREAD_SERIALIZED, which MPI granted: one thread at a time may call MPI",
                        here.call(),
                        inside(&other)
                    ),
                );
            }
            true
        }
    }
}

/// This thread's stack: `[low, high)`.
fn stack_bounds() -> Option<(usize, usize)> {
    // SAFETY: pthread_attr_t is plain data that pthread_getattr_np fills;
    // the attribute is destroyed once read.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return None;
        }
        let (mut addr, mut size): (*mut libc::c_void, libc::size_t) = (std::ptr::null_mut(), 0);
        let rc = libc::pthread_attr_getstack(&attr, &mut addr, &mut size);
        libc::pthread_attr_destroy(&mut attr);
        (rc == 0).then(|| (addr as usize, addr as usize + size))
    }
}

/// `routine at site`, for reports that name another call.
pub fn named(origin: Origin) -> String {
    format!("{} at {}", ROUTINE_NAMES[origin.routine], name(origin.ra))
}
