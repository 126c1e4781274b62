//! The wrappers: each records the outcome MPI chose, or forces the
//! recorded one, and otherwise passes the call down unchanged.
//!
//! Replay forces an outcome with a blocking call on what the record names:
//! a wildcard receive or probe is posted with the recorded source; a test
//! reports failure, without calling MPI, until its recorded success, which
//! is then an `MPI_Wait` on the recorded request(s); `MPI_Waitany` and
//! `MPI_Waitsome` wait on the recorded request(s), in the recorded order.

use crate::abort::diverge;
use crate::format::{Entry, Kind};
use crate::posts;
use crate::state::{self, mode, Next, Recorder, RecvArgs, Replayer, State, Turn, RECORD, REPLAY, STATE};
use pnmpi_sdk::constants as mpi;
use pnmpi_sdk::raw as x;
use pnmpi_sdk::sys::ffi::{MPI_Request, MPI_Status};
use pnmpi_sdk::sys::Handle;
use pnmpi_sdk::threads;
use smallvec::SmallVec;
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// A call's requests before it: each handle, and the posting thread and
/// number if it is a pending wildcard receive; on the stack for the
/// usual few.
type Handles = SmallVec<[Pending; 4]>;

/// A request handle, and the posting thread and number of the wildcard
/// receive it was before the call completed it. Taken before the call:
/// once MPI completes the request, another thread may get the same handle
/// for a new receive before this thread records the match.
#[derive(Clone, Copy)]
struct Pending {
    handle: u64,
    /// The posting number, if `thread` is not [`NOT_PENDING`].
    post: u64,
    thread: u32,
}

/// [`Pending::thread`] of a request that is no pending wildcard receive.
const NOT_PENDING: u32 = u32::MAX;

/// Whether `MPI_Wtime`'s values are recorded or replayed.
pub static WTIME: AtomicBool = AtomicBool::new(false);

/// Replay: how many started persistent receives have a shadow receive
/// (see [`Replayer::shadows`]); 0 spares the completion calls the lock.
static SHADOWED: AtomicUsize = AtomicUsize::new(0);

/// Replay: the receive posted in place of the application's started
/// persistent wildcard receive `h`, taken out of the table.
fn take_shadow(h: u64) -> Option<MPI_Request> {
    if SHADOWED.load(Ordering::Relaxed) == 0 {
        return None;
    }
    let shadow = rp(|r| r.shadows.remove(&h)).flatten()?;
    SHADOWED.fetch_sub(1, Ordering::Relaxed);
    Some(MPI_Request::from_bits(shadow))
}

/// Replay: `MPI_Wait` on `*req`, or on the receive standing for it (the
/// application's persistent request is then left inactive, as MPI would).
///
/// # Safety
/// `req` points to a request; `st` to a status or is `MPI_STATUS_IGNORE`.
unsafe fn wait_one(req: *mut MPI_Request, st: *mut MPI_Status) -> c_int {
    // SAFETY: the caller's request.
    match take_shadow(unsafe { *req }.bits()) {
        // SAFETY: a request this module posted; the caller's status.
        Some(mut shadow) => unsafe { x::XMPI_Wait(&mut shadow, st) },
        // SAFETY: the caller's arguments.
        None => unsafe { x::XMPI_Wait(req, st) },
    }
}

/// Replay: `MPI_Waitall`, with the receives standing for started
/// persistent wildcard receives in their place.
///
/// # Safety
/// The arguments of `MPI_Waitall`.
unsafe fn wait_all(count: c_int, reqs: *mut MPI_Request, statuses: *mut MPI_Status) -> c_int {
    if SHADOWED.load(Ordering::Relaxed) == 0 {
        // SAFETY: the caller's arguments.
        return unsafe { x::XMPI_Waitall(count, reqs, statuses) };
    }
    let n = count.max(0) as usize;
    // SAFETY: the caller's `count` requests.
    let mut copy: SmallVec<[MPI_Request; 8]> = (0..n).map(|i| unsafe { *reqs.add(i) }).collect();
    let mut shadowed: SmallVec<[bool; 8]> = SmallVec::from_elem(false, n);
    for i in 0..n {
        if let Some(shadow) = take_shadow(copy[i].bits()) {
            copy[i] = shadow;
            shadowed[i] = true;
        }
    }
    // SAFETY: the caller's requests, some replaced by this module's; the caller's statuses.
    let rc = unsafe { x::XMPI_Waitall(count, copy.as_mut_ptr(), statuses) };
    for i in (0..n).filter(|&i| !shadowed[i]) {
        // SAFETY: the caller's requests, as MPI left them.
        unsafe { *reqs.add(i) = copy[i] };
    }
    rc
}

/// `MPI_Start` of one request: a persistent wildcard receive gets its
/// posting number; replayed, it is posted as an `MPI_Irecv` from the
/// recorded source, which completes for it.
///
/// # Safety
/// `req` points to a persistent request.
unsafe fn start_one(m: u8, req: *mut MPI_Request) -> c_int {
    // SAFETY: the caller's request.
    let h = unsafe { *req }.bits();
    if m == RECORD {
        if rec(|r| r.persistent.contains(&h)) != Some(true) {
            // SAFETY: the caller's request.
            return unsafe { x::XMPI_Start(req) };
        }
        let mut rc = mpi::SUCCESS();
        posts::record(me(), Kind::Start, || {
            // SAFETY: the caller's request.
            rc = unsafe { x::XMPI_Start(req) };
            ok(rc).then_some(h)
        });
        return rc;
    }
    let persistent = rp(|r| r.persistent.contains_key(&h)) == Some(true);
    let _turn = if persistent {
        posts::turn(me(), Kind::Start)
    } else {
        None
    };
    let plan = rp(|r| {
        let args = *r.persistent.get(&h)?;
        r.post(me()).map(|m| (args, m.0))
    });
    let Some(Some((a, source))) = plan else {
        // SAFETY: the caller's request.
        return unsafe { x::XMPI_Start(req) };
    };
    let mut shadow = mpi::REQUEST_NULL();
    let Ok(count) = i32::try_from(a.count) else {
        diverge(
            me(),
            0,
            Kind::Match,
            &format!(
                "a started persistent wildcard receive of {} elements: a replay posts it with an int count",
                a.count
            ),
        )
    };
    // SAFETY: the arguments the application gave MPI_Recv_init for this
    // request, whose buffer it must keep for the request's life.
    let rc = unsafe {
        x::XMPI_Irecv(
            a.buf as *mut std::ffi::c_void,
            count,
            Handle::from_bits(a.datatype),
            source,
            a.tag,
            Handle::from_bits(a.comm),
            &mut shadow,
        )
    };
    if ok(rc) {
        rp(|r| r.shadows.insert(h, shadow.bits()));
        SHADOWED.fetch_add(1, Ordering::Relaxed);
    }
    rc
}

fn ok(rc: c_int) -> bool {
    rc == mpi::SUCCESS()
}

fn blank() -> MPI_Status {
    // SAFETY: MPI_Status is a C struct of integers, valid when zeroed.
    unsafe { std::mem::zeroed() }
}

/// (source, tag) of a status MPI filled.
///
/// # Safety
/// `st` points to a status.
unsafe fn source_tag(st: *const MPI_Status) -> (i32, i32) {
    // SAFETY: the caller's contract.
    let st = unsafe { &*st };
    (st.MPI_SOURCE, st.MPI_TAG)
}

/// Runs `f` on the recorder, if recording.
fn rec<R>(f: impl FnOnce(&mut Recorder) -> R) -> Option<R> {
    match &mut *STATE.lock() {
        Some(State::Record(r)) => Some(f(r)),
        _ => None,
    }
}

/// Runs `f` on the replayer, if replaying.
fn rp<R>(f: impl FnOnce(&mut Replayer) -> R) -> Option<R> {
    match &mut *STATE.lock() {
        Some(State::Replay(r)) => Some(f(r)),
        _ => None,
    }
}

/// Replaying: the record's outcome for this `kind` call, once its turn
/// came, and the call's index among its thread's; the turn is held until
/// the [`Turn`] is dropped, after the call that forces the outcome.
fn next(kind: Kind) -> Option<(Turn, u64, Next)> {
    state::next(me(), kind).map(|(i, n, t)| (t, i, n))
}

/// The calling thread's number.
fn me() -> u32 {
    threads::current()
}

/// The source and tag of a recorded match.
fn matched(index: u64, kind: Kind, e: Entry) -> (i32, i32) {
    match e {
        Entry::Matched { source, tag, .. } => (source, tag),
        other => diverge(me(), index, kind, &format!("the record holds {other:?}")),
    }
}

/// The source to post a replayed receive or probe with: the recorded one
/// for `MPI_ANY_SOURCE`; a specific source or tag must be the recorded one.
fn forced_source(index: u64, kind: Kind, source: c_int, tag: c_int, rec: (i32, i32)) -> c_int {
    if source != mpi::ANY_SOURCE() && source != rec.0 {
        diverge(
            me(),
            index,
            kind,
            &format!(
                "the call names source {source}, the record says a message from {}",
                rec.0
            ),
        );
    }
    if tag != mpi::ANY_TAG() && tag != rec.1 {
        diverge(
            me(),
            index,
            kind,
            &format!("the call names tag {tag}, the record says tag {}", rec.1),
        );
    }
    rec.0
}

/// After a replayed receive or probe: the message is the recorded one.
///
/// # Safety
/// `st` points to the status MPI filled.
unsafe fn check_message(index: u64, kind: Kind, st: *const MPI_Status, rec: (i32, i32)) {
    // SAFETY: the caller's contract.
    let got = unsafe { source_tag(st) };
    if got != rec && got.0 != mpi::PROC_NULL() {
        diverge(
            me(),
            index,
            kind,
            &format!(
                "matched a message from {} with tag {}, the record says from {} with tag {}",
                got.0, got.1, rec.0, rec.1
            ),
        );
    }
}

/// Records where the completed request `done` matched, if it was a
/// wildcard `MPI_Irecv`.
///
/// # Safety
/// `st` points to the status MPI filled for the request's completion.
unsafe fn note_done(r: &mut Recorder, done: Pending, st: *const MPI_Status) {
    if done.thread != NOT_PENDING {
        // SAFETY: the caller's contract.
        r.matched(done.handle, (done.thread, done.post), unsafe { source_tag(st) });
    }
}

/// The `n` requests, with the pending wildcard receives among them, when
/// some are pending (else nothing: their completions are not recorded).
///
/// # Safety
/// `reqs` points to `n` requests.
unsafe fn snapshot(reqs: *const MPI_Request, n: c_int) -> Handles {
    if mode() != RECORD || reqs.is_null() {
        return Handles::new();
    }
    let mut out = Handles::new();
    if let Some(State::Record(r)) = &*STATE.lock() {
        if !r.pending.is_empty() {
            for i in 0..n.max(0) as usize {
                // SAFETY: the caller's contract.
                let handle = unsafe { *reqs.add(i) }.bits();
                let (thread, post) = r.pending.get(&handle).copied().unwrap_or((NOT_PENDING, 0));
                out.push(Pending { handle, post, thread });
            }
        }
    }
    out
}

/// Checks a recorded request index against this call's requests.
///
/// # Safety
/// `reqs` points to `n` requests.
unsafe fn check_index(index: u64, kind: Kind, reqs: *const MPI_Request, n: c_int, i: u32) -> usize {
    let i = i as usize;
    // SAFETY: i < n is checked first; the caller's contract.
    if i >= n.max(0) as usize || unsafe { *reqs.add(i) } == mpi::REQUEST_NULL() {
        diverge(
            me(),
            index,
            kind,
            &format!("the record says request {i} completes, but the call has no active request {i} of {n}"),
        );
    }
    i
}

/// A blocking probe of `kind` (`MPI_Probe`, `MPI_Mprobe`), which `call`
/// makes with a source and a status: a wildcard one records the message
/// it found, or is made for the recorded one.
fn probe(
    kind: Kind,
    source: c_int,
    tag: c_int,
    status: *mut MPI_Status,
    call: impl Fn(c_int, *mut MPI_Status) -> c_int,
) -> c_int {
    let m = mode();
    if m == state::OFF || (source != mpi::ANY_SOURCE() && tag != mpi::ANY_TAG()) {
        return call(source, status);
    }
    let mut own = blank();
    let st = if status == mpi::STATUS_IGNORE() {
        &raw mut own
    } else {
        status
    };
    if m == RECORD {
        let rc = call(source, st);
        if ok(rc) {
            // SAFETY: MPI filled the status.
            let (source, tag) = unsafe { source_tag(st) };
            rec(|r| r.push(me(), Entry::Matched { kind, source, tag }));
        }
        return rc;
    }
    let Some((_turn, i, Next::Entry(e))) = next(kind) else {
        return call(source, status);
    };
    let want = matched(i, kind, e);
    let src = forced_source(i, kind, source, tag, want);
    let rc = call(src, st);
    if ok(rc) {
        // SAFETY: MPI filled the status.
        unsafe { check_message(i, kind, st, want) };
    }
    rc
}

/// A nonblocking probe of `kind` (`MPI_Iprobe`, `MPI_Improbe`), which
/// `test` makes with a status: records whether it found a message and
/// which; replays a failure without calling MPI, and a success as the
/// blocking probe `wait` of the recorded source.
fn test_probe(
    kind: Kind,
    source: c_int,
    flag: *mut c_int,
    status: *mut MPI_Status,
    test: impl Fn(*mut MPI_Status) -> c_int,
    wait: impl Fn(c_int, *mut MPI_Status) -> c_int,
) -> c_int {
    let m = mode();
    if m == state::OFF {
        return test(status);
    }
    let mut own = blank();
    let st = if status == mpi::STATUS_IGNORE() {
        &raw mut own
    } else {
        status
    };
    if m == RECORD {
        let rc = test(st);
        if ok(rc) {
            // SAFETY: MPI set the flag, and the status when it is true.
            let e = (unsafe { *flag } != 0).then(|| {
                // SAFETY: as above.
                let (source, tag) = unsafe { source_tag(st) };
                Entry::Matched { kind, source, tag }
            });
            rec(|r| match e {
                Some(e) => r.push(me(), e),
                None => r.fail(me(), kind),
            });
        }
        return rc;
    }
    match next(kind) {
        None => test(status),
        Some((_, _, Next::Fail)) => {
            // SAFETY: the caller's flag.
            unsafe { *flag = 0 };
            mpi::SUCCESS()
        }
        Some((_, i, Next::Entry(e))) => {
            let want = matched(i, kind, e);
            let src = if source == mpi::ANY_SOURCE() {
                want.0
            } else {
                source
            };
            let rc = wait(src, st);
            if ok(rc) {
                // SAFETY: MPI filled the status; the caller's flag.
                unsafe {
                    check_message(i, kind, st, want);
                    *flag = 1;
                }
            }
            rc
        }
    }
}

/// The wildcard receives, as wrappers of `$wrap` (`wrap` or
/// `wrap_optional`): one definition for the `int`-count routines and MPI
/// 4's large-count `_c` ones, whose bodies differ only in the entry they
/// call and the count's type.
macro_rules! receives {
    ($wrap:ident: $recv:ident $xrecv:ident, $sr:ident $xsr:ident, $srr:ident $xsrr:ident,
     $irecv:ident $xirecv:ident, $rinit:ident) => {
        pnmpi_sdk::$wrap! {
            /// A wildcard receive: records the source and tag, or receives from
            /// the recorded source.
            fn $recv(buf, count, datatype, source, tag, comm, status) {
                let m = mode();
                if m == state::OFF || (source != mpi::ANY_SOURCE() && tag != mpi::ANY_TAG()) {
                    return next!();
                }
                let mut own = blank();
                let st = if status == mpi::STATUS_IGNORE() { &raw mut own } else { status };
                if posts::ordered() {
                    let post = |src: c_int, req: &mut MPI_Request| {
                        // SAFETY: the caller's arguments, with `src` for the source.
                        unsafe { x::$xirecv(buf, count, datatype, src, tag, comm, req) }
                    };
                    // SAFETY: `st` is the caller's status or ours.
                    return unsafe { ordered_recv(m, source, tag, st, post) };
                }
                if m == RECORD {
                    // SAFETY: the caller's arguments, with a status of our own for an ignored one.
                    let rc = unsafe { x::$xrecv(buf, count, datatype, source, tag, comm, st) };
                    if ok(rc) {
                        // SAFETY: MPI filled the status.
                        let (source, tag) = unsafe { source_tag(st) };
                        rec(|r| r.push(me(), Entry::Matched { kind: Kind::Recv, source, tag }));
                    }
                    return rc;
                }
                let Some((_turn, i, Next::Entry(e))) = next(Kind::Recv) else { return next!() };
                let want = matched(i, Kind::Recv, e);
                let src = forced_source(i, Kind::Recv, source, tag, want);
                // SAFETY: the caller's arguments, with the recorded source.
                let rc = unsafe { x::$xrecv(buf, count, datatype, src, tag, comm, st) };
                if ok(rc) {
                    // SAFETY: MPI filled the status.
                    unsafe { check_message(i, Kind::Recv, st, want) };
                }
                rc
            }
            /// A wildcard `MPI_Sendrecv`: its receive as [`MPI_Recv`].
            fn $sr(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, status) {
                let m = mode();
                if m == state::OFF || (source != mpi::ANY_SOURCE() && recvtag != mpi::ANY_TAG()) {
                    return next!();
                }
                let mut own = blank();
                let st = if status == mpi::STATUS_IGNORE() { &raw mut own } else { status };
                let call = |src: c_int| {
                    // SAFETY: the caller's arguments, with `src` for the source and
                    // a status of our own for an ignored one.
                    unsafe {
                        x::$xsr(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, src, recvtag, comm, st)
                    }
                };
                // SAFETY: the status MPI filled.
                unsafe { sendrecv(m, source, recvtag, st, call) }
            }
            /// A wildcard `MPI_Sendrecv_replace`: as [`MPI_Sendrecv`].
            fn $srr(buf, count, datatype, dest, sendtag, source, recvtag, comm, status) {
                let m = mode();
                if m == state::OFF || (source != mpi::ANY_SOURCE() && recvtag != mpi::ANY_TAG()) {
                    return next!();
                }
                let mut own = blank();
                let st = if status == mpi::STATUS_IGNORE() { &raw mut own } else { status };
                let call = |src: c_int| {
                    // SAFETY: the caller's arguments, with `src` for the source and
                    // a status of our own for an ignored one.
                    unsafe { x::$xsrr(buf, count, datatype, dest, sendtag, src, recvtag, comm, st) }
                };
                // SAFETY: the status MPI filled.
                unsafe { sendrecv(m, source, recvtag, st, call) }
            }
            /// A receive from `MPI_ANY_SOURCE`: numbered, so that its completion
            /// records where it matched; replayed with the recorded source.
            fn $irecv(buf, count, datatype, source, tag, comm, request) {
                let m = mode();
                if m == state::OFF || source != mpi::ANY_SOURCE() {
                    return next!();
                }
                if m == RECORD {
                    let mut rc = mpi::SUCCESS();
                    posts::record(me(), Kind::Irecv, || {
                        rc = next!();
                        // SAFETY: MPI returned the request.
                        ok(rc).then(|| unsafe { *request }.bits())
                    });
                    return rc;
                }
                let _turn = posts::turn(me(), Kind::Irecv);
                let forced = rp(|r| r.post(me()).map(|m| m.0));
                match forced.flatten() {
                    // SAFETY: the caller's arguments, with the recorded source.
                    Some(src) => unsafe { x::$xirecv(buf, count, datatype, src, tag, comm, request) },
                    // The recorded run never completed it: nothing to force.
                    None => next!(),
                }
            }
            /// A persistent receive from `MPI_ANY_SOURCE`: remembered, so that
            /// each `MPI_Start` of it is numbered like a wildcard `MPI_Irecv`.
            #[allow(clippy::useless_conversion)] // an MPI_Count already, in the `_c` form
            fn $rinit(buf, count, datatype, source, tag, comm, request) {
                let m = mode();
                if m == state::OFF || source != mpi::ANY_SOURCE() {
                    return next!();
                }
                let rc = next!();
                if ok(rc) {
                    // SAFETY: MPI returned the request.
                    let h = unsafe { *request }.bits();
                    if m == RECORD {
                        rec(|r| r.persistent.insert(h));
                    } else {
                        let args = RecvArgs { buf: buf as usize, count: i64::from(count), datatype: datatype.bits(), tag, comm: comm.bits() };
                        rp(|r| r.persistent.insert(h, args));
                    }
                }
                rc
            }
        }
    };
}

receives!(wrap: MPI_Recv XMPI_Recv, MPI_Sendrecv XMPI_Sendrecv, MPI_Sendrecv_replace XMPI_Sendrecv_replace,
    MPI_Irecv XMPI_Irecv, MPI_Recv_init);
receives!(wrap_optional: MPI_Recv_c XMPI_Recv_c, MPI_Sendrecv_c XMPI_Sendrecv_c,
    MPI_Sendrecv_replace_c XMPI_Sendrecv_replace_c, MPI_Irecv_c XMPI_Irecv_c, MPI_Recv_init_c);

pnmpi_sdk::wrap! {
    /// Starts recording or replaying.
    fn MPI_Init(_argc, _argv) {
        threads::before_init();
        let rc = next!();
        if ok(rc) {
            started();
        }
        rc
    }

    /// Starts recording or replaying, at the thread level MPI grants:
    /// each thread records and replays its own outcomes.
    fn MPI_Init_thread(_argc, _argv, _required, _provided) {
        threads::before_init();
        let rc = next!();
        if ok(rc) {
            started();
        }
        rc
    }

    /// Finishes the record (or checks that the replay used all of it).
    fn MPI_Finalize() {
        state::finish();
        next!()
    }




    /// A wildcard probe: as [`MPI_Recv`].
    fn MPI_Probe(source, tag, comm, status) {
        // SAFETY: the caller's arguments, with the source and status given.
        probe(Kind::Probe, source, tag, status, |src, st| unsafe { x::XMPI_Probe(src, tag, comm, st) })
    }

    /// A wildcard matched probe: as [`MPI_Recv`].
    fn MPI_Mprobe(source, tag, comm, message, status) {
        // SAFETY: the caller's arguments, with the source and status given.
        probe(Kind::Mprobe, source, tag, status, |src, st| unsafe { x::XMPI_Mprobe(src, tag, comm, message, st) })
    }

    /// Every `MPI_Iprobe`: records whether it found a message and which;
    /// replays failures without calling MPI, and a success as a blocking
    /// probe of the recorded source.
    fn MPI_Iprobe(source, tag, comm, flag, status) {
        test_probe(
            Kind::Iprobe,
            source,
            flag,
            status,
            // SAFETY: the caller's arguments, with the status given.
            |st| unsafe { x::XMPI_Iprobe(source, tag, comm, flag, st) },
            // SAFETY: the caller's arguments, with the source and status given.
            |src, st| unsafe { x::XMPI_Probe(src, tag, comm, st) },
        )
    }

    /// Every `MPI_Improbe`: as [`MPI_Iprobe`], the success a blocking
    /// matched probe.
    fn MPI_Improbe(source, tag, comm, flag, message, status) {
        test_probe(
            Kind::Improbe,
            source,
            flag,
            status,
            // SAFETY: the caller's arguments, with the status given.
            |st| unsafe { x::XMPI_Improbe(source, tag, comm, flag, message, st) },
            // SAFETY: the caller's arguments, with the source and status given.
            |src, st| unsafe { x::XMPI_Mprobe(src, tag, comm, message, st) },
        )
    }



    /// Numbers a start of a persistent wildcard receive; replayed, posts
    /// it from the recorded source.
    fn MPI_Start(request) {
        let m = mode();
        if m == state::OFF {
            return next!();
        }
        // SAFETY: the caller's request.
        unsafe { start_one(m, request) }
    }

    /// As [`MPI_Start`], for each request in order.
    fn MPI_Startall(count, requests) {
        let m = mode();
        let n = count.max(0) as usize;
        let any = |set: &dyn Fn(u64) -> bool| {
            // SAFETY: the caller's `count` requests.
            (0..n).any(|i| set(unsafe { *requests.add(i) }.bits()))
        };
        let persistent = match m {
            RECORD => rec(|r| !r.persistent.is_empty() && any(&|h| r.persistent.contains(&h))),
            REPLAY => rp(|r| !r.persistent.is_empty() && any(&|h| r.persistent.contains_key(&h))),
            _ => None,
        };
        if persistent != Some(true) {
            return next!();
        }
        if m == RECORD {
            for i in 0..n {
                // SAFETY: as above.
                let h = unsafe { *requests.add(i) }.bits();
                rec(|r| {
                    if r.persistent.contains(&h) {
                        r.post(me(), h);
                    }
                });
            }
            return next!();
        }
        for i in 0..n {
            // SAFETY: the caller's requests.
            let rc = unsafe { start_one(m, requests.add(i)) };
            if !ok(rc) {
                return rc;
            }
        }
        mpi::SUCCESS()
    }

    /// Forgets a persistent wildcard receive (and frees the receive
    /// standing for it, if started).
    fn MPI_Request_free(request) {
        let m = mode();
        if m == state::OFF || request.is_null() {
            return next!();
        }
        // SAFETY: the caller's request.
        let h = unsafe { *request }.bits();
        if m == RECORD {
            rec(|r| {
                r.persistent.remove(&h);
                r.pending.remove(&h);
            });
        } else {
            rp(|r| r.persistent.remove(&h));
            if let Some(mut shadow) = take_shadow(h) {
                // SAFETY: a request this module posted.
                unsafe { x::XMPI_Request_free(&mut shadow) };
            }
        }
        next!()
    }

    /// Records where a wildcard `MPI_Irecv` matched; replayed, waits for
    /// the receive standing for a started persistent wildcard receive.
    fn MPI_Wait(request, status) {
        if mode() == REPLAY && SHADOWED.load(Ordering::Relaxed) != 0 {
            // SAFETY: the caller's arguments.
            return unsafe { wait_one(request, status) };
        }
        if mode() != RECORD {
            return next!();
        }
        // SAFETY: the caller's request.
        let handle = unsafe { snapshot(request, 1) };
        if handle.is_empty() {
            return next!();
        }
        let mut own = blank();
        let st = if status == mpi::STATUS_IGNORE() { &raw mut own } else { status };
        // SAFETY: the caller's arguments, with a status of our own for an ignored one.
        let rc = unsafe { x::XMPI_Wait(request, st) };
        if ok(rc) {
            // SAFETY: MPI filled the status.
            rec(|r| unsafe { note_done(r, handle[0], st) });
        }
        rc
    }

    /// Records where the wildcard `MPI_Irecv`s among the requests matched;
    /// replayed, as [`MPI_Wait`].
    fn MPI_Waitall(count, requests, statuses) {
        if mode() == REPLAY {
            // SAFETY: the caller's arguments.
            return unsafe { wait_all(count, requests, statuses) };
        }
        if mode() != RECORD {
            return next!();
        }
        // SAFETY: the caller's `count` requests.
        let handles = unsafe { snapshot(requests, count) };
        if handles.is_empty() {
            return next!();
        }
        let mut own = vec![blank(); handles.len().max(1)];
        let sts = if statuses == mpi::STATUSES_IGNORE() { own.as_mut_ptr() } else { statuses };
        // SAFETY: the caller's arguments, with statuses of our own for ignored ones.
        let rc = unsafe { x::XMPI_Waitall(count, requests, sts) };
        if ok(rc) {
            rec(|r| {
                for (i, &h) in handles.iter().enumerate() {
                    // SAFETY: MPI filled one status per request.
                    unsafe { note_done(r, h, sts.add(i)) };
                }
            });
        }
        rc
    }

    /// Records which request completed; replays it as an `MPI_Wait` on
    /// the recorded one.
    fn MPI_Waitany(count, requests, index, status) {
        let m = mode();
        if m == state::OFF {
            return next!();
        }
        let mut own = blank();
        let st = if status == mpi::STATUS_IGNORE() { &raw mut own } else { status };
        if m == RECORD {
            // SAFETY: the caller's `count` requests.
            let handles = unsafe { snapshot(requests, count) };
            // SAFETY: the caller's arguments, with a status of our own for an ignored one.
            let rc = unsafe { x::XMPI_Waitany(count, requests, index, st) };
            if ok(rc) {
                // SAFETY: MPI set the index.
                let i = unsafe { *index };
                let i = (i != mpi::UNDEFINED() && i >= 0).then_some(i as u32);
                rec(|r| {
                    r.push(me(), Entry::Index(Kind::Waitany, i));
                    if let Some(&h) = i.and_then(|i| handles.get(i as usize)) {
                        // SAFETY: MPI filled the status of the completed request.
                        unsafe { note_done(r, h, st) };
                    }
                });
            }
            return rc;
        }
        match next(Kind::Waitany) {
            Some((_, i, Next::Entry(Entry::Index(_, Some(k))))) => {
                // SAFETY: the caller's `count` requests.
                let k = unsafe { check_index(i, Kind::Waitany, requests, count, k) };
                // SAFETY: the recorded request, one of the caller's.
                let rc = unsafe { wait_one(requests.add(k), st) };
                // SAFETY: the caller's index.
                unsafe { *index = k as c_int };
                rc
            }
            Some((_, i, Next::Entry(Entry::Index(_, None)))) => {
                // SAFETY: the caller's arguments.
                let rc = unsafe { x::XMPI_Waitany(count, requests, index, st) };
                // SAFETY: MPI set the index.
                if ok(rc) && unsafe { *index } != mpi::UNDEFINED() {
                    diverge(me(), i, Kind::Waitany, "a request completed, the record says none was active");
                }
                rc
            }
            Some((_, i, other)) => diverge(me(), i, Kind::Waitany, &format!("the record holds {:?}", entry_of(other))),
            None => next!(),
        }
    }

    /// Records which request completed (or the failures before); replays
    /// failures without calling MPI and the success as an `MPI_Wait`.
    fn MPI_Testany(count, requests, index, flag, status) {
        let m = mode();
        if m == state::OFF {
            return next!();
        }
        let mut own = blank();
        let st = if status == mpi::STATUS_IGNORE() { &raw mut own } else { status };
        if m == RECORD {
            // SAFETY: the caller's `count` requests.
            let handles = unsafe { snapshot(requests, count) };
            // SAFETY: the caller's arguments, with a status of our own for an ignored one.
            let rc = unsafe { x::XMPI_Testany(count, requests, index, flag, st) };
            if ok(rc) {
                // SAFETY: MPI set the flag and the index.
                let (f, i) = unsafe { (*flag, *index) };
                let i = (i != mpi::UNDEFINED() && i >= 0).then_some(i as u32);
                rec(|r| {
                    if f == 0 {
                        return r.fail(me(), Kind::Testany);
                    }
                    r.push(me(), Entry::Index(Kind::Testany, i));
                    if let Some(&h) = i.and_then(|i| handles.get(i as usize)) {
                        // SAFETY: MPI filled the status of the completed request.
                        unsafe { note_done(r, h, st) };
                    }
                });
            }
            return rc;
        }
        match next(Kind::Testany) {
            Some((_, _, Next::Fail)) => {
                // SAFETY: the caller's flag and index.
                unsafe {
                    *flag = 0;
                    *index = mpi::UNDEFINED();
                }
                mpi::SUCCESS()
            }
            Some((_, i, Next::Entry(Entry::Index(_, Some(k))))) => {
                // SAFETY: the caller's `count` requests.
                let k = unsafe { check_index(i, Kind::Testany, requests, count, k) };
                // SAFETY: the recorded request, one of the caller's.
                let rc = unsafe { wait_one(requests.add(k), st) };
                // SAFETY: the caller's flag and index.
                unsafe {
                    *index = k as c_int;
                    *flag = 1;
                }
                rc
            }
            Some((_, i, Next::Entry(Entry::Index(_, None)))) => {
                // SAFETY: the caller's arguments.
                let rc = unsafe { x::XMPI_Testany(count, requests, index, flag, st) };
                // SAFETY: MPI set the flag and index.
                if ok(rc) && (unsafe { *flag } == 0 || unsafe { *index } != mpi::UNDEFINED()) {
                    diverge(me(), i, Kind::Testany, "the record says no request was active");
                }
                rc
            }
            Some((_, i, other)) => diverge(me(), i, Kind::Testany, &format!("the record holds {:?}", entry_of(other))),
            None => next!(),
        }
    }

    /// Records which requests completed, in order; replays them as
    /// `MPI_Wait`s in that order.
    fn MPI_Waitsome(incount, requests, outcount, indices, statuses) {
        // SAFETY: the caller's arguments.
        unsafe { some(Kind::Waitsome, incount, requests, outcount, indices, statuses) }
    }

    /// As [`MPI_Waitsome`], with the failed calls (no request completed)
    /// counted, and replayed without calling MPI.
    fn MPI_Testsome(incount, requests, outcount, indices, statuses) {
        // SAFETY: the caller's arguments.
        unsafe { some(Kind::Testsome, incount, requests, outcount, indices, statuses) }
    }

    /// Records whether the request completed; replays failures without
    /// calling MPI and the success as an `MPI_Wait`.
    fn MPI_Test(request, flag, status) {
        let m = mode();
        if m == state::OFF {
            return next!();
        }
        let mut own = blank();
        let st = if status == mpi::STATUS_IGNORE() { &raw mut own } else { status };
        if m == RECORD {
            // SAFETY: the caller's request.
            let handle = unsafe { snapshot(request, 1) };
            // SAFETY: the caller's arguments, with a status of our own for an ignored one.
            let rc = unsafe { x::XMPI_Test(request, flag, st) };
            if ok(rc) {
                // SAFETY: MPI set the flag.
                let f = unsafe { *flag };
                rec(|r| {
                    if f == 0 {
                        return r.fail(me(), Kind::Test);
                    }
                    r.push(me(), Entry::Done(Kind::Test));
                    if let Some(&h) = handle.first() {
                        // SAFETY: MPI filled the status of the completed request.
                        unsafe { note_done(r, h, st) };
                    }
                });
            }
            return rc;
        }
        match next(Kind::Test) {
            Some((_, _, Next::Fail)) => {
                // SAFETY: the caller's flag.
                unsafe { *flag = 0 };
                mpi::SUCCESS()
            }
            Some((_, _, Next::Entry(_))) => {
                // SAFETY: the caller's request and status.
                let rc = unsafe { wait_one(request, st) };
                // SAFETY: the caller's flag.
                unsafe { *flag = 1 };
                rc
            }
            None => next!(),
        }
    }

    /// Records whether all requests completed; replays failures without
    /// calling MPI and the success as an `MPI_Waitall`.
    fn MPI_Testall(count, requests, flag, statuses) {
        let m = mode();
        if m == state::OFF {
            return next!();
        }
        if m == RECORD {
            // SAFETY: the caller's `count` requests.
            let handles = unsafe { snapshot(requests, count) };
            let mut own = vec![blank(); if handles.is_empty() { 0 } else { handles.len() }];
            let sts = if !handles.is_empty() && statuses == mpi::STATUSES_IGNORE() { own.as_mut_ptr() } else { statuses };
            // SAFETY: the caller's arguments, with statuses of our own for ignored ones.
            let rc = unsafe { x::XMPI_Testall(count, requests, flag, sts) };
            if ok(rc) {
                // SAFETY: MPI set the flag.
                let f = unsafe { *flag };
                rec(|r| {
                    if f == 0 {
                        return r.fail(me(), Kind::Testall);
                    }
                    r.push(me(), Entry::Done(Kind::Testall));
                    for (i, &h) in handles.iter().enumerate() {
                        // SAFETY: MPI filled one status per request.
                        unsafe { note_done(r, h, sts.add(i)) };
                    }
                });
            }
            return rc;
        }
        match next(Kind::Testall) {
            Some((_, _, Next::Fail)) => {
                // SAFETY: the caller's flag.
                unsafe { *flag = 0 };
                mpi::SUCCESS()
            }
            Some((_, _, Next::Entry(_))) => {
                // SAFETY: the caller's arguments.
                let rc = unsafe { wait_all(count, requests, statuses) };
                // SAFETY: the caller's flag.
                unsafe { *flag = 1 };
                rc
            }
            None => next!(),
        }
    }

    /// With `wtime on`: records the clock's values, and replays them.
    fn MPI_Wtime() {
        if !WTIME.load(Ordering::Relaxed) {
            return next!();
        }
        match mode() {
            RECORD => {
                let t = next!();
                rec(|r| r.push(me(), Entry::Wtime(t)));
                t
            }
            REPLAY => match next(Kind::Wtime) {
                Some((_, _, Next::Entry(Entry::Wtime(t)))) => t,
                Some((_, i, other)) => diverge(me(), i, Kind::Wtime, &format!("the record holds {:?}", entry_of(other))),
                None => next!(),
            },
            _ => next!(),
        }
    }
}

/// A blocking wildcard receive when posts are ordered: `post` posts it
/// as an `MPI_Irecv` with the given source, numbered in the order of
/// every thread's posts (recorded, or the turn of the recorded post
/// while replaying, with the recorded source), and it is waited for
/// outside that order; its completion records or checks the message.
///
/// # Safety
/// `st` points to a status.
unsafe fn ordered_recv(
    m: u8,
    source: c_int,
    tag: c_int,
    st: *mut MPI_Status,
    post: impl Fn(c_int, &mut MPI_Request) -> c_int,
) -> c_int {
    let mut req = mpi::REQUEST_NULL();
    if m == RECORD {
        let mut rc = mpi::SUCCESS();
        let number = posts::record(me(), Kind::Recv, || {
            rc = post(source, &mut req);
            ok(rc).then(|| req.bits())
        });
        if !ok(rc) {
            return rc;
        }
        let handle = req.bits();
        // SAFETY: the request just posted; the caller's status.
        let rc = unsafe { x::XMPI_Wait(&mut req, st) };
        if let (true, Some(number)) = (ok(rc), number) {
            // SAFETY: MPI filled the status.
            let message = unsafe { source_tag(st) };
            rec(|r| r.matched(handle, (me(), number), message));
        }
        return rc;
    }
    let Some((turn, i)) = posts::turn(me(), Kind::Recv) else {
        let rc = post(source, &mut req);
        // SAFETY: the request just posted; the caller's status.
        return if ok(rc) {
            unsafe { x::XMPI_Wait(&mut req, st) }
        } else {
            rc
        };
    };
    let want = rp(|r| r.post(me())).flatten();
    let src = want.map_or(source, |w| forced_source(i, Kind::Recv, source, tag, w));
    let rc = post(src, &mut req);
    drop(turn);
    if !ok(rc) {
        return rc;
    }
    // SAFETY: the request just posted; the caller's status.
    let rc = unsafe { x::XMPI_Wait(&mut req, st) };
    if let (true, Some(w)) = (ok(rc), want) {
        // SAFETY: MPI filled the status.
        unsafe { check_message(i, Kind::Recv, st, w) };
    }
    rc
}

/// Records or replays a wildcard `MPI_Sendrecv[_replace]`: `call` makes
/// it with the given source, filling `st`.
///
/// # Safety
/// `st` is where `call` leaves the status.
unsafe fn sendrecv(
    m: u8,
    source: c_int,
    tag: c_int,
    st: *mut MPI_Status,
    call: impl Fn(c_int) -> c_int,
) -> c_int {
    if m == RECORD {
        let rc = call(source);
        if ok(rc) {
            // SAFETY: MPI filled the status.
            let (source, tag) = unsafe { source_tag(st) };
            rec(|r| {
                r.push(
                    me(),
                    Entry::Matched {
                        kind: Kind::Sendrecv,
                        source,
                        tag,
                    },
                )
            });
        }
        return rc;
    }
    let Some((_turn, i, Next::Entry(e))) = next(Kind::Sendrecv) else {
        return call(source);
    };
    let want = matched(i, Kind::Sendrecv, e);
    let rc = call(forced_source(i, Kind::Sendrecv, source, tag, want));
    if ok(rc) {
        // SAFETY: MPI filled the status.
        unsafe { check_message(i, Kind::Sendrecv, st, want) };
    }
    rc
}

/// Once MPI is up: starts recording or replaying, and numbers the
/// threads from the calling one.
fn started() {
    threads::after_init();
    state::start();
    WTIME.store(wtime_recorded(), Ordering::Relaxed);
}

/// Whether this run records or replays `MPI_Wtime`.
fn wtime_recorded() -> bool {
    match &*STATE.lock() {
        Some(State::Record(r)) => r.wtime,
        Some(State::Replay(r)) => r.wtime,
        None => false,
    }
}

/// The entry of a [`Next`], for messages.
fn entry_of(n: Next) -> Option<Entry> {
    match n {
        Next::Fail => None,
        Next::Entry(e) => Some(e),
    }
}

/// `MPI_Waitsome` and `MPI_Testsome`.
///
/// # Safety
/// The arguments of the routine `kind` names.
unsafe fn some(
    kind: Kind,
    incount: c_int,
    requests: *mut MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
) -> c_int {
    let call = |sts: *mut MPI_Status| {
        // SAFETY: the caller's arguments, statuses possibly our own.
        unsafe {
            if kind == Kind::Waitsome {
                x::XMPI_Waitsome(incount, requests, outcount, indices, sts)
            } else {
                x::XMPI_Testsome(incount, requests, outcount, indices, sts)
            }
        }
    };
    let m = mode();
    if m == state::OFF {
        return call(statuses);
    }
    if m == RECORD {
        // SAFETY: the caller's `incount` requests.
        let handles = unsafe { snapshot(requests, incount) };
        let mut own = vec![blank(); handles.len()];
        let sts = if !handles.is_empty() && statuses == mpi::STATUSES_IGNORE() {
            own.as_mut_ptr()
        } else {
            statuses
        };
        let rc = call(sts);
        if ok(rc) {
            // SAFETY: MPI set the count, and as many indices.
            let n = unsafe { *outcount };
            let done: Option<Vec<u32>> = (n != mpi::UNDEFINED())
                // SAFETY: as above.
                .then(|| {
                    (0..n.max(0) as usize)
                        .map(|j| unsafe { *indices.add(j) } as u32)
                        .collect()
                });
            rec(|r| {
                if done.as_ref().is_some_and(Vec::is_empty) {
                    return r.fail(me(), kind);
                }
                if let Some(v) = &done {
                    for (j, &i) in v.iter().enumerate() {
                        if let Some(&h) = handles.get(i as usize) {
                            // SAFETY: MPI filled a status per completed request.
                            unsafe { note_done(r, h, sts.add(j)) };
                        }
                    }
                }
                r.push(me(), Entry::Indices(kind, done));
            });
        }
        return rc;
    }
    match next(kind) {
        None => call(statuses),
        Some((_, _, Next::Fail)) => {
            // SAFETY: the caller's count.
            unsafe { *outcount = 0 };
            mpi::SUCCESS()
        }
        Some((_, i, Next::Entry(Entry::Indices(_, Some(v))))) => {
            for (j, &k) in v.iter().enumerate() {
                // SAFETY: the caller's `incount` requests.
                let k = unsafe { check_index(i, kind, requests, incount, k) };
                let st = if statuses == mpi::STATUSES_IGNORE() {
                    mpi::STATUS_IGNORE()
                } else {
                    // SAFETY: the caller has a status per request, so at least j + 1.
                    unsafe { statuses.add(j) }
                };
                // SAFETY: the recorded request, one of the caller's.
                let rc = unsafe { wait_one(requests.add(k), st) };
                if !ok(rc) {
                    return rc;
                }
                // SAFETY: the caller has an index per request.
                unsafe { *indices.add(j) = k as c_int };
            }
            // SAFETY: the caller's count.
            unsafe { *outcount = v.len() as c_int };
            mpi::SUCCESS()
        }
        Some((_, i, Next::Entry(Entry::Indices(_, None)))) => {
            let rc = call(statuses);
            // SAFETY: MPI set the count.
            if ok(rc) && unsafe { *outcount } != mpi::UNDEFINED() {
                diverge(
                    me(),
                    i,
                    kind,
                    "requests completed, the record says none was active",
                );
            }
            rc
        }
        Some((_, i, other)) => diverge(me(), i, kind, &format!("the record holds {:?}", entry_of(other))),
    }
}
