//! One-sided calls on the virtual clock, by the kernel's rule
//! (`pnmpi_sim::kernel::rma`), as `pnmpi sim replay` times them:
//!
//! - a put, get, accumulate or atomic frees the origin after its
//!   overhead; when it is done joins the window's epoch, per target;
//! - `MPI_Win_unlock`, `MPI_Win_flush` (`_local`) wait for the operations
//!   to their target, the `_all` forms for every target's;
//! - `MPI_Win_fence` waits for the rank's operations, then is timed as a
//!   barrier of the window's group (on a duplicate of the window's
//!   communicator, with its own shadow, made when the window is);
//! - `MPI_Win_post` and `MPI_Win_complete` (once the operations it closes
//!   are done) send each rank of their group an empty message, timed as
//!   the kernel's point-to-point rule times one, whose arrival travels on
//!   the window's duplicate; `MPI_Win_start` and `MPI_Win_wait` (or a
//!   `MPI_Win_test` that ends the epoch) complete when the last of theirs
//!   is received.
//!
//! A request form's request (`MPI_Rput` ...) completes at its
//! operation's local completion.
//!
//! A lock is handed from holder to holder by the kernel's rule
//! ([`rule::handoff`]), in the order the run gives: each window has a
//! shadow window of vtime's (two clocks a rank: when its lock's last
//! exclusive holder and its last shared holders released it), which
//! vtime locks as the application locks the window, reading the clocks
//! before the application's lock and raising its own after its unlock,
//! so holders of the shadow's lock come in the same order as the window's.

use crate::state;
use pnmpi_mpi_sys::ffi::{self, MPI_Group, MPI_Win};
use pnmpi_mpi_sys::Handle;
use pnmpi_sdk::{constants, native, Comm};
use pnmpi_sim::kernel::p2p::{self, Mode};
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
    pending: rule::Pending,
    /// The targets of the last `MPI_Win_start` (window ranks).
    started: Vec<c_int>,
    /// The origins of the last `MPI_Win_post` (window ranks).
    posted: Vec<c_int>,
    /// Its shadow's handle's bits (see the module's doc), if made.
    shadow: Option<u64>,
    /// The locks held, by target (window rank; `None` the `_all` form):
    /// whether exclusive.
    held: HashMap<Option<c_int>, bool>,
}

/// A shadow's clocks a rank: when the last exclusive holder of its lock
/// released it, and the latest of the shared holders.
const EXCLUSIVE_CLOCK: usize = 0;
/// See [`EXCLUSIVE_CLOCK`].
const SHARED_CLOCK: usize = 1;

/// Tag of `MPI_Win_post`'s notifications on a window's duplicate.
const POST_TAG: c_int = 1;
/// Tag of `MPI_Win_complete`'s notifications.
const DONE_TAG: c_int = 2;

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
    let shadow = shadow_of(dup);
    with(|w| {
        w.insert(
            win,
            Window {
                group,
                comm: dup.bits(),
                pending: rule::Pending::default(),
                started: Vec::new(),
                posted: Vec::new(),
                shadow,
                held: HashMap::new(),
            },
        )
    });
}

/// The application freed window `win` (its handle before the call).
pub fn freed(win: u64) {
    let Some(w) = with(|w| w.remove(&win)) else { return };
    if let Some(s) = w.shadow {
        let mut s = MPI_Win::from_bits(s);
        // SAFETY: vtime's own window, freed once, by every member as the
        // application frees its own.
        unsafe { ffi::PMPI_Win_free(&mut s) };
    }
    let comm = Comm::from_bits(w.comm);
    crate::comms::freed(comm);
    if let Err(e) = native::comm_free(comm) {
        pnmpi_sdk::say::warn("vtime", format_args!("cannot free a window's communicator: {e}"));
    }
}

/// A data operation `op` of `bytes` (and `rbytes` back, for the fetching
/// ones) to `target`, a rank of window `win`'s group, just issued: the
/// clock moves to when the origin is free, and the epoch learns when it
/// is done. A request form's request (`req`) completes at the
/// operation's local completion, as a send's whose CPU is busy until
/// then.
pub fn issue(win: u64, target: c_int, op: DataOp, (bytes, rbytes): (u64, u64), req: Option<u64>) {
    if target == constants::PROC_NULL() {
        return;
    }
    let Some(target) = with(|w| w.get(&win).and_then(|w| w.group.get(target as usize).copied())) else {
        return;
    };
    let (there, back) = rule::sizes(op, bytes, rbytes);
    let issued = state::with(|st| {
        let m = st.msg(st.rank, target, there);
        let at = st.clock;
        let issued = rule::issue(&mut *st.model, &m, back, at, &mut p2p::unstretched);
        st.clock = st.clock.max(issued.free);
        (at, issued.done, issued.local)
    });
    let Some((at, done, local)) = issued else { return };
    with(|w| {
        if let Some(w) = w.get_mut(&win) {
            w.pending.add(target, done);
        }
    });
    if let Some(handle) = req {
        let posted = state::SendClock {
            post: at,
            free: local,
            ack: None,
        };
        crate::p2p::send_posted(Some(posted), handle);
    }
}

/// An unlock or flush of window `win` to `target` (a rank of its group;
/// `None`: every target) returned: the clock moves to when the
/// operations it completes are done.
pub fn settle(win: MPI_Win, target: Option<c_int>) {
    settled(win.bits(), target);
}

/// [`settle`] of window handle bits `win`.
fn settled(win: u64, target: Option<c_int>) {
    let done = with(|w| {
        let w = w.get_mut(&win)?;
        let target = match target {
            Some(t) => Some(*w.group.get(usize::try_from(t).ok()?)?),
            None => None,
        };
        Some(w.pending.settle(target))
    });
    if let Some(done) = done {
        state::with(|st| st.clock = st.clock.max(done));
    }
}

/// `MPI_Win_fence` on `win`, made by `real`: the rank's operations done,
/// then a barrier of the window's group.
pub fn fence(win: u64, real: impl FnOnce() -> c_int) -> c_int {
    state::call(|timed| fence_within(timed, win, real))
}

/// [`fence`] in a call already entered (`timed` its flag).
fn fence_within(timed: bool, win: u64, real: impl FnOnce() -> c_int) -> c_int {
    let Some(comm) = with(|w| w.get(&win).map(|w| Comm::from_bits(w.comm))) else {
        return real();
    };
    crate::coll::blocking_after_within(
        timed,
        comm,
        pnmpi_trace::routine::Coll::Barrier,
        || settled(win, None),
        real,
    )
}

/// Window `win`'s creation (once made) or its free (before it is
/// freed), inside the timed call's wrapper: the kernel's rule synchronizes the window's group there, as
/// a fence does (MPI libraries gather the members' window addresses at
/// creation and meet at the free), timed as one on the window's
/// duplicate, made by a barrier there. A window vtime does not know is
/// left alone.
pub fn synchronize(win: u64) {
    let Some(comm) = with(|w| w.get(&win).map(|w| Comm::from_bits(w.comm))) else {
        return;
    };
    let mut failed = None;
    fence_within(true, win, || match native::barrier(comm) {
        Ok(()) => constants::SUCCESS(),
        Err(e) => {
            failed = Some(e);
            constants::ERR_OTHER()
        }
    });
    if let Some(e) = failed {
        pnmpi_sdk::say::warn(
            "vtime",
            format_args!("cannot synchronize a window's group at its creation or free ({e}): not timed"),
        );
    }
}

/// Which group an epoch call names.
#[derive(Clone, Copy)]
pub enum Side {
    /// `MPI_Win_post`: the origins.
    Post,
    /// `MPI_Win_start`: the targets.
    Start,
}

/// The ranks of `group` in window `win`'s group.
fn window_ranks(win: MPI_Win, group: MPI_Group) -> Vec<c_int> {
    // SAFETY: zeroes are a placeholder that MPI_Win_get_group overwrites.
    let mut wg: MPI_Group = unsafe { std::mem::zeroed() };
    // SAFETY: `win` is the application's valid window; the group is freed below.
    unsafe { ffi::PMPI_Win_get_group(win, &mut wg) };
    let out = crate::comms::translate(group, wg);
    // SAFETY: the group MPI_Win_get_group returned.
    unsafe { ffi::PMPI_Group_free(&mut wg) };
    out
}

/// `MPI_Win_post` or `MPI_Win_start` of `group` on `win` returned: a
/// post notifies each origin; a start waits for each target's post.
pub fn opened(win: MPI_Win, group: MPI_Group, side: Side) {
    let ranks = window_ranks(win, group);
    let key = win.bits();
    let known = with(|w| {
        let w = w.get_mut(&key)?;
        match side {
            Side::Post => w.posted = ranks.clone(),
            Side::Start => w.started = ranks.clone(),
        }
        Some(())
    });
    if known.is_none() {
        return;
    }
    match side {
        Side::Post => notify(key, &ranks, POST_TAG),
        Side::Start => notified(key, &ranks, POST_TAG),
    }
}

/// `MPI_Win_complete` on `win` returned: once the operations to the
/// targets of the last start are done, each is notified.
pub fn completed(win: u64) {
    let Some(targets) = with(|w| w.get_mut(&win).map(|w| std::mem::take(&mut w.started))) else {
        return;
    };
    for &t in &targets {
        settled(win, Some(t));
    }
    notify(win, &targets, DONE_TAG);
}

/// `MPI_Win_wait` on `win` returned (or a `MPI_Win_test` that ended the
/// epoch): each origin of the last post's notification is received.
pub fn waited(win: u64) {
    let Some(origins) = with(|w| w.get_mut(&win).map(|w| std::mem::take(&mut w.posted))) else {
        return;
    };
    notified(win, &origins, DONE_TAG);
}

/// Sends each of `ranks` (of window `win`'s group) an empty message,
/// all posted at the clock's time now, whose arrival its notification `tag` carries; the clock
/// moves to when the last send's overhead is done.
fn notify(win: u64, ranks: &[c_int], tag: c_int) {
    let Some((group, comm)) = with(|w| w.get(&win).map(|w| (w.group.clone(), w.comm))) else {
        return;
    };
    // Every send is posted at once (as the replay posts them in one call).
    let Some(at) = state::with(|st| st.clock) else {
        return;
    };
    for &r in ranks {
        let Some(&dst) = usize::try_from(r).ok().and_then(|r| group.get(r)) else {
            continue;
        };
        let arrival = state::with(|st| {
            let m = st.msg(st.rank, dst, 0);
            let posted = p2p::post(&mut *st.model, &m, Mode::Standard, at, &mut p2p::unstretched);
            let envelope = st.channels.send((dst, comm), &posted, st.lookahead);
            st.clock = st.clock.max(posted.free);
            envelope.arrival.unwrap_or(envelope.at)
        });
        if let Some(a) = arrival {
            let mut words = [0u64; 6];
            words[0] = a.to_bits();
            crate::p2p::isend_words(words, 1, r, tag, Comm::from_bits(comm));
        }
    }
}

/// Receives the notification `tag` of each of `ranks` (of window `win`'s
/// group), posted at the call's start: the clock moves to when the last
/// completes, as the kernel's rule completes a receive.
fn notified(win: u64, ranks: &[c_int], tag: c_int) {
    let Some((group, comm)) = with(|w| w.get(&win).map(|w| (w.group.clone(), w.comm))) else {
        return;
    };
    for &r in ranks {
        let Some(&src) = usize::try_from(r).ok().and_then(|r| group.get(r)) else {
            continue;
        };
        let mut word = 0u64;
        let mut st = state::blank_status();
        // SAFETY: one u64 into a local; the window's duplicate is the
        // module's; the status is local.
        let rc = unsafe {
            ffi::PMPI_Recv(
                (&raw mut word).cast(),
                1,
                constants::UINT64_T(),
                r,
                tag,
                Comm::from_bits(comm),
                &mut st,
            )
        };
        if rc != constants::SUCCESS() {
            continue;
        }
        received(src, f64::from_bits(word));
    }
}

/// An empty message from world rank `src` that arrived at `arrival` is
/// received by the call: the clock moves to when the kernel's rule
/// completes a receive posted at the call's start.
fn received(src: u32, arrival: Ns) {
    state::with(|st| {
        let m = st.msg(src, st.rank, 0);
        let done = p2p::received(&mut *st.model, &m, arrival, st.call_start, &mut p2p::unstretched);
        st.clock = st.clock.max(done);
        st.call_late = st.call_late.max(arrival);
    });
}

/// A shadow window over `comm` (every member calls this at the same
/// point), its clocks at `-inf`: no holder released its lock yet.
fn shadow_of(comm: Comm) -> Option<u64> {
    let mut base: *mut f64 = std::ptr::null_mut();
    // SAFETY: zeroes are a placeholder that MPI_Win_allocate overwrites.
    let mut s: MPI_Win = unsafe { std::mem::zeroed() };
    // SAFETY: two doubles a rank, allocated by MPI into `base`; `comm` is
    // vtime's duplicate of the application window's communicator.
    let rc = unsafe {
        ffi::PMPI_Win_allocate(
            16,
            8,
            constants::INFO_NULL(),
            comm,
            (&raw mut base).cast(),
            &mut s,
        )
    };
    if rc != constants::SUCCESS() {
        pnmpi_sdk::say::warn(
            "vtime",
            format_args!("cannot make a window's shadow (error {rc}): its locks are not handed over"),
        );
        return None;
    }
    let unset = [f64::NEG_INFINITY; 2];
    let mut me: c_int = 0;
    // SAFETY: the rank of this process in vtime's duplicate; the put
    // writes this rank's own two clocks under its exclusive lock, so
    // every memory model sees them before the barrier ends.
    unsafe {
        ffi::PMPI_Comm_rank(comm, &mut me);
        ffi::PMPI_Win_lock(constants::LOCK_EXCLUSIVE(), me, 0, s);
        ffi::PMPI_Put(
            unset.as_ptr().cast(),
            2,
            constants::DOUBLE(),
            me,
            0,
            2,
            constants::DOUBLE(),
            s,
        );
        ffi::PMPI_Win_unlock(me, s);
        ffi::PMPI_Barrier(comm);
    }
    Some(s.bits())
}

/// `MPI_Win_lock` of `target` (a rank of window `win`'s group; `Some((target,
/// exclusive))`) or `MPI_Win_lock_all` (`None`, shared on every rank) is
/// called: vtime takes its shadow's lock alike and reads when the holders
/// before released it; the clock moves to when the target's grant,
/// handed over by the kernel's rule from the latest release that the
/// lock waits for (an exclusive lock every holder's, a shared lock the
/// exclusive holders'), is received.
pub fn lock(win: MPI_Win, which: Option<(c_int, bool)>) {
    let key = win.bits();
    let (target, exclusive) = (which.map(|(t, _)| t), which.is_some_and(|(_, x)| x));
    let Some((shadow, group)) = with(|w| {
        let w = w.get_mut(&key)?;
        let s = w.shadow?;
        w.held.insert(target, exclusive);
        Some((MPI_Win::from_bits(s), w.group.clone()))
    }) else {
        return;
    };
    let targets = ranks_of(target, group.len());
    let mut clocks = vec![[f64::NEG_INFINITY; 2]; targets.len()];
    // SAFETY: vtime's own shadow window; each get reads the target's two
    // clocks into this rank's buffer, complete at the flush.
    unsafe {
        match which {
            Some((t, x)) => {
                let kind = if x {
                    constants::LOCK_EXCLUSIVE()
                } else {
                    constants::LOCK_SHARED()
                };
                ffi::PMPI_Win_lock(kind, t, 0, shadow);
            }
            None => {
                ffi::PMPI_Win_lock_all(0, shadow);
            }
        }
        for (&t, c) in targets.iter().zip(&mut clocks) {
            ffi::PMPI_Get(
                c.as_mut_ptr().cast(),
                2,
                constants::DOUBLE(),
                t,
                0,
                2,
                constants::DOUBLE(),
                shadow,
            );
        }
        ffi::PMPI_Win_flush_all(shadow);
    }
    for (&t, c) in targets.iter().zip(&clocks) {
        let released = if exclusive {
            c[EXCLUSIVE_CLOCK].max(c[SHARED_CLOCK])
        } else {
            c[EXCLUSIVE_CLOCK]
        };
        let Some(&src) = group.get(t as usize) else {
            continue;
        };
        if released.is_finite() {
            let arrival = state::with(|st| {
                let m = st.msg(src, st.rank, 0);
                rule::handoff(&mut *st.model, &m, released)
            });
            if let Some(a) = arrival {
                received(src, a);
            }
        }
    }
}

/// An unlock of window `win` to `target` (`None`: `MPI_Win_unlock_all`)
/// returned: once its operations are done ([`settle`]), the lock is
/// released then: the shadow's clock of its kind at each target is
/// raised to now, and vtime's shadow lock released.
pub fn unlocked(win: MPI_Win, target: Option<c_int>) {
    settle(win, target);
    let key = win.bits();
    let Some((shadow, exclusive, ranks)) = with(|w| {
        let w = w.get_mut(&key)?;
        let exclusive = w.held.remove(&target)?;
        Some((
            MPI_Win::from_bits(w.shadow?),
            exclusive,
            ranks_of(target, w.group.len()),
        ))
    }) else {
        return;
    };
    let Some(now) = state::with(|st| st.clock) else {
        return;
    };
    let slot = if exclusive { EXCLUSIVE_CLOCK } else { SHARED_CLOCK };
    // SAFETY: vtime's own shadow window, locked by [`lock`]; `now` lives
    // until the unlock completes the accumulates.
    unsafe {
        for &t in &ranks {
            ffi::PMPI_Accumulate(
                (&raw const now).cast(),
                1,
                constants::DOUBLE(),
                t,
                slot as ffi::MPI_Aint,
                1,
                constants::DOUBLE(),
                constants::MAX(),
                shadow,
            );
        }
        match target {
            Some(t) => ffi::PMPI_Win_unlock(t, shadow),
            None => ffi::PMPI_Win_unlock_all(shadow),
        };
    }
}

/// The window ranks a lock call names: its target, or (`None`, the
/// `_all` forms) every rank of a group of `size`.
fn ranks_of(target: Option<c_int>, size: usize) -> Vec<c_int> {
    match target {
        Some(t) => vec![t],
        None => (0..size as c_int).collect(),
    }
}
