//! One-sided communication read from OTF2, as Score-P records it and as
//! [`crate::rma_export`] writes it: each `RmaWin` definition is a window
//! of the trace's table (its members those of its communicator), and the
//! RMA records inside an MPI call give the call's fields:
//!
//! - `RmaWinCreate` the window it created, `RmaWinDestroy`,
//!   `RmaCollectiveEnd`, `RmaGroupSync` and the lock records the window
//!   it works on;
//! - `RmaPut`, `RmaGet` and `RmaAtomic` the target (a rank of the
//!   window, as a world rank) and the bytes sent and fetched;
//! - `RmaGroupSync` the group of `MPI_Win_post` and `MPI_Win_start`;
//! - `RmaRequestLock` the lock's type and target.
//!
//! A request form's operation (`MPI_Rput` ...) creates the call's
//! request, and its local completion (`RmaOpCompleteNonBlocking`)
//! completes it in the call that holds it (`MPI_Wait` ...). An
//! operation's completion (`RmaOpComplete*`) inside `MPI_Win_flush`
//! (`_local`, `_all`) names the window the flush works on, and a one-target
//! flush's target (the completed operation's); elsewhere completions,
//! tests (`RmaOpTest`) and lock grants (`RmaAcquireLock`) add nothing: the
//! call that holds them is the epoch's closing call. OTF2 records neither a window's kind nor its
//! displacement unit, an operation's reduction nor an epoch's assertions:
//! a window is `create` unless its name ends with its kind in parentheses,
//! as the export names it (`window 0 (allocate)`), and the displacement
//! unit is 1.

use crate::assembler::{Assembler, CommMap, WinMap};
use crate::defs::{Defs, WinDef};
use crate::ffi;
use crate::user::{on_defs, on_events, Attrs, Code, Loc};
use pnmpi_trace::fields::{COMM_SELF, COMM_WORLD, V};
use pnmpi_trace::rma::{DataOp, RmaRole, Win, WinKind, LOCK_EXCLUSIVE, LOCK_SHARED};
use pnmpi_trace::trace::WinCreated;
use rustc_hash::FxHashMap;
use std::os::raw::c_void;

/// The bit that keeps a request form's request (its operation's
/// matching id) apart from OTF2's request ids in a location's requests.
const RMA_REQUEST: u64 = 1 << 63;

/// The name the export gives window `id` of kind `kind`, which
/// [`windows`] reads back.
pub(crate) fn win_name(id: usize, kind: WinKind) -> String {
    format!("window {id} ({})", kind.name())
}

/// The kind a window's name ends with, in parentheses; `create` otherwise.
fn kind_of_name(name: &str) -> WinKind {
    let Some(rest) = name.strip_suffix(')') else {
        return WinKind::Create;
    };
    let Some((_, kind)) = rest.rsplit_once('(') else {
        return WinKind::Create;
    };
    (0..4)
        .filter_map(WinKind::from_code)
        .find(|k| k.name() == kind)
        .unwrap_or_default()
}

/// The trace's window table from the archive's `RmaWin` definitions, in
/// their order, and the map from their references to it. A window over a
/// communicator without a definition has no members.
pub(crate) fn windows(defs: &Defs, comms: &CommMap, world_size: u32) -> (Vec<Win>, WinMap) {
    let mut table = Vec::new();
    let mut map = WinMap::default();
    for w in &defs.wins {
        let (comm, members) = match comms.get(&w.comm) {
            Some((COMM_WORLD, _)) => (COMM_WORLD, (0..i64::from(world_size)).collect()),
            Some((COMM_SELF, _)) => (COMM_SELF, Vec::new()),
            Some((id, members)) => (*id, members.clone().unwrap_or_default()),
            None => (COMM_WORLD, Vec::new()),
        };
        map.insert(w.id, (table.len() as u32, members.clone()));
        table.push(Win {
            kind: kind_of_name(defs.string(w.name)),
            comm,
            members,
        });
    }
    (table, map)
}

/// The members of every group that is not a group of locations (PSCW
/// groups: ranks), by reference.
pub(crate) fn rank_groups(defs: &Defs) -> FxHashMap<u32, Vec<i64>> {
    defs.groups
        .iter()
        .filter(|(_, g)| g.ty == ffi::OTF2_GROUP_TYPE_COMM_GROUP as ffi::OTF2_GroupType)
        .map(|(&id, g)| (id, g.members.iter().map(|&m| m as i64).collect()))
        .collect()
}

impl Assembler {
    /// The open call's one-sided role and the trace's id and members of
    /// window `win`; `None` (counted) when the call is no one-sided call
    /// or the window has no definition.
    fn rma_call(&mut self, win: u32) -> Option<(RmaRole, u32, Vec<i64>)> {
        let shared = self.shared();
        let Some((id, members)) = shared.wins.get(&win).cloned() else {
            self.lose("one-sided records on windows without a definition");
            return None;
        };
        let ev = self.current()?;
        let role = shared.rma.get(ev.routine as usize).copied().flatten();
        let Some(role) = role else {
            self.lose("one-sided records inside calls that are not one-sided");
            return None;
        };
        ev.set(V::Win, Some(i64::from(id)));
        Some((role, id, members))
    }

    /// A record that only names the window the open call works on.
    fn rma_on(&mut self, win: u32) {
        if let Some((RmaRole::Create(_), ..)) = self.rma_call(win) {
            // A creation names its window as the one it made.
            if let Some(ev) = self.current() {
                ev.set(V::Win, None);
            }
        }
    }

    fn rma_created(&mut self, win: u32) {
        let Some((_, id, _)) = self.rma_call(win) else {
            return;
        };
        let comm = self.shared().win_comms.get(id as usize).copied();
        if let Some(ev) = self.current() {
            ev.set(V::Win, None);
            ev.set(V::Comm, comm);
            ev.newwin = Some(WinCreated { id, disp_unit: 1 });
        }
    }

    /// A data operation `op` (its matching id) to rank `remote` of window
    /// `win`: `sent` bytes to it and `fetched` from it.
    fn rma_data(&mut self, win: u32, remote: u32, (sent, fetched): (u64, u64), op: u64) {
        let Some((role, _, members)) = self.rma_call(win) else {
            return;
        };
        let Some(&target) = members.get(remote as usize) else {
            self.lose("one-sided operations to ranks outside their window");
            return;
        };
        self.rma_targets.insert(op, target);
        if self.request_form() {
            self.create(op | RMA_REQUEST, false);
        }
        let Some(ev) = self.current() else { return };
        ev.set(V::Peer, Some(target));
        match role {
            RmaRole::Data(DataOp::Get) => ev.set(V::Bytes, Some(fetched as i64)),
            RmaRole::Data(DataOp::Put | DataOp::Accumulate) => ev.set(V::Bytes, Some(sent as i64)),
            _ => {
                ev.set(V::Bytes, Some(sent as i64));
                ev.set(V::Rbytes, Some(fetched as i64));
            }
        }
    }

    /// Whether the open call is a request form of a data operation
    /// (`MPI_Rput` ...): its operation's matching id names its request.
    fn request_form(&mut self) -> bool {
        let shared = self.shared();
        self.current().is_some_and(|ev| {
            shared
                .request_forms
                .get(ev.routine as usize)
                .copied()
                .unwrap_or(false)
        })
    }

    /// A request form's operation `op` completed locally: its request
    /// completes in the open call (`MPI_Wait` ...).
    fn rma_completed_locally(&mut self, op: u64) {
        if self.has_request(op | RMA_REQUEST) {
            self.finish(op | RMA_REQUEST);
        }
    }

    /// Operation `op` of window `win` completed: inside a flush, the
    /// window the flush works on (and a one-target flush's target).
    fn rma_completed(&mut self, win: u32, op: u64) {
        let target = self.rma_targets.remove(&op);
        let shared = self.shared();
        let role = self
            .current()
            .and_then(|ev| shared.rma.get(ev.routine as usize).copied().flatten());
        match role {
            Some(RmaRole::Flush { .. }) if self.rma_call(win).is_some() => {
                if let (Some(ev), Some(t)) = (self.current(), target) {
                    ev.set(V::Peer, Some(t));
                }
            }
            Some(RmaRole::FlushAll { .. }) => {
                self.rma_call(win);
            }
            _ => {}
        }
    }

    fn rma_group(&mut self, win: u32, group: u32) {
        if self.rma_call(win).is_none() {
            return;
        }
        let members = self.shared().groups.get(&group).cloned();
        if members.is_none() {
            self.lose("one-sided group synchronizations with groups without a definition");
        }
        if let Some(ev) = self.current() {
            ev.group = members;
        }
    }

    /// A lock request (`Some(type)`) or release of rank `remote`: one
    /// target's lock names it; `MPI_Win_lock_all` and its unlock name none.
    fn rma_lock(&mut self, win: u32, remote: u32, ty: Option<ffi::OTF2_LockType>) {
        let Some((role, _, members)) = self.rma_call(win) else {
            return;
        };
        let Some(ev) = self.current() else { return };
        if matches!(role, RmaRole::Lock | RmaRole::Unlock) {
            ev.set(V::Peer, members.get(remote as usize).copied());
        }
        if role == RmaRole::Lock {
            let shared = ty == Some(ffi::OTF2_LOCK_SHARED as ffi::OTF2_LockType);
            ev.set(V::Lock, Some(if shared { LOCK_SHARED } else { LOCK_EXCLUSIVE }));
        }
    }
}

unsafe extern "C" fn rma_win(
    user: *mut c_void,
    id: u32,
    name: u32,
    comm: u32,
    _flags: ffi::OTF2_RmaWinFlag,
) -> Code {
    on_defs(user, |d| d.wins.push(WinDef { id, name, comm }))
}

unsafe extern "C" fn win_create(_l: Loc, _t: u64, _p: u64, user: *mut c_void, _a: Attrs, win: u32) -> Code {
    on_events(user, |a| a.rma_created(win))
}

unsafe extern "C" fn win_destroy(_l: Loc, _t: u64, _p: u64, user: *mut c_void, _a: Attrs, win: u32) -> Code {
    on_events(user, |a| a.rma_on(win))
}

unsafe extern "C" fn coll_begin(_l: Loc, _t: u64, _p: u64, _user: *mut c_void, _a: Attrs) -> Code {
    ffi::OTF2_CALLBACK_SUCCESS as Code
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn coll_end(
    _l: Loc,
    _t: u64,
    _p: u64,
    user: *mut c_void,
    _a: Attrs,
    _op: ffi::OTF2_CollectiveOp,
    _level: ffi::OTF2_RmaSyncLevel,
    win: u32,
    _root: u32,
    _sent: u64,
    _recvd: u64,
) -> Code {
    on_events(user, |a| a.rma_on(win))
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn group_sync(
    _l: Loc,
    _t: u64,
    _p: u64,
    user: *mut c_void,
    _a: Attrs,
    _level: ffi::OTF2_RmaSyncLevel,
    win: u32,
    group: u32,
) -> Code {
    on_events(user, |a| a.rma_group(win, group))
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn request_lock(
    _l: Loc,
    _t: u64,
    _p: u64,
    user: *mut c_void,
    _a: Attrs,
    win: u32,
    remote: u32,
    _id: u64,
    ty: ffi::OTF2_LockType,
) -> Code {
    on_events(user, |a| a.rma_lock(win, remote, Some(ty)))
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn acquire_lock(
    _l: Loc,
    _t: u64,
    _p: u64,
    _user: *mut c_void,
    _a: Attrs,
    _win: u32,
    _remote: u32,
    _id: u64,
    _ty: ffi::OTF2_LockType,
) -> Code {
    ffi::OTF2_CALLBACK_SUCCESS as Code
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn release_lock(
    _l: Loc,
    _t: u64,
    _p: u64,
    user: *mut c_void,
    _a: Attrs,
    win: u32,
    remote: u32,
    _id: u64,
) -> Code {
    on_events(user, |a| a.rma_lock(win, remote, None))
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn put(
    _l: Loc,
    _t: u64,
    _p: u64,
    user: *mut c_void,
    _a: Attrs,
    win: u32,
    remote: u32,
    bytes: u64,
    id: u64,
) -> Code {
    on_events(user, |a| a.rma_data(win, remote, (bytes, 0), id))
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn get(
    _l: Loc,
    _t: u64,
    _p: u64,
    user: *mut c_void,
    _a: Attrs,
    win: u32,
    remote: u32,
    bytes: u64,
    id: u64,
) -> Code {
    on_events(user, |a| a.rma_data(win, remote, (0, bytes), id))
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn atomic(
    _l: Loc,
    _t: u64,
    _p: u64,
    user: *mut c_void,
    _a: Attrs,
    win: u32,
    remote: u32,
    _ty: ffi::OTF2_RmaAtomicType,
    sent: u64,
    fetched: u64,
    id: u64,
) -> Code {
    on_events(user, |a| a.rma_data(win, remote, (sent, fetched), id))
}

/// A test of an operation: the call holding it says it all.
unsafe extern "C" fn op_test(
    _l: Loc,
    _t: u64,
    _p: u64,
    _user: *mut c_void,
    _a: Attrs,
    _win: u32,
    _id: u64,
) -> Code {
    ffi::OTF2_CALLBACK_SUCCESS as Code
}

/// An operation's local completion, in the call that completes its
/// request ([`Assembler::rma_completed_locally`]).
unsafe extern "C" fn op_done_locally(
    _l: Loc,
    _t: u64,
    _p: u64,
    user: *mut c_void,
    _a: Attrs,
    _win: u32,
    id: u64,
) -> Code {
    on_events(user, |a| a.rma_completed_locally(id))
}

/// An operation's completion ([`Assembler::rma_completed`]).
unsafe extern "C" fn op_done(
    _l: Loc,
    _t: u64,
    _p: u64,
    user: *mut c_void,
    _a: Attrs,
    win: u32,
    id: u64,
) -> Code {
    on_events(user, |a| a.rma_completed(win, id))
}

/// Installs the `RmaWin` definition callback in `c` (a live set).
pub(crate) fn register_defs(c: *mut ffi::OTF2_GlobalDefReaderCallbacks) {
    // SAFETY: `c` is live; the function has the exact signature.
    unsafe {
        ffi::OTF2_GlobalDefReaderCallbacks_SetRmaWinCallback(c, Some(rma_win));
    }
}

/// Installs the one-sided event callbacks in `c` (a live set).
pub(crate) fn register_events(c: *mut ffi::OTF2_EvtReaderCallbacks) {
    // SAFETY: `c` is live; each function has its record's exact signature.
    unsafe {
        ffi::OTF2_EvtReaderCallbacks_SetRmaWinCreateCallback(c, Some(win_create));
        ffi::OTF2_EvtReaderCallbacks_SetRmaWinDestroyCallback(c, Some(win_destroy));
        ffi::OTF2_EvtReaderCallbacks_SetRmaCollectiveBeginCallback(c, Some(coll_begin));
        ffi::OTF2_EvtReaderCallbacks_SetRmaCollectiveEndCallback(c, Some(coll_end));
        ffi::OTF2_EvtReaderCallbacks_SetRmaGroupSyncCallback(c, Some(group_sync));
        ffi::OTF2_EvtReaderCallbacks_SetRmaRequestLockCallback(c, Some(request_lock));
        ffi::OTF2_EvtReaderCallbacks_SetRmaAcquireLockCallback(c, Some(acquire_lock));
        ffi::OTF2_EvtReaderCallbacks_SetRmaReleaseLockCallback(c, Some(release_lock));
        ffi::OTF2_EvtReaderCallbacks_SetRmaPutCallback(c, Some(put));
        ffi::OTF2_EvtReaderCallbacks_SetRmaGetCallback(c, Some(get));
        ffi::OTF2_EvtReaderCallbacks_SetRmaAtomicCallback(c, Some(atomic));
        ffi::OTF2_EvtReaderCallbacks_SetRmaOpCompleteBlockingCallback(c, Some(op_done));
        ffi::OTF2_EvtReaderCallbacks_SetRmaOpCompleteNonBlockingCallback(c, Some(op_done_locally));
        ffi::OTF2_EvtReaderCallbacks_SetRmaOpTestCallback(c, Some(op_test));
        ffi::OTF2_EvtReaderCallbacks_SetRmaOpCompleteRemoteCallback(c, Some(op_done));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_windows_kind_is_read_from_the_name_the_export_gives_it() {
        for k in (0..4).filter_map(WinKind::from_code) {
            assert_eq!(kind_of_name(&win_name(3, k)), k);
        }
        assert_eq!(kind_of_name("MPI_Win 2"), WinKind::Create);
        assert_eq!(kind_of_name("window (odd)"), WinKind::Create);
    }
}
