//! Call sites of the application's calls, found as the profiler finds
//! them (`pnmpi_sdk::callsite`): a wrapper reads its stack pointer on
//! entry ([`Here::new`]); the site is located only when it is needed (a
//! report, or an object whose creation a leak report will name).

use parking_lot::Mutex;
use pnmpi_mpi_sys::{ROUTINE_COUNT, ROUTINE_NAMES};
use pnmpi_sdk::callsite::{self, Resolver, Routes, Table};

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
    /// Noted by `threads::enter`: a call under `MPI_THREAD_SERIALIZED` or
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
        if !crate::threads::untracked() {
            here.tracked = crate::threads::enter(&here);
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
        let mut guard = SITES_.lock();
        let sites = guard.get_or_insert_with(|| Sites {
            table: Table::new(SITES),
            routes: (0..ROUTINE_COUNT).map(|_| Routes::default()).collect(),
            resolver: Resolver::default(),
        });
        match sites
            .table
            .locate(&sites.routes[self.routine], self.routine, self.sp)
        {
            Some(slot) => sites.table.ra(slot),
            None => 0,
        }
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
