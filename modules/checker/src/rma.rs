//! One-sided data movement (`MPI_Put`, `MPI_Get`, the accumulates, their
//! request forms): the origin's and the target's arguments; an access
//! epoch open to the target (`windows`); the access inside the target's
//! window, whose size and displacement unit every rank learned at its
//! creation; the origin and target type signatures alike. A refused call
//! is not made. An operation a synchronization completes later is noted
//! with its origin buffer's checksum (a get's data goes to a scratch
//! buffer of the checker's, given to the application's at completion),
//! so that a write of that buffer in between is reported (`rma_sync`).

use crate::args::{self, Buffer, Checked, Refusal};
use crate::consts::Err;
use crate::gate::gate_passive as gate;
use crate::origin::Origin;
use crate::race::{Access, Kind};
use crate::rma_sync::{known, rma_error};
use crate::site::Here;
use crate::types;
use crate::windows::{self, Issued};
use pnmpi_sdk::constants as mpi;
use pnmpi_sdk::raw::{self as x, routine};
use pnmpi_sdk::sys::ffi::{MPI_Aint, MPI_Datatype, MPI_Op, MPI_Win};
use pnmpi_sdk::sys::Handle;
use std::ffi::c_int;

/// A buffer's arguments: count, datatype, not NULL with data.
fn data(b: Buffer) -> Checked {
    args::count(b.1)?;
    args::datatype(b.2)?;
    args::buffer(b.0, b.1, b.2)
}

/// The checks of an access of `target`'s window `win` at `disp`, of
/// `count` elements of `dt` there, from the origin buffers `origin`
/// (sent, or fetched into), whose signatures must be the target's; the
/// bytes of the target's window it spans, when known.
fn access(
    win: MPI_Win,
    origin: &[Buffer],
    target: c_int,
    disp: MPI_Aint,
    count: c_int,
    dt: MPI_Datatype,
) -> Result<Option<(i64, i64)>, Refusal> {
    let shadow = known(win)?;
    for &b in origin {
        data(b)?;
    }
    args::count(count)?;
    args::datatype(dt)?;
    if target == mpi::PROC_NULL() {
        return Ok(None);
    }
    args::rank(target, shadow, false)?;
    let wins = windows::lock();
    let Some(w) = wins.get(&win.bits()) else {
        return Ok(None);
    };
    if !w.may_access(target) {
        return Err(rma_error(
            Err::RmaSync,
            "outside-epoch",
            format!("no access epoch to rank {target} of the window is open (no MPI_Win_fence, MPI_Win_lock, MPI_Win_lock_all or MPI_Win_start before it)"),
        ));
    }
    let (lb, true_extent) = types::extent(dt);
    let (_, extent) = {
        let (mut l, mut e): (MPI_Aint, MPI_Aint) = (0, 0);
        // SAFETY: local out-parameters; the datatype passed its check.
        unsafe { pnmpi_sdk::sys::ffi::PMPI_Type_get_extent(dt, &mut l, &mut e) };
        (l, e)
    };
    #[allow(clippy::unnecessary_cast)]
    let (disp, extent) = (disp as i64, extent as i64);
    let bytes = if count == 0 {
        0
    } else {
        (i64::from(count) - 1) * extent + true_extent
    };
    let unit = w.extents.get(target as usize).map_or(1, |e| e.1);
    let range = disp
        .checked_mul(unit)
        .and_then(|s| s.checked_add(lb))
        .and_then(|s| Some((s, s.checked_add(bytes)?)))
        .filter(|_| count > 0);
    if count > 0 {
        if let Some(size) = w.outside(target, disp, lb, bytes) {
            let unit = w.extents[target as usize].1;
            return Err(rma_error(
                Err::RmaRange,
                "outside-window",
                format!("the access of {bytes} bytes at displacement {disp} (unit {unit} bytes) of rank {target}'s window is outside it ({size} bytes)"),
            ));
        }
    }
    drop(wins);
    let theirs = types::signature(dt).times(count.max(0) as u64);
    for &(_, n, odt) in origin {
        let mine = types::signature(odt).times(n.max(0) as u64);
        if !mine.agrees(theirs) {
            return Err(rma_error(
                Err::Type,
                "signature",
                format!(
                    "the origin's {} elements ({} bytes) and the target's {} elements ({} bytes) have other type signatures",
                    mine.len, mine.bytes, theirs.len, theirs.bytes
                ),
            ));
        }
    }
    Ok(range)
}

/// The checksum of an origin buffer `b` of an operation to `target`:
/// contiguous data, an actual target, and room in the budget of bytes
/// checked (`windows::reserve`; its completion gives them back).
fn checked_sum(target: c_int, b: Buffer) -> Option<(usize, usize, u64)> {
    if target == mpi::PROC_NULL() {
        return None;
    }
    let (start, len) = types::contiguous_span(b.0 as usize, b.1, b.2)?;
    if !windows::reserve(len) {
        return None;
    }
    // SAFETY: the application's origin buffer, which MPI reads too.
    Some((start, len, unsafe { crate::checksum::checksum(start, len) }))
}

/// What an operation does: to its target's bytes, and to its origin
/// buffer (`buf`, written when `writes`: a get's, an atomic operation's
/// result buffer); a put's target data (count, datatype), whose bytes
/// are then compared with the origin buffer's checksum.
struct Op {
    kind: Kind,
    buf: Option<Buffer>,
    writes: bool,
    put: Option<(c_int, MPI_Datatype)>,
}

impl Op {
    fn new(kind: Kind, buf: Buffer, writes: bool) -> Op {
        Op {
            kind,
            buf: Some(buf),
            writes,
            put: None,
        }
    }
}

/// Notes an operation issued on `win` to `target` (`range`: its bytes of
/// the target's window), for the synchronization that completes it and
/// for the comparison of accesses across ranks (`rma_race`): its origin
/// buffer, and where it lies in this rank's window memory, its use
/// there.
fn issued(
    here: &Here,
    win: MPI_Win,
    target: c_int,
    range: Option<(i64, i64)>,
    op: Op,
    sum: Option<(usize, usize, u64)>,
    scratch: Option<Vec<u8>>,
) {
    if target == mpi::PROC_NULL() {
        return;
    }
    let origin = Origin::of(here);
    let span = op
        .buf
        .and_then(|b| args::span(b.0, b.1, b.2))
        .map(|(s, e)| (s, e, op.writes));
    let put_sum = sum.zip(op.put).and_then(|((_, len, sum), (n, dt))| {
        let (_, tlen) = types::contiguous_span(1, n, dt)?;
        (tlen == len).then_some(sum)
    });
    if let Some(w) = windows::lock().get_mut(&win.bits()) {
        w.operation(target);
        if let (Some(range), Some(epoch)) = (range, w.epoch_to(target, crate::gate::syncs())) {
            w.note(Access {
                target,
                range,
                kind: op.kind,
                local: false,
                epoch,
                routine: origin.routine,
                ra: origin.ra,
                sum: put_sum,
            });
        }
        w.issued.push(Issued {
            origin,
            target,
            sum,
            scratch,
            span,
        });
    }
    if let Some((s, e, writes)) = span {
        crate::rma_race::used(origin, (s, e), writes, true);
    }
}

/// Runs the checks of a one-sided call, then `call`; on success notes it
/// issued to `target` (see [`issued`]) with `sum` (the origin buffer's
/// checksum, if it is one MPI reads).
fn run(
    here: &Here,
    win: MPI_Win,
    target: c_int,
    op: Op,
    sum: Option<(usize, usize, u64)>,
    checks: Result<Option<(i64, i64)>, Refusal>,
    call: impl FnOnce() -> c_int,
) -> c_int {
    let range = match checks {
        Err(r) => return r.report(here),
        Ok(range) => range,
    };
    let rc = call();
    if rc == mpi::SUCCESS() {
        issued(here, win, target, range, op, sum, None);
    }
    rc
}

pnmpi_sdk::wrap! {
    /// Checks the access; notes the origin buffer's checksum.
    fn MPI_Put(o, n, dt, target, disp, tn, tdt, win) {
        let here = Here::new(routine::MPI_Put);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        let range = match access(win, &[(o, n, dt)], target, disp, tn, tdt) {
            Err(r) => return r.report(&here),
            Ok(range) => range,
        };
        let sum = checked_sum(target, (o, n, dt));
        let rc = next!();
        if rc == mpi::SUCCESS() {
            let op = Op { put: Some((tn, tdt)), ..Op::new(Kind::Write, (o, n, dt), false) };
            issued(&here, win, target, range, op, sum, None);
        }
        rc
    }

    /// Checks the access; MPI writes a contiguous origin buffer's data to
    /// a scratch buffer, which its completion gives to it.
    fn MPI_Get(o, n, dt, target, disp, tn, tdt, win) {
        let here = Here::new(routine::MPI_Get);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        let range = match access(win, &[(o, n, dt)], target, disp, tn, tdt) {
            Err(r) => return r.report(&here),
            Ok(range) => range,
        };
        let sum = checked_sum(target, (o, n, dt));
        let Some((start, len, _)) = sum else {
            let rc = next!();
            if rc == mpi::SUCCESS() {
                issued(&here, win, target, range, Op::new(Kind::Read, (o, n, dt), true), None, None);
            }
            return rc;
        };
        // SAFETY: the application's buffer, `len` readable bytes at `start`.
        let mut scratch = unsafe { std::slice::from_raw_parts(start as *const u8, len) }.to_vec();
        // The datatype's data starts `start - o` bytes (its true lower
        // bound, which may be negative) after the address.
        let into = scratch.as_mut_ptr().wrapping_sub(start.wrapping_sub(o as usize));
        // SAFETY: MPI writes `len` bytes at `into + (start - o)`, the
        // scratch buffer, which lives until the completion copies it.
        let rc = unsafe { x::XMPI_Get(into.cast(), n, dt, target, disp, tn, tdt, win) };
        if rc == mpi::SUCCESS() {
            issued(&here, win, target, range, Op::new(Kind::Read, (o, n, dt), true), sum, Some(scratch));
        }
        rc
    }

    /// Checks the access.
    fn MPI_Accumulate(o, n, dt, target, disp, tn, tdt, op, win) {
        let here = Here::new(routine::MPI_Accumulate);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        let checks = access(win, &[(o, n, dt)], target, disp, tn, tdt).and_then(|range| args::op(op).map(|()| range));
        let sum = checks.is_ok().then(|| checked_sum(target, (o, n, dt))).flatten();
        run(&here, win, target, Op::new(Kind::Atomic, (o, n, dt), false), sum, checks, || next!())
    }

    /// Checks the access (the result buffer's signature is the target's).
    fn MPI_Get_accumulate(o, n, dt, r, rn, rdt, target, disp, tn, tdt, op, win) {
        let here = Here::new(routine::MPI_Get_accumulate);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        let origin: &[Buffer] = if op_is_no_op(op) { &[(r, rn, rdt)] } else { &[(o, n, dt), (r, rn, rdt)] };
        let checks = access(win, origin, target, disp, tn, tdt).and_then(|range| args::op(op).map(|()| range));
        run(&here, win, target, Op::new(Kind::Atomic, (r, rn, rdt), true), None, checks, || next!())
    }

    /// Checks the access of one element.
    fn MPI_Fetch_and_op(o, r, dt, target, disp, op, win) {
        let here = Here::new(routine::MPI_Fetch_and_op);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        let origin: &[Buffer] = if op_is_no_op(op) { &[(r, 1, dt)] } else { &[(o, 1, dt), (r, 1, dt)] };
        let checks = access(win, origin, target, disp, 1, dt).and_then(|range| args::op(op).map(|()| range));
        run(&here, win, target, Op::new(Kind::Atomic, (r, 1, dt), true), None, checks, || next!())
    }

    /// Checks the access of one element.
    fn MPI_Compare_and_swap(o, c, r, dt, target, disp, win) {
        let here = Here::new(routine::MPI_Compare_and_swap);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        let checks = access(win, &[(o, 1, dt), (c, 1, dt), (r, 1, dt)], target, disp, 1, dt);
        run(&here, win, target, Op::new(Kind::Atomic, (r, 1, dt), true), None, checks, || next!())
    }

    /// Checks the access (completed by its request, not noted).
    fn MPI_Rput(o, n, dt, target, disp, tn, tdt, win, request) {
        let here = Here::new(routine::MPI_Rput);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        if let Err(r) = access(win, &[(o, n, dt)], target, disp, tn, tdt) {
            return r.report(&here);
        }
        next!()
    }

    /// Checks the access (completed by its request, not noted).
    fn MPI_Rget(o, n, dt, target, disp, tn, tdt, win, request) {
        let here = Here::new(routine::MPI_Rget);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        if let Err(r) = access(win, &[(o, n, dt)], target, disp, tn, tdt) {
            return r.report(&here);
        }
        next!()
    }

    /// Checks the access (completed by its request, not noted).
    fn MPI_Raccumulate(o, n, dt, target, disp, tn, tdt, op, win, request) {
        let here = Here::new(routine::MPI_Raccumulate);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        if let Err(r) = access(win, &[(o, n, dt)], target, disp, tn, tdt).and_then(|_| args::op(op)) {
            return r.report(&here);
        }
        next!()
    }
}

/// Whether `op` is `MPI_NO_OP`, with which an accumulate's origin buffer
/// is ignored.
fn op_is_no_op(op: MPI_Op) -> bool {
    mpi::predefined_ops()
        .last()
        .is_some_and(|o| o.bits() == op.bits())
}
