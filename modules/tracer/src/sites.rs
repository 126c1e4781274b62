//! Call sites: each traced call's return address into the application,
//! found as the profiler finds it ([`pnmpi_sdk::callsite`]: one or two
//! stack loads once a site's route is learned, past libpnmpi, modules
//! and the MPI's Fortran bindings), interned once per rank as a small
//! id that the event carries.
//!
//! A thread finds a call's site in its own records ([`Sites`]): each
//! routine remembers the last two sites it was called from and their ids,
//! encoded, so that a call from the same site again (a loop, or a loop
//! over two places) costs a few loads and compares: the wrapper's return
//! address read where a walk found it, and if that is not the last site
//! itself (the application called the wrapper, or jumped to it through
//! libpnmpi), the site read through the route the walk learned. Any other
//! call looks its site up in the thread's table, whose slot holds the
//! site's id once it has one. A new site (its first call from this
//! thread) takes the rank-wide lock once to get its id: one id per
//! distinct return address on the rank, whichever thread met it first.
//! Sites are named (function, file, line) only when the trace is written
//! out ([`resolve_all`]), from the objects' debug information: never on
//! the path of a call.

use pnmpi_mpi_sys::ROUTINE_COUNT;
use pnmpi_sdk::callsite::{Resolver, Routes, Table};
use pnmpi_sdk::zeroed::{Zeroable, Zeroed};
use pnmpi_trace::rank::SiteCode;
use pnmpi_trace::sites::Site;
use std::cell::Cell;
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

/// One routine's routes into its wrapper and the last two sites it was
/// called from (the thread's own: cells).
#[derive(Default)]
struct Routine {
    routes: Routes,
    /// The last two sites' return addresses (0: none yet), the latest
    /// first, and their ids, encoded. Two: a loop that calls a routine
    /// from two places (there and back) finds both.
    last: [Cell<usize>; 2],
    code: [Cell<SiteCode>; 2],
}

impl Routine {
    /// The code of the site before the last. Out of line: inlined, its
    /// load merged with the last's into one indexed load on every call's
    /// path.
    #[inline(never)]
    fn before(&self) -> SiteCode {
        self.code[1].get()
    }
}

/// One thread's call sites: per routine, its routes and last sites; and
/// the table of (routine, return address) slots, each holding its site's
/// id, encoded, once given ([`SiteCode::NONE`] before).
pub struct Sites {
    routines: Zeroed<[Routine; ROUTINE_COUNT]>,
    table: Table<Cell<SiteCode>>,
}

// SAFETY: a routine of zero bytes is its default: routes not learned
// (`Routes` is zeroable), no last sites (0) and their codes
// `SiteCode::NONE` (zero words); no Drop.
unsafe impl Zeroable for Routine {}

impl Sites {
    /// No sites yet (allocated once per thread, in zeroed pages, never
    /// on a call's path).
    pub fn new() -> Sites {
        Sites {
            routines: Zeroed::new(),
            table: Table::zeroed(SLOTS),
        }
    }

    /// The site of the call of `routine` whose wrapper's stack pointer is
    /// `sp`, encoded; none if it could not be placed (a full table, a
    /// stack the walk could not follow). Call it while that wrapper runs.
    #[inline(always)]
    pub fn locate(&self, routine: u32, sp: usize) -> SiteCode {
        let Some(r) = self.routines.get(routine as usize) else {
            return SiteCode::NONE;
        };
        if let Some(ra) = r.routes.return_address(sp) {
            // The last sites are ones a walk placed: a site read equal to
            // one is it (never 0: a route reads a return address).
            let (last, before) = (r.last[0].get(), r.last[1].get());
            if ra == last {
                return r.code[0].get();
            }
            if ra == before {
                return r.before();
            }
            if let Some(site) = r.routes.site(sp, ra) {
                if site == last {
                    return r.code[0].get();
                }
                if site == before {
                    return r.before();
                }
            }
        }
        self.locate_slow(routine as usize, sp)
    }

    /// [`Sites::locate`] for a call from another site than its routine's
    /// last two: through the table (or a walk), and remembered as the
    /// latest.
    #[cold]
    #[inline(never)]
    fn locate_slow(&self, routine: usize, sp: usize) -> SiteCode {
        let r = &self.routines[routine];
        let Some(slot) = self.table.locate(&r.routes, routine, sp) else {
            return SiteCode::NONE;
        };
        let mut code = self.table.stats(slot).get();
        if code == SiteCode::NONE {
            code = SiteCode::new(Some(self.intern(self.table.ra(slot))));
            self.table.stats(slot).set(code);
        }
        r.last[1].set(r.last[0].get());
        r.code[1].set(r.code[0].get());
        r.last[0].set(self.table.ra(slot));
        r.code[0].set(code);
        code
    }

    /// The rank's id of the site `ra`, seen by this thread for the first
    /// time.
    fn intern(&self, ra: usize) -> u32 {
        let mut sites = INTERNED.lock().unwrap_or_else(|e| e.into_inner());
        let next = sites.ras.len() as u32;
        let id = *sites.ids.entry(ra).or_insert(next);
        if id == next {
            sites.ras.push(ra);
        }
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
