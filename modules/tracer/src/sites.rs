//! Call sites: each traced call's return address into the application,
//! found as the profiler finds it ([`pnmpi_sdk::callsite`]: one or two
//! stack loads once a site's route is learned, past libpnmpi, modules
//! and the MPI's Fortran bindings), interned once per rank as a small
//! id that the event carries.
//!
//! A thread finds a call's slot in its own table ([`Sites`]); a slot
//! holds the site's id once it has one, so that a call from a known site
//! costs a load. A new site (its first call from this thread) takes the
//! rank-wide lock once to get its id: one id per distinct return address
//! on the rank, whichever thread met it first. Sites are named (function,
//! file, line) only when the trace is written out ([`resolve_all`]), from
//! the objects' debug information: never on the path of a call.

use pnmpi_mpi_sys::ROUTINE_COUNT;
use pnmpi_sdk::callsite::{Counter, Resolver, Routes, Table};
use pnmpi_trace::sites::Site;
use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

/// Slots of a thread's call-site table (as the profiler's).
const SLOTS: usize = 4096;

/// The rank's sites: return addresses by id, and ids by address.
#[derive(Default)]
struct Interned {
    ras: Vec<usize>,
    ids: HashMap<usize, u32>,
}

static INTERNED: LazyLock<Mutex<Interned>> = LazyLock::new(Mutex::default);

/// One thread's call sites: the table of (routine, return address) slots,
/// each holding its site's id + 1 once given (0 before), and the routes
/// learned per routine.
pub struct Sites {
    table: Table<Counter>,
    routes: Box<[Routes]>,
}

impl Sites {
    /// An empty table (allocated once per thread, never on a call's path).
    pub fn new() -> Box<Sites> {
        Box::new(Sites {
            table: Table::new(SLOTS),
            routes: (0..ROUTINE_COUNT).map(|_| Routes::default()).collect(),
        })
    }

    /// The site id of the call of `routine` whose wrapper's stack pointer
    /// is `sp`; None if it could not be placed (a full table, a stack the
    /// walk could not follow). Call it while that wrapper runs.
    #[inline(always)]
    pub fn locate(&self, routine: u32, sp: usize) -> Option<u32> {
        let routine = routine as usize;
        let slot = self.table.locate(self.routes.get(routine)?, routine, sp)?;
        match self.table.stats(slot).get() {
            0 => Some(self.first_sight(slot)),
            id => Some(id as u32 - 1),
        }
    }

    /// The id of the site in `slot`, seen by this thread for the first time.
    #[cold]
    #[inline(never)]
    fn first_sight(&self, slot: usize) -> u32 {
        let ra = self.table.ra(slot);
        let mut sites = INTERNED.lock().unwrap_or_else(|e| e.into_inner());
        let next = sites.ras.len() as u32;
        let id = *sites.ids.entry(ra).or_insert(next);
        if id == next {
            sites.ras.push(ra);
        }
        self.table.stats(slot).set(u64::from(id) + 1);
        id
    }
}

/// Every site of the rank, named from the loaded objects' debug
/// information: for the rank file's `SITES` chunk, written at the end.
pub fn resolve_all() -> Vec<(u32, Site)> {
    let ras = std::mem::take(&mut INTERNED.lock().unwrap_or_else(|e| e.into_inner()).ras);
    let mut resolver = Resolver::default();
    ras.into_iter()
        .enumerate()
        .map(|(id, ra)| {
            let l = resolver.resolve(ra);
            let site = Site {
                function: l.function,
                file: l.file,
                line: l.line,
                object: l.object,
                offset: l.offset,
            };
            (id as u32, site)
        })
        .collect()
}
