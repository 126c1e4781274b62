//! The engine: the layers below composed into the one simulation of this
//! process's ranks, and lent, one step at a time, to the running rank's
//! MPI call or to the scheduler's loop ([`with`]), never to both at once
//! and never across a context switch. It owns each layer's state (the
//! scheduler, the target's timing, the communicators, point-to-point,
//! the collectives, the spread over processes, the tracer) and is the
//! only place that holds several of them at once.

use crate::coll::{Below, Colls, Entry, Joined, Op};
use crate::comm::{Blocks, Registry};
use crate::dist::{Between, Dist};
use crate::globals::Globals;
use crate::p2p::{Mode, P2p, RecvSpec, Work};
use crate::sched::{self, Event, MainFn, Refused, Sched};
use crate::stack::Pool;
use crate::timing::Timing;
use crate::trace::Trace;
use crate::windows::Windows;
use pnmpi_sdk::say::{self, Level};
use pnmpi_sim::kernel::coll::Step;
use pnmpi_sim::kernel::p2p::{received, unstretched};
use pnmpi_sim::kernel::rma::{self, Issued};
use pnmpi_sim::units::Ns;
use pnmpi_trace::rank::RawRecord;
use pnmpi_trace::rma::DataOp;
use std::ffi::{c_char, c_int};
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

/// How an issued one-sided operation completes.
pub enum Rma {
    /// By the kernel's closed form.
    Known(Issued),
    /// As flows over shared links: its local completion's request, when
    /// asked for.
    Moving { local: Option<usize> },
}

/// The whole simulation of this process's ranks.
pub struct Engine {
    sched: Sched,
    timing: Timing,
    comms: Registry,
    p2p: P2p,
    colls: Colls,
    /// The other processes, when the ranks are spread over several.
    dist: Option<Dist>,
    /// The trace being written, when the configuration loads the tracer.
    trace: Option<Trace>,
    /// The one-sided windows.
    windows: Windows,
}

static ENGINE: AtomicPtr<Engine> = AtomicPtr::new(std::ptr::null_mut());

/// Set while [`with`] lends the engine: a second, nested borrow would
/// be a second live `&mut Engine`.
static LENT: AtomicBool = AtomicBool::new(false);

/// Set when the ranks are done ([`finish`]): the process's MPI is then
/// initialized and finalized, which `MPI_Initialized` and
/// `MPI_Finalized` must still say to an `atexit` handler.
static FINISHED: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// Set on the thread that runs the engine (every rank's context runs
    /// on it), from [`run`] on.
    static ENGINE_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Says `what` and ends the process: the engine cannot be used, so
/// neither the usual error path ([`stop`], which names the running rank)
/// nor the native MPI's abort is (the call may come from another thread
/// than MPI's, or before the native MPI starts).
fn refuse(what: &str) -> ! {
    say::unranked("vranks", Level::Error, what);
    // SAFETY: _exit(2) ends the process at once; `_exit`, not `exit`, as
    // in [`stop`].
    unsafe { libc::_exit(1) }
}

/// Runs `f` on the engine, if the ranks are running, from the engine's
/// thread, and not from inside another `with`; any of those is a clear
/// error, never a second reference to the engine.
pub fn with<R>(f: impl FnOnce(&mut Engine) -> R) -> R {
    if running() && !on_engine_thread() {
        refuse("an MPI call from a thread of a virtual rank other than the rank itself: virtual ranks provide MPI_THREAD_FUNNELED at most");
    }
    match sched::lend(&ENGINE, &LENT, f) {
        Ok(r) => r,
        Err(Refused::Outside) => {
            refuse("an MPI call outside the virtual ranks (before they start or after they end)")
        }
        Err(Refused::Reentered) => refuse(
            "internal error: the engine was re-entered (an MPI call, or an error path, from inside an engine step)",
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

/// Whether every rank is done (the native MPI is finalized, or about
/// to be).
pub fn finished() -> bool {
    FINISHED.load(Ordering::Relaxed)
}

/// Says what stopped the run, at virtual rank `rank` (the native rank
/// would name the wrong one), and ends the job (while the ranks run) or
/// the process (before or after). Every error of the virtual ranks'
/// MPI ends here.
pub fn stop(rank: &str, routine: &str, what: &str) -> ! {
    say::unranked(
        "vranks",
        Level::Error,
        format_args!("virtual rank {rank}: {routine}: {what}"),
    );
    if running() {
        // The native MPI is initialized while the ranks run (`start`
        // initializes it before and finalizes it after): the SDK's stop
        // aborts the job.
        say::stop();
    }
    // SAFETY: _exit(2) ends the process at once. `_exit`, not `exit`:
    // inside a rank, `exit` would end that rank only.
    unsafe { libc::_exit(1) }
}

/// A started context's yielder, told by the context itself.
fn started(yielder: usize) {
    with(|e| e.sched.started(yielder));
}

impl Engine {
    /// The engine for the ranks `blocks` gives this process, of `n`
    /// running `main` with `args` on `timing`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        n: u32,
        blocks: Blocks,
        dist: Option<Dist>,
        main: MainFn,
        args: (c_int, *mut *mut c_char, *mut *mut c_char),
        timing: Timing,
        globals: Globals,
        pool: Pool,
        trace: Option<Trace>,
    ) -> Engine {
        let local = blocks.first(blocks.me)..blocks.first(blocks.me + 1);
        Engine {
            sched: Sched::new(n, local, main, args, globals, pool, started),
            timing,
            comms: Registry::new(n, blocks),
            p2p: P2p::new(n),
            colls: Colls::default(),
            dist,
            trace,
            windows: Windows::default(),
        }
    }

    /// The layers below the collectives, lent together.
    fn below(&mut self) -> (Below<'_>, &mut Colls, &mut Windows) {
        let b = Below {
            sched: &mut self.sched,
            timing: &mut self.timing,
            comms: &mut self.comms,
            p2p: &mut self.p2p,
        };
        (b, &mut self.colls, &mut self.windows)
    }

    /// The scheduler: the ranks and their clocks.
    pub fn sched(&self) -> &Sched {
        &self.sched
    }

    /// The scheduler, to change a rank.
    pub fn sched_mut(&mut self) -> &mut Sched {
        &mut self.sched
    }

    /// The running rank.
    pub fn current(&self) -> u32 {
        self.sched.current()
    }

    /// Whether the model moves messages as flows over shared links.
    pub fn shares_links(&mut self) -> bool {
        self.timing.model().flows().is_some()
    }

    /// The target's timing.
    pub fn timing(&self) -> &Timing {
        &self.timing
    }

    /// The one-sided windows.
    pub fn windows(&self) -> &Windows {
        &self.windows
    }

    /// The one-sided windows, to change.
    pub fn windows_mut(&mut self) -> &mut Windows {
        &mut self.windows
    }

    /// Runs `f` on world rank `r`'s memory at `span` (its own copy of
    /// the privatized globals where the span touches them): a one-sided
    /// operation's target data.
    pub fn in_memory_of<R>(&mut self, r: u32, span: (usize, usize), f: impl FnOnce() -> R) -> R {
        self.sched.in_memory_of(r, span, f)
    }

    /// The running rank, window rank `me` of window `w`, issues `op` of
    /// `bytes` (and `rbytes` back) to world rank `target`, by the
    /// kernel's one-sided rule: its clock moves to when it is free, and
    /// its epoch learns when the operation is done. Under a model whose
    /// messages share links its legs move as flows: the epoch then learns
    /// a request that the last leg's end completes, and with `local` (a
    /// request form) the operation's local completion is a request too,
    /// returned.
    pub fn rma_issue(
        &mut self,
        (w, me, target): (usize, u32, u32),
        op: DataOp,
        (bytes, rbytes): (u64, u64),
        local: bool,
    ) -> Rma {
        let origin = self.sched.current();
        let (there, back) = rma::sizes(op, bytes, rbytes);
        let m = self.timing.msg(origin, target, there);
        let at = self.sched.rank(origin).clock;
        if self.shares_links() {
            let (done, local) = self
                .p2p
                .rma_flows(&mut self.sched, &mut self.timing, m, back, local);
            if let Some(win) = self.windows.get_mut(w) {
                win.epochs[me as usize].flowing.push((target, done));
            }
            let free = self.sched.rank(origin).clock;
            self.sched.rank_mut(origin).stats.comm += free - at;
            return Rma::Moving { local };
        }
        let rank = self.sched.rank_mut(origin);
        let issued = rma::issue(self.timing.model(), &m, back, at, &mut unstretched);
        rank.stats.comm += issued.free - at;
        rank.clock = issued.free;
        if let Some(win) = self.windows.get_mut(w) {
            win.epochs[me as usize].pending.add(target, issued.done);
        }
        Rma::Known(issued)
    }

    /// The requests of the running rank's operations on window `w` (as
    /// window rank `me`) to `target` (`None`: every target) still moving
    /// as flows, for its closing call to wait for.
    pub fn rma_flowing(&mut self, w: usize, me: u32, target: Option<u32>) -> Vec<usize> {
        self.windows
            .get_mut(w)
            .map_or_else(Vec::new, |win| win.epochs[me as usize].take_flowing(target))
    }

    /// The running rank, window rank `me` of window `w`, waits for its
    /// operations to world rank `target` (`None`: to every target) to
    /// be done: a flush, an unlock, the close of an epoch.
    pub fn rma_settle(&mut self, w: usize, me: u32, target: Option<u32>) {
        let Some(win) = self.windows.get_mut(w) else {
            return;
        };
        let done = win.epochs[me as usize].pending.settle(target);
        self.until(done);
    }

    /// The running rank, granted the lock of world rank `target` that a
    /// holder before it released at `released` (`-inf`: nobody did),
    /// receives the target's grant, an empty message handed over by the
    /// kernel's rule ([`rma::handoff`]), as a receive posted at its
    /// call's start `posted`.
    pub fn rma_granted(&mut self, target: u32, released: Ns, posted: Ns) {
        if !released.is_finite() {
            return;
        }
        let me = self.sched.current();
        let m = self.timing.msg(target, me, 0);
        let arrival = rma::handoff(self.timing.model(), &m, released);
        let done = received(self.timing.model(), &m, arrival, posted, &mut unstretched);
        self.until(done);
    }

    /// Moves the running rank's clock to `t` if later: its call waits
    /// for the network.
    fn until(&mut self, t: Ns) {
        let rank = self.sched.me();
        if t > rank.clock {
            rank.stats.comm += t - rank.clock;
            rank.clock = t;
        }
    }

    /// The communicators and groups.
    pub fn comms(&self) -> &Registry {
        &self.comms
    }

    /// The communicators and groups, to change.
    pub fn comms_mut(&mut self) -> &mut Registry {
        &mut self.comms
    }

    /// The members of communicator `comm` as world ranks, as the running
    /// rank sees them.
    pub fn members(&self, comm: usize) -> Vec<u32> {
        self.comms.list(comm, self.sched.current())
    }

    /// The requests.
    pub fn p2p(&self) -> &P2p {
        &self.p2p
    }

    /// The requests, to change.
    pub fn p2p_mut(&mut self) -> &mut P2p {
        &mut self.p2p
    }

    /// The collectives in progress.
    pub fn colls(&self) -> &Colls {
        &self.colls
    }

    /// The collectives in progress, to change.
    pub fn colls_mut(&mut self) -> &mut Colls {
        &mut self.colls
    }

    /// The other processes, when the ranks are spread.
    pub fn dist(&self) -> Option<&Dist> {
        self.dist.as_ref()
    }

    /// The other processes, to exchange with, when the ranks are spread.
    pub fn dist_mut(&mut self) -> Option<&mut Dist> {
        self.dist.as_mut()
    }

    /// The trace, when the run is traced.
    pub fn trace_mut(&mut self) -> Option<&mut Trace> {
        self.trace.as_mut()
    }

    /// A new request of the running rank.
    pub fn request(&mut self, work: Work, done: bool) -> usize {
        self.p2p.request(&self.sched, work, done)
    }

    /// A new request of the running rank, complete at `at` (a one-sided
    /// request form's local completion, known when it is issued).
    pub fn request_done_at(&mut self, at: Ns) -> usize {
        let id = self.request(Work::Send, true);
        if let Some(q) = self.p2p.get_mut(id) {
            q.at = at;
        }
        id
    }

    /// The running rank sends `data` to world rank `dst` (rank `from` in
    /// communicator `comm`); returns the request.
    pub fn send(&mut self, data: Vec<u8>, dst: u32, comm: u32, from: c_int, tag: c_int, mode: Mode) -> usize {
        let (s, t, c) = (&mut self.sched, &mut self.timing, &self.comms);
        self.p2p.send(s, t, c, data, dst, comm, from, tag, mode)
    }

    /// The running rank posts a receive; returns the request.
    pub fn recv(&mut self, spec: RecvSpec) -> usize {
        self.p2p
            .recv(&mut self.sched, &mut self.timing, &self.comms, spec)
    }

    /// Whether a message that fits `spec` has arrived at the running rank.
    pub fn probe(&self, spec: &RecvSpec) -> Option<(c_int, c_int, usize)> {
        self.p2p.probe(&self.sched, spec)
    }

    /// The running rank is about to block in `MPI_Probe` for `spec`.
    pub fn await_probe(&mut self, spec: RecvSpec) {
        self.p2p.await_probe(&self.sched, spec);
    }

    /// Whether collective `op` (`blocking` or not) runs as its
    /// algorithm's point-to-point steps on this machine (the machine
    /// file's choice, for a blocking call only).
    pub fn runs_steps(&self, op: &Op, blocking: bool) -> bool {
        op.algorithm(self.timing.machine(), blocking).is_some()
    }

    /// The running rank joins its next collective; returns the request
    /// and the steps it runs first (see [`Colls::join`]).
    pub fn join(&mut self, entry: Entry) -> Joined {
        let (b, colls, _) = self.below();
        match colls.join(b, entry) {
            Ok(joined) => joined,
            Err(what) => self.fatal("collective", &what),
        }
    }

    /// The running rank, rank `me` of communicator `comm`, posts `step`
    /// of an algorithmic collective: a send or receive of its size and no
    /// data, through point-to-point in the steps' own context; returns
    /// the request (`None` for a `WaitAll`, which posts nothing).
    pub fn post_step(&mut self, comm: usize, me: u32, step: Step) -> Option<usize> {
        let (s, t, c) = (&mut self.sched, &mut self.timing, &self.comms);
        let world = |peer: u32| c.world_of(comm, peer, s.current());
        Some(match step {
            Step::Isend { to, bytes } => {
                let dst = world(to);
                self.p2p.step_send(s, t, c, bytes, dst, comm as u32, me as c_int)
            }
            Step::Irecv { from, .. } => self.p2p.step_recv(s, t, c, comm as u32, from as c_int),
            Step::WaitAll => return None,
        })
    }

    /// The running rank enters MPI routine `routine`: the CPU time it
    /// used since its last call is charged to its clock (returned), and
    /// the call begins in the trace.
    pub fn enter_call(&mut self, routine: &'static str) -> (f64, Result<(), String>) {
        let r = self.sched.current();
        let factor = self.timing.cpu_factor();
        let cpu = if factor > 0.0 {
            pnmpi_sdk::clock::thread_cpu_ns()
        } else {
            0
        };
        let rank = self.sched.rank_mut(r);
        let mut compute = 0.0;
        if rank.initialized && !rank.finalized && factor > 0.0 {
            compute = self.timing.compute(r, cpu.saturating_sub(rank.cpu_mark));
            rank.clock += compute;
            rank.stats.compute += compute;
        }
        rank.stats.calls += 1;
        rank.routine = routine;
        let clock = rank.clock;
        let traced = self.trace.as_mut().map_or(Ok(()), |t| t.begin(r, routine, clock));
        (compute, traced)
    }

    /// The running rank leaves its MPI call: the CPU used from now on is
    /// its own again, and the call ends in the trace.
    pub fn leave_call(&mut self) -> Result<(), String> {
        let r = self.sched.current();
        if self.timing.cpu_factor() > 0.0 {
            self.sched.rank_mut(r).cpu_mark = pnmpi_sdk::clock::thread_cpu_ns();
        }
        let clock = self.sched.rank(r).clock;
        self.trace.as_mut().map_or(Ok(()), |t| t.end(r, clock))
    }

    /// Whether the run is traced.
    pub fn traced(&self) -> bool {
        self.trace.is_some()
    }

    /// Adds arguments to the running rank's event, when traced.
    pub fn trace_event(&mut self, f: impl FnOnce(&mut RawRecord)) {
        let r = self.sched.current();
        if let Some(t) = self.trace.as_mut() {
            f(t.event(r));
        }
    }

    /// Starts the running rank's file with its `MPI_Init` (`routine`),
    /// at virtual time 0, when traced.
    pub fn trace_start(&mut self, routine: &'static str) -> Result<(), String> {
        let r = self.sched.current();
        match self.trace.as_mut() {
            Some(t) => {
                t.start(r);
                t.begin(r, routine, 0.0).and_then(|()| t.end(r, 0.0))
            }
            None => Ok(()),
        }
    }

    /// Completes the running rank's file at `MPI_Finalize`, when traced.
    pub fn trace_finish(&mut self) -> Result<(), String> {
        let r = self.sched.current();
        let clock = self.sched.rank(r).clock;
        self.trace.as_mut().map_or(Ok(()), |t| t.finish(r, clock))
    }

    /// Stops the run, from inside an engine step (which holds the
    /// engine): names the running rank and writes out the trace through
    /// `self`, never through a second borrow of the engine.
    pub fn fatal(&mut self, routine: &str, what: &str) -> ! {
        if routine != "tracer" {
            if let Some(t) = self.trace.as_mut() {
                t.abandon();
            }
        }
        stop(&self.sched.current().to_string(), routine, what)
    }

    /// Hands the records the layers owe other processes to the spread.
    fn post_records(&mut self) {
        let Some(d) = self.dist.as_mut() else { return };
        let posted = d.post(
            self.p2p.take_remote(),
            self.colls.take_shares(),
            self.windows.take_remote(),
        );
        if let Err(what) = posted {
            self.fatal("pnmpi vranks", &what);
        }
    }

    /// Between two windows: moves the records, then agrees on the next
    /// window. Returns its end, or `None` when no process has anything
    /// left to do.
    fn next_window(&mut self) -> Option<f64> {
        // The earliest clock of a rank granted a lock behind the present:
        // the next window starts no later.
        let mut behind: Option<f64> = None;
        loop {
            self.post_records();
            let next = [self.sched.next_time(), behind, self.windows.earliest_event()]
                .into_iter()
                .flatten()
                .min_by(f64::total_cmp);
            // Lock events of windows across processes that are due wait
            // for an exchange, after which every process has them all.
            let upto = self.dist.as_ref()?.end();
            let due = self.windows.due(true, upto);
            match self.dist.as_mut()?.between(next, due) {
                Between::Window(end) => return end,
                Between::Records(got) => {
                    let mut d = self.dist.take()?;
                    let (b, colls, windows) = self.below();
                    let applied = d.apply(&got, (colls, windows), b);
                    self.dist = Some(d);
                    if let Err(what) = applied {
                        self.fatal("pnmpi vranks", &what);
                    }
                    // Every lock event of the window just run has come
                    // with the first exchange: the locks are granted in
                    // virtual-time order, in every process alike.
                    let blocks = self.comms.blocks;
                    for (r, at) in self.windows.resolve(true, upto, |r| blocks.local(r)) {
                        self.sched.wake(r, at);
                        behind = Some(behind.map_or(at, |b| b.min(at)));
                    }
                }
            }
        }
    }

    /// Grants the locks of windows within this process asked for or
    /// released earlier than both the next event and `end` (the time
    /// window's): no rank here can ask before them any more.
    fn grant_locks(&mut self, end: Ns) {
        if !self.windows.locks_asked() {
            return;
        }
        let upto = self.sched.next_time().unwrap_or(f64::INFINITY).min(end);
        let blocks = self.comms.blocks;
        for (r, at) in self.windows.resolve(false, upto, |r| blocks.local(r)) {
            self.sched.wake(r, at);
        }
    }

    /// The deadlock report, if ranks of this process are not done, and
    /// the status to exit with.
    fn end_status(&self, spread: bool) -> c_int {
        let stuck = self.sched.stuck();
        if stuck.is_empty() {
            return self.sched.status();
        }
        let list: Vec<String> = stuck
            .iter()
            .take(8)
            .map(|&r| format!("{r} in {}", self.sched.rank(r).routine))
            .collect();
        let mut report = say::line(
            "vranks",
            Level::Error,
            None,
            format_args!(
                "deadlock at virtual time {:.9} s: {} of {} ranks{} wait for messages or collectives that no rank will send or join (ranks {}{})",
                self.sched.now() * 1e-9,
                stuck.len(),
                self.sched.local_ranks().len(),
                if spread { " of this process" } else { "" },
                list.join(", "),
                if stuck.len() > 8 { ", ..." } else { "" }
            ),
        );
        let held = self.p2p.held_sends(&stuck);
        if !held.is_empty() {
            report += &say::line(
                "vranks",
                Level::Error,
                None,
                format_args!(
                    "{} send(s) above the eager threshold wait for receives never posted ({}{}): {}",
                    held.len(),
                    held.iter().take(8).cloned().collect::<Vec<_>>().join(", "),
                    if held.len() > 8 { ", ..." } else { "" },
                    pnmpi_sim::kernel::p2p::DEPENDS_ON_BUFFERING
                ),
            );
        }
        // One write: another process's report cannot split it.
        say::write_line(&report);
        1
    }

    /// The progress line.
    fn progress(&self, started: std::time::Instant) {
        let whose = match &self.dist {
            Some(d) => {
                let local = self.sched.local_ranks();
                format!(" (process {}: ranks {}..{})", d.me(), local.start, local.end)
            }
            None => String::new(),
        };
        self.sched.progress(started, &whose);
    }
}

/// The running rank's number.
pub fn me() -> u32 {
    with(|e| e.sched.current())
}

/// Suspends the running rank until the scheduler resumes it.
pub fn switch_out() {
    sched::suspend(with(|e| e.sched.leaving()));
}

/// Blocks the running rank until `need` of its requests complete (their
/// completion wakes it), resuming no earlier than `after` (the latest
/// completion among those it waits for that are complete already).
pub fn block(need: u32, after: f64) {
    if need == 0 {
        return;
    }
    with(|e| e.sched.block(need, after));
    switch_out();
}

/// Blocks the running rank without a request, until an event wakes it
/// (a message arriving for `MPI_Probe`), then moves its clock to when it
/// woke, counting the wait. If nothing ever wakes it, the run ends with
/// it in the deadlock report.
pub fn block_until_woken() {
    suspend_until_woken();
    with(|e| e.sched.woken());
}

/// Blocks the running rank until an event wakes it, its clock left
/// where it is (the caller moves it to what woke it).
pub fn suspend_until_woken() {
    with(|e| e.sched.block_until_woken());
    switch_out();
}

/// Lets the simulation catch up with the running rank's clock, so that
/// every event before it has happened (before a test or a probe looks).
pub fn catch_up() {
    if with(|e| e.sched.behind()) {
        switch_out();
    }
}

/// Lets every event before `t` happen before the running rank goes on
/// (its clock stays where it is).
pub fn sleep_until(t: f64) {
    with(|e| {
        let r = e.sched.current();
        e.sched.push(t, Event::Resume(r));
    });
    switch_out();
}

/// Lets every event queued up to the running rank's time happen first
/// (the ranks a rendezvous released there), then runs it on.
pub fn let_others_first() {
    with(|e| {
        let r = e.sched.current();
        let t = e.sched.rank(r).clock;
        e.sched.push(t, Event::Resume(r));
    });
    switch_out();
}

/// Yields the running rank until the next event, or until one of the
/// requests it polls (`watched`) completes if that is known to come first
/// (a test that found nothing: polling lets virtual time pass to when
/// something happens), or, when this process has none but others may
/// send some, until the end of the window, when their records come.
pub fn idle(watched: impl Iterator<Item = usize>) {
    let wait = with(|e| {
        let clock = e.sched.rank(e.sched.current()).clock;
        let own = e.p2p.next_completion(watched, clock);
        let window_end = e.dist.as_ref().map(Dist::end);
        e.sched.idle(own, window_end)
    });
    if wait {
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
                Some(end) => end,
                None => break,
            }
        } else {
            f64::INFINITY
        };
        while let Some((_, ev)) = with(|e| {
            e.grant_locks(end);
            e.sched.pop_before(end)
        }) {
            match ev {
                Event::Deliver(m) => with(|e| {
                    let (s, t, c) = (&mut e.sched, &mut e.timing, &e.comms);
                    e.p2p.arrive(s, t, c, m);
                }),
                Event::Resume(r) => resume(r),
                Event::Flows => with(|e| e.p2p.step_flows(&mut e.sched, &mut e.timing)),
            }
            if progress
                && with(|e| e.sched.counts().0).is_multiple_of(65536)
                && last_progress.elapsed().as_secs() >= 5
            {
                last_progress = std::time::Instant::now();
                with(|e| e.progress(started));
            }
        }
        if !spread {
            break;
        }
    }
    let status = with(|e| e.end_status(spread));
    with(|e| e.sched.forget_contexts());
    status
}

/// Resumes rank `r` (at the current event's time).
fn resume(r: u32) {
    let Some(mut ctx) = with(|e| e.sched.begin_resume(r)) else {
        return;
    };
    let out = sched::resume(r, &mut ctx);
    with(|e| e.sched.end_resume(r, ctx, out));
}

/// The engine, for the report after the ranks are done.
pub fn finish() -> Box<Engine> {
    let p = ENGINE.swap(std::ptr::null_mut(), Ordering::Relaxed);
    FINISHED.store(true, Ordering::Relaxed);
    // SAFETY: `run` made `p` with Box::into_raw and no context is running.
    unsafe { Box::from_raw(p) }
}

/// Called by the `exit` wrapper inside a rank: the rank is done with
/// `status`, and never runs again; the process goes on with the others.
pub fn exit_rank(status: c_int) -> ! {
    with(|e| e.sched.exit_current(status));
    switch_out();
    unreachable!("a rank that exited was resumed")
}
