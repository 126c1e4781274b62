//! Which thread is calling: a number that names the same thread in every
//! run of a program that creates its threads in the same order (a
//! recorded run and its replays; a run under vtime and its report), so
//! that modules name a process's threads alike.
//!
//! **The rule.** Linux numbers a process's threads in the order they are
//! created: each new id is the next free one after the last given, and
//! after `/proc/sys/kernel/pid_max` (32768 on many machines, so a busy
//! machine wraps every few minutes) the count starts again from the
//! bottom. Every thread of a process is created after the process, whose
//! id is its first thread's, so a thread's age is how far its id lies
//! after the process's id, going round past `pid_max` (see `age`). A
//! thread's number is how many threads of its process that are older
//! count at its first call through the module, where a thread counts if
//! it has called through the module before, or is alive then; the threads
//! that `MPI_Init` itself creates (an MPI's progress threads) never count.
//! The thread that calls `MPI_Init` is usually the process's first, so 0;
//! threads created one after the other get the next numbers, in creation
//! order, whichever of them calls MPI first.
//!
//! A module numbers a thread at its first call of any routine it wraps
//! ([`touch`]), so that a thread that ended still counts for the threads
//! after it; it calls [`before_init`] and [`after_init`] around
//! `MPI_Init`.
//!
//! **When a program creates threads otherwise** than the recorded run
//! (more or fewer, or in a racy order between several creating threads),
//! a thread's number names another thread's record: its first call that
//! disagrees with the record is a divergence naming the thread, or, if the
//! record has no thread of that number, the first call that consults it.
//! A thread that calls no wrapped routine and ends just before a later
//! thread's first call may count in one run and not in another.

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering::Relaxed};
use std::sync::{Mutex, MutexGuard};

/// Not numbered yet.
const NONE: u32 = u32::MAX;

thread_local! {
    /// This thread's number, once it called through the module.
    static NUMBER: Cell<u32> = const { Cell::new(NONE) };
}

/// The thread that called `MPI_Init` (its `pthread_self`, 0 before) and
/// its number: that thread, usually the only one, finds its number in a
/// load, without a thread-local lookup (`__tls_get_addr` in a `dlopen`ed
/// object).
static MAIN: AtomicUsize = AtomicUsize::new(0);
static MAIN_NUMBER: AtomicU32 = AtomicU32::new(0);

/// This thread's `pthread_t`, unique among live threads.
#[inline]
fn me() -> usize {
    // SAFETY: pthread_self has no preconditions.
    unsafe { libc::pthread_self() as usize }
}

/// The ids of the threads that count and do not count.
struct Known {
    /// Threads alive before `MPI_Init`, while it runs.
    before: Vec<i32>,
    /// Threads that `MPI_Init` created: never counted.
    mpi: Vec<i32>,
    /// Threads numbered so far.
    seen: Vec<i32>,
}

static KNOWN: Mutex<Known> = Mutex::new(Known {
    before: Vec::new(),
    mpi: Vec::new(),
    seen: Vec::new(),
});

/// The known threads (a panic elsewhere leaves them usable).
fn known() -> MutexGuard<'static, Known> {
    KNOWN.lock().unwrap_or_else(|e| e.into_inner())
}

/// The ids of the process's live threads (`/proc/self/task`), without
/// the ones that ended (zombies).
fn live() -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let e = e.ok()?;
        let tid: i32 = e.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
        // "tid (comm) S ...": the state follows the last ')'.
        let state = stat.rsplit_once(')')?.1.trim_start().chars().next()?;
        (state != 'Z' && state != 'X').then_some(tid)
    })
    .collect()
}

/// This thread's id.
fn tid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() }
}

/// Before `MPI_Init` goes down: notes the threads alive, so that the ones
/// `MPI_Init` adds are known as the MPI's.
pub fn before_init() {
    known().before = live();
}

/// After `MPI_Init`: the threads it created are the MPI's; the calling
/// thread gets its number.
pub fn after_init() {
    {
        let mut k = known();
        let before = std::mem::take(&mut k.before);
        k.mpi = live().into_iter().filter(|t| !before.contains(t)).collect();
    }
    MAIN_NUMBER.store(current(), Relaxed);
    MAIN.store(me(), Relaxed);
}

/// Numbers this thread if it has no number yet.
#[inline]
pub fn touch() {
    current();
}

/// This thread's number (see the module's rule).
#[inline]
pub fn current() -> u32 {
    if me() == MAIN.load(Relaxed) {
        return MAIN_NUMBER.load(Relaxed);
    }
    NUMBER.with(|n| {
        let v = n.get();
        if v != NONE {
            return v;
        }
        let v = number();
        n.set(v);
        v
    })
}

/// How long after its process `thread` was created, in ids given since:
/// ids rise from the process's own and wrap past `pid_max`, so an id
/// below the process's came after the wrap.
fn age(thread: i32, process: i32, pid_max: i32) -> i64 {
    let (t, p) = (i64::from(thread), i64::from(process));
    if t >= p {
        t - p
    } else {
        t + i64::from(pid_max) - p
    }
}

/// The kernel's largest thread id plus one (`/proc/sys/kernel/pid_max`),
/// or the largest id there can be if it cannot be read, which only
/// matters after a wrap.
fn pid_max() -> i32 {
    std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(i32::MAX)
}

/// Counts this thread's elders (the rule), and notes it as seen.
#[cold]
fn number() -> u32 {
    let me = tid();
    let alive = live();
    // SAFETY: getpid has no preconditions.
    let process = unsafe { libc::getpid() };
    let max = pid_max();
    let mine = age(me, process, max);
    let mut k = known();
    let mut elders: Vec<i32> = k
        .seen
        .iter()
        .chain(alive.iter())
        .copied()
        .filter(|&t| age(t, process, max) < mine && !k.mpi.contains(&t))
        .collect();
    elders.sort_unstable();
    elders.dedup();
    k.seen.push(me);
    elders.len() as u32
}

#[cfg(test)]
mod tests {
    use super::age;

    #[test]
    fn ids_after_the_process_are_younger_in_id_order() {
        assert_eq!(age(1000, 1000, 32768), 0);
        assert!(age(1001, 1000, 32768) < age(1500, 1000, 32768));
    }

    #[test]
    fn ids_after_a_wrap_are_younger_than_those_before_it() {
        // The process got 32740; its threads 32750, 32767, then 301, 302.
        let order = [32740, 32750, 32767, 301, 302];
        let ages: Vec<i64> = order.iter().map(|&t| age(t, 32740, 32768)).collect();
        assert!(ages.windows(2).all(|w| w[0] < w[1]), "{ages:?}");
    }
}
