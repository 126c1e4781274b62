//! Recording: per-thread streams, their buffers, and the rank file.
//!
//! Thread safety under `MPI_THREAD_MULTIPLE` comes from thread-local
//! streams: each thread that calls MPI gets its own buffer and encoder
//! (found through one thread-local pointer), so the hot path takes no
//! lock, touches no shared cache line and allocates nothing. Only writing
//! a full buffer to the rank file takes the file's lock. At
//! `MPI_Finalize` (and at exit) the finalizing thread writes out every
//! thread's buffer; MPI requires the other threads to be out of MPI by
//! then, which is what makes that safe.

use crate::clock;
use crate::extract::Scratch;
use crate::output::Output;
use crate::sites::{self, Sites};
use pnmpi_mpi_sys::ffi::MPI_Datatype;
use pnmpi_sdk::say;
use pnmpi_sdk::sizes::SizeCache;
use pnmpi_trace::rank::{
    self, CollCall, P2p, P2pEnd, RankHeader, RawDone, RawEncoder, RawEvent, SiteCode, Sync, P2P_MAX,
    SMALL_MAX,
};
use pnmpi_trace::{container, rank_writer};
use std::cell::Cell;
use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicUsize, Ordering::Relaxed};
use std::sync::{Mutex, OnceLock};

/// Room that a call without arguments needs in a buffer.
const PLAIN_MAX: usize = 4 * pnmpi_trace::varint::MAX_LEN;

/// Room that an event of any of the fast paths (`plain`, `p2p`, `done`,
/// `coll`) needs.
const FAST_MAX: usize = max(max(PLAIN_MAX, P2P_MAX), SMALL_MAX);

const fn max(a: usize, b: usize) -> usize {
    if a > b {
        a
    } else {
        b
    }
}

/// Whether calls are being traced: from the end of the tracer's own set-up
/// in `MPI_Init` to `MPI_Finalize`.
static ON: AtomicBool = AtomicBool::new(false);

/// The rank's output, set once by `MPI_Init`.
static RUN: OnceLock<Run> = OnceLock::new();

/// Every stream ever created, for the final write-out.
static STREAMS: Mutex<Vec<StreamPtr>> = Mutex::new(Vec::new());

static NEXT_STREAM: AtomicU32 = AtomicU32::new(0);

/// The thread pointer of the thread that called `MPI_Init` while its
/// calls are traced (`usize::MAX`, no thread's, otherwise), and its
/// stream, set before and never cleared: that thread, usually the only
/// one, finds its stream without a thread-local lookup (`__tls_get_addr`
/// in a shared object), and without testing it for null. Thread pointers
/// are unique among live threads.
static MAIN_TP: AtomicUsize = AtomicUsize::new(usize::MAX);
static MAIN_STREAM: AtomicPtr<Stream> = AtomicPtr::new(std::ptr::null_mut());

/// This thread's pointer (its TCB address): one instruction on x86-64.
#[inline(always)]
fn thread_pointer() -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        let tp: usize;
        // SAFETY: reads the first word of the thread control block, which
        // x86-64 Linux keeps pointing to itself; no memory is written.
        unsafe {
            std::arch::asm!("mov {}, fs:0", out(reg) tp, options(nostack, readonly, preserves_flags, pure));
        }
        tp
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        usize::MAX - 1
    }
}

thread_local! {
    /// This thread's stream, or null before its first traced call.
    static CURRENT: Cell<*mut Stream> = const { Cell::new(std::ptr::null_mut()) };
}

/// The rank file being written.
pub struct Run {
    /// World rank.
    pub rank: i32,
    /// Trace folder.
    pub dir: PathBuf,
    file: Mutex<Output>,
    part: PathBuf,
    buffer: usize,
    /// Whether calls are located at their call sites (`argument sites`).
    sites: bool,
}

/// A thread's buffer and encoder state.
pub struct Stream {
    id: u32,
    enc: RawEncoder,
    buf: Box<[u8]>,
    len: usize,
    /// The fill past which the fast paths write the buffer out first:
    /// [`FAST_MAX`] short of its end (the buffer holds that or more).
    /// Only a write-out, which empties the buffer, and an event after
    /// [`take_p2p`] or the fast paths' room check, change `len`.
    limit: usize,
    /// Events in the chunks written (those in the buffer are the
    /// encoder's count).
    written: u64,
    /// Non-zero while inside a traced call: a call that re-enters the
    /// chain from below (a module calling plain `MPI_X`) is not traced
    /// again.
    depth: u32,
    /// Reusable space for the wrappers (request handles, statuses,
    /// completions, group ranks), so that they do not allocate per call.
    scratch: Scratch,
    /// The thread's last datatype size, for sends and receives.
    sizes: SizeCache,
    /// The thread's call sites, if located (`argument sites on`).
    sites: Option<Sites>,
}

struct StreamPtr(*mut Stream);
// SAFETY: a stream is used by its own thread, and by the finalizing thread
// only once every other thread is out of MPI (see the module comment).
unsafe impl Send for StreamPtr {}

impl Run {
    /// Creates the rank file (as `rank-NNNNN.pnr.part`) with its header.
    pub fn create(
        dir: PathBuf,
        header: &RankHeader<&str>,
        buffer: usize,
        sites: bool,
    ) -> std::io::Result<Run> {
        let part = rank_writer::part_path(&rank_writer::rank_path(&dir, header.rank));
        let mut file = Output::new(File::create(&part)?);
        file.write(&header.prologue(), &[])?;
        Ok(Run {
            rank: header.rank as i32,
            dir,
            file: Mutex::new(file),
            part,
            buffer,
            sites,
        })
    }

    /// Appends a whole chunk, `head` then `body`; on failure, stops
    /// tracing and says why once.
    fn write(&self, head: &[u8], body: &[u8]) {
        let result = self
            .file
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .write(head, body);
        if let Err(e) = result {
            MAIN_TP.store(usize::MAX, Relaxed);
            if ON.swap(false, Relaxed) {
                say::warn(
                    "tracer",
                    format_args!("cannot write {}: {e}; tracing stopped", self.part.display()),
                );
            }
        }
    }

    /// Appends a chunk of another type.
    pub fn chunk(&self, chunk_type: u8, payload: &[u8]) {
        let mut bytes = Vec::with_capacity(payload.len() + 16);
        container::push_chunk(&mut bytes, chunk_type, payload);
        self.write(&bytes, &[]);
    }

    /// Gives back the disk space reserved beyond what was written.
    fn trim(&self) {
        let result = self.file.lock().unwrap_or_else(|e| e.into_inner()).trim();
        if let Err(e) = result {
            say::warn("tracer", format_args!("cannot trim {}: {e}", self.part.display()));
        }
    }

    /// Records a clock measurement.
    pub fn sync(&self, sync: &Sync) {
        self.chunk(rank::CHUNK_SYNC, &sync.encode());
    }
}

/// Starts tracing with `run`'s file; the calling thread's stream counts
/// its first gap from `start`.
pub fn start(run: Run, start: u64) {
    if RUN.set(run).is_ok() {
        let s = new_stream(start);
        if !s.is_null() {
            MAIN_STREAM.store(s, Relaxed);
            MAIN_TP.store(thread_pointer(), Relaxed);
        }
        ON.store(true, Relaxed);
    }
}

/// Whether calls are being traced.
pub fn tracing() -> bool {
    ON.load(Relaxed)
}

/// The rank's output, once tracing started.
pub fn run() -> Option<&'static Run> {
    RUN.get()
}

fn new_stream(start: u64) -> *mut Stream {
    let Some(run) = RUN.get() else {
        return std::ptr::null_mut();
    };
    // 4 KiB or more (setup.rs); at least room for one event whatever
    // `Run::create` was given.
    let size = run.buffer.max(FAST_MAX);
    let stream = Box::new(Stream {
        id: NEXT_STREAM.fetch_add(1, Relaxed),
        enc: RawEncoder::new(start),
        buf: vec![0u8; size].into_boxed_slice(),
        len: 0,
        limit: size - FAST_MAX,
        written: 0,
        depth: 0,
        scratch: Default::default(),
        sizes: SizeCache::default(),
        sites: run.sites.then(Sites::new),
    });
    let ptr = Box::into_raw(stream);
    STREAMS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(StreamPtr(ptr));
    CURRENT.set(ptr);
    ptr
}

/// Called by every wrapper first: the thread's stream, marked busy, or
/// null when the call is not to be traced (tracing off, or a nested call).
#[inline(always)]
pub fn enter() -> *mut Stream {
    let s = if thread_pointer() == MAIN_TP.load(Relaxed) {
        // Not null: this thread stored it before it stored its pointer.
        MAIN_STREAM.load(Relaxed)
    } else {
        // Laid out of the way of the thread that called `MPI_Init`.
        std::hint::cold_path();
        let s = other_thread();
        if s.is_null() {
            return s;
        }
        s
    };
    // SAFETY: `s` is this thread's stream, leaked for the life of the
    // process; no reference to it is live here (wrappers only form one
    // after the traced call returns), so the raw field accesses are sound.
    unsafe {
        if (*s).depth > 0 {
            return std::ptr::null_mut();
        }
        (*s).depth = 1;
    }
    s
}

/// [`enter`] for threads other than the one that called `MPI_Init`.
#[inline(never)]
fn other_thread() -> *mut Stream {
    if !ON.load(Relaxed) {
        return std::ptr::null_mut();
    }
    let s = CURRENT.get();
    if s.is_null() {
        new_stream(clock::now())
    } else {
        s
    }
}

/// Records a call without arguments.
///
/// # Safety
/// `s` comes from [`enter`] on this thread.
#[inline(always)]
pub unsafe fn plain(s: *mut Stream, routine: u32, t0: u64, t1: u64) {
    // SAFETY: the caller's contract; the traced call has returned, so this
    // is the only reference to the stream.
    let s = unsafe { &mut *s };
    s.next_event();
    let site = s.site(routine);
    let (at, enc, out) = s.room();
    s.len = at + enc.encode_plain(routine, t0, t1, site, out);
}

/// Records a send or receive (the point-to-point path) whose arguments
/// were not taken before the call.
///
/// # Safety
/// `s` comes from [`enter`] on this thread.
#[inline(always)]
pub unsafe fn p2p(s: *mut Stream, call: &P2p) {
    // SAFETY: the caller's contract.
    let same = unsafe { take_p2p(s, call.routine, call.peer, call.tag, call.comm, call.bytes) };
    // SAFETY: the caller's contract; the arguments were just taken.
    unsafe { p2p_taken(s, &call.end(same)) }
}

/// Takes a send's or receive's arguments before its call
/// ([`RawEncoder::take_p2p`]), room for its event made first: the wrapper
/// keeps none of them across the call. [`p2p_taken`] records the call.
///
/// # Safety
/// `s` comes from [`enter`] on this thread.
#[inline(always)]
pub unsafe fn take_p2p(s: *mut Stream, routine: u32, peer: i64, tag: i64, comm: u64, bytes: i64) -> bool {
    // SAFETY: the caller's contract; no other reference to the stream is live.
    let s = unsafe { &mut *s };
    s.room();
    s.enc.take_p2p(routine, peer, tag, comm, bytes)
}

/// Records the send or receive whose arguments [`take_p2p`] took.
///
/// # Safety
/// `s` comes from [`enter`] on this thread, which took the arguments.
#[inline(always)]
pub unsafe fn p2p_taken(s: *mut Stream, call: &P2pEnd) {
    // SAFETY: the caller's contract; inlined, so the stack pointer is the
    // wrapper's.
    unsafe { p2p_taken_at(s, pnmpi_sdk::callsite::stack_pointer(), call) }
}

/// [`p2p_taken`] from a function that the wrapper whose stack pointer is
/// `sp` called (and that its site is found from).
///
/// # Safety
/// As for [`p2p_taken`], and that wrapper still runs.
#[inline(always)]
pub unsafe fn p2p_taken_at(s: *mut Stream, sp: usize, call: &P2pEnd) {
    // SAFETY: the caller's contract, as for `plain`.
    let s = unsafe { &mut *s };
    s.depth = 0;
    let call = P2pEnd {
        site: s.site_at(call.routine, sp),
        ..*call
    };
    // SAFETY: `take_p2p` left `len` at `limit` or below, and no event has
    // been written since: the stream is busy (`depth`) from `enter` to
    // this call, and a write-out only empties it.
    let (at, enc, out) = unsafe { s.reserved() };
    s.len = at + enc.encode_taken_p2p(&call, out);
}

/// Records a wait or test of one request: `done` if it completed (the
/// single-request path, no event struct, no scratch space).
///
/// # Safety
/// `s` comes from [`enter`] on this thread.
#[inline(always)]
pub unsafe fn done(s: *mut Stream, routine: u32, t0: u64, t1: u64, done: Option<RawDone>) {
    // SAFETY: the caller's contract, as for `plain`.
    let s = unsafe { &mut *s };
    s.next_event();
    let site = s.site(routine);
    let (at, enc, out) = s.room();
    s.len = at + enc.encode_done(routine, t0, t1, site, done, out);
}

/// Records a blocking collective (the collective path: no event struct,
/// no scratch space).
///
/// # Safety
/// `s` comes from [`enter`] on this thread.
#[inline(always)]
pub unsafe fn coll(s: *mut Stream, call: &CollCall) {
    // SAFETY: the caller's contract, as for `plain`.
    let s = unsafe { &mut *s };
    s.next_event();
    let call = CollCall {
        site: s.site(call.routine),
        ..*call
    };
    let (at, enc, out) = s.room();
    s.len = at + enc.encode_coll(&call, out);
}

/// `count` items of `dt`, in bytes, through the thread's [`SizeCache`].
///
/// # Safety
/// `s` comes from [`enter`] on this thread.
#[inline(always)]
pub unsafe fn bytes<C: Into<i64>>(s: *mut Stream, count: C, dt: MPI_Datatype) -> i64 {
    // SAFETY: the caller's contract; no other reference to the stream is live.
    unsafe { (*s).sizes.bytes(count, dt) }
}

/// Lends the stream's scratch space to a wrapper, which gives it back
/// with [`give_back`]; events built from it can then be recorded while it
/// is out of the stream.
///
/// # Safety
/// `s` comes from [`enter`] on this thread.
pub unsafe fn borrow(s: *mut Stream) -> Scratch {
    // SAFETY: the caller's contract; no other reference to the stream is live.
    std::mem::take(unsafe { &mut (*s).scratch })
}

/// Returns the scratch space lent by [`borrow`].
///
/// # Safety
/// `s` comes from [`enter`] on this thread.
pub unsafe fn give_back(s: *mut Stream, scratch: Scratch) {
    // SAFETY: the caller's contract; no other reference to the stream is live.
    unsafe { (*s).scratch = scratch };
}

/// The site of the running call of `routine`, for [`event`]: inlined
/// into the wrapper, whose stack it reads.
///
/// # Safety
/// `s` comes from [`enter`] on this thread.
#[inline(always)]
pub unsafe fn site(s: *mut Stream, routine: u32) -> SiteCode {
    // SAFETY: the caller's contract; no other reference to the stream is live.
    unsafe { (*s).site(routine) }
}

/// Records a call with arguments, from `site`.
///
/// # Safety
/// `s` comes from [`enter`] on this thread.
pub unsafe fn event(s: *mut Stream, site: SiteCode, ev: &RawEvent<'_>) {
    // SAFETY: the caller's contract, as for `plain`.
    let s = unsafe { &mut *s };
    s.next_event();
    let ev = &RawEvent {
        site: site.id(),
        ..*ev
    };
    let need = ev.max_size();
    if s.buf.len() - s.len < need {
        s.flush();
    }
    if need > s.buf.len() {
        // Larger than a whole buffer (a huge Waitall): a chunk of its own.
        let mut big = vec![0u8; need];
        let n = s.enc.encode(ev, &mut big);
        s.written += write_chunk(s.id, &mut s.enc, &big[..n]);
        return;
    }
    s.len += s.enc.encode(ev, &mut s.buf[s.len..]);
}

impl Stream {
    /// The site of the running call of `routine`, if sites are located.
    /// Inlined into the wrapper: the stack pointer it reads is the
    /// wrapper's, whose frame does not move while it runs.
    #[inline(always)]
    fn site(&self, routine: u32) -> SiteCode {
        self.site_at(routine, pnmpi_sdk::callsite::stack_pointer())
    }

    /// The site of the running call of `routine` whose wrapper's stack
    /// pointer is `sp`, if sites are located.
    #[inline(always)]
    fn site_at(&self, routine: u32, sp: usize) -> SiteCode {
        match &self.sites {
            Some(sites) => sites.locate(routine, sp),
            None => {
                // Laid out of the way of the default, sites on.
                std::hint::cold_path();
                SiteCode::NONE
            }
        }
    }

    /// A traced call returned and is about to be recorded: the stream is
    /// free for the next call.
    #[inline(always)]
    fn next_event(&mut self) {
        self.depth = 0;
    }

    /// Room for an event of a fast path: the buffer is written out first
    /// if fewer than [`FAST_MAX`] bytes are left. Where the event goes,
    /// the encoder, and those bytes.
    #[inline(always)]
    fn room(&mut self) -> (usize, &mut RawEncoder, &mut [u8]) {
        if self.len > self.limit {
            self.flush();
        }
        // SAFETY: `len` is at `limit` or below, just checked.
        unsafe { self.reserved() }
    }

    /// [`Stream::room`] already made: where the event goes, the encoder
    /// and [`FAST_MAX`] bytes there, whose known length spares the encoder
    /// its own bounds checks.
    ///
    /// # Safety
    /// `len` is at `limit` or below: checked since the last event was
    /// written (a write-out empties the buffer).
    #[inline(always)]
    unsafe fn reserved(&mut self) -> (usize, &mut RawEncoder, &mut [u8]) {
        let at = self.len;
        debug_assert!(at <= self.limit && self.limit + FAST_MAX == self.buf.len());
        // SAFETY: `limit` is FAST_MAX bytes short of the buffer's end, and
        // `at` no further (the caller's contract).
        let out = unsafe { self.buf.get_unchecked_mut(at..at + FAST_MAX) };
        (at, &mut self.enc, out)
    }

    /// Writes the buffer out as one chunk and empties it.
    fn flush(&mut self) {
        let len = std::mem::take(&mut self.len);
        // No event, no bytes (every event counts): nothing to write, and
        // the buffer is empty either way, as `reserved` relies on.
        if self.enc.count() == 0 {
            return;
        }
        self.written += write_chunk(self.id, &mut self.enc, &self.buf[..len]);
    }
}

/// Writes `events`, encoded by `enc` for stream `id`, as one chunk;
/// returns its event count.
fn write_chunk(id: u32, enc: &mut RawEncoder, events: &[u8]) -> u64 {
    let info = enc.finish_chunk();
    if let Some(run) = RUN.get() {
        let head = rank::events_chunk_head(id, info, clock::pair(), events);
        run.write(&head, events);
    }
    info.count
}

/// Stops tracing and writes out every stream; with `complete`, also the
/// `END` chunk and the final name. Returns the events recorded.
pub fn finish(complete: bool) -> u64 {
    ON.store(false, Relaxed);
    MAIN_TP.store(usize::MAX, Relaxed);
    let Some(run) = RUN.get() else {
        return 0;
    };
    let streams = STREAMS.lock().unwrap_or_else(|e| e.into_inner());
    let mut total = 0;
    for p in streams.iter() {
        // SAFETY: tracing is off and, by MPI's rules, no other thread is
        // inside MPI now: nothing else uses the stream.
        let s = unsafe { &mut *p.0 };
        s.flush();
        total += s.written;
    }
    // The sites, named now that the run is over: reading the objects'
    // debug information during the run would have delayed its calls.
    let defs = sites::resolve_all();
    if !defs.is_empty() {
        run.chunk(
            pnmpi_trace::sites::CHUNK_SITES,
            &pnmpi_trace::sites::rank_sites_payload(&defs),
        );
    }
    if complete {
        run.chunk(rank::CHUNK_END, &rank::end_payload(total));
    }
    run.trim();
    if complete {
        // Renamed once complete, so a reader never takes a half-written
        // file for a whole one. Not fsync'ed: that guards against a power
        // cut, not a crash of the job, and cost 1 to 6 ms of every rank's
        // MPI_Finalize here (more on a parallel file system).
        let done = run.part.with_extension("");
        if let Err(e) = std::fs::rename(&run.part, &done) {
            say::warn("tracer", format_args!("cannot finish {}: {e}", done.display()));
        }
    }
    total
}
