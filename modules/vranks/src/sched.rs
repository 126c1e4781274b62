//! The scheduler of contexts, the bottom layer: every virtual rank is a
//! stackful context (corosensei) with a virtual clock, and the scheduler
//! resumes, one at a time, the one whose event has the least virtual
//! time. It knows nothing of messages: an event is a rank becoming
//! runnable at a time ([`Event::Resume`]) or something the layers above
//! scheduled ([`Event::Deliver`], a message arriving), which it hands
//! back to them. Contexts switch only inside MPI calls, so nothing needs
//! a lock: the engine above lends the whole state for one step at a
//! time ([`lend`]), and never across a switch.

use crate::globals::Globals;
use crate::overflow::{CURRENT, STACK_LIMIT};
use crate::stack::{Pool, VStack};
use corosensei::{Coroutine, CoroutineResult, Yielder};
use pnmpi_sdk::say::{self, Level};
use pnmpi_sim::live::Totals;
use pnmpi_sim::units::Ns;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ffi::{c_char, c_int};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

/// The application's `main`.
pub type MainFn = unsafe extern "C" fn(c_int, *mut *mut c_char, *mut *mut c_char) -> c_int;

/// A rank's context.
pub type Context = Coroutine<(), (), c_int, VStack>;

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
    /// The latest completion among those it waits for so far: it resumes
    /// then, once the last one completed (as the replay's wait does),
    /// whatever order they completed in.
    pub resume_at: Ns,
    /// Its clock at `MPI_Finalize` (the report's run time).
    pub end: Option<Ns>,
    pub initialized: bool,
    pub finalized: bool,
    /// The thread level `MPI_Init_thread` provided (`MPI_Query_thread`).
    pub thread_level: c_int,
    /// `main`'s return value or `exit`'s status.
    pub status: c_int,
    pub stats: Totals,
    /// The MPI routine it is in or last called, for a deadlock report.
    pub routine: &'static str,
    /// Its context's yielder, once it started.
    yielder: usize,
    /// The lowest address of its stack, once it started.
    stack_limit: usize,
    /// Its clock when it last polled and found nothing ([`Sched::idle`]).
    idled_at: Ns,
}

/// An event: rank `Resume` at a time, or an event of the layers above
/// (`Deliver`, by their own id: a message arriving at its receiver;
/// `Flows`: the model's flows over shared links start paying their
/// latency or end, which goes before every other event at its time, as
/// the replay steps them).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Event {
    Resume(u32),
    Deliver(u32),
    Flows,
}

/// How far a rank that polls in vain moves on when every other event at
/// its time is another rank polling: the cost of a failed `MPI_Test` on
/// a real machine, as SimGrid charges one (its `smpi/test`).
const STALLED_POLL_NS: Ns = 100.0;

/// The ranks, their contexts and the event queue.
pub struct Sched {
    ranks: Vec<Rank>,
    contexts: Vec<Option<Context>>,
    heap: BinaryHeap<Reverse<(u64, u64, Event)>>,
    seq: u64,
    /// The time of the event being processed.
    now: Ns,
    current: u32,
    /// The ranks this process runs.
    local: Range<u32>,
    globals: Globals,
    pool: Pool,
    main: MainFn,
    argc: c_int,
    argv: *mut *mut c_char,
    envp: *mut *mut c_char,
    /// Told a started context's yielder, from inside the context.
    started: fn(usize),
    /// Events processed and context switches made.
    events: u64,
    switches: u64,
}

/// The key that orders non-negative times in the heap.
fn key(t: Ns) -> u64 {
    t.max(0.0).to_bits()
}

/// What a rank needs to leave its context ([`suspend`]).
pub struct Leaving {
    yielder: usize,
    limit: usize,
    guarded: bool,
    rank: u32,
}

impl Sched {
    /// The scheduler of `n` ranks, of which this process runs `local`,
    /// each running `main` with `args`; `started` is told each context's
    /// yielder when it starts (from inside it, the state not lent).
    pub fn new(
        n: u32,
        local: Range<u32>,
        main: MainFn,
        args: (c_int, *mut *mut c_char, *mut *mut c_char),
        globals: Globals,
        pool: Pool,
        started: fn(usize),
    ) -> Sched {
        let ranks = (0..n)
            .map(|_| Rank {
                clock: 0.0,
                cpu_mark: 0,
                phase: Phase::New,
                need: 0,
                resume_at: 0.0,
                end: None,
                initialized: false,
                finalized: false,
                thread_level: 0,
                status: 0,
                stats: Totals::default(),
                routine: "main",
                yielder: 0,
                stack_limit: 0,
                idled_at: -1.0,
            })
            .collect();
        let mut s = Sched {
            ranks,
            contexts: (0..n).map(|_| None).collect(),
            heap: BinaryHeap::new(),
            seq: 0,
            now: 0.0,
            current: 0,
            local: local.clone(),
            globals,
            pool,
            main,
            argc: args.0,
            argv: args.1,
            envp: args.2,
            started,
            events: 0,
            switches: 0,
        };
        for r in local {
            s.push(0.0, Event::Resume(r));
        }
        s
    }

    /// The number of ranks in the world.
    pub fn n(&self) -> u32 {
        self.ranks.len() as u32
    }

    /// This process's ranks.
    pub fn local_ranks(&self) -> Range<u32> {
        self.local.clone()
    }

    /// The running rank.
    pub fn current(&self) -> u32 {
        self.current
    }

    /// Runs `f` on rank `r`'s memory at `span` (`[lo, hi)` addresses):
    /// its own copy of the privatized globals, where the span touches
    /// them ([`Globals::as_rank`]).
    pub fn in_memory_of<R>(&mut self, r: u32, span: (usize, usize), f: impl FnOnce() -> R) -> R {
        self.globals.as_rank(r, span, f)
    }

    /// The time of the event being processed.
    pub fn now(&self) -> Ns {
        self.now
    }

    /// Rank `r`.
    pub fn rank(&self, r: u32) -> &Rank {
        &self.ranks[r as usize]
    }

    /// Rank `r`, to change.
    pub fn rank_mut(&mut self, r: u32) -> &mut Rank {
        &mut self.ranks[r as usize]
    }

    /// The running rank, to change.
    pub fn me(&mut self) -> &mut Rank {
        &mut self.ranks[self.current as usize]
    }

    /// Events processed and context switches made.
    pub fn counts(&self) -> (u64, u64) {
        (self.events, self.switches)
    }

    /// Queues an event at `t` (never before the current event).
    pub fn push(&mut self, t: Ns, ev: Event) {
        self.seq += 1;
        self.heap.push(Reverse((key(t.max(self.now)), self.seq, ev)));
    }

    /// Queues the model's flows' next event at `t`, before every other
    /// event at that time.
    pub fn push_flows(&mut self, t: Ns) {
        self.heap.push(Reverse((key(t.max(self.now)), 0, Event::Flows)));
    }

    /// The time of the next event, if any.
    pub fn next_time(&self) -> Option<Ns> {
        self.heap.peek().map(|Reverse((k, _, _))| f64::from_bits(*k))
    }

    /// Takes the next event if it is earlier than `end`, making its time
    /// the current one.
    pub fn pop_before(&mut self, end: Ns) -> Option<(Ns, Event)> {
        match self.heap.peek() {
            Some(Reverse((k, _, _))) if f64::from_bits(*k) < end => {}
            _ => return None,
        }
        let Reverse((k, _, ev)) = self.heap.pop()?;
        self.now = f64::from_bits(k);
        self.events += 1;
        Some((self.now, ev))
    }

    /// Makes blocked rank `r` runnable at `t`, when its last awaited
    /// request completed. Its clock stays where it blocked: finishing the
    /// requests moves it, counting the wait and the communication, and an
    /// untimed constructor that waited for another process leaves it
    /// where the rank entered.
    pub fn wake(&mut self, r: u32, t: Ns) {
        let rank = &mut self.ranks[r as usize];
        if rank.phase == Phase::Blocked {
            rank.phase = Phase::Active;
            let at = rank.clock.max(t);
            self.push(at, Event::Resume(r));
        }
    }

    /// The running rank waits for `need` of its requests, resuming no
    /// earlier than `after`.
    pub fn block(&mut self, need: u32, after: Ns) {
        let r = self.me();
        r.need = need;
        r.resume_at = r.clock.max(after);
        r.phase = Phase::Blocked;
    }

    /// The running rank waits for an event to wake it.
    pub fn block_until_woken(&mut self) {
        self.me().phase = Phase::Blocked;
    }

    /// The running rank was woken: its clock moves to now, counting the
    /// wait.
    pub fn woken(&mut self) {
        self.woken_at(self.now);
    }

    /// The running rank was woken by what happened at `t` (a lock granted
    /// between time windows, behind the present): its clock moves there,
    /// counting the wait.
    pub fn woken_at(&mut self, t: Ns) {
        let rank = self.me();
        if t > rank.clock {
            rank.stats.wait += t - rank.clock;
            rank.clock = t;
        }
    }

    /// Whether the running rank is ahead of an event before its clock:
    /// then it is queued at its clock, to switch out until the others
    /// caught up.
    pub fn behind(&mut self) -> bool {
        let r = self.current;
        let t = self.ranks[r as usize].clock;
        // The flows' event at the rank's own time goes first too: what a
        // flow's end completes there may come before the rank's call.
        let first = self.heap.peek().is_some_and(|Reverse((k, _, ev))| {
            let n = f64::from_bits(*k);
            n < t || (n == t && *ev == Event::Flows)
        });
        if t > self.now && first {
            self.push(t, Event::Resume(r));
            true
        } else {
            false
        }
    }

    /// The running rank polled in vain: it moves on to the next event,
    /// or to `own` (the earliest completion of what it polls) if that
    /// comes first, or to `window_end` when this process has no event
    /// left; the time passed counts as waiting. `false`: nothing will
    /// ever come.
    pub fn idle(&mut self, own: Option<Ns>, window_end: Option<Ns>) -> bool {
        let r = self.current;
        let next = self.next_time().or(window_end);
        let rank = &mut self.ranks[r as usize];
        let t = match (next, own) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => match a.or(b) {
                Some(t) => t,
                None => return false,
            },
        };
        let mut t = t.max(rank.clock);
        if t <= rank.clock && rank.idled_at == rank.clock {
            // Polled at this time already and nothing came: every event
            // left at this time is another rank polling too (with no
            // compute counted, none of them would ever move on).
            t = own.unwrap_or(f64::INFINITY).min(rank.clock + STALLED_POLL_NS);
        }
        rank.stats.wait += t - rank.clock;
        rank.clock = t;
        rank.idled_at = t;
        self.push(t, Event::Resume(r));
        true
    }

    /// The running rank ended with `status` (`exit`): never resumed.
    pub fn exit_current(&mut self, status: c_int) {
        let rank = self.me();
        rank.phase = Phase::Done;
        rank.status = status;
    }

    /// What the running rank needs to leave its context.
    pub fn leaving(&self) -> Leaving {
        Leaving {
            yielder: self.ranks[self.current as usize].yielder,
            limit: STACK_LIMIT.load(Ordering::Relaxed),
            guarded: self.pool.guarded(),
            rank: self.current,
        }
    }

    /// A context started: its yielder is the running rank's.
    pub fn started(&mut self, yielder: usize) {
        let rank = self.me();
        rank.yielder = yielder;
        rank.phase = Phase::Active;
    }

    /// Prepares to resume rank `r` (at the current time): its context,
    /// made at its first resume, or `None` if it is done.
    pub fn begin_resume(&mut self, r: u32) -> Option<Context> {
        self.switches += 1;
        self.current = r;
        if self.ranks[r as usize].phase == Phase::Done {
            return None;
        }
        self.globals.switch_to(r);
        if self.contexts[r as usize].is_none() {
            let stack = match self.pool.take() {
                Ok(s) => s,
                Err(err) => {
                    say::unranked(
                        "vranks",
                        Level::Error,
                        format_args!(
                            "cannot map a stack for virtual rank {r} ({} bytes): {err}; use a smaller --vrank-stack",
                            self.pool.size()
                        ),
                    );
                    // The ranks run, so the native MPI does: the job ends.
                    say::stop();
                }
            };
            self.ranks[r as usize].stack_limit = stack.limit();
            let (main, argc, argv, envp) = (self.main, self.argc, self.argv as usize, self.envp as usize);
            let started = self.started;
            self.contexts[r as usize] = Some(Coroutine::with_stack(stack, move |y: &Yielder<(), ()>, ()| {
                started(y as *const Yielder<(), ()> as usize);
                // SAFETY: the application's own `main`, called as the C
                // runtime would, with the process's arguments.
                unsafe { main(argc, argv as *mut *mut c_char, envp as *mut *mut c_char) }
            }));
        }
        STACK_LIMIT.store(self.ranks[r as usize].stack_limit, Ordering::Relaxed);
        self.contexts[r as usize].take()
    }

    /// Rank `r`'s context came back from a resume with `out`.
    pub fn end_resume(&mut self, r: u32, ctx: Context, out: CoroutineResult<(), c_int>) {
        match out {
            CoroutineResult::Yield(()) => {
                if self.ranks[r as usize].phase == Phase::Done {
                    // It called `exit`: never resumed, never unwound.
                    std::mem::forget(ctx);
                } else {
                    self.contexts[r as usize] = Some(ctx);
                }
            }
            CoroutineResult::Return(status) => {
                let rank = &mut self.ranks[r as usize];
                rank.phase = Phase::Done;
                rank.status = status;
                self.globals.forget(r);
                self.pool.give(ctx.into_stack());
            }
        }
    }

    /// This process's ranks that are not done.
    pub fn stuck(&self) -> Vec<u32> {
        self.local_ranks()
            .filter(|&r| self.ranks[r as usize].phase != Phase::Done)
            .collect()
    }

    /// The first nonzero status of this process's ranks, or 0.
    pub fn status(&self) -> c_int {
        self.local_ranks()
            .map(|r| self.ranks[r as usize].status)
            .find(|&s| s != 0)
            .unwrap_or(0)
    }

    /// Drops the contexts that did not finish (ranks that called `exit`)
    /// without unwinding their stacks, which hold C frames.
    pub fn forget_contexts(&mut self) {
        for c in self.contexts.drain(..).flatten() {
            std::mem::forget(c);
        }
    }

    /// The progress line: virtual time reached, wall time, ranks started
    /// and done, switches (`whose`: which process, when spread).
    pub fn progress(&self, started: std::time::Instant, whose: &str) {
        let local = self.local_ranks();
        let count =
            |f: &dyn Fn(Phase) -> bool| local.clone().filter(|&r| f(self.ranks[r as usize].phase)).count();
        say::unranked(
            "vranks",
            Level::Note,
            format_args!(
                "virtual time {:.6} s, wall {:.0} s, {} ranks{whose}: {} started, {} done, {} switches",
                self.now * 1e-9,
                started.elapsed().as_secs_f64(),
                local.len(),
                count(&|p| p != Phase::New),
                count(&|p| p == Phase::Done),
                self.switches
            ),
        );
    }
}

/// Suspends the running rank (described by `l`) until the scheduler
/// resumes it. Checks the stack first when stacks have no guard pages.
pub fn suspend(l: Leaving) {
    let probe = 0u8;
    let sp = &probe as *const u8 as usize;
    if !l.guarded && sp < l.limit + 2 * crate::stack::PAGE {
        crate::overflow::report(l.rank as usize);
    }
    // SAFETY: `yielder` is the running context's own yielder, stored by
    // its body when it started; the context is running, so it is valid.
    let y = unsafe { &*(l.yielder as *const Yielder<(), ()>) };
    y.suspend(());
}

/// Resumes context `ctx` of rank `r` (the state not lent).
pub fn resume(r: u32, ctx: &mut Context) -> CoroutineResult<(), c_int> {
    CURRENT.store(r as usize, Ordering::Relaxed);
    let out = ctx.resume(());
    CURRENT.store(usize::MAX, Ordering::Relaxed);
    out
}

/// Why an object could not be lent.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// No object: the call came before the ranks started or after they
    /// ended.
    Outside,
    /// The object is lent already: a call from inside another loan.
    Reentered,
}

/// Gives the object behind `slot` to `f` unless it is null or `lent`
/// says it is given already; `lent` is set while `f` runs (also if it
/// unwinds).
pub fn lend<T, R>(slot: &AtomicPtr<T>, lent: &AtomicBool, f: impl FnOnce(&mut T) -> R) -> Result<R, Refused> {
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
    // before freeing it); `lent` was clear and is now set until `f`
    // returns, so no other reference made here is live, and a nested
    // call is refused above instead of making a second one.
    Ok(f(unsafe { &mut *p }))
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
