//! Under `MPI_THREAD_MULTIPLE`: the rank's turns that keep each
//! message's timestamp paired with it while threads call MPI at once.
//!
//! - **Posting.** A timestamp goes to the shadow just before its send, to
//!   the same destination with the same tag, and a receive takes the
//!   next timestamp of its source and tag: both streams must be in the
//!   same order. So a thread posts a timestamp and the send (its
//!   nonblocking form), or numbers a receive and posts it, in one
//!   *posting turn* of the rank ([`posting`]), and waits outside it: a
//!   blocking send or receive goes down the chain as its nonblocking form
//!   and a wait ([`crate::split`]). MPI then sees the rank's sends, and
//!   its receives, in the order of their numbers.
//! - **Reading.** A receive reads its timestamp in a *reading turn*
//!   ([`in_turn`], [`stamping`]), after every receive of another thread
//!   posted before it that could have matched its message (a wildcard
//!   one): MPI gives a message to the first posted receive that fits, so
//!   those were matched first, with earlier messages of their source and
//!   tag. The receives of one source and tag without wildcards are read
//!   in posting order by whichever thread gets there first
//!   ([`crate::p2p`]).
//! - **The module's own messages** (acknowledgements, deadlock probes)
//!   are probed and received in one turn ([`own_receive`]), so that two
//!   threads never take the same one.
//!
//! Under the lower levels there is one thread in MPI at a time: no turn
//! is taken.

use crate::state::{self, Req};
use pnmpi_mpi_sys::ffi::MPI_Status;
use pnmpi_sdk::constants;
use std::ffi::c_int;
use std::sync::{Mutex, MutexGuard};

/// A turn, held until dropped (`None`: no other thread can be in MPI).
pub type Turn = Option<MutexGuard<'static, ()>>;

static POSTING: Mutex<()> = Mutex::new(());
static READING: Mutex<()> = Mutex::new(());
static OWN: Mutex<()> = Mutex::new(());

fn take(lock: &'static Mutex<()>) -> Turn {
    state::multiple().then(|| lock.lock().unwrap_or_else(|e| e.into_inner()))
}

/// The rank's posting turn: timestamps and the sends and receives they
/// pair with are posted in it.
pub fn posting() -> Turn {
    take(&POSTING)
}

/// The rank's reading turn, for a read that waits for no other thread
/// (a matched message's receive, the calling thread's own receives).
pub fn stamping() -> Turn {
    take(&READING)
}

/// The turn to probe for and receive one of the module's own messages.
pub fn own_receive() -> Turn {
    take(&OWN)
}

/// Whether a posted receive's pattern `(source, tag)` fits a message of
/// `source` and `tag`.
fn fits(pattern: (c_int, c_int), source: c_int, tag: c_int) -> bool {
    (pattern.0 == constants::ANY_SOURCE() || pattern.0 == source)
        && (pattern.1 == constants::ANY_TAG() || pattern.1 == tag)
}

/// Whether receive number `seq` on `comm`, whose message came from
/// `source` with `tag`, may read its timestamp now: no wildcard receive
/// of another thread posted before it, still without its timestamp,
/// fits that message. Always true under the lower levels.
pub fn first(comm: u64, seq: u64, source: c_int, tag: c_int) -> bool {
    if !state::multiple() {
        return true;
    }
    let me = crate::threads::mine().number;
    state::with(|st| {
        !st.reqs.values().any(|r| {
            matches!(*r, Req::Recv { comm: c, active: true, cancelled: false, early: None, from: None,
                seq: s, pattern, owner, .. }
                if c == comm && s < seq && owner != me && fits(pattern, source, tag))
        })
    })
    .unwrap_or(true)
}

/// The reading turn of request `handle`, completed with `status`, if it
/// is a receive still without its timestamp: taken once [`first`]
/// allows it. (Other requests take none: a send's completion may wait
/// for an acknowledgement, and receives meanwhile.)
///
/// # Safety
/// `status` points to the status MPI filled for the completion.
pub unsafe fn in_turn(handle: u64, status: *const MPI_Status) -> Turn {
    if !state::multiple() {
        return None;
    }
    // SAFETY: the caller's contract.
    let (source, tag) = unsafe { ((*status).MPI_SOURCE, (*status).MPI_TAG) };
    loop {
        let turn = stamping();
        let wait = state::with(|st| match st.reqs.get(&handle) {
            Some(Req::Recv {
                comm,
                seq,
                active: true,
                early: None,
                ..
            }) => Some((*comm, *seq)),
            _ => None,
        })
        .flatten();
        match wait {
            None => return None,
            Some((comm, seq)) if !first(comm, seq, source, tag) => {
                drop(turn);
                std::thread::yield_now();
            }
            Some(_) => return turn,
        }
    }
}
