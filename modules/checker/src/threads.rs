//! Threads: which thread makes a checked call, under which thread level,
//! and what they are inside, for the MPI standard's rules on threads
//! (MPI 4.1, §11.6), which `site` (the level, at each call's entry) and
//! `thread_rules` (the shared objects) check and report:
//!
//! - under `MPI_THREAD_SINGLE` or `_FUNNELED`, only the thread that
//!   initialized MPI may call it: another thread's call is reported, once
//!   per thread (`above-level`);
//! - under `MPI_THREAD_SERIALIZED`, one thread at a time: a call made
//!   while another thread is inside a checked call is reported, naming
//!   the other call (`above-level`);
//! - two threads waiting on (or testing) the same request at once: the
//!   second call is reported and not made (`same-request`);
//! - two threads of a rank inside collectives on one communicator at
//!   once: MPI cannot tell their order apart from the other ranks'
//!   (`same-communicator`); the second waits until the first is done;
//! - `MPI_Finalize` while another thread is inside a checked call
//!   (`finalize-inside`).
//!
//! A thread's number: 0 for the thread that initialized MPI, then 1, 2...
//! in the order of the threads' first checked calls.
//!
//! Cost. Under `MPI_THREAD_SINGLE` and `_FUNNELED` a call of the thread
//! that initialized MPI is told apart by a `pthread_self` and a compare
//! (`Here::new`); only other threads' calls, and every call under
//! `_SERIALIZED` and `_MULTIPLE`, take the tracked path: the call's site
//! found at its entry, and the calls in progress kept under a lock.

use parking_lot::Mutex;
use std::cell::Cell;
use std::ffi::c_int;
use std::sync::atomic::{AtomicU32, AtomicU8, AtomicUsize, Ordering::Relaxed};

/// Not numbered yet.
const NONE: u32 = u32::MAX;

/// The thread levels, in MPI's order (`consts::thread_level`).
const FUNNELED: u8 = 1;
const SERIALIZED: u8 = 2;
/// The names of the levels, by their place in that order.
const LEVELS: [&str; 4] = [
    "MPI_THREAD_SINGLE",
    "MPI_THREAD_FUNNELED",
    "MPI_THREAD_SERIALIZED",
    "MPI_THREAD_MULTIPLE",
];

thread_local! {
    /// This thread's number, once it made a checked call.
    static NUMBER: Cell<u32> = const { Cell::new(NONE) };
}

/// The `pthread_self` of the thread that initialized MPI while the level
/// is `MPI_THREAD_SINGLE` or `_FUNNELED`: its calls need no tracking.
/// 0 (no thread) before `MPI_Init` and under `_SERIALIZED` and
/// `_MULTIPLE`: every call is tracked.
static UNTRACKED: AtomicUsize = AtomicUsize::new(0);
/// The level MPI granted, as its place in MPI's order.
static LEVEL: AtomicU8 = AtomicU8::new(0);
/// The next thread's number.
static NEXT: AtomicU32 = AtomicU32::new(1);

/// A checked call in progress on some thread.
#[derive(Clone, Copy)]
pub struct CallInProgress {
    /// The thread's number.
    pub thread: u32,
    /// The routine's index.
    pub routine: usize,
    /// The site's return address.
    pub ra: usize,
}

/// An object that two threads may not use at once.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Object {
    /// A request, by handle.
    Request(u64),
    /// A communicator, by handle bits.
    Comm(u64),
}

/// What the threads do, under one lock.
struct Threads {
    /// Every thread that made a checked call: its number and kernel id.
    seen: Vec<(u32, i32)>,
    /// Threads already reported as calling above the level.
    above: Vec<u32>,
    /// The tracked calls in progress.
    inside: Vec<CallInProgress>,
    /// The objects those calls use, with the call.
    held: Vec<(Object, CallInProgress)>,
}

static THREADS: Mutex<Threads> = Mutex::new(Threads {
    seen: Vec::new(),
    above: Vec::new(),
    inside: Vec::new(),
    held: Vec::new(),
});

/// This thread's `pthread_t`, unique among live threads, never 0.
#[inline(always)]
fn me() -> usize {
    // SAFETY: pthread_self has no preconditions.
    unsafe { libc::pthread_self() as usize }
}

/// This thread's kernel id.
fn tid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() }
}

/// Whether a call of this thread needs no tracking: the thread that
/// initialized MPI, under `MPI_THREAD_SINGLE` or `_FUNNELED`.
#[inline(always)]
pub fn untracked() -> bool {
    me() == UNTRACKED.load(Relaxed)
}

/// After `MPI_Init` or `MPI_Init_thread` granted `provided`: the calling
/// thread is thread 0.
pub fn init(provided: c_int) {
    let level = crate::consts::thread_level(provided);
    LEVEL.store(level, Relaxed);
    NUMBER.with(|n| n.set(0));
    THREADS.lock().seen.push((0, tid()));
    UNTRACKED.store(if level < SERIALIZED { me() } else { 0 }, Relaxed);
}

/// This thread's number (see the module).
pub fn current() -> u32 {
    NUMBER.with(|n| {
        if n.get() == NONE {
            let number = NEXT.fetch_add(1, Relaxed);
            n.set(number);
            THREADS.lock().seen.push((number, tid()));
        }
        n.get()
    })
}

/// Whether a thread other than the one that initialized MPI has made a
/// checked call: reports then name the thread.
pub fn several() -> bool {
    NEXT.load(Relaxed) > 1
}

/// The threads that made a checked call: (number, kernel id).
pub fn seen() -> Vec<(u32, i32)> {
    THREADS.lock().seen.clone()
}

/// What [`note`] found at a call's entry.
pub enum Entry {
    /// Under `MPI_THREAD_SINGLE` or `_FUNNELED`, not noted; the thread's
    /// number and the level when this is the first call of a thread other
    /// than 0 (above the level, to report once).
    Unnoted(Option<(u32, u8)>),
    /// Noted as in progress; under `MPI_THREAD_SERIALIZED`, the call of
    /// another thread that was inside MPI then (to report).
    Noted(u32, Option<CallInProgress>),
}

/// At the entry of a call that `untracked` did not let through: under
/// `MPI_THREAD_SERIALIZED` and `_MULTIPLE` notes the call in progress
/// (then [`leave`] at its end); says what the level's rule needs told.
#[cold]
pub fn note(routine: usize, ra: usize) -> Entry {
    let thread = current();
    let level = LEVEL.load(Relaxed);
    if level < SERIALIZED {
        let mut t = THREADS.lock();
        let first = thread != 0 && !t.above.contains(&thread);
        if first {
            t.above.push(thread);
        }
        return Entry::Unnoted(first.then_some((thread, level)));
    }
    let call = CallInProgress { thread, routine, ra };
    let other = {
        let mut t = THREADS.lock();
        let other = t.inside.first().copied();
        t.inside.push(call);
        other
    };
    Entry::Noted(thread, other.filter(|_| level == SERIALIZED))
}

/// The name of thread level `level` (as `consts::thread_level` numbers
/// them).
pub fn level_name(level: u8) -> &'static str {
    LEVELS[level as usize]
}

/// Whether `level` (as [`note`] gives it) is `MPI_THREAD_SINGLE`.
pub fn is_single(level: u8) -> bool {
    level < FUNNELED
}

/// At the end of a call [`note`] noted: forgets it and what it held.
#[cold]
pub fn leave() {
    let thread = current();
    let mut t = THREADS.lock();
    t.inside.retain(|c| c.thread != thread);
    t.held.retain(|(_, c)| c.thread != thread);
}

/// Marks `objects` as used by this thread's call; returns the call of
/// another thread that uses one of them, if any (then marks none).
pub(crate) fn hold(objects: &[Object]) -> Option<CallInProgress> {
    let thread = current();
    let mut t = THREADS.lock();
    let call = t.inside.iter().find(|c| c.thread == thread).copied()?;
    if let Some((_, other)) = t
        .held
        .iter()
        .find(|(o, c)| c.thread != thread && objects.contains(o))
    {
        return Some(*other);
    }
    t.held.extend(objects.iter().map(|&o| (o, call)));
    None
}

/// The tracked calls of other threads than this one in progress.
pub(crate) fn others() -> Vec<CallInProgress> {
    let thread = current();
    THREADS
        .lock()
        .inside
        .iter()
        .filter(|c| c.thread != thread)
        .copied()
        .collect()
}

/// Whether another thread is inside a checked call.
pub fn others_inside() -> bool {
    !others().is_empty()
}
