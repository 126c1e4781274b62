//! Collective routines, blocking and nonblocking: each packs (or, for
//! reductions, copies) the member's contribution, joins the call
//! ([`crate::coll`]) and, blocking, waits for it. Where each member's
//! result goes is its [`Out`], used when its request completes.

#![allow(non_snake_case)]

use super::complete::{wait_id, wait_unseen};
use super::results::{at, nth};
use super::traced as trace;
use super::{comm_of, ok, rank_size, CallInProgress};
use crate::coll::{Entry, Gift, Joined, Op};
use crate::dtype::{layout, pack, raw};
use crate::engine::{self, with};
use crate::handles::Kind;
use crate::p2p::Out;
use pnmpi_mpi_sys::{constants as c, ffi};
use pnmpi_sim::kernel::coll::{Member, Step};
use pnmpi_trace::counts::PeerBytesOf;
use pnmpi_trace::routine::Coll;
use std::ffi::{c_int, c_void};

/// A datatype handle, short for the wrappers' long argument lists.
type Dt = ffi::MPI_Datatype;

/// Bytes of each member's entry of a counts array, items of `dt` (for the
/// trace).
///
/// # Safety
/// `counts` has `size` entries.
unsafe fn per_member(counts: *const c_int, size: u32, dt: Dt) -> Vec<i64> {
    let item = trace::bytes(1, dt);
    // SAFETY: the caller's array.
    (0..size as usize)
        .map(|i| unsafe { nth(counts, i, 0) } * item)
        .collect()
}

/// This member's part of collective `coll` (`vector`: a `v` form) on a
/// communicator of `size` by the kernel's rule ([`Member::of_call`], as
/// vtime and the replay derive it): `sent` and `got` the bytes it sends
/// and receives (a side with a count per peer summed), `counts` the
/// per-peer bytes it knows (send, receive side), as its trace records
/// them.
fn part(
    coll: Coll,
    vector: bool,
    sent: u64,
    got: u64,
    size: u32,
    counts: Option<(&[i64], &[i64])>,
) -> Member {
    let counts = counts.map(|(send, recv)| PeerBytesOf { send, recv }.sizes());
    Member::of_call(coll, vector, sent, got, u64::from(size), counts)
}

/// The bytes of a side with a count per peer.
fn sum(side: &[i64]) -> u64 {
    side.iter().sum::<i64>().max(0) as u64
}

/// Joins the call, then waits (blocking) or hands back the request.
#[allow(clippy::too_many_arguments)]
pub fn go(
    routine: &str,
    comm: usize,
    op: Op,
    root: c_int,
    gift: Gift,
    part: Member,
    out: Out,
    req: Option<*mut ffi::MPI_Request>,
) -> c_int {
    let constructor = op == Op::Constructor;
    let entry = Entry {
        comm,
        op,
        root: root.max(0) as u32,
        gift,
        part,
        out,
        blocking: req.is_none(),
    };
    // The model sees the calls in virtual-time order: an algorithmic
    // collective's steps, which take the model with every other message,
    // and a constructor's members, which it releases in order. A closed
    // form is charged once every member has entered, whatever order they
    // entered in: its members need not catch up (a switch each).
    if constructor || with(|e| e.runs_steps(&entry.op, entry.blocking)) {
        engine::catch_up();
    }
    let Joined { req: id, steps } = with(|e| e.join(entry));
    if constructor {
        // The members this one released, in their order first, as the
        // replay runs the ranks a call leaves at one time (a constructor
        // is no rendezvous there).
        engine::let_others_first();
    }
    if !steps.is_empty() {
        run_steps(comm, &steps);
    }
    match req {
        // SAFETY: the application's request handle.
        Some(r) => unsafe {
            *r = super::handle(Kind::Request, id);
            super::traced::request(*r);
        },
        // SAFETY: no status.
        None => unsafe { wait_id(routine, id, c::STATUS_IGNORE()) },
    }
    ok()
}

/// Runs the running rank's steps of an algorithmic collective on `comm`:
/// posts each round's sends and receives (their sizes, no data) and
/// waits for them at the round's `WaitAll`, as the replay of the trace
/// runs them, so that its messages take the model and the event order
/// with every other message in flight. The rank ends the collective at
/// its last round's end; the results come from the members' joined
/// contributions.
fn run_steps(comm: usize, steps: &[Step]) {
    let (me, _) = rank_size(comm);
    let mut round = Vec::new();
    for &step in steps {
        engine::catch_up();
        match with(|e| e.post_step(comm, me, step)) {
            Some(id) => round.push(id),
            None => {
                wait_unseen(&round);
                round.clear();
            }
        }
    }
    wait_unseen(&round);
}

fn in_place(p: *const c_void) -> bool {
    std::ptr::eq(p, c::IN_PLACE() as *const c_void)
}

/// # Safety
/// Safe; `unsafe` like the other collectives, for [`collective!`].
unsafe fn barrier(routine: &str, comm: ffi::MPI_Comm, req: Option<*mut ffi::MPI_Request>) -> c_int {
    trace::collective(comm, None, None, None);
    let comm = comm_of(routine, comm);
    barrier_on(routine, comm, req)
}

/// A barrier of virtual communicator `comm` (blocking, or its request
/// into `req`), not recorded: [`barrier`]'s, and a one-sided window's
/// fence, creation and free on the window's own communicator.
pub fn barrier_on(routine: &str, comm: usize, req: Option<*mut ffi::MPI_Request>) -> c_int {
    let (_, size) = rank_size(comm);
    let part = part(Coll::Barrier, false, 0, 0, size, None);
    go(
        routine,
        comm,
        Op::Data(Coll::Barrier),
        0,
        Gift::Nothing,
        part,
        Out::Nothing,
        req,
    )
}

/// # Safety
/// MPI's contract for broadcasts.
unsafe fn bcast(
    routine: &str,
    buf: *mut c_void,
    count: c_int,
    dt: Dt,
    root: c_int,
    comm: ffi::MPI_Comm,
    req: Option<*mut ffi::MPI_Request>,
) -> c_int {
    if trace::on() {
        trace::collective(comm, Some(trace::bytes(count, dt)), None, Some(root));
    }
    let comm = comm_of(routine, comm);
    let (me, size) = rank_size(comm);
    let bytes = trace::bytes(count, dt) as u64;
    let part = part(Coll::Bcast, false, bytes, bytes, size, None);
    let (gift, out) = if me as c_int == root {
        // SAFETY: the root's buffer.
        (Gift::One(unsafe { pack(buf, count, dt) }), Out::Nothing)
    } else {
        (Gift::Nothing, Out::Bcast(buf, count, dt))
    };
    go(routine, comm, Op::Data(Coll::Bcast), root, gift, part, out, req)
}

/// Which reduction.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Red {
    Reduce,
    All,
    Scan,
    Exscan,
}

/// # Safety
/// MPI's contract for reductions.
#[allow(clippy::too_many_arguments)]
unsafe fn reduce(
    routine: &str,
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: Dt,
    op: ffi::MPI_Op,
    root: c_int,
    comm: ffi::MPI_Comm,
    kind: Red,
    req: Option<*mut ffi::MPI_Request>,
) -> c_int {
    if trace::on() {
        let rooted = (kind == Red::Reduce).then_some(root);
        trace::collective(comm, Some(trace::bytes(count, dt)), None, rooted);
    }
    let comm = comm_of(routine, comm);
    let (me, size) = rank_size(comm);
    let src = if in_place(sbuf) {
        rbuf as *const c_void
    } else {
        sbuf
    };
    // SAFETY: the member's send (or, in place, receive) buffer.
    let gift = Gift::One(unsafe { raw(src, count, dt) });
    let bytes = trace::bytes(count, dt) as u64;
    let coll = match kind {
        Red::Reduce => Coll::Reduce,
        Red::All => Coll::Allreduce,
        Red::Scan | Red::Exscan => Coll::Scan,
    };
    let own = matches!(kind, Red::Scan | Red::Exscan);
    let out = if (kind == Red::Reduce && me as c_int != root) || (kind == Red::Exscan && me == 0) {
        Out::Nothing
    } else {
        Out::Result {
            buf: rbuf,
            dtype: dt,
            own,
            range: None,
        }
    };
    let op = Op::Reduce {
        coll,
        count,
        dtype: dt,
        op,
        exclusive: kind == Red::Exscan,
    };
    let part = part(coll, false, bytes, bytes, size, None);
    go(routine, comm, op, root, gift, part, out, req)
}

/// # Safety
/// MPI's contract for reduce-scatter (`counts` null: `count` each).
#[allow(clippy::too_many_arguments)]
unsafe fn reduce_scatter(
    routine: &str,
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    counts: *const c_int,
    dt: Dt,
    op: ffi::MPI_Op,
    comm: ffi::MPI_Comm,
    req: Option<*mut ffi::MPI_Request>,
) -> c_int {
    let handle = comm;
    let comm = comm_of(routine, comm);
    let (me, size) = rank_size(comm);
    let l = layout(dt);
    // SAFETY: the caller's counts, one per member.
    let total: i64 = (0..size as usize)
        .map(|i| unsafe { nth(counts, i, i64::from(count)) })
        .sum();
    // SAFETY: as above.
    let before: i64 = (0..me as usize)
        .map(|i| unsafe { nth(counts, i, i64::from(count)) })
        .sum();
    // SAFETY: as above.
    let mine = unsafe { nth(counts, me as usize, i64::from(count)) };
    // A block each, or each member's share (the vector form).
    let part = if counts.is_null() {
        let block = trace::bytes(count, dt);
        if trace::on() {
            trace::collective(handle, Some(block), None, None);
        }
        let block = block as u64;
        part(Coll::ReduceScatter, false, block, block, size, None)
    } else {
        // SAFETY: one count per member.
        let shares = unsafe { per_member(counts, size, dt) };
        let whole = (total.max(0) as usize * l.size) as u64;
        let part = part(
            Coll::ReduceScatter,
            true,
            whole,
            whole,
            size,
            Some((&[], &shares)),
        );
        if trace::on() {
            trace::collective(handle, Some(total * l.size as i64), None, None);
            trace::per_peer(Vec::new(), shares);
        }
        part
    };
    let src = if in_place(sbuf) {
        rbuf as *const c_void
    } else {
        sbuf
    };
    // SAFETY: the member's send buffer holds every member's block.
    let gift = Gift::One(unsafe { raw(src, total as c_int, dt) });
    let out = Out::Result {
        buf: rbuf,
        dtype: dt,
        own: false,
        range: Some((before as usize * l.extent, mine as usize * l.extent)),
    };
    let op = Op::Reduce {
        coll: Coll::ReduceScatter,
        count: total as c_int,
        dtype: dt,
        op,
        exclusive: false,
    };
    go(routine, comm, op, 0, gift, part, out, req)
}

/// Gathers (to `root`, or to all when `root` is `None`), fixed or
/// vector counts.
///
/// # Safety
/// MPI's contract for gathers.
#[allow(clippy::too_many_arguments)]
unsafe fn gather(
    routine: &str,
    sbuf: *const c_void,
    scount: c_int,
    stype: Dt,
    rbuf: *mut c_void,
    rcount: c_int,
    rcounts: *const c_int,
    displs: *const c_int,
    rtype: Dt,
    root: Option<c_int>,
    comm: ffi::MPI_Comm,
    req: Option<*mut ffi::MPI_Request>,
) -> c_int {
    let handle = comm;
    let comm = comm_of(routine, comm);
    let (me, size) = rank_size(comm);
    let receives = root.is_none_or(|r| r == me as c_int);
    let sent = || Some(trace::bytes(scount, stype));
    // The per-peer bytes received, where the member knows them.
    // SAFETY: one count per member where they are significant.
    let recv = (!rcounts.is_null() && receives).then(|| unsafe { per_member(rcounts, size, rtype) });
    if trace::on() {
        if rcounts.is_null() {
            trace::collective(handle, sent(), Some(trace::bytes(rcount, rtype)), root);
        } else if let Some(recv) = &recv {
            trace::collective(handle, sent(), Some(recv.iter().sum()), root);
            trace::per_peer(Vec::new(), recv.clone());
        } else {
            trace::collective(handle, sent(), None, root);
        }
    }
    // SAFETY: the member's send buffer, or (in place) its own block of
    // the receive buffer.
    let data = unsafe {
        if in_place(sbuf) && receives {
            let n = nth(rcounts, me as usize, i64::from(rcount));
            let d = nth(displs, me as usize, me as i64 * i64::from(rcount));
            pack(at(rbuf, d, layout(rtype).extent), n as c_int, rtype)
        } else {
            pack(sbuf, scount, stype)
        }
    };
    let out = if receives {
        Out::Gather(rbuf, rcount, rtype, rcounts, displs)
    } else {
        Out::Nothing
    };
    let coll = if root.is_some() {
        Coll::Gather
    } else {
        Coll::Allgather
    };
    // What it sends: its block, in place its own of the receive buffer.
    let sent = data.len() as u64;
    let part = match &recv {
        Some(recv) => part(coll, true, sent, sum(recv), size, Some((&[], recv))),
        None => part(coll, !rcounts.is_null(), sent, 0, size, None),
    };
    go(
        routine,
        comm,
        Op::Data(coll),
        root.unwrap_or(0),
        Gift::One(data),
        part,
        out,
        req,
    )
}

/// Scatters from `root`, fixed or vector counts.
///
/// # Safety
/// MPI's contract for scatters.
#[allow(clippy::too_many_arguments)]
unsafe fn scatter(
    routine: &str,
    sbuf: *const c_void,
    scount: c_int,
    scounts: *const c_int,
    displs: *const c_int,
    stype: Dt,
    rbuf: *mut c_void,
    rcount: c_int,
    rtype: Dt,
    root: c_int,
    comm: ffi::MPI_Comm,
    req: Option<*mut ffi::MPI_Request>,
) -> c_int {
    let handle = comm;
    let comm = comm_of(routine, comm);
    let (me, size) = rank_size(comm);
    let is_root = me as c_int == root;
    let got = || Some(trace::bytes(rcount, rtype));
    // The per-peer bytes sent, at the root of the vector form.
    // SAFETY: one count per member at the root.
    let send = (!scounts.is_null() && is_root).then(|| unsafe { per_member(scounts, size, stype) });
    if trace::on() {
        if scounts.is_null() {
            trace::collective(handle, Some(trace::bytes(scount, stype)), got(), Some(root));
        } else if let Some(send) = &send {
            trace::collective(handle, Some(send.iter().sum()), got(), Some(root));
            trace::per_peer(send.clone(), Vec::new());
        } else {
            trace::collective(handle, None, got(), Some(root));
        }
    }
    let ext = layout(stype).extent;
    let gift = if is_root {
        // SAFETY: the root's send buffer holds every member's block.
        Gift::Many(
            (0..size as usize)
                .map(|i| unsafe {
                    let n = nth(scounts, i, i64::from(scount));
                    let d = nth(displs, i, i as i64 * i64::from(scount));
                    pack(at(sbuf, d, ext), n as c_int, stype)
                })
                .collect(),
        )
    } else {
        Gift::Nothing
    };
    let vector = !scounts.is_null();
    let got = trace::bytes(rcount, rtype) as u64;
    let part = match &send {
        Some(send) => part(Coll::Scatter, vector, sum(send), got, size, Some((send, &[]))),
        None => part(Coll::Scatter, vector, 0, got, size, None),
    };
    let out = if is_root && in_place(rbuf) {
        Out::Nothing
    } else {
        Out::Scatter(rbuf, rcount, rtype)
    };
    go(routine, comm, Op::Data(Coll::Scatter), root, gift, part, out, req)
}

/// All-to-all, fixed or vector counts.
///
/// # Safety
/// MPI's contract for all-to-all.
#[allow(clippy::too_many_arguments)]
unsafe fn alltoall(
    routine: &str,
    sbuf: *const c_void,
    scount: c_int,
    scounts: *const c_int,
    sdispls: *const c_int,
    stype: Dt,
    rbuf: *mut c_void,
    rcount: c_int,
    rcounts: *const c_int,
    rdispls: *const c_int,
    rtype: Dt,
    comm: ffi::MPI_Comm,
    req: Option<*mut ffi::MPI_Request>,
) -> c_int {
    let handle = comm;
    let comm = comm_of(routine, comm);
    let (_, size) = rank_size(comm);
    // The per-peer bytes of the vector form.
    let sides = (!rcounts.is_null()).then(|| {
        // SAFETY: one count per member in each array.
        let recv = unsafe { per_member(rcounts, size, rtype) };
        let send = if in_place(sbuf) {
            recv.clone()
        } else {
            // SAFETY: as above.
            unsafe { per_member(scounts, size, stype) }
        };
        (send, recv)
    });
    if trace::on() {
        match &sides {
            None => {
                let sent = if in_place(sbuf) {
                    trace::bytes(rcount, rtype)
                } else {
                    trace::bytes(scount, stype)
                };
                trace::collective(handle, Some(sent), Some(trace::bytes(rcount, rtype)), None);
            }
            Some((send, recv)) => {
                trace::collective(handle, Some(send.iter().sum()), Some(recv.iter().sum()), None);
                trace::per_peer(send.clone(), recv.clone());
            }
        }
    }
    let (src, count, counts, displs, dt) = if in_place(sbuf) {
        (rbuf as *const c_void, rcount, rcounts, rdispls, rtype)
    } else {
        (sbuf, scount, scounts, sdispls, stype)
    };
    let ext = layout(dt).extent;
    // SAFETY: the member's send buffer holds a block per member.
    let blocks: Vec<Vec<u8>> = (0..size as usize)
        .map(|i| unsafe {
            let n = nth(counts, i, i64::from(count));
            let d = nth(displs, i, i as i64 * i64::from(count));
            pack(at(src, d, ext), n as c_int, dt)
        })
        .collect();
    let part = match &sides {
        Some((send, recv)) => part(
            Coll::Alltoall,
            true,
            sum(send),
            sum(recv),
            size,
            Some((send, recv)),
        ),
        None => {
            let block = trace::bytes(count, dt) as u64;
            part(Coll::Alltoall, false, block, block, size, None)
        }
    };
    let out = Out::Alltoall(rbuf, rcount, rtype, rcounts, rdispls);
    go(
        routine,
        comm,
        Op::Data(Coll::Alltoall),
        0,
        Gift::Many(blocks),
        part,
        out,
        req,
    )
}

/// Defines an exported collective (and its nonblocking form, after the
/// `/`) that calls `$imp` with the routine's name, the arguments given
/// and `None` (or the request).
macro_rules! collective {
    ($name:ident / $iname:ident $args:tt => $imp:ident $call:tt) => {
        collective!($name $args => $imp $call);
        collective!(@nonblocking $iname $args => $imp $call);
    };
    (@nonblocking $iname:ident ($($arg:ident: $ty:ty),* $(,)?) => $imp:ident($($call:expr),* $(,)?)) => {
        /// # Safety
        /// MPI's contract for this routine.
        #[no_mangle]
        pub unsafe extern "C" fn $iname($($arg: $ty,)* req: *mut ffi::MPI_Request) -> c_int {
            let _call = CallInProgress::enter(stringify!($iname));
            // SAFETY: the application's arguments.
            unsafe { $imp(stringify!($iname), $($call,)* Some(req)) }
        }
    };
    ($name:ident ($($arg:ident: $ty:ty),* $(,)?) => $imp:ident($($call:expr),* $(,)?)) => {
        /// # Safety
        /// MPI's contract for this routine.
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> c_int {
            let _call = CallInProgress::enter(stringify!($name));
            // SAFETY: the application's arguments.
            unsafe { $imp(stringify!($name), $($call,)* None) }
        }
    };
}

/// No counts array: fixed counts.
const FIXED: *const c_int = std::ptr::null();

collective!(MPI_Barrier / MPI_Ibarrier(comm: ffi::MPI_Comm) => barrier(comm));
collective!(MPI_Bcast / MPI_Ibcast(buf: *mut c_void, count: c_int, dt: Dt, root: c_int, comm: ffi::MPI_Comm)
    => bcast(buf, count, dt, root, comm));
collective!(MPI_Reduce / MPI_Ireduce(
    sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: Dt, op: ffi::MPI_Op, root: c_int, comm: ffi::MPI_Comm,
) => reduce(sbuf, rbuf, count, dt, op, root, comm, Red::Reduce));
collective!(MPI_Allreduce / MPI_Iallreduce(
    sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: Dt, op: ffi::MPI_Op, comm: ffi::MPI_Comm,
) => reduce(sbuf, rbuf, count, dt, op, 0, comm, Red::All));
collective!(MPI_Scan / MPI_Iscan(
    sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: Dt, op: ffi::MPI_Op, comm: ffi::MPI_Comm,
) => reduce(sbuf, rbuf, count, dt, op, 0, comm, Red::Scan));
collective!(MPI_Exscan / MPI_Iexscan(
    sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: Dt, op: ffi::MPI_Op, comm: ffi::MPI_Comm,
) => reduce(sbuf, rbuf, count, dt, op, 0, comm, Red::Exscan));
collective!(MPI_Reduce_scatter_block / MPI_Ireduce_scatter_block(
    sbuf: *const c_void, rbuf: *mut c_void, count: c_int, dt: Dt, op: ffi::MPI_Op, comm: ffi::MPI_Comm,
) => reduce_scatter(sbuf, rbuf, count, FIXED, dt, op, comm));
collective!(MPI_Reduce_scatter / MPI_Ireduce_scatter(
    sbuf: *const c_void, rbuf: *mut c_void, counts: *const c_int, dt: Dt, op: ffi::MPI_Op, comm: ffi::MPI_Comm,
) => reduce_scatter(sbuf, rbuf, 0, counts, dt, op, comm));
collective!(MPI_Gather / MPI_Igather(
    sbuf: *const c_void, scount: c_int, stype: Dt, rbuf: *mut c_void, rcount: c_int, rtype: Dt, root: c_int,
    comm: ffi::MPI_Comm,
) => gather(sbuf, scount, stype, rbuf, rcount, FIXED, FIXED, rtype, Some(root), comm));
collective!(MPI_Gatherv / MPI_Igatherv(
    sbuf: *const c_void, scount: c_int, stype: Dt, rbuf: *mut c_void, rcounts: *const c_int, displs: *const c_int,
    rtype: Dt, root: c_int, comm: ffi::MPI_Comm,
) => gather(sbuf, scount, stype, rbuf, 0, rcounts, displs, rtype, Some(root), comm));
collective!(MPI_Allgather / MPI_Iallgather(
    sbuf: *const c_void, scount: c_int, stype: Dt, rbuf: *mut c_void, rcount: c_int, rtype: Dt, comm: ffi::MPI_Comm,
) => gather(sbuf, scount, stype, rbuf, rcount, FIXED, FIXED, rtype, None, comm));
collective!(MPI_Allgatherv / MPI_Iallgatherv(
    sbuf: *const c_void, scount: c_int, stype: Dt, rbuf: *mut c_void, rcounts: *const c_int, displs: *const c_int,
    rtype: Dt, comm: ffi::MPI_Comm,
) => gather(sbuf, scount, stype, rbuf, 0, rcounts, displs, rtype, None, comm));
collective!(MPI_Scatter / MPI_Iscatter(
    sbuf: *const c_void, scount: c_int, stype: Dt, rbuf: *mut c_void, rcount: c_int, rtype: Dt, root: c_int,
    comm: ffi::MPI_Comm,
) => scatter(sbuf, scount, FIXED, FIXED, stype, rbuf, rcount, rtype, root, comm));
collective!(MPI_Scatterv / MPI_Iscatterv(
    sbuf: *const c_void, scounts: *const c_int, displs: *const c_int, stype: Dt, rbuf: *mut c_void, rcount: c_int,
    rtype: Dt, root: c_int, comm: ffi::MPI_Comm,
) => scatter(sbuf, 0, scounts, displs, stype, rbuf, rcount, rtype, root, comm));
collective!(MPI_Alltoall / MPI_Ialltoall(
    sbuf: *const c_void, scount: c_int, stype: Dt, rbuf: *mut c_void, rcount: c_int, rtype: Dt, comm: ffi::MPI_Comm,
) => alltoall(sbuf, scount, FIXED, FIXED, stype, rbuf, rcount, FIXED, FIXED, rtype, comm));
collective!(MPI_Alltoallv / MPI_Ialltoallv(
    sbuf: *const c_void, scounts: *const c_int, sdispls: *const c_int, stype: Dt, rbuf: *mut c_void,
    rcounts: *const c_int, rdispls: *const c_int, rtype: Dt, comm: ffi::MPI_Comm,
) => alltoall(sbuf, 0, scounts, sdispls, stype, rbuf, 0, rcounts, rdispls, rtype, comm));
