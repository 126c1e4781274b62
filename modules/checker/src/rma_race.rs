//! Concurrency in one-sided communication, with MPI (the rules are
//! `race`'s):
//! - local: a buffer of a pending operation (a put's or accumulate's
//!   origin, read; a get's or atomic's result, written) that another
//!   call (a send, a receive) uses before the synchronization that
//!   completes the operation, one of the two writing (`buffer-pending`);
//! - global: at a fence, and at `MPI_Win_free` for the passive-target
//!   epochs, the window's ranks send each other the accesses they made
//!   since the last exchange (one `MPI_Allgather` of a count, and, when
//!   any rank has one, one `MPI_Allgatherv` of their lines, on the
//!   window's duplicate of its communicator); each target compares those
//!   to its memory, and its own stores into its window memory, found by
//!   comparing a copy of the memory at the fence that opened the epoch
//!   (at most [`COPY_LIMIT`] bytes) with the memory at the one that
//!   closes it, less the bytes MPI wrote (`conflict`).

use crate::args;
use crate::race::{self, Access, Epoch, Kind, Record};
use crate::report::{self, Class};
use crate::site::{self, named, Here};
use crate::windows::{self, WinInfo};
use pnmpi_mpi_sys::ROUTINE_NAMES;
use pnmpi_sdk::constants as mpi;
use pnmpi_sdk::sys::ffi::{self, MPI_Comm};
use pnmpi_sdk::sys::Handle;
use std::ffi::c_int;

use crate::origin::Origin;

/// The largest window memory copied at a fence, for finding the
/// program's own stores: a larger one is not compared.
pub const COPY_LIMIT: i64 = 1 << 20;

/// The most conflicts a target reports at one exchange.
const MAX_REPORTS: usize = 8;

/// Before a call that reads (or, when `writes`, writes) the bytes
/// `[start, end)`: reports a pending one-sided operation of this rank
/// whose origin buffer they overlap, one of the two writing; then notes
/// the call's use of the window memory it lies in.
pub fn buffer(here: &Here, (start, end): (usize, usize), writes: bool) {
    let pending = {
        let wins = windows::lock();
        wins.values()
            .flat_map(|w| w.issued.iter().map(move |op| (w.origin, op)))
            .find(|(_, op)| {
                op.span
                    .is_some_and(|(s, e, w)| (writes || w) && s < end && start < e)
            })
            .map(|(win, op)| (win, op.origin, op.span.is_some_and(|s| s.2)))
    };
    if let Some((win, origin, theirs)) = pending {
        report::report(
            Class::Rma,
            "buffer-pending",
            here.call(),
            &here.site(),
            format!(
                "potential data race: this call {} a buffer that {} on the window created by {}, not yet completed by a synchronization, {}",
                if writes { "writes" } else { "reads" },
                named(origin),
                named(win),
                if theirs { "writes" } else { "reads" }
            ),
        );
    }
    used(Origin::of(here), (start, end), writes, false);
}

/// Notes a call's use of the bytes `[start, end)`, where they lie in
/// this rank's memory of a window: the buffer of a one-sided operation
/// when `pending`, in use until its completion.
pub fn used(origin: Origin, span: (usize, usize), writes: bool, pending: bool) {
    let now = crate::gate::syncs();
    for w in windows::lock().values_mut() {
        let (Some(range), Some(epoch)) = (w.offsets(span), w.local_epoch(now, pending)) else {
            continue;
        };
        let target = w.rank;
        w.note(Access {
            target,
            range,
            kind: if writes { Kind::Write } else { Kind::Read },
            local: true,
            epoch,
            routine: origin.routine,
            ra: origin.ra,
            sum: None,
        });
    }
}

/// A copy of this rank's window memory, when it is small enough.
pub fn copy(w: &WinInfo) -> Option<Vec<u8>> {
    let (base, size) = w.memory;
    if base == 0 || size <= 0 || size > COPY_LIMIT {
        return None;
    }
    // SAFETY: the window's memory, `size` bytes MPI was given (or
    // allocated) at `base`, alive until `MPI_Win_free`.
    Some(unsafe { std::slice::from_raw_parts(base as *const u8, size as usize) }.to_vec())
}

/// The records of `accesses`, for the other ranks: `now` this rank's
/// synchronizing calls at the exchange (the exchanging call's own left
/// out), `mark` at the last one.
fn records(me: i32, accesses: Vec<Access>, mark: u64, now: u64) -> Vec<Record> {
    accesses
        .into_iter()
        .map(|access| {
            let (before, after) = match access.epoch {
                Epoch::Fence(_) => (0, 0),
                Epoch::Passive { opened, closed, .. } => (
                    opened.saturating_sub(mark),
                    now.saturating_sub(1).saturating_sub(closed.unwrap_or(now)),
                ),
            };
            let site = if access.routine == usize::MAX {
                String::new()
            } else {
                site::name(access.ra)
            };
            Record {
                origin: me,
                access,
                before,
                after,
                site,
            }
        })
        .collect()
}

/// Every rank's records, `mine` among them, exchanged on `shadow`.
fn exchange(shadow: MPI_Comm, mine: &[Record]) -> Vec<Record> {
    let mut bytes = race::encode(mine);
    bytes.resize(bytes.len().div_ceil(8) * 8, 0);
    let words: Vec<u64> = bytes
        .chunks(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect();
    let ranks = args::comm_size(shadow).max(0) as usize;
    let mut lens = vec![0 as c_int; ranks];
    let n = words.len() as c_int;
    // SAFETY: one count from each rank of the window's duplicate, which
    // every rank joins at the same fence or free.
    unsafe {
        ffi::PMPI_Allgather(
            (&n as *const c_int).cast(),
            1,
            mpi::INT(),
            lens.as_mut_ptr().cast(),
            1,
            mpi::INT(),
            shadow,
        )
    };
    let total: usize = lens.iter().map(|&l| l.max(0) as usize).sum();
    if total == 0 {
        return Vec::new();
    }
    let mut displs = Vec::with_capacity(ranks);
    let mut at = 0;
    for &l in &lens {
        displs.push(at);
        at += l;
    }
    let mut all = vec![0u64; total];
    // SAFETY: `all` holds the sum of `lens` at `displs`, one count per
    // rank; every rank calls this when any count is not zero.
    unsafe {
        ffi::PMPI_Allgatherv(
            words.as_ptr().cast(),
            n,
            mpi::UINT64_T(),
            all.as_mut_ptr().cast(),
            lens.as_ptr(),
            displs.as_ptr(),
            mpi::UINT64_T(),
            shadow,
        )
    };
    let bytes: Vec<u8> = all.iter().flat_map(|w| w.to_le_bytes()).collect();
    race::decode(&bytes)
}

/// Names an access of a record for a report.
fn describe(r: &Record) -> String {
    let a = &r.access;
    let (s, e) = a.range;
    let what = match a.kind {
        Kind::Read => "reads",
        Kind::Write => "writes",
        Kind::Atomic => "updates atomically",
    };
    if a.routine == usize::MAX {
        return format!(
            "rank {}'s own store into its window memory (bytes {s}..{e}, not made by MPI)",
            r.origin
        );
    }
    let call = ROUTINE_NAMES.get(a.routine).copied().unwrap_or("a call");
    if a.local {
        format!(
            "rank {}'s {call} at {}, which {what} its window memory (bytes {s}..{e}) as its buffer",
            r.origin, r.site
        )
    } else {
        format!(
            "rank {}'s {call} at {}, which {what} bytes {s}..{e} of rank {}'s window",
            r.origin, r.site, a.target
        )
    }
}

/// A target's (`me`) checks of every rank's records `all` on the window
/// `created` made: its own stores (the bytes that `stores`, the copies
/// of its memory at the fences that opened and closed the epoch, show
/// changed and no MPI call wrote, and a put's bytes whose checksum is
/// not its data's), then each pair of conflicting accesses of its
/// memory, reported at `here`.
fn compare(here: &Here, created: Origin, me: i32, all: Vec<Record>, stores: Option<(&[u8], &[u8], Epoch)>) {
    let all: Vec<Record> = all.into_iter().filter(|r| r.access.target == me).collect();
    if all.is_empty() {
        return;
    }
    // The stores noted at an unlock: less the bytes MPI wrote.
    let written: Vec<(i64, i64)> = all
        .iter()
        .filter(|r| r.access.kind != Kind::Read && r.access.routine != usize::MAX)
        .map(|r| r.access.range)
        .collect();
    let mut mine = Vec::with_capacity(all.len());
    for r in all {
        if r.access.routine != usize::MAX {
            mine.push(r);
            continue;
        }
        for range in race::uncovered(&[r.access.range], &written) {
            let mut piece = r.clone();
            piece.access.range = range;
            mine.push(piece);
        }
    }
    if let Some((then, now, epoch)) = stores {
        let written: Vec<(i64, i64)> = mine
            .iter()
            .filter(|r| r.access.kind != Kind::Read)
            .map(|r| r.access.range)
            .collect();
        let mut found: Vec<(i64, i64)> = race::uncovered(&race::changed(then, now), &written);
        for r in &mine {
            let (Some(sum), (s, e)) = (r.access.sum, r.access.range) else {
                continue;
            };
            let alone = mine
                .iter()
                .filter(|o| o.access.kind != Kind::Read && o.access.range.0 < e && s < o.access.range.1)
                .count()
                == 1;
            let bytes = now.get(s.max(0) as usize..e.max(0) as usize);
            // SAFETY: a slice of the copy, readable.
            let differs = bytes
                .is_some_and(|b| unsafe { crate::checksum::checksum(b.as_ptr() as usize, b.len()) } != sum);
            if alone && differs {
                found.push((s, e));
            }
        }
        for range in found {
            mine.push(Record {
                origin: me,
                access: Access {
                    target: me,
                    range,
                    kind: Kind::Write,
                    local: true,
                    epoch,
                    routine: usize::MAX,
                    ra: 0,
                    sum: None,
                },
                before: 0,
                after: 0,
                site: String::new(),
            });
        }
    }
    for (i, j) in race::conflicts(&mine, MAX_REPORTS) {
        report::report(
            Class::Rma,
            "conflict",
            here.call(),
            &here.site(),
            format!(
                "potential data race on the window created by {}: {}, and {}, in the same epoch, which nothing orders",
                named(created),
                describe(&mine[i]),
                describe(&mine[j])
            ),
        );
    }
}

/// At a fence of `win` that MPI made: the accesses of the fence epoch it
/// closed exchanged and compared, the memory copied for the next.
pub fn at_fence(here: &Here, win: ffi::MPI_Win) {
    let now = crate::gate::syncs();
    let (shadow, created, me, closed, then, copy_now, mine) = {
        let mut wins = windows::lock();
        let Some(w) = wins.get_mut(&win.bits()) else {
            return;
        };
        if w.shadow == 0 || w.broken {
            return;
        }
        let current = w.fences;
        let (fence, rest): (Vec<Access>, Vec<Access>) = std::mem::take(&mut w.accesses)
            .into_iter()
            .partition(|a| matches!(a.epoch, Epoch::Fence(g) if g < current));
        w.accesses = rest;
        let then = w.snapshot.take();
        let copy_now = copy(w);
        if w.fenced {
            w.snapshot.clone_from(&copy_now);
        }
        let mine = records(w.rank, fence, 0, now);
        (
            MPI_Comm::from_bits(w.shadow),
            w.origin,
            w.rank,
            current.saturating_sub(1),
            then,
            copy_now,
            mine,
        )
    };
    let all = exchange(shadow, &mine);
    let stores = match (&then, &copy_now) {
        (Some(a), Some(b)) if a.len() == b.len() => Some((a.as_slice(), b.as_slice(), Epoch::Fence(closed))),
        _ => None,
    };
    compare(here, created, me, all, stores);
}

/// At `MPI_Win_free` of the window `w` (taken out of the list; before
/// MPI's free): the passive-target accesses since the last exchange
/// compared, with this rank's stores inside its own lock epochs.
pub fn at_free(here: &Here, w: &mut WinInfo) {
    if w.shadow == 0 || w.broken {
        return;
    }
    let now = crate::gate::syncs();
    w.close_passive(None, now);
    let accesses: Vec<Access> = std::mem::take(&mut w.accesses)
        .into_iter()
        .filter(|a| matches!(a.epoch, Epoch::Passive { .. }))
        .collect();
    let mine = records(w.rank, accesses, w.mark, now);
    let all = exchange(MPI_Comm::from_bits(w.shadow), &mine);
    compare(here, w.origin, w.rank, all, None);
}

/// At a lock of this rank's (of a rank or all, `shared` or not): its
/// window memory copied, unless a lock of its is open already.
pub fn own_lock(w: &mut WinInfo, shared: bool) {
    if w.own_lock.is_none() {
        w.own_lock = copy(w).map(|c| (c, crate::gate::syncs(), shared));
    }
}

/// At an unlock of this rank's that closes the last of its locks of the
/// window: its stores into its window memory since the first noted
/// (`WinInfo::stores`): a rank's store is placed in time only between a
/// lock of its and the unlock.
pub fn own_unlock(w: &mut WinInfo) {
    if w.lock_all || !w.locks.is_empty() {
        return;
    }
    let Some((then, opened, shared)) = w.own_lock.take() else {
        return;
    };
    if let Some(now) = copy(w).filter(|c| c.len() == then.len()) {
        w.stores(&then, &now, (opened, crate::gate::syncs(), shared));
    }
}
