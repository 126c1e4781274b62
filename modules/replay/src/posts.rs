//! The order of wildcard receives' posts across threads.
//!
//! MPI matches a message with the earliest posted receive that fits it,
//! so when two threads post receives that can take the same message, the
//! order of their posts decides which gets it. Under
//! `MPI_THREAD_MULTIPLE` the record keeps that order: a thread writes a
//! POST entry, then posts, under one lock, so the record's order of posts
//! is MPI's; the replay posts in that order, each post waiting for its
//! turn and releasing it once posted.
//!
//! A blocking wildcard `MPI_Recv` is then posted as an `MPI_Irecv` and
//! waited for outside the turn. Holding the turn through a blocking
//! receive can deadlock the replay: a receive returns in its thread a
//! while after MPI matched it, and in that while the sender can go on and
//! make another thread's receive complete first, so the order of
//! completions is not the order of matches (a sender's last `MPI_Ssend`
//! matched by thread A, a barrier of the senders, a stop message received
//! by thread B: B's receive returned first; a replay that makes A's wait
//! for B's, which waits for the barrier, never ends).

use crate::abort::diverge;
use crate::format::{Entry, Kind};
use crate::state::{self, Next, State, Turn, POSTS_ORDERED, STATE};
use parking_lot::Mutex;
use std::sync::atomic::Ordering;

/// Held from a post's entry until MPI posted it.
static POSTING: Mutex<()> = Mutex::new(());

/// Whether posts are ordered in this run.
pub fn ordered() -> bool {
    POSTS_ORDERED.load(Ordering::Relaxed)
}

/// Recording: makes `post`, a `kind` call that posts a wildcard receive
/// and gives its request's handle if MPI posted it, and numbers it for
/// `thread` (the handle pending under that number:
/// [`state::Recorder::post`]). When posts are ordered, its POST entry
/// comes first, under the lock. Returns the posting number.
pub fn record(thread: u32, kind: Kind, post: impl FnOnce() -> Option<u64>) -> Option<u64> {
    let _order = ordered().then(|| POSTING.lock());
    if ordered() {
        if let Some(State::Record(r)) = &mut *STATE.lock() {
            r.push(thread, Entry::Post(kind));
        }
    }
    let handle = post()?;
    match &mut *STATE.lock() {
        Some(State::Record(r)) => Some(r.post(thread, handle)),
        _ => None,
    }
}

/// Replaying: when posts are ordered, waits for the turn of `thread`'s
/// next post, a `kind` call, to hold until MPI posted it; with the
/// call's index among the thread's calls.
pub fn turn(thread: u32, kind: Kind) -> Option<(Turn, u64)> {
    if !ordered() {
        return None;
    }
    let (i, next, t) = state::next(thread, kind)?;
    match next {
        Next::Entry(Entry::Post(_)) => Some((t, i)),
        Next::Entry(e) => diverge(thread, i, kind, &format!("the record holds {e:?}, not a post")),
        Next::Fail => diverge(thread, i, kind, "the record holds a failed call, not a post"),
    }
}
