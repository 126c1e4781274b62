//! Completing requests: the `Wait` and `Test` families. A completed
//! request is finished in its owner's context: the received data is
//! unpacked into the receive buffer, a collective's result copied out,
//! the status filled, the clock moved to the completion time (the part
//! after the partner posted counts as communication, the part before as
//! waiting), and the request freed unless it is persistent.

use super::{fatal, set_status, CallInProgress};
use crate::engine::{self, with};
use crate::handles::{self, Kind};
use crate::p2p::Work;
use crate::sched::Rank;
use pnmpi_mpi_sys::{constants as c, ffi};
use std::ffi::c_int;

/// An active request, and the persistent request it was started from.
pub type Active = (usize, Option<usize>);

/// The request a handle names now: `None` for `MPI_REQUEST_NULL` or an
/// inactive persistent request.
pub fn resolve(routine: &str, h: ffi::MPI_Request) -> Option<Active> {
    use pnmpi_mpi_sys::Handle;
    if h.bits() == c::REQUEST_NULL().bits() {
        return None;
    }
    let Some(id) = handles::index(Kind::Request, h) else {
        fatal(routine, "invalid request (not one of this run's)")
    };
    let active = with(|e| {
        e.p2p().get(id).map(|r| match &r.work {
            Work::Persistent(t) => t.active.map(|a| (a, Some(id))),
            _ => Some((id, None)),
        })
    });
    active.unwrap_or_else(|| fatal(routine, "invalid request (already completed or freed)"))
}

/// Whether request `id` is complete by the owner's clock (`now`), or at
/// all (`!now`).
fn done(id: usize, now: bool) -> bool {
    with(|e| {
        let r = e.p2p().get(id).expect("a live request");
        r.done && (!now || r.at <= e.sched().rank(r.owner).clock)
    })
}

/// Finishes completed request `id` for its owner (the running rank).
///
/// # Safety
/// `st` is a status pointer the application gave, or ignore.
pub unsafe fn finish(routine: &str, id: usize, persistent: Option<usize>, st: *mut ffi::MPI_Status) {
    let req = with(|e| {
        let r = e.p2p_mut().remove(id);
        let partner = match &r.work {
            Work::Coll { call, .. } => e.colls().call(*call).latest,
            _ => r.posted,
        };
        let rank = e.sched_mut().rank_mut(r.owner);
        charge(rank, r.at, partner);
        if matches!(r.work, Work::Recv(..)) {
            rank.stats.received += 1;
        }
        if let Some(p) = persistent {
            if let Some(Work::Persistent(t)) = e.p2p_mut().get_mut(p).map(|r| &mut r.work) {
                t.active = None;
            }
        }
        r
    });
    traced(routine, persistent.unwrap_or(id), &req);
    match req.work {
        Work::Recv(spec, Some(m)) => {
            // SAFETY: the receive buffer the application posted, valid
            // until the request completes.
            if let Err(room) = unsafe { crate::dtype::unpack(&m.data, spec.buf, spec.count, spec.dtype) } {
                fatal(
                    routine,
                    &format!(
                        "message truncated: {} bytes from rank {} tag {} into a receive of {room} bytes",
                        m.data.len(),
                        m.from,
                        m.tag
                    ),
                );
            }
            // SAFETY: the application's status.
            unsafe { set_status(st, req.status.0, req.status.1, req.status.2) };
        }
        Work::Recv(_, None) => {
            // A receive from MPI_PROC_NULL.
            // SAFETY: the application's status.
            unsafe { set_status(st, c::PROC_NULL(), c::ANY_TAG(), 0) };
        }
        Work::Coll { call, me, out } => {
            // SAFETY: the buffers the member gave, valid until completion.
            unsafe { super::results::copy_out(call, me, out) };
            with(|e| e.colls_mut().leave(call));
            // SAFETY: the application's status.
            unsafe { set_status(st, c::ANY_SOURCE(), c::ANY_TAG(), 0) };
        }
        Work::Send | Work::Persistent(_) => {
            // SAFETY: the application's status.
            unsafe { set_status(st, c::ANY_SOURCE(), c::ANY_TAG(), 0) };
        }
    }
}

/// Moves `rank`'s clock to `at`, a completion, if later: the part after
/// the partner posted (`partner`) counts as communication, the part
/// before as waiting.
fn charge(rank: &mut Rank, at: f64, partner: f64) {
    let before = rank.clock;
    let after = before.max(at);
    let wait = (partner - before).clamp(0.0, after - before);
    rank.stats.wait += wait;
    rank.stats.comm += after - before - wait;
    rank.clock = after;
}

/// Waits for requests the application never sees and retires them: one
/// round of an algorithmic collective's steps (those posted since its
/// last `WaitAll`), or a one-sided epoch's notifications. The running
/// rank's clock moves to their latest completion, as the replay's
/// `WaitAll` moves it. They carry no data and no status, and the trace
/// records the call that made them, not them.
pub fn wait_unseen(ids: &[usize]) {
    let active: Vec<Option<Active>> = ids.iter().map(|&id| Some((id, None))).collect();
    wait_for(&active, ids.len());
    with(|e| {
        for &id in ids {
            let r = e.p2p_mut().remove(id);
            charge(e.sched_mut().rank_mut(r.owner), r.at, r.posted);
        }
    });
}

/// Records a finished request in a traced run: for the `Wait` and `Test`
/// families, as a completion of the application's handle `id` (with the
/// source and tag of a receive); for the blocking calls built on a
/// request of their own, only a receive's status.
fn traced(routine: &str, id: usize, req: &crate::p2p::Request) {
    let status = match &req.work {
        Work::Recv(_, Some(_)) => Some((req.status.0, req.status.1)),
        Work::Recv(_, None) => Some((c::PROC_NULL(), c::ANY_TAG())),
        _ => None,
    };
    if routine.starts_with("MPI_Wait") || routine.starts_with("MPI_Test") {
        let h: ffi::MPI_Request = super::handle(Kind::Request, id);
        super::traced::done(pnmpi_mpi_sys::Handle::bits(h), status);
    } else if let Some((source, tag)) = status {
        super::traced::status(source, tag);
    }
}

/// Waits for the request behind `*h` and finishes it.
///
/// # Safety
/// `h` points to a request handle; `st` is a status or ignore.
pub unsafe fn wait(routine: &str, h: *mut ffi::MPI_Request, st: *mut ffi::MPI_Status) {
    // SAFETY: the caller's handle.
    let Some((id, persistent)) = resolve(routine, unsafe { *h }) else {
        // SAFETY: the caller's status.
        unsafe { set_status(st, c::ANY_SOURCE(), c::ANY_TAG(), 0) };
        return;
    };
    if !done(id, false) {
        with(|e| e.p2p_mut().get_mut(id).expect("a live request").waited = true);
        engine::block(1, f64::NEG_INFINITY);
    }
    // SAFETY: as above.
    unsafe {
        finish(routine, id, persistent, st);
        if persistent.is_none() {
            *h = c::REQUEST_NULL();
        }
    }
}

/// The status of entry `i` of an array of statuses, or ignore.
fn status_at(sts: *mut ffi::MPI_Status, i: usize) -> *mut ffi::MPI_Status {
    if sts.is_null() || sts == c::STATUSES_IGNORE() {
        c::STATUS_IGNORE()
    } else {
        sts.wrapping_add(i)
    }
}

/// The active requests of an array of handles.
///
/// # Safety
/// `hs` points to `n` handles.
unsafe fn active(routine: &str, n: c_int, hs: *mut ffi::MPI_Request) -> Vec<Option<Active>> {
    // SAFETY: the caller's array.
    (0..n.max(0) as usize)
        .map(|i| resolve(routine, unsafe { *hs.add(i) }))
        .collect()
}

/// Waits until `need` of `ids` are complete (counting those already
/// complete), then clears the waiting marks. A wait for some of them
/// then lets the simulation reach the earliest completion known: a
/// request can be known complete long before its time (a rendezvous
/// matched when its receive was posted), and another may complete
/// earlier, by events still to come.
fn wait_for(ids: &[Option<Active>], need: usize) {
    wait_known(ids, need);
    if need < ids.iter().flatten().count() {
        let first = known_completions(ids, f64::INFINITY, f64::min);
        if first.is_finite() && first > with(|e| e.sched().now()) {
            engine::sleep_until(first);
        }
    }
}

/// `fold` (from `init`) over the completion times of those of `ids`
/// known complete.
fn known_completions(ids: &[Option<Active>], init: f64, fold: fn(f64, f64) -> f64) -> f64 {
    with(|e| {
        ids.iter()
            .flatten()
            .filter_map(|x| e.p2p().get(x.0))
            .filter(|q| q.done)
            .map(|q| q.at)
            .fold(init, fold)
    })
}

/// [`wait_for`] up to the completions known.
fn wait_known(ids: &[Option<Active>], need: usize) {
    let pending: Vec<usize> = ids
        .iter()
        .flatten()
        .map(|x| x.0)
        .filter(|&id| !done(id, false))
        .collect();
    let complete = ids.iter().flatten().count() - pending.len();
    if complete >= need {
        return;
    }
    let more = need - complete;
    // A wait for all resumes after the latest completion, those already
    // complete included.
    let after = if need == ids.iter().flatten().count() {
        known_completions(ids, f64::NEG_INFINITY, f64::max)
    } else {
        f64::NEG_INFINITY
    };
    with(|e| {
        for &id in &pending {
            e.p2p_mut().get_mut(id).expect("a live request").waited = true;
        }
    });
    engine::block(more as u32, after);
    with(|e| {
        for &id in &pending {
            if let Some(r) = e.p2p_mut().get_mut(id) {
                r.waited = false;
            }
        }
    });
}

/// `MPI_Waitall` and (after a successful check) `MPI_Testall`.
///
/// # Safety
/// `hs` points to `n` handles, `sts` to `n` statuses or ignore.
pub unsafe fn wait_all(routine: &str, n: c_int, hs: *mut ffi::MPI_Request, sts: *mut ffi::MPI_Status) {
    // SAFETY: the caller's arrays.
    let ids = unsafe { active(routine, n, hs) };
    let count = ids.iter().flatten().count();
    wait_for(&ids, count);
    for (i, x) in ids.iter().enumerate() {
        // SAFETY: the caller's arrays, entry `i < n`.
        unsafe {
            match x {
                Some((id, p)) => {
                    finish(routine, *id, *p, status_at(sts, i));
                    if p.is_none() {
                        *hs.add(i) = c::REQUEST_NULL();
                    }
                }
                None => set_status(status_at(sts, i), c::ANY_SOURCE(), c::ANY_TAG(), 0),
            }
        }
    }
}

/// The complete requests among `ids`, earliest completion first.
fn completed(ids: &[Option<Active>], now: bool) -> Vec<usize> {
    let mut v: Vec<(f64, usize)> = ids
        .iter()
        .enumerate()
        .filter_map(|(i, x)| {
            x.filter(|(id, _)| done(*id, now))
                .map(|(id, _)| (with(|e| e.p2p().get(id).map_or(0.0, |q| q.at)), i))
        })
        .collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    v.into_iter().map(|x| x.1).collect()
}

/// `MPI_Waitany`/`MPI_Testany`: finishes the earliest complete request.
///
/// # Safety
/// As for [`wait_all`]; `index` and `flag` are the caller's.
pub unsafe fn any(
    routine: &str,
    n: c_int,
    hs: *mut ffi::MPI_Request,
    index: *mut c_int,
    flag: *mut c_int,
    st: *mut ffi::MPI_Status,
    call: &CallInProgress,
) {
    // SAFETY: the caller's arrays.
    let ids = unsafe { active(routine, n, hs) };
    let test = !flag.is_null();
    if ids.iter().all(Option::is_none) {
        // SAFETY: the caller's out-pointers.
        unsafe {
            *index = c::UNDEFINED();
            if test {
                *flag = 1;
            }
            set_status(st, c::ANY_SOURCE(), c::ANY_TAG(), 0);
        }
        return;
    }
    if test {
        engine::catch_up();
    } else {
        wait_for(&ids, 1);
    }
    let Some(&i) = completed(&ids, test).first() else {
        if call.polling() {
            engine::idle(ids.iter().flatten().map(|a| a.0));
        }
        // SAFETY: the caller's out-pointers.
        unsafe {
            *flag = 0;
            *index = c::UNDEFINED();
        }
        return;
    };
    let (id, p) = ids[i].expect("completed requests are active");
    // SAFETY: the caller's arrays and out-pointers.
    unsafe {
        finish(routine, id, p, st);
        if p.is_none() {
            *hs.add(i) = c::REQUEST_NULL();
        }
        *index = i as c_int;
        if test {
            *flag = 1;
        }
    }
}

/// `MPI_Waitsome`/`MPI_Testsome`: finishes every complete request.
///
/// # Safety
/// As for [`wait_all`]; `outcount` and `indices` are the caller's.
#[allow(clippy::too_many_arguments)]
pub unsafe fn some(
    routine: &str,
    n: c_int,
    hs: *mut ffi::MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    sts: *mut ffi::MPI_Status,
    test: bool,
    call: &CallInProgress,
) {
    // SAFETY: the caller's arrays.
    let ids = unsafe { active(routine, n, hs) };
    if ids.iter().all(Option::is_none) {
        // SAFETY: the caller's out-pointer.
        unsafe { *outcount = c::UNDEFINED() };
        return;
    }
    if test {
        engine::catch_up();
    } else {
        wait_for(&ids, 1);
    }
    let list = completed(&ids, test);
    if list.is_empty() && call.polling() {
        engine::idle(ids.iter().flatten().map(|a| a.0));
    }
    for (k, &i) in list.iter().enumerate() {
        let (id, p) = ids[i].expect("completed requests are active");
        // SAFETY: the caller's arrays, `k <= i < n`.
        unsafe {
            finish(routine, id, p, status_at(sts, k));
            if p.is_none() {
                *hs.add(i) = c::REQUEST_NULL();
            }
            *indices.add(k) = i as c_int;
        }
    }
    // SAFETY: the caller's out-pointer.
    unsafe { *outcount = list.len() as c_int };
}

/// `MPI_Test`/`MPI_Testall`: catches up with the rank's clock, then
/// finishes the requests if every one is complete by then.
///
/// # Safety
/// As for [`wait_all`].
pub unsafe fn test_all(
    routine: &str,
    n: c_int,
    hs: *mut ffi::MPI_Request,
    flag: *mut c_int,
    sts: *mut ffi::MPI_Status,
    call: &CallInProgress,
) {
    engine::catch_up();
    // SAFETY: the caller's arrays.
    let ids = unsafe { active(routine, n, hs) };
    let all = ids.iter().flatten().all(|(id, _)| done(*id, true));
    if all {
        // SAFETY: as above.
        unsafe {
            wait_all(routine, n, hs, sts);
            *flag = 1;
        }
    } else {
        if call.polling() {
            engine::idle(ids.iter().flatten().map(|a| a.0));
        }
        // SAFETY: the caller's out-pointer.
        unsafe { *flag = 0 };
    }
}

/// Blocks until request `id` completes, then finishes it.
///
/// # Safety
/// `st` is the caller's status or ignore.
pub unsafe fn wait_id(routine: &str, id: usize, st: *mut ffi::MPI_Status) {
    let mut h: ffi::MPI_Request = super::handle(Kind::Request, id);
    // SAFETY: a local handle and the caller's status.
    unsafe { wait(routine, &mut h, st) };
}
