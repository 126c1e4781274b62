//! One-sided communication in the OTF2 export, as Score-P records it: a
//! window's creation and free are collective RMA calls
//! (`RmaCollectiveBegin`, `RmaWinCreate`/`RmaWinDestroy`,
//! `RmaCollectiveEnd`); a put, get or atomic is an `RmaPut`, `RmaGet` or
//! `RmaAtomic` at its call's entry, with a matching id; the call that
//! completes it (fence, `MPI_Win_complete`, unlock, flush, free) writes
//! an `RmaOpCompleteBlocking` for each; fences are collective
//! (`RmaCollectiveEnd` with a barrier), post, start, complete and wait
//! are `RmaGroupSync`s with their group, locks `RmaRequestLock` and
//! `RmaReleaseLock`. Targets are ranks of the window's communicator.

use crate::ffi;
use crate::writer::{Record, UNDEFINED_U32};
use pnmpi_trace::fields::V;
use pnmpi_trace::rma::{DataOp, RmaRole, Win, WinKind, LOCK_SHARED};
use pnmpi_trace::rma_stats::moved;
use pnmpi_trace::trace::{Event, ReqRef};
use rustc_hash::FxHashMap;

/// Both synchronization levels: the calls order processes and memory.
const FULL: ffi::OTF2_RmaSyncLevel =
    (ffi::OTF2_RMA_SYNC_LEVEL_PROCESS | ffi::OTF2_RMA_SYNC_LEVEL_MEMORY) as ffi::OTF2_RmaSyncLevel;

/// What the export keeps of the one-sided calls between records.
pub(crate) struct RmaExport {
    /// Each routine's one-sided role.
    roles: Vec<Option<RmaRole>>,
    /// The trace's windows.
    wins: Vec<Win>,
    /// Operations not yet completed, per (stream, window): (target world
    /// rank, matching id).
    pending: FxHashMap<(u32, i64), Vec<(i64, u64)>>,
    /// Operations issued per stream (the low half of matching ids).
    issued: FxHashMap<u32, u32>,
    /// The request forms' requests (`MPI_Rput` ...) not completed yet:
    /// their operation's window and matching id.
    requests: FxHashMap<ReqRef, (u32, u64)>,
    /// The group of each (stream, window)'s open access epoch
    /// (`MPI_Win_start`), for its `MPI_Win_complete`, and of its exposure
    /// epoch (`MPI_Win_post`), for its `MPI_Win_wait`: OTF2 group ids.
    epochs: FxHashMap<(u32, i64, bool), u32>,
    /// The PSCW groups (world ranks), defined after the events; group `i`
    /// has OTF2 id `first_group + i`.
    pub(crate) groups: Vec<Vec<i64>>,
    group_ids: FxHashMap<Vec<i64>, u32>,
    first_group: u32,
}

impl RmaExport {
    /// The export of `routines`' one-sided calls on windows `wins`; PSCW
    /// groups take OTF2 group ids from `first_group`.
    pub(crate) fn new(routines: &[String], wins: &[Win], first_group: u32) -> RmaExport {
        RmaExport {
            roles: routines.iter().map(|n| RmaRole::of(n)).collect(),
            wins: wins.to_vec(),
            pending: FxHashMap::default(),
            issued: FxHashMap::default(),
            requests: FxHashMap::default(),
            epochs: FxHashMap::default(),
            groups: Vec::new(),
            group_ids: FxHashMap::default(),
            first_group,
        }
    }

    /// The rank in window `win` of world rank `world`.
    fn remote(&self, win: i64, world: i64) -> Option<u32> {
        let w = self.wins.get(usize::try_from(win).ok()?)?;
        w.members.iter().position(|&m| m == world).map(|i| i as u32)
    }

    /// The OTF2 id of `group`, defined once.
    fn group(&mut self, group: &[i64]) -> u32 {
        if let Some(&id) = self.group_ids.get(group) {
            return id;
        }
        let id = self.first_group + self.groups.len() as u32;
        self.groups.push(group.to_vec());
        self.group_ids.insert(group.to_vec(), id);
        id
    }

    /// Completes stream `si`'s pending operations on `win` (to `target`
    /// only, if given).
    fn complete(&mut self, si: u32, win: i64, target: Option<i64>, out: &mut Vec<Record>) {
        let Some(ops) = self.pending.get_mut(&(si, win)) else {
            return;
        };
        ops.retain(|&(t, id)| {
            let done = target.is_none_or(|x| x == t);
            if done {
                out.push(Record::RmaOpCompleteBlocking(win as u32, id));
            }
            !done
        });
    }

    /// The record of request `r`'s completion, if a request form
    /// (`MPI_Rput` ...) created it: Score-P's `RmaOpCompleteNonBlocking`
    /// of its operation, in the call that completes it.
    pub(crate) fn completed(&mut self, r: ReqRef) -> Option<Record> {
        let (win, id) = self.requests.remove(&r)?;
        Some(Record::RmaOpCompleteNonBlocking(win, id))
    }

    /// The records of event `ev` of stream `si`, if it is one-sided: those
    /// after its `Enter` into `at_start`, those before its `Leave` into
    /// `at_end` (`req`: the first request the call created). Returns what
    /// could not be written, if anything.
    pub(crate) fn records(
        &mut self,
        (si, req): (u32, ReqRef),
        ev: &Event,
        at_start: &mut Vec<Record>,
        at_end: &mut Vec<Record>,
    ) -> Option<&'static str> {
        let role = self.roles.get(ev.routine as usize).copied().flatten()?;
        let win = match (role, ev.newwin) {
            (RmaRole::Create(_), Some(w)) => i64::from(w.id),
            (RmaRole::Create(_), None) => return None,
            _ => ev.get(V::Win)?,
        };
        if usize::try_from(win)
            .ok()
            .filter(|&w| w < self.wins.len())
            .is_none()
        {
            return Some("one-sided calls on windows the trace does not describe");
        }
        let w = win as u32;
        let target = ev.get(V::Peer);
        let remote = target.and_then(|t| self.remote(win, t));
        match role {
            RmaRole::Create(kind) => {
                let op = match kind {
                    WinKind::Allocate | WinKind::AllocateShared => {
                        ffi::OTF2_COLLECTIVE_OP_CREATE_HANDLE_AND_ALLOCATE
                    }
                    WinKind::Create | WinKind::Dynamic => ffi::OTF2_COLLECTIVE_OP_CREATE_HANDLE,
                };
                at_start.push(Record::RmaCollBegin);
                at_end.push(Record::RmaWinCreate(w));
                at_end.push(Record::RmaCollEnd(op as _, FULL, w, UNDEFINED_U32, 0, 0));
            }
            RmaRole::Free => {
                at_start.push(Record::RmaCollBegin);
                self.complete(si, win, None, at_end);
                let op = ffi::OTF2_COLLECTIVE_OP_DESTROY_HANDLE;
                at_end.push(Record::RmaCollEnd(op as _, FULL, w, UNDEFINED_U32, 0, 0));
                at_end.push(Record::RmaWinDestroy(w));
            }
            RmaRole::Data(op) => {
                let (Some(t), Some(r)) = (target, remote) else {
                    return Some("one-sided operations to MPI_PROC_NULL or to ranks outside their window");
                };
                let n = self.issued.entry(si).or_insert(0);
                let id = u64::from(si) << 32 | u64::from(*n);
                *n += 1;
                let (sent, fetched) = moved(op, ev);
                at_start.push(match op {
                    DataOp::Put => Record::RmaPut(w, r, sent, id),
                    DataOp::Get => Record::RmaGet(w, r, fetched, id),
                    DataOp::Accumulate => {
                        Record::RmaAtomic(w, r, ffi::OTF2_RMA_ATOMIC_TYPE_ACCUMULATE as _, sent, 0, id)
                    }
                    DataOp::GetAccumulate | DataOp::FetchAndOp => Record::RmaAtomic(
                        w,
                        r,
                        ffi::OTF2_RMA_ATOMIC_TYPE_FETCH_AND_ACCUMULATE as _,
                        sent,
                        fetched,
                        id,
                    ),
                    DataOp::CompareAndSwap => Record::RmaAtomic(
                        w,
                        r,
                        ffi::OTF2_RMA_ATOMIC_TYPE_COMPARE_AND_SWAP as _,
                        sent,
                        fetched,
                        id,
                    ),
                });
                self.pending.entry((si, win)).or_default().push((t, id));
                if ev.created() > 0 {
                    self.requests.insert(req, (w, id));
                }
            }
            RmaRole::Fence => {
                at_start.push(Record::RmaCollBegin);
                self.complete(si, win, None, at_end);
                let op = ffi::OTF2_COLLECTIVE_OP_BARRIER;
                at_end.push(Record::RmaCollEnd(op as _, FULL, w, UNDEFINED_U32, 0, 0));
            }
            RmaRole::Post | RmaRole::Start => {
                let group = self.group(ev.group.as_deref().unwrap_or(&[]));
                self.epochs.insert((si, win, role == RmaRole::Start), group);
                at_end.push(Record::RmaGroupSync(FULL, w, group));
            }
            RmaRole::Complete | RmaRole::Wait => {
                let access = role == RmaRole::Complete;
                if access {
                    self.complete(si, win, None, at_end);
                }
                match self.epochs.remove(&(si, win, access)) {
                    Some(group) => at_end.push(Record::RmaGroupSync(FULL, w, group)),
                    None => return Some("epoch closings without the epoch's opening"),
                }
            }
            RmaRole::Lock | RmaRole::Unlock => {
                let Some(r) = remote else {
                    return Some("locks of ranks outside their window");
                };
                let id = lock_id(w, r);
                if role == RmaRole::Lock {
                    let ty = match ev.get(V::Lock) {
                        Some(LOCK_SHARED) => ffi::OTF2_LOCK_SHARED,
                        _ => ffi::OTF2_LOCK_EXCLUSIVE,
                    };
                    at_start.push(Record::RmaRequestLock(w, r, id, ty as _));
                } else {
                    self.complete(si, win, target, at_end);
                    at_end.push(Record::RmaReleaseLock(w, r, id));
                }
            }
            RmaRole::LockAll | RmaRole::UnlockAll => {
                if role == RmaRole::UnlockAll {
                    self.complete(si, win, None, at_end);
                }
                for r in 0..self.wins[win as usize].members.len() as u32 {
                    let id = lock_id(w, r);
                    match role {
                        RmaRole::LockAll => {
                            at_start.push(Record::RmaRequestLock(w, r, id, ffi::OTF2_LOCK_SHARED as _))
                        }
                        _ => at_end.push(Record::RmaReleaseLock(w, r, id)),
                    }
                }
            }
            RmaRole::Flush { .. } => self.complete(si, win, target, at_end),
            RmaRole::FlushAll { .. } => self.complete(si, win, None, at_end),
            RmaRole::Sync => {}
        }
        None
    }
}

/// The id of the lock of window `w`'s rank `r`: a process holds one lock
/// of a target at a time.
fn lock_id(w: u32, r: u32) -> u64 {
    u64::from(w) << 32 | u64::from(r)
}
