//! One-sided calls on the virtual clock, by the kernel's rule
//! (`pnmpi_sim::kernel::rma`), as `pnmpi sim replay` times them:
//!
//! - a put, get, accumulate or atomic frees the origin after its
//!   overhead; when it is done joins the window's epoch, per target;
//! - `MPI_Win_unlock`, `MPI_Win_flush` (`_local`) wait for the operations
//!   to their target, the `_all` forms for every target's;
//! - `MPI_Win_fence` waits for the rank's operations, then is timed as a
//!   barrier of the window's group (on a duplicate of the window's
//!   communicator, with its own shadow, made when the window is).
//!
//! Not timed here (docs/vtime.md): post/start/complete/wait, whose
//! notifications MPI exchanges out of vtime's sight, and the completion
//! of a request form's request (its operation joins the epoch as the
//! plain form's does).

use crate::state;
use pnmpi_mpi_sys::Handle;
use pnmpi_sdk::{constants, native, Comm};
use pnmpi_sim::kernel::rma as rule;
use pnmpi_sim::units::Ns;
use pnmpi_trace::rma::DataOp;
use std::collections::HashMap;
use std::ffi::c_int;
use std::sync::Mutex;

/// A window vtime times.
struct Window {
    /// World ranks of its group, in window rank order.
    group: Vec<u32>,
    /// The duplicate of its communicator its fences are timed on (its
    /// handle's bits: a static's state must be `Send`).
    comm: u64,
    /// Per target (world rank), when the rank's operations are done.
    done: HashMap<u32, Ns>,
}

/// The windows, by handle.
static WINDOWS: Mutex<Option<HashMap<u64, Window>>> = Mutex::new(None);

fn with<R>(f: impl FnOnce(&mut HashMap<u64, Window>) -> R) -> R {
    let mut g = WINDOWS.lock().unwrap_or_else(|e| e.into_inner());
    f(g.get_or_insert_with(HashMap::new))
}

/// The application made window `win` over `comm` (every member calls
/// this at the same point: the duplicate is matched).
pub fn created(win: u64, comm: Comm) {
    let dup = match native::comm_dup(comm) {
        Ok(d) => d,
        Err(e) => {
            pnmpi_sdk::say::warn(
                "vtime",
                format_args!("cannot duplicate a new window's communicator ({e}): its fences are not timed"),
            );
            return;
        }
    };
    crate::comms::created(dup);
    let group = crate::comms::members(dup);
    with(|w| {
        w.insert(
            win,
            Window {
                group,
                comm: dup.bits(),
                done: HashMap::new(),
            },
        )
    });
}

/// The application freed window `win` (its handle before the call).
pub fn freed(win: u64) {
    let Some(w) = with(|w| w.remove(&win)) else { return };
    let comm = Comm::from_bits(w.comm);
    crate::comms::freed(comm);
    if let Err(e) = native::comm_free(comm) {
        pnmpi_sdk::say::warn("vtime", format_args!("cannot free a window's communicator: {e}"));
    }
}

/// A data operation `op` of `bytes` (and `rbytes` back, for the fetching
/// ones) to `target`, a rank of window `win`'s group, just issued: the
/// clock moves to when the origin is free, and the epoch learns when it
/// is done.
pub fn issue(win: u64, target: c_int, op: DataOp, bytes: u64, rbytes: u64) {
    if target == constants::PROC_NULL() {
        return;
    }
    let Some(target) = with(|w| w.get(&win).and_then(|w| w.group.get(target as usize).copied())) else {
        return;
    };
    let (there, back) = rule::sizes(op, bytes, rbytes);
    let done = state::with(|st| {
        let m = st.msg(st.rank, target, there);
        let issued = rule::issue(&mut *st.model, &m, back, st.clock, &mut |start, work| {
            start + work
        });
        st.clock = st.clock.max(issued.free);
        issued.done
    });
    if let Some(done) = done {
        with(|w| {
            if let Some(w) = w.get_mut(&win) {
                let d = w.done.entry(target).or_insert(f64::NEG_INFINITY);
                *d = d.max(done);
            }
        });
    }
}

/// An unlock or flush of window `win` to `target` (a rank of its group;
/// `None`: every target) returned: the clock moves to when the
/// operations it completes are done.
pub fn settle(win: u64, target: Option<c_int>) {
    let done = with(|w| {
        let w = w.get_mut(&win)?;
        Some(match target {
            Some(t) => {
                let t = *w.group.get(usize::try_from(t).ok()?)?;
                w.done.remove(&t).unwrap_or(f64::NEG_INFINITY)
            }
            None => w.done.drain().map(|(_, t)| t).fold(f64::NEG_INFINITY, f64::max),
        })
    });
    if let Some(done) = done {
        state::with(|st| st.clock = st.clock.max(done));
    }
}

/// `MPI_Win_fence` on `win`, made by `real`: the rank's operations done,
/// then a barrier of the window's group.
pub fn fence(win: u64, real: impl FnOnce() -> c_int) -> c_int {
    let Some(comm) = with(|w| w.get(&win).map(|w| Comm::from_bits(w.comm))) else {
        return state::untimed(real);
    };
    crate::coll::blocking_after(
        comm,
        pnmpi_trace::routine::Coll::Barrier,
        || settle(win, None),
        real,
    )
}
