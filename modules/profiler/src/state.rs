//! What each thread records, and the hot path that records it.
//!
//! Choice: **thread-local blocks of single-writer counters.** Each thread
//! that calls MPI gets one block, allocated at its first call and never
//! freed or resized, so the steady state allocates nothing and takes no
//! lock. Its counters are atomics written only by their thread with a
//! relaxed load and store (plain moves, no `lock` prefix): no contention,
//! and `MPI_Finalize` can read every block without a data race. Blocks are
//! linked into a lock-free list (one compare-and-swap per thread, ever)
//! so that `MPI_Finalize` finds them all.
//!
//! **Recording off the critical path.** What a wrapper does after its call
//! returns delays what the application does next, and for a receive that
//! is the reply a peer is waiting for: in a ping-pong, a receive's end and
//! the next send's start are the whole critical path. So a *waiting*
//! routine ([`waits`]: blocking receives, waits, probes, blocking
//! collectives) does its bookkeeping before it calls MPI, where the rank
//! is about to wait anyway. It finds its call site and its bytes there, and
//! after the call only reads the clock and leaves its numbers in the
//! thread's pending slot. The next call of the thread records them, at its
//! own quiet moment: before it waits, or after it sent. Every record goes
//! through the pending one first, so calls are accounted in their order.

use crate::clock::{self, Clock};
use crate::config::{Bins, Config};
use pnmpi_mpi_sys::{same_bytes, ROUTINE_COUNT};
use pnmpi_sdk::callsite::{self, Counter, Routes, Table};
use pnmpi_sdk::per_routine;
use pnmpi_sdk::sizes::SizeCache;
use std::cell::Cell;
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicUsize, Ordering::*};

/// Slots of a thread's call-site table.
const SITES: usize = 4096;
/// `dist_of` value of a routine without distributions.
const NO_DIST: u16 = u16::MAX;

/// Count, total, min and max of durations (ticks), and the bytes moved.
pub struct Series {
    /// Calls or phases.
    pub count: Counter,
    /// Their summed ticks.
    pub total: Counter,
    /// The shortest, ticks (`u64::MAX` before the first).
    pub min: Counter,
    /// The longest, ticks.
    pub max: Counter,
    /// Bytes moved.
    pub bytes: Counter,
}

impl Default for Series {
    fn default() -> Series {
        Series {
            count: Counter::default(),
            total: Counter::default(),
            min: Counter::new(u64::MAX),
            max: Counter::default(),
            bytes: Counter::default(),
        }
    }
}

impl Series {
    /// Counts one call of `ticks` that moved `bytes`.
    #[inline(always)]
    pub fn add(&self, ticks: u64, bytes: u64) {
        self.add_time(ticks);
        self.bytes.add(bytes);
    }

    /// Counts one call or phase of `ticks` that moves no data.
    #[inline(always)]
    pub fn add_time(&self, ticks: u64) {
        self.count.add(1);
        self.total.add(ticks);
        if ticks < self.min.get() {
            self.min.set(ticks);
        }
        if ticks > self.max.get() {
            self.max.set(ticks);
        }
    }
}

/// A distribution over linear bins, the last one for overflow.
pub struct Hist {
    /// Counts per bin, the overflow last.
    pub bins: Box<[Counter]>,
    /// 2^63 / (units per bin), rounded up, so that a bin is one widening
    /// multiply and a shift away: an integer division costs tens of
    /// cycles, and so do the float conversions of a u64.
    scale: u64,
}

impl Hist {
    fn new(bins: &Bins, units_per_bin: f64) -> Hist {
        Hist {
            bins: (0..=bins.bins).map(|_| Counter::default()).collect(),
            scale: (9_223_372_036_854_775_808.0 / units_per_bin.max(1.0)).ceil() as u64,
        }
    }

    /// Counts one value (ticks or bytes).
    #[inline(always)]
    pub fn add(&self, value: u64) {
        let bin = ((u128::from(value) * u128::from(self.scale)) >> 63) as usize;
        self.bins[bin.min(self.bins.len() - 1)].add(1);
    }
}

/// Latency and size distributions of one selected routine.
pub struct RoutineHistograms {
    /// Durations, ticks.
    pub latency: Hist,
    /// Bytes.
    pub size: Hist,
}

/// One thread's profile.
pub struct Block {
    /// The next block of the list of all blocks.
    next: AtomicPtr<Block>,
    /// How many of this thread's MPI calls are in progress: a call made
    /// while another is (a layer below calling `MPI_X` at the top) is
    /// counted, but its time is already the outer call's.
    depth: AtomicU32,
    /// When the last outermost call returned; 0 before the first.
    last_exit: Counter,
    /// Computation granularity: the gaps between outermost calls.
    pub comp: Series,
    /// Their distribution.
    pub comp_hist: Hist,
    /// Communication overhead, the outermost calls, is the routines' calls
    /// but these (no separate series, to keep the hot path short).
    pub nested: Series,
    /// The outermost calls' distribution.
    pub comm_hist: Hist,
    /// Each routine's calls that no call site holds (all, without call
    /// sites), by routine id. Fixed-size arrays: the id is a constant in
    /// each wrapper, so indexing needs no bounds check.
    pub routines: Box<[Series; ROUTINE_COUNT]>,
    /// Each routine's index in `dists`, or `NO_DIST`.
    dist_of: Box<[u16; ROUTINE_COUNT]>,
    /// The selected routines' distributions, in `Config::distributions` order.
    pub dists: Box<[RoutineHistograms]>,
    /// Call sites, if recorded.
    pub sites: Option<Table<Series>>,
    routes: Box<[Routes; ROUTINE_COUNT]>,
    /// The last waiting call, not yet accounted.
    pending: Pending,
    /// The thread's last datatype size, for the calls' bytes.
    sizes: SizeCache,
}

/// A waiting call's numbers, kept until the thread's next quiet moment.
#[derive(Default)]
struct Pending {
    /// Its routine id plus one; 0: nothing pending.
    id: Counter,
    /// Its call-site slot plus one; 0: no site (its routine counts it).
    slot: Counter,
    t0: Counter,
    t1: Counter,
    bytes: Counter,
    /// 1 if it was an outermost call.
    outermost: Counter,
}

static BLOCKS: AtomicPtr<Block> = AtomicPtr::new(std::ptr::null_mut());

thread_local! {
    static BLOCK: Cell<Option<&'static Block>> = const { Cell::new(None) };
}

impl Block {
    fn new(config: &Config, clock: &Clock) -> Block {
        let time = |bins: &Bins| Hist::new(bins, clock.ticks(bins.resolution));
        Block {
            next: AtomicPtr::default(),
            depth: AtomicU32::new(0),
            last_exit: Counter::default(),
            comp: Series::default(),
            comp_hist: time(&config.comp),
            nested: Series::default(),
            comm_hist: time(&config.comm),
            routines: per_routine(|_| Series::default()),
            dist_of: per_routine(|id| {
                let name = pnmpi_mpi_sys::ROUTINE_NAMES[id];
                let index = config.distributions.iter().position(|d| d == name);
                index.map_or(NO_DIST, |i| i as u16)
            }),
            dists: config
                .distributions
                .iter()
                .map(|_| RoutineHistograms {
                    latency: time(&config.latency),
                    size: Hist::new(&config.size, config.size.resolution),
                })
                .collect(),
            sites: config.callsites.then(|| Table::new(SITES)),
            routes: per_routine(|_| Routes::default()),
            pending: Pending::default(),
            sizes: SizeCache::default(),
        }
    }

    /// Records one call of routine `id`, from `t0` to `t1` (ticks), after
    /// the pending one. Inlined into each wrapper: a shared function would
    /// cost a call and seven arguments on every MPI call.
    #[inline(always)]
    pub fn record(&self, id: usize, sp: usize, t0: u64, t1: u64, outermost: bool, bytes: u64) {
        self.flush();
        self.account(id, self.locate(id, sp), t0, t1, outermost, bytes);
    }

    /// The call-site slot of the running call of `id` whose wrapper read
    /// `sp`, if sites are recorded and it could be placed.
    #[inline(always)]
    fn locate(&self, id: usize, sp: usize) -> Option<usize> {
        let sites = self.sites.as_ref()?;
        sites.locate(&self.routes[id], id, sp)
    }

    /// Keeps a waiting call's numbers until the next quiet moment; its site
    /// slot was found before the call.
    #[inline(always)]
    fn defer(&self, id: usize, slot: Option<usize>, t0: u64, t1: u64, outermost: bool, bytes: u64) {
        // Set only by a call nested in this one: its record comes first.
        self.flush();
        let p = &self.pending;
        p.slot.set(slot.map_or(0, |i| i as u64 + 1));
        p.t0.set(t0);
        p.t1.set(t1);
        p.bytes.set(bytes);
        p.outermost.set(u64::from(outermost));
        p.id.set(id as u64 + 1);
    }

    /// Accounts the pending call, if any.
    #[inline(always)]
    pub fn flush(&self) {
        let p = &self.pending;
        let id = p.id.get();
        if id != 0 {
            p.id.set(0);
            let slot = p.slot.get().checked_sub(1).map(|i| i as usize);
            let (t0, t1, bytes) = (p.t0.get(), p.t1.get(), p.bytes.get());
            self.account(id as usize - 1, slot, t0, t1, p.outermost.get() != 0, bytes);
        }
    }

    /// Counts one call of routine `id` placed at call-site `slot`.
    #[inline(always)]
    fn account(&self, id: usize, slot: Option<usize>, t0: u64, t1: u64, outermost: bool, bytes: u64) {
        let ticks = t1.saturating_sub(t0);
        if outermost {
            let last = self.last_exit.get();
            if last != 0 {
                self.computed(t0.saturating_sub(last));
            }
            self.comm_hist.add(ticks);
            self.last_exit.set(t1);
        } else {
            self.nested.add_time(ticks);
        }
        match (slot, &self.sites) {
            (Some(i), Some(sites)) => sites.stats(i).add(ticks, bytes),
            _ => self.routines[id].add(ticks, bytes),
        }
        // Without distributions (the default), `dist_of` is all NO_DIST:
        // skipping it spares every call a load from a 1.2 kB table.
        if self.dists.is_empty() {
            return;
        }
        let dist = self.dist_of[id];
        if dist != NO_DIST {
            let dist = &self.dists[usize::from(dist)];
            dist.latency.add(ticks);
            dist.size.add(bytes);
        }
    }

    #[inline(always)]
    fn computed(&self, ticks: u64) {
        self.comp.add_time(ticks);
        self.comp_hist.add(ticks);
    }

    /// Ends the thread's last computation phase at `t` (MPI_Finalize's
    /// entry, in ticks).
    pub fn close(&self, t: u64) {
        self.flush();
        let last = self.last_exit.get();
        if last != 0 {
            self.computed(t.saturating_sub(last));
            self.last_exit.set(t);
        }
    }
}

/// The first thread's block (the thread that called `MPI_Init`), and that
/// thread's thread pointer: a thread-local lookup in a `dlopen`ed object
/// is a call to `__tls_get_addr`, while the thread pointer is one load.
static MAIN_BLOCK: AtomicPtr<Block> = AtomicPtr::new(std::ptr::null_mut());
static MAIN_THREAD: AtomicUsize = AtomicUsize::new(0);

/// The calling thread's thread pointer (`%fs:0` holds its own address).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn thread_pointer() -> usize {
    let tp: usize;
    // SAFETY: reads the first word of this thread's TCB, which the x86-64
    // TLS ABI defines as the thread pointer itself.
    unsafe {
        core::arch::asm!("mov {}, qword ptr fs:[0]", out(reg) tp, options(nostack, readonly, preserves_flags));
    }
    tp
}

/// The calling thread's block, made at its first call once `MPI_Init` has
/// set the time base; `None` before that.
#[inline(always)]
pub fn block() -> Option<&'static Block> {
    #[cfg(target_arch = "x86_64")]
    if thread_pointer() == MAIN_THREAD.load(Acquire) {
        // SAFETY: MAIN_BLOCK was set to a leaked, never freed block before
        // MAIN_THREAD was published with Release.
        return unsafe { MAIN_BLOCK.load(Relaxed).as_ref() };
    }
    BLOCK.with(Cell::get).or_else(create)
}

#[cold]
#[inline(never)]
fn create() -> Option<&'static Block> {
    let block: &'static Block = Box::leak(Box::new(Block::new(crate::config::get()?, clock::get()?)));
    let mut head = BLOCKS.load(Acquire);
    loop {
        block.next.store(head, Relaxed);
        match BLOCKS.compare_exchange_weak(head, block as *const Block as *mut Block, Release, Acquire) {
            Ok(_) => break,
            Err(now) => head = now,
        }
    }
    BLOCK.with(|b| b.set(Some(block)));
    #[cfg(target_arch = "x86_64")]
    if MAIN_BLOCK
        .compare_exchange(
            std::ptr::null_mut(),
            block as *const Block as *mut Block,
            Relaxed,
            Relaxed,
        )
        .is_ok()
    {
        MAIN_THREAD.store(thread_pointer(), Release);
    }
    Some(block)
}

/// Every thread's block.
pub fn blocks() -> impl Iterator<Item = &'static Block> {
    let mut next = BLOCKS.load(Acquire);
    std::iter::from_fn(move || {
        // SAFETY: the list holds only leaked blocks, never freed; each
        // `next` was set before its block was published with Release.
        let block: &'static Block = unsafe { next.as_ref()? };
        next = block.next.load(Relaxed);
        Some(block)
    })
}

/// Whether `routine` is a *waiting* one: the rank's own work resumes at
/// its end, when a message or the other ranks arrive, so it records before
/// it calls MPI (see the module documentation). Blocking receives, waits
/// and probes, and blocking collectives; `_c` variants too. Evaluated at
/// compile time in each wrapper.
pub const fn waits(routine: &str) -> bool {
    const WAITING: [&str; 27] = [
        "MPI_Recv",
        "MPI_Mrecv",
        "MPI_Sendrecv",
        "MPI_Sendrecv_replace",
        "MPI_Probe",
        "MPI_Mprobe",
        "MPI_Wait",
        "MPI_Waitall",
        "MPI_Waitany",
        "MPI_Waitsome",
        "MPI_Barrier",
        "MPI_Bcast",
        "MPI_Reduce",
        "MPI_Allreduce",
        "MPI_Gather",
        "MPI_Gatherv",
        "MPI_Scatter",
        "MPI_Scatterv",
        "MPI_Allgather",
        "MPI_Allgatherv",
        "MPI_Alltoall",
        "MPI_Alltoallv",
        "MPI_Alltoallw",
        "MPI_Reduce_scatter",
        "MPI_Reduce_scatter_block",
        "MPI_Scan",
        "MPI_Exscan",
    ];
    let name = routine.as_bytes();
    let mut i = 0;
    while i < WAITING.len() {
        let w = WAITING[i].as_bytes();
        if same_bytes(name, w)
            || (name.len() == w.len() + 2
                && same_bytes(name.split_at(w.len()).0, w)
                && same_bytes(name.split_at(w.len()).1, b"_c"))
        {
            return true;
        }
        i += 1;
    }
    false
}

/// One MPI call in progress, from its wrapper's entry to its return.
pub struct Call {
    sp: usize,
    block: Option<&'static Block>,
    depth: u32,
    /// A waiting call's site slot and bytes, found before the call.
    early: Option<(Option<usize>, u64)>,
    t0: u64,
}

impl Call {
    /// Starts timing a call of routine `id`; inlined, so that the stack
    /// pointer is the wrapper's. A waiting routine (`WAITS`) records the
    /// pending call, finds its own site and counts its `bytes` first.
    #[inline(always)]
    pub fn enter<const WAITS: bool>(id: usize, bytes: impl FnOnce(&SizeCache) -> u64) -> Call {
        let sp = callsite::stack_pointer();
        let block = block();
        let mut early = None;
        let depth = block.map_or(0, |b| {
            let depth = b.depth.load(Relaxed);
            b.depth.store(depth + 1, Relaxed);
            if WAITS {
                b.flush();
                early = Some((b.locate(id, sp), bytes(&b.sizes)));
            }
            depth
        });
        Call {
            sp,
            block,
            depth,
            early,
            t0: clock::ticks(),
        }
    }

    /// Ends the call of routine `id` and records it, or leaves it pending
    /// if it waited; `bytes` runs after the clock stopped, so that its own
    /// MPI query is not timed as the call.
    #[inline(always)]
    pub fn leave(self, id: usize, bytes: impl FnOnce(&SizeCache) -> u64) {
        let t1 = clock::ticks();
        if let Some(block) = self.block {
            block.depth.store(self.depth, Relaxed);
            let outermost = self.depth == 0;
            match self.early {
                Some((slot, bytes)) => block.defer(id, slot, self.t0, t1, outermost, bytes),
                None => block.record(id, self.sp, self.t0, t1, outermost, bytes(&block.sizes)),
            }
        }
    }
}
