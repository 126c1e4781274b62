//! One virtual clock per thread that calls MPI.
//!
//! Each thread's clock moves by its own CPU time between its MPI calls
//! and by its own calls' charges, so threads compute and communicate at
//! once in virtual time, as on the target machine. The threads are
//! numbered as every module numbers them ([`pnmpi_sdk::threads`]: 0 for
//! the thread that initialized MPI, then in creation order).
//!
//! A program's threads are not seen being created or joined, so the
//! model is fork-join at the thread that initialized MPI (its *main*
//! thread): another thread's clock starts, at its first MPI call, at the
//! main thread's clock as of the main thread's latest MPI call, plus the
//! CPU time the new thread used since it started; when a thread ends
//! (a thread-local destructor of [`crate::state`]) its end, its clock plus the CPU time
//! after its last call, is joined by the main thread at its next MPI
//! call, which starts no earlier. That is a `pthread_create` and
//! `pthread_join` of the main thread, or an OpenMP parallel region, with
//! an MPI call of the main thread (an `MPI_Wtime`) between two regions
//! that are to follow one another in virtual time. Both rules depend
//! only on the program's order, never on how its threads happened to
//! run in real time.
//!
//! The calling thread's clock lives in a thread-local between calls and
//! in [`crate::state::State`] while the thread holds the state
//! ([`crate::state::with`] swaps it in and out), so the model's code
//! reads "the clock" as the calling thread's.

use pnmpi_sim::units::Ns;
use std::cell::Cell;
use std::collections::BTreeMap;

/// Not numbered yet: the thread has not called MPI under the module.
const NEW: u32 = u32::MAX;

/// A thread's clock between its calls.
#[derive(Clone, Copy)]
pub struct Clock {
    /// Its number ([`pnmpi_sdk::threads`]), or [`NEW`].
    pub number: u32,
    /// Its virtual clock, ns since the end of `MPI_Init`.
    pub clock: Ns,
    /// Virtual time at its current call's entry.
    pub call_start: Ns,
    /// The latest partner post among what its current call completed.
    pub call_late: Ns,
    /// Its CPU clock when it last left an MPI call; 0 (the thread's
    /// start) before its first call, so its time before that is its own.
    pub last_exit: u64,
}

impl Clock {
    /// Whether the thread has a number (and so a clock of the rank).
    pub fn known(&self) -> bool {
        self.number != NEW
    }
}

thread_local! {
    static MINE: Cell<Clock> = const {
        Cell::new(Clock {
            number: NEW,
            clock: 0.0,
            call_start: 0.0,
            call_late: f64::NEG_INFINITY,
            last_exit: 0,
        })
    };
}

/// The calling thread's clock.
pub fn mine() -> Clock {
    MINE.with(Cell::get)
}

/// Sets the calling thread's clock.
pub fn set(clock: Clock) {
    MINE.with(|c| c.set(clock));
}

/// The rank's threads.
pub struct Threads {
    /// Each thread's clock as it last left the state (its end, once it
    /// ended), by number.
    pub ends: BTreeMap<u32, Ns>,
    /// The number of the thread that initialized MPI.
    pub main: u32,
    /// The latest end of the threads that ended, which the main thread
    /// joins at its next call.
    pub joined: Ns,
    /// Threads that called MPI under the module and have not ended.
    pub live: u32,
}

impl Threads {
    /// The threads at the end of `MPI_Init`: the calling thread is the
    /// main one, at 0, its CPU clock restarting `now`.
    pub fn start(now: u64) -> Threads {
        let main = pnmpi_sdk::threads::current();
        set(Clock {
            number: main,
            clock: 0.0,
            call_start: 0.0,
            call_late: f64::NEG_INFINITY,
            last_exit: now,
        });
        Threads {
            ends: BTreeMap::from([(main, 0.0)]),
            main,
            joined: 0.0,
            live: 1,
        }
    }

    /// A thread's first call: numbered, its clock starting at the main
    /// thread's as of that thread's latest call, and its CPU time since
    /// it started still to charge.
    pub fn newcomer(&mut self, last_exit: u64) -> Clock {
        let number = pnmpi_sdk::threads::current();
        let clock = self.ends.get(&self.main).copied().unwrap_or(0.0);
        self.live += 1;
        Clock {
            number,
            clock,
            call_start: clock,
            call_late: f64::NEG_INFINITY,
            last_exit,
        }
    }

    /// The rank's end: its latest thread's.
    pub fn end(&self) -> Ns {
        self.ends.values().copied().fold(0.0, f64::max)
    }
}
