//! The rank's state and what the model needs to move its threads'
//! clocks: the processor model at every MPI call's entry, the
//! communicators' shadows, the requests in flight, and the totals for the
//! report.
//!
//! One clock per thread ([`crate::threads`]). The state sits behind a
//! lock that is never held across an MPI call of the module's own; while
//! a thread holds it, the state's clock is that thread's.

use crate::threads::{self, Threads};
use pnmpi_mpi_sys::ffi::{MPI_Request, MPI_Status};
use pnmpi_sim::live::deadlock::Hop;
use pnmpi_sim::model::{Model, Msg};
use pnmpi_sim::units::Ns;
use pnmpi_trace::routine::Coll;
use std::collections::HashMap;
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering::Relaxed};
use std::sync::Mutex;

/// Virtual ns at the entry of the latest MPI call of the rank (of any of
/// its threads), after the compute before it was charged: published to modules above as the
/// global `vtime_call_start` (the tracer's `PNMPI_TRACE_CLOCK=vtime`).
static CALL_START: AtomicI64 = AtomicI64::new(0);
/// Virtual ns at the return of the rank's latest MPI call, on its
/// thread's clock (global
/// `vtime_call_end`); left behind [`CALL_START`] by `MPI_Finalize`,
/// which never returns to the model.
static CALL_END: AtomicI64 = AtomicI64::new(0);

/// Offers the call bounds to the modules above (the `PNMPI_Init` hook),
/// so that a tool there can time each call on the virtual clock exactly
/// as the model does, without a clock read of its own.
pub fn publish() -> Result<(), pnmpi_sdk::services::Error> {
    pnmpi_sdk::services::register_global("vtime_call_start", &CALL_START)?;
    pnmpi_sdk::services::register_global("vtime_call_end", &CALL_END)
}

/// A communicator of the application and its shadow.
pub struct CommInfo {
    /// The module's duplicate: timestamps and entry-time reductions travel
    /// on it, so they never match the application's messages.
    pub shadow: u64,
    /// An intercommunicator: point-to-point is timed, collectives are not.
    pub inter: bool,
    /// World rank of each rank a point-to-point call addresses (the remote
    /// group of an intercommunicator).
    pub peers: Vec<u32>,
    /// Node of each member of the local group, in rank order.
    pub nodes: Vec<u32>,
    /// This rank's index in the local group.
    pub me: u32,
}

/// A persistent send's arguments, timestamped at each `MPI_Start`.
#[derive(Clone, Copy)]
pub struct PersistentSend {
    /// The application's communicator.
    pub comm: u64,
    /// Destination rank in it.
    pub dest: c_int,
    /// Tag.
    pub tag: c_int,
    /// Payload.
    pub bytes: u64,
    /// Its send mode.
    pub mode: pnmpi_sim::kernel::p2p::Mode,
}

/// What a request of the application will complete, in virtual time.
pub enum Req {
    /// A receive on `comm`, posted at `posted`.
    Recv {
        /// The application's communicator.
        comm: u64,
        /// Virtual time of the post (`MPI_Irecv`, `MPI_Start`).
        posted: Ns,
        /// A persistent receive (`MPI_Recv_init`): kept after completion.
        persistent: bool,
        /// Started and not yet completed.
        active: bool,
        /// `MPI_Cancel` was called on it.
        cancelled: bool,
        /// Its timestamp, read before the application completed it (this
        /// rank waited for an acknowledgement, or chose among requests in
        /// virtual order): when it completes and the sender's post.
        early: Option<(Ns, Ns)>,
        /// Its source and tag, when neither is a wildcard: MPI matches
        /// the receives of one source and tag in the order they were
        /// posted, so their timestamps are read in that order.
        from: Option<(c_int, c_int)>,
        /// Its place in this rank's posting order ([`State::recvs`]).
        seq: u64,
        /// Its source and tag as posted, wildcards and all.
        pattern: (c_int, c_int),
        /// The thread that posted (or started) it.
        owner: u32,
    },
    /// A send: its CPU overhead ends at `posted.free`, a rendezvous once
    /// its acknowledgement says.
    Send {
        /// Its post, as its sender saw it.
        posted: SendClock,
        /// The arguments of a persistent send (`MPI_Send_init` ...).
        persistent: Option<PersistentSend>,
        /// Started and not yet completed.
        active: bool,
    },
    /// A nonblocking collective: the reduction of the members' entry
    /// times and sizes, posted on the shadow with it.
    Coll(Box<Pending>),
}

/// Totals for the report (shared with libvranks).
pub use pnmpi_sim::live::Totals;

/// The rank's state between `MPI_Init` and `MPI_Finalize`.
pub struct State {
    /// World rank.
    pub rank: u32,
    /// Node of each world rank on the target machine.
    pub node_of: Vec<u32>,
    /// The communication model.
    pub model: Box<dyn Model>,
    /// The target machine (algorithmic collectives replay on it).
    pub machine: pnmpi_sim::machine::Machine,
    /// The model's name, to build fresh ones for those replays.
    pub model_name: String,
    /// How the CPU time measured here is charged (factor, clock reads).
    pub charge: pnmpi_sim::kernel::CpuCharge,
    /// The `compute` service of a `replay` module below, if any: it
    /// records each interval, or replaces it by the recorded one, so that
    /// replayed runs repeat their virtual times.
    pub recorded: Option<ComputeFn>,
    /// The calling thread's virtual clock, ns since the end of `MPI_Init`.
    pub clock: Ns,
    /// Virtual time at the calling thread's current call's entry.
    pub call_start: Ns,
    /// The latest partner post among what that call completed.
    pub call_late: Ns,
    /// The rank's threads and their clocks.
    pub threads: Threads,
    /// Report totals, summed over the threads.
    pub totals: Totals,
    /// The application's communicators by handle.
    pub comms: HashMap<u64, CommInfo>,
    /// The application's requests in flight, by handle.
    pub reqs: HashMap<u64, Req>,
    /// Requests that MPI completed in one thread and whose handle it gave
    /// to a newer request of another before the first thread timed the
    /// completion, oldest first ([`State::track`]).
    pub displaced: Vec<(u64, Req)>,
    /// The module's world duplicate for acknowledgements of rendezvous
    /// sends.
    pub ack_comm: u64,
    /// Rendezvous sends posted so far: the last one's number.
    pub sends: u64,
    /// Receives posted so far: the last one's number.
    pub recvs: u64,
    /// Each channel's latest envelope (destination, communicator): the
    /// kernel's channel order, kept by the sender.
    pub channels: pnmpi_sim::kernel::p2p::Channels<(u32, u64)>,
    /// The model's lookahead, which a rendezvous envelope travels.
    pub lookahead: Ns,
    /// Acknowledgements received before their send completed, by
    /// receiver (world rank) and send number: completion and receive post.
    pub acks: HashMap<(u32, u64), (Ns, Ns)>,
    /// Matched messages (`MPI_Mprobe`): communicator and probe time.
    pub messages: HashMap<u64, (u64, Ns)>,
    /// Wall clock at the end of `MPI_Init`, ns.
    pub wall_start: u64,
}

impl State {
    /// Tracks request `handle`. Under `MPI_THREAD_MULTIPLE`, an active
    /// request that has its handle already completed in MPI (which reuses
    /// a completed request's handle) in a thread that has not timed it
    /// yet: it waits aside for that.
    pub fn track(&mut self, handle: u64, req: Req) {
        if let Some(old) = self.reqs.insert(handle, req).filter(|_| multiple()) {
            let active = match &old {
                Req::Recv {
                    active, persistent, ..
                } => *active && !*persistent,
                Req::Send {
                    active, persistent, ..
                } => *active && persistent.is_none(),
                Req::Coll(_) => true,
            };
            if active {
                self.displaced.push((handle, old));
            }
        }
    }

    /// At a completion of `handle`: its oldest displaced request, if any,
    /// goes back into the table for the completion to time; the newer one
    /// that held the handle is returned, to go back after.
    pub fn claim_displaced(&mut self, handle: u64) -> Option<Req> {
        let i = self.displaced.iter().position(|d| d.0 == handle)?;
        let (_, old) = self.displaced.remove(i);
        self.reqs.insert(handle, old)
    }

    /// The message from world rank `src` to world rank `dst`.
    pub fn msg(&self, src: u32, dst: u32, bytes: u64) -> Msg {
        Msg::between(src, dst, bytes, |r| {
            self.node_of.get(r as usize).copied().unwrap_or(0)
        })
    }
}

/// `replay`'s `compute` service (signature `"p"`): takes an interval's
/// CPU ns, leaves it, or replaces it by the recorded one.
pub type ComputeFn = unsafe extern "C" fn(*mut u64) -> std::ffi::c_int;

/// `replay`'s `compute` service, if a `replay` module is loaded.
pub fn recorded_compute() -> Option<ComputeFn> {
    use pnmpi_sdk::services;
    let module = services::module_by_name("replay").ok()?;
    let f = services::service_by_name(module, "compute", "p")
        .ok()?
        .function()?;
    // SAFETY: signature "p" is `replay`'s promise that the function is a
    // `ComputeFn`; it was cast to the services' common type to be offered.
    Some(unsafe { std::mem::transmute::<pnmpi_sdk::services::ServiceFn, ComputeFn>(f) })
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// MPI granted `MPI_THREAD_MULTIPLE`: threads call MPI at once, and the
/// point-to-point calls keep their timestamps in step ([`crate::p2p`]).
static MULTIPLE: AtomicBool = AtomicBool::new(false);

/// Notes the thread level MPI granted: whether it is `MPI_THREAD_MULTIPLE`.
pub fn set_multiple(multiple: bool) {
    MULTIPLE.store(multiple, Relaxed);
}

/// Whether threads may call MPI at once (see [`set_multiple`]).
pub fn multiple() -> bool {
    MULTIPLE.load(Relaxed)
}

/// Runs `f` on the state, with the calling thread's clock in it, if MPI
/// is running under the module.
pub fn with<R>(f: impl FnOnce(&mut State) -> R) -> Option<R> {
    let mut guard = STATE.lock().unwrap_or_else(|e| e.into_inner());
    let st = guard.as_mut()?;
    let mut mine = threads::mine();
    if !mine.known() {
        mine = st.threads.newcomer(mine.last_exit);
        ENDING.with(|_| ());
    }
    threads::set(mine);
    st.clock = mine.clock;
    st.call_start = mine.call_start;
    st.call_late = mine.call_late;
    let r = f(st);
    mine.clock = st.clock;
    mine.call_start = st.call_start;
    mine.call_late = st.call_late;
    st.threads.ends.insert(mine.number, st.clock);
    threads::set(mine);
    Some(r)
}

/// Installs the state at the end of `MPI_Init`: the calling thread's
/// clock starts at 0.
pub fn install(state: State) {
    *STATE.lock().unwrap_or_else(|e| e.into_inner()) = Some(state);
}

/// Removes the state at `MPI_Finalize`, the calling thread's clock in
/// it: later calls pass through.
pub fn take() -> Option<State> {
    with(|_| ())?;
    STATE.lock().unwrap_or_else(|e| e.into_inner()).take()
}

/// Charges `cpu` ns of measured CPU time, scaled, to the calling thread.
fn charge(st: &mut State, cpu: u64) {
    let mut used = st.charge.net(cpu);
    if let Some(recorded) = st.recorded {
        // SAFETY: `used` is a local `u64`, the service's argument.
        unsafe { recorded(&mut used) };
    }
    let node = st.node_of.get(st.rank as usize).copied().unwrap_or(0);
    let v = st.charge.target(&st.machine, node, used);
    st.clock += v;
    st.totals.compute += v;
}

/// An MPI call starts: the CPU time since the thread's last call, scaled,
/// moves its clock, and the main thread joins the threads that ended.
/// Returns whether the call is timed (MPI is running).
pub fn enter() -> bool {
    let now = pnmpi_sdk::clock::thread_cpu_ns();
    let last = threads::mine().last_exit;
    with(|st| {
        charge(st, now.saturating_sub(last));
        if threads::mine().number == st.threads.main {
            st.clock = st.clock.max(st.threads.joined);
        }
        st.call_start = st.clock;
        st.call_late = f64::NEG_INFINITY;
        CALL_START.store(st.clock.round() as i64, Relaxed);
    })
    .is_some()
}

thread_local! {
    /// Its destructor tells the rank that the thread ended ([`ended`]).
    static ENDING: Ending = const { Ending };
}

/// A thread's end, when its thread-locals go.
struct Ending;

impl Drop for Ending {
    fn drop(&mut self) {
        ended();
    }
}

/// The calling thread ends: the CPU time after its last call is charged,
/// and its end is for the main thread to join.
fn ended() {
    let mine = threads::mine();
    if !mine.known() {
        return;
    }
    let now = pnmpi_sdk::clock::thread_cpu_ns();
    with(|st| {
        if mine.number == st.threads.main {
            return;
        }
        charge(st, now.saturating_sub(mine.last_exit));
        st.threads.joined = st.threads.joined.max(st.clock);
        st.threads.live = st.threads.live.saturating_sub(1);
    });
}

/// Threads of the rank that called MPI and have not ended (1 once MPI
/// is running, without threads).
pub fn live_threads() -> u32 {
    with(|st| st.threads.live).unwrap_or(1)
}

/// The call that [`enter`] started returns: its virtual duration is split
/// into waiting for partners and the model's own charges, and the CPU
/// clock restarts for the thread's next interval.
pub fn leave(timed: bool) {
    if timed {
        with(|st| {
            let dur = (st.clock - st.call_start).max(0.0);
            let wait = (st.call_late - st.call_start).clamp(0.0, dur);
            st.totals.wait += wait;
            st.totals.comm += dur - wait;
            st.totals.calls += 1;
            CALL_END.store(st.clock.round() as i64, Relaxed);
        });
    }
    let mut mine = threads::mine();
    mine.last_exit = pnmpi_sdk::clock::thread_cpu_ns();
    threads::set(mine);
}

/// Runs `call`, the body of a wrapper, between [`enter`] and [`leave`]:
/// it learns whether the call is timed (MPI is running under the
/// module), and its early returns leave too.
pub fn call<R>(call: impl FnOnce(bool) -> R) -> R {
    let timed = enter();
    let r = call(timed);
    leave(timed);
    r
}

/// Runs `real`, an MPI call the model does not time, so that the CPU
/// time it takes is not counted as the application's.
pub fn untimed<R>(real: impl FnOnce() -> R) -> R {
    call(|_| real())
}

/// A posted send, as the sender's clock sees it.
#[derive(Clone, Copy)]
pub struct SendClock {
    /// Virtual time of the post.
    pub post: Ns,
    /// When the sender's CPU is free again.
    pub free: Ns,
    /// A rendezvous: this rank's wait for the receiver (its world rank
    /// and the send's number, which its acknowledgement names).
    pub ack: Option<Hop>,
}

/// A nonblocking collective in flight: its entry-time reduction.
pub struct Pending {
    pub comm: u64,
    pub coll: Coll,
    pub root: Option<c_int>,
    pub req: MPI_Request,
    /// This member's entry and size, then the reduced maxima: from
    /// `Box::into_raw`, as MPI reads and writes it until the reduction
    /// completes; `coll::finish` frees it.
    pub buf: *mut [f64; 4],
}

// SAFETY: a request handle names the same request in every thread, and
// the buffer is the module's own heap allocation; the state's lock
// serialises their use.
unsafe impl Send for Pending {}

/// A blank status, for calls given `MPI_STATUS_IGNORE`.
pub fn blank_status() -> MPI_Status {
    // SAFETY: MPI_Status is a C struct of integers, valid when zeroed.
    unsafe { std::mem::zeroed() }
}
