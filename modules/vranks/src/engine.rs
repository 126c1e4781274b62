//! The discrete-event engine: every virtual rank is a stackful context
//! (corosensei), and the scheduler resumes, one at a time, the one whose
//! event has the least virtual time. Events are a rank becoming runnable
//! at a time, and a message arriving at its receiver ([`crate::p2p`]).
//! Contexts switch only inside MPI calls, so nothing needs a lock: the
//! engine is one object, reached from the running rank's MPI call or from
//! the scheduler, never from both at once, and never held across a
//! switch (`with` borrows it for one step).

use crate::globals::Globals;
use crate::stack::{Pool, VStack};
use corosensei::{Coroutine, CoroutineResult, Yielder};
use pnmpi_sim::live::Totals;
use pnmpi_sim::machine::Machine;
use pnmpi_sim::model::Model;
use pnmpi_sim::units::Ns;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ffi::{c_char, c_int};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};

/// The application's `main`.
pub type MainFn = unsafe extern "C" fn(c_int, *mut *mut c_char, *mut *mut c_char) -> c_int;

/// A rank's context.
type Context = Coroutine<(), (), c_int, VStack>;

/// What a rank is doing.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Phase {
    /// Not started yet.
    New,
    /// Running or runnable.
    Active,
    /// Blocked in a call until its requests complete.
    Blocked,
    /// `main` returned or the rank called `exit`.
    Done,
}

/// One virtual rank.
pub struct Rank {
    /// Virtual clock, ns since the rank's `MPI_Init`.
    pub clock: Ns,
    /// Thread CPU time when the rank last left an MPI call.
    pub cpu_mark: u64,
    pub phase: Phase,
    /// Requests still to complete before a blocked rank resumes.
    pub need: u32,
    /// Its clock at `MPI_Finalize` (the report's run time).
    pub end: Option<Ns>,
    pub initialized: bool,
    pub finalized: bool,
    /// The thread level `MPI_Init_thread` provided (`MPI_Query_thread`).
    pub thread_level: c_int,
    /// `main`'s return value or `exit`'s status.
    pub status: c_int,
    pub stats: Totals,
    /// Its context's yielder, once it started.
    yielder: usize,
    /// The lowest address of its stack, once it started.
    stack_limit: usize,
    /// Its clock when it last polled and found nothing ([`idle`]).
    idled_at: Ns,
    /// The MPI routine it is in or last called, for a deadlock report.
    pub routine: &'static str,
}

/// An event: rank `Resume` at a time, or message `Arrive`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Event {
    Resume(u32),
    Arrive(u32),
}

/// The whole simulation of this process's ranks.
pub struct Engine {
    pub n: u32,
    pub ranks: Vec<Rank>,
    contexts: Vec<Option<Context>>,
    heap: BinaryHeap<Reverse<(u64, u64, Event)>>,
    seq: u64,
    /// The time of the event being processed.
    pub now: Ns,
    pub current: u32,
    pub model: Box<dyn Model>,
    /// The model's name, to build it again for an algorithmic collective.
    pub model_name: String,
    pub machine: Machine,
    pub node_of: Vec<u32>,
    pub cpu_factor: f64,
    /// CPU time two clock reads add to the interval between them.
    pub cpu_bias: u64,
    pub globals: Globals,
    pub pool: Pool,
    main: MainFn,
    argc: c_int,
    argv: *mut *mut c_char,
    envp: *mut *mut c_char,
    pub p2p: crate::p2p::State,
    pub comms: crate::comm::Registry,
    pub colls: crate::coll::State,
    /// Events processed and context switches made.
    pub events: u64,
    pub switches: u64,
    /// The model's lookahead: a rendezvous envelope arrives this long
    /// after its send is posted.
    pub lookahead: Ns,
    /// The other processes, when the ranks are spread over several.
    pub dist: Option<crate::dist::Dist>,
    /// The trace being written, when the configuration loads the tracer.
    pub trace: Option<crate::trace::Trace>,
}

/// How far a rank that polls in vain moves on when every other event at
/// its time is another rank polling: the cost of a failed `MPI_Test` on
/// a real machine, as SimGrid charges one (its `smpi/test`).
const STALLED_POLL_NS: Ns = 100.0;

static ENGINE: AtomicPtr<Engine> = AtomicPtr::new(std::ptr::null_mut());

/// The current rank's stack limit, for the overflow handler.
pub static STACK_LIMIT: AtomicUsize = AtomicUsize::new(0);
/// The current rank, for the overflow handler.
pub static CURRENT: AtomicUsize = AtomicUsize::new(usize::MAX);

/// Set while [`with`] lends the engine: a second, nested borrow would
/// be a second live `&mut Engine`.
static LENT: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// Set on the thread that runs the engine (every rank's context runs
    /// on it), from [`run`] on.
    static ENGINE_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Why the engine could not be lent.
#[derive(Debug, PartialEq, Eq)]
enum Refused {
    /// No engine: the call came before the ranks started or after they
    /// ended.
    Outside,
    /// The engine is lent already: a call from inside [`with`].
    Reentered,
}

/// Gives the object behind `slot` to `f` unless it is null or `lent`
/// says it is given already; `lent` is set while `f` runs (also if it
/// unwinds).
fn lend<T, R>(slot: &AtomicPtr<T>, lent: &AtomicBool, f: impl FnOnce(&mut T) -> R) -> Result<R, Refused> {
    let p = slot.load(Ordering::Relaxed);
    if p.is_null() {
        return Err(Refused::Outside);
    }
    if lent.swap(true, Ordering::Acquire) {
        return Err(Refused::Reentered);
    }
    /// Gives the object back when `f` ends.
    struct Back<'a>(&'a AtomicBool);
    impl Drop for Back<'_> {
        fn drop(&mut self) {
            self.0.store(false, Ordering::Release);
        }
    }
    let _back = Back(lent);
    // SAFETY: `slot` holds a live object (its owner clears the slot
    // before freeing it, [`finish`]); `lent` was clear and is now set
    // until `f` returns, so no other reference made here is live, and a
    // nested call is refused above instead of making a second one.
    Ok(f(unsafe { &mut *p }))
}

/// Stops the process with `msg` (a static message, written with
/// `write(2)`): the engine cannot be used, so neither the usual error
/// path nor the native MPI's abort is.
fn refuse(msg: &str) -> ! {
    // SAFETY: write(2) of a valid buffer and _exit(2) are always allowed.
    unsafe {
        libc::write(2, msg.as_ptr().cast(), msg.len());
        libc::_exit(1)
    }
}

/// Runs `f` on the engine, if the ranks are running, from the engine's
/// thread, and not from inside another `with`; any of those is a clear
/// error, never a second reference to the engine.
pub fn with<R>(f: impl FnOnce(&mut Engine) -> R) -> R {
    if running() && !on_engine_thread() {
        refuse("pnmpi vranks: error: an MPI call from a thread of a virtual rank other than the rank itself: virtual ranks provide MPI_THREAD_FUNNELED at most\n");
    }
    match lend(&ENGINE, &LENT, f) {
        Ok(r) => r,
        Err(Refused::Outside) => {
            refuse("pnmpi vranks: error: an MPI call outside the virtual ranks (before they start or after they end)\n")
        }
        Err(Refused::Reentered) => refuse(
            "pnmpi vranks: internal error: the engine was re-entered (an MPI call, or an error path, from inside an engine step)\n",
        ),
    }
}

/// Whether the engine runs (an MPI call comes from a virtual rank).
pub fn running() -> bool {
    !ENGINE.load(Ordering::Relaxed).is_null()
}

/// Whether the calling thread is the engine's (every rank's context
/// runs on it; a thread a rank started does not).
pub fn on_engine_thread() -> bool {
    ENGINE_THREAD.with(|t| t.get())
}

/// Set when the ranks are done ([`finish`]): the process's MPI is then
/// initialized and finalized, which `MPI_Initialized` and
/// `MPI_Finalized` must still say to an `atexit` handler.
static FINISHED: AtomicBool = AtomicBool::new(false);

/// Whether every rank is done (the native MPI is finalized, or about
/// to be).
pub fn finished() -> bool {
    FINISHED.load(Ordering::Relaxed)
}

/// The key that orders non-negative times in the heap.
fn key(t: Ns) -> u64 {
    t.max(0.0).to_bits()
}

impl Engine {
    /// The engine for the ranks `blocks` gives this process, of `n`
    /// running `main`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        n: u32,
        blocks: crate::comm::Blocks,
        dist: Option<crate::dist::Dist>,
        main: MainFn,
        args: (c_int, *mut *mut c_char, *mut *mut c_char),
        model: (Box<dyn Model>, String),
        machine: Machine,
        node_of: Vec<u32>,
        cpu_factor: f64,
        globals: Globals,
        pool: Pool,
    ) -> Engine {
        let ranks = (0..n)
            .map(|_| Rank {
                clock: 0.0,
                cpu_mark: 0,
                phase: Phase::New,
                need: 0,
                end: None,
                initialized: false,
                finalized: false,
                thread_level: 0,
                status: 0,
                stats: Totals::default(),
                yielder: 0,
                stack_limit: 0,
                idled_at: -1.0,
                routine: "main",
            })
            .collect();
        let (model, model_name) = model;
        let lookahead = model.lookahead();
        let mut e = Engine {
            n,
            ranks,
            contexts: (0..n).map(|_| None).collect(),
            heap: BinaryHeap::new(),
            seq: 0,
            now: 0.0,
            current: 0,
            model,
            model_name,
            machine,
            node_of,
            cpu_factor,
            cpu_bias: pnmpi_sdk::clock::thread_cpu_read_cost(),
            globals,
            pool,
            main,
            argc: args.0,
            argv: args.1,
            envp: args.2,
            p2p: crate::p2p::State::new(n),
            comms: crate::comm::Registry::new(n, blocks),
            colls: crate::coll::State::default(),
            events: 0,
            switches: 0,
            lookahead,
            dist,
            trace: None,
        };
        for r in blocks.first(blocks.me)..blocks.first(blocks.me + 1) {
            e.push(0.0, Event::Resume(r));
        }
        e
    }

    /// This process's ranks.
    pub fn local_ranks(&self) -> std::ops::Range<u32> {
        let b = self.comms.blocks;
        b.first(b.me)..b.first(b.me + 1)
    }

    /// Queues an event at `t` (never before the current event).
    pub fn push(&mut self, t: Ns, ev: Event) {
        self.seq += 1;
        self.heap.push(Reverse((key(t.max(self.now)), self.seq, ev)));
    }

    /// The time of the next event, if any.
    pub fn next_time(&self) -> Option<Ns> {
        self.heap.peek().map(|Reverse((k, _, _))| f64::from_bits(*k))
    }

    /// Makes blocked rank `r` runnable at `t`, when its last awaited
    /// request completed. Its clock stays where it blocked: finishing the
    /// requests moves it, counting the wait and the communication
    /// (`api::complete::finish`), and an untimed constructor that waited
    /// for another process leaves it where the rank entered.
    pub fn wake(&mut self, r: u32, t: Ns) {
        let rank = &mut self.ranks[r as usize];
        if rank.phase == Phase::Blocked {
            rank.phase = Phase::Active;
            let at = rank.clock.max(t);
            self.push(at, Event::Resume(r));
        }
    }
}

/// The running rank's number.
pub fn me() -> u32 {
    with(|e| e.current)
}

/// Suspends the running rank until the scheduler resumes it (after it
/// queued a `Resume` for it, or marked it blocked). Checks the stack
/// first when stacks have no guard pages.
pub fn switch_out() {
    let (yielder, limit, guarded, rank) = with(|e| {
        let r = e.current;
        let s = e.ranks[r as usize].yielder;
        (s, STACK_LIMIT.load(Ordering::Relaxed), e.pool.guarded(), r)
    });
    let probe = 0u8;
    let sp = &probe as *const u8 as usize;
    if !guarded && sp < limit + 2 * crate::stack::PAGE {
        crate::overflow::report(rank as usize);
    }
    // SAFETY: `yielder` is the running context's own yielder, stored by
    // its body when it started; the context is running, so it is valid.
    let y = unsafe { &*(yielder as *const Yielder<(), ()>) };
    y.suspend(());
}

/// Blocks the running rank until `need` of its requests complete (they
/// call [`Engine::wake`] through the completion path).
pub fn block(need: u32) {
    if need == 0 {
        return;
    }
    with(|e| {
        let r = &mut e.ranks[e.current as usize];
        r.need = need;
        r.phase = Phase::Blocked;
    });
    switch_out();
}

/// Blocks the running rank without a request, until an event wakes it
/// ([`Engine::wake`]; a message arriving for `MPI_Probe`), then moves
/// its clock to when it woke, counting the wait. If nothing ever wakes
/// it, the run ends with it in the deadlock report.
pub fn block_until_woken() {
    with(|e| e.ranks[e.current as usize].phase = Phase::Blocked);
    switch_out();
    with(|e| {
        let now = e.now;
        let rank = &mut e.ranks[e.current as usize];
        if now > rank.clock {
            rank.stats.wait += now - rank.clock;
            rank.clock = now;
        }
    });
}

/// Lets the simulation catch up with the running rank's clock, so that
/// every event before it has happened (before a test or a probe looks).
pub fn catch_up() {
    let behind = with(|e| {
        let r = e.current;
        let t = e.ranks[r as usize].clock;
        if t > e.now && e.next_time().is_some_and(|n| n < t) {
            e.push(t, Event::Resume(r));
            true
        } else {
            false
        }
    });
    if behind {
        switch_out();
    }
}

/// Yields the running rank until the next event, or until one of the
/// requests it polls (`watched`) completes if that is known to come first
/// (a test that found nothing: polling lets virtual time pass to when
/// something happens),
/// or, when this process has none but others may send some, until the
/// end of the window, when their records come.
pub fn idle(watched: impl Iterator<Item = usize>) {
    let wait = with(|e| {
        let r = e.current;
        let next = e.next_time().or_else(|| e.dist.as_ref().map(|d| d.end));
        let own = e.p2p.next_completion(watched, e.ranks[r as usize].clock);
        let rank = &mut e.ranks[r as usize];
        let mut t = match (next, own) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b)?,
        }
        .max(rank.clock);
        if t <= rank.clock && rank.idled_at == rank.clock {
            // Polled at this time already and nothing came: every event
            // left at this time is another rank polling too (with no
            // compute counted, none of them would ever move on).
            t = own.unwrap_or(f64::INFINITY).min(rank.clock + STALLED_POLL_NS);
        }
        // Polling until then: waiting, in the report.
        rank.stats.wait += t - rank.clock;
        rank.clock = t;
        rank.idled_at = t;
        e.push(t, Event::Resume(r));
        Some(())
    });
    if wait.is_some() {
        switch_out();
    }
}

/// Runs every rank to the end. Returns the first nonzero status, or 0.
pub fn run(engine: Engine, progress: bool) -> c_int {
    ENGINE_THREAD.with(|t| t.set(true));
    let p = Box::into_raw(Box::new(engine));
    ENGINE.store(p, Ordering::Relaxed);
    let started = std::time::Instant::now();
    let mut last_progress = started;
    let spread = with(|e| e.dist.is_some());
    loop {
        let end = if spread {
            match with(|e| e.next_window()) {
                Some(end) => {
                    with(|e| e.dist.as_mut().map(|d| d.end = end));
                    end
                }
                None => break,
            }
        } else {
            f64::INFINITY
        };
        loop {
            let step = with(|e| match e.heap.peek() {
                Some(Reverse((k, _, _))) if f64::from_bits(*k) < end => e.heap.pop(),
                _ => None,
            });
            let Some(Reverse((k, _, ev))) = step else { break };
            let t = f64::from_bits(k);
            match ev {
                Event::Arrive(m) => with(|e| {
                    e.now = t;
                    e.events += 1;
                    e.arrive(m);
                }),
                Event::Resume(r) => resume(r, t),
            }
            if progress && with(|e| e.events).is_multiple_of(65536) && last_progress.elapsed().as_secs() >= 5
            {
                last_progress = std::time::Instant::now();
                with(|e| e.progress(started));
            }
        }
        if !spread {
            break;
        }
    }
    let status = with(|e| {
        let stuck: Vec<u32> = e
            .local_ranks()
            .filter(|&r| e.ranks[r as usize].phase != Phase::Done)
            .collect();
        if !stuck.is_empty() {
            let list: Vec<String> = stuck
                .iter()
                .take(8)
                .map(|&r| format!("{r} in {}", e.ranks[r as usize].routine))
                .collect();
            eprintln!(
                "pnmpi vranks: error: deadlock at virtual time {:.9} s: {} of {} ranks{} wait for messages or collectives that no rank will send or join (ranks {}{})",
                e.now * 1e-9,
                stuck.len(),
                e.local_ranks().len(),
                if spread { " of this process" } else { "" },
                list.join(", "),
                if stuck.len() > 8 { ", ..." } else { "" }
            );
            let held = e.held_sends(&stuck);
            if !held.is_empty() {
                eprintln!(
                    "pnmpi vranks: error: {} send(s) above the eager threshold wait for receives never posted ({}{}): {}",
                    held.len(),
                    held.iter().take(8).cloned().collect::<Vec<_>>().join(", "),
                    if held.len() > 8 { ", ..." } else { "" },
                    pnmpi_sim::kernel::p2p::DEPENDS_ON_BUFFERING
                );
            }
            return 1;
        }
        e.local_ranks()
            .map(|r| e.ranks[r as usize].status)
            .find(|&s| s != 0)
            .unwrap_or(0)
    });
    // Contexts that did not finish (ranks that called `exit`) are
    // suspended inside the application: they are dropped without
    // unwinding their stacks, which hold C frames.
    with(|e| {
        for c in e.contexts.drain(..).flatten() {
            std::mem::forget(c);
        }
    });
    status
}

impl Engine {
    /// The progress line: virtual time reached, wall time, ranks started
    /// and done, switches (this process's, with a note when spread).
    fn progress(&self, started: std::time::Instant) {
        let local = self.local_ranks();
        let done = local
            .clone()
            .filter(|&r| self.ranks[r as usize].phase == Phase::Done)
            .count();
        let started_n = local
            .clone()
            .filter(|&r| self.ranks[r as usize].phase != Phase::New)
            .count();
        let whose = match &self.dist {
            Some(d) => format!(" (process {}: ranks {}..{})", d.me(), local.start, local.end),
            None => String::new(),
        };
        eprintln!(
            "pnmpi vranks: virtual time {:.6} s, wall {:.0} s, {} ranks{whose}: {} started, {} done, {} switches",
            self.now * 1e-9,
            started.elapsed().as_secs_f64(),
            local.len(),
            started_n,
            done,
            self.switches
        );
    }
}

/// The engine, for the report after the ranks are done.
pub fn finish() -> Box<Engine> {
    let p = ENGINE.swap(std::ptr::null_mut(), Ordering::Relaxed);
    FINISHED.store(true, Ordering::Relaxed);
    // SAFETY: `run` made `p` with Box::into_raw and no context is running.
    unsafe { Box::from_raw(p) }
}

/// Resumes rank `r` at virtual time `t`.
fn resume(r: u32, t: Ns) {
    let ctx = with(|e| -> Option<Context> {
        e.now = t;
        e.events += 1;
        e.switches += 1;
        e.current = r;
        let rank = &e.ranks[r as usize];
        if rank.phase == Phase::Done {
            return None;
        }
        e.globals.switch_to(r);
        if e.contexts[r as usize].is_none() {
            let stack = match e.pool.take() {
                Ok(s) => s,
                Err(err) => {
                    eprintln!(
                        "pnmpi vranks: error: cannot map a stack for virtual rank {r} ({} bytes): {err}; use a smaller --vrank-stack",
                        e.pool.size()
                    );
                    std::process::exit(1);
                }
            };
            e.ranks[r as usize].stack_limit = stack.limit();
            let (main, argc, argv, envp) = (e.main, e.argc, e.argv as usize, e.envp as usize);
            e.contexts[r as usize] = Some(Coroutine::with_stack(stack, move |y: &Yielder<(), ()>, ()| {
                with(|e| {
                    let rank = &mut e.ranks[e.current as usize];
                    rank.yielder = y as *const Yielder<(), ()> as usize;
                    rank.phase = Phase::Active;
                });
                // SAFETY: the application's own `main`, called as the C
                // runtime would, with the process's arguments.
                unsafe { main(argc, argv as *mut *mut c_char, envp as *mut *mut c_char) }
            }));
        }
        STACK_LIMIT.store(e.ranks[r as usize].stack_limit, Ordering::Relaxed);
        e.contexts[r as usize].take()
    });
    let Some(mut ctx) = ctx else { return };
    CURRENT.store(r as usize, Ordering::Relaxed);
    let out = ctx.resume(());
    CURRENT.store(usize::MAX, Ordering::Relaxed);
    with(|e| match out {
        CoroutineResult::Yield(()) => {
            if e.ranks[r as usize].phase == Phase::Done {
                // It called `exit`: never resumed, never unwound.
                std::mem::forget(ctx);
            } else {
                e.contexts[r as usize] = Some(ctx);
            }
        }
        CoroutineResult::Return(status) => {
            let rank = &mut e.ranks[r as usize];
            rank.phase = Phase::Done;
            rank.status = status;
            e.globals.forget(r);
            e.pool.give(ctx.into_stack());
        }
    });
}

/// Called by the `exit` wrapper inside a rank: the rank is done with
/// `status`, and never runs again; the process goes on with the others.
pub fn exit_rank(status: c_int) -> ! {
    with(|e| {
        let rank = &mut e.ranks[e.current as usize];
        rank.phase = Phase::Done;
        rank.status = status;
    });
    switch_out();
    unreachable!("a rank that exited was resumed")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nested_lend_is_refused_and_the_outer_one_goes_on() {
        let mut v = 7u32;
        let slot = AtomicPtr::new(&mut v as *mut u32);
        let lent = AtomicBool::new(false);
        let nested = lend(&slot, &lent, |x| {
            *x += 1;
            lend(&slot, &lent, |y| *y += 100)
        });
        assert_eq!(nested, Ok(Err(Refused::Reentered)));
        // Given back once the outer call ended.
        assert_eq!(lend(&slot, &lent, |x| *x), Ok(8));
        assert!(!lent.load(Ordering::Relaxed));
        let none: AtomicPtr<u32> = AtomicPtr::new(std::ptr::null_mut());
        assert_eq!(lend(&none, &lent, |_| ()), Err(Refused::Outside));
    }
}
