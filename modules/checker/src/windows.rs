//! One-sided windows as the checker knows them, and this rank's epochs
//! on each: every rank's window size and displacement unit (gathered at
//! creation, so that an origin sees an access outside its target's
//! window), the window's own duplicate of its communicator (its fences
//! and its free are compared across ranks there), the synchronization
//! that opened an access epoch, and the operations issued and not yet
//! completed, with what their completion checks.

use crate::origin::Origin;
use crate::race::{self, Access, Epoch};
use parking_lot::{Mutex, MutexGuard};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::LazyLock;

/// An operation issued and not yet completed by a synchronization.
pub struct Issued {
    /// The routine and site that issued it.
    pub origin: Origin,
    /// Its target, a rank of the window.
    pub target: i32,
    /// Its origin buffer's bytes `(start, len)` and their checksum at
    /// the call: the application must not write them until completion.
    pub sum: Option<(usize, usize, u64)>,
    /// A get's data, which MPI writes here and the completion copies to
    /// the origin buffer's bytes `sum` names: a write of the application
    /// there in between is then told from MPI's.
    pub scratch: Option<Vec<u8>>,
    /// The origin buffer's bytes `[start, end)` (a get's, or an atomic
    /// operation's result buffer: written), which no other call may use
    /// before completion when either writes them.
    pub span: Option<(usize, usize, bool)>,
}

/// A window.
pub struct WinInfo {
    /// The checker's duplicate of the window's communicator.
    pub shadow: u64,
    /// The call that created it.
    pub origin: Origin,
    /// This rank's rank in the window.
    pub rank: i32,
    /// Each rank's window size in bytes and displacement unit, by rank of
    /// the window (a size of -1 for a dynamic window: its memory is
    /// attached later).
    pub extents: Vec<(i64, i64)>,
    /// This rank's window memory `[base, base + size)`.
    pub memory: (usize, i64),
    /// A fence came since creation or the last `MPI_MODE_NOSUCCEED`
    /// one: the window may be accessed, in the fence's epoch.
    pub fenced: bool,
    /// An operation was issued since the last fence: that fence started
    /// an active-target epoch (MPI: a fence starts one if RMA calls
    /// follow it), which only the next fence ends.
    pub fence_ops: bool,
    /// The site of the last fence.
    pub fence_ra: usize,
    /// Inside `MPI_Win_lock_all` ... `MPI_Win_unlock_all`.
    pub lock_all: bool,
    /// The targets locked by `MPI_Win_lock`.
    pub locks: Vec<i32>,
    /// Inside `MPI_Win_start` ... `MPI_Win_complete`: the start's site.
    pub started: Option<usize>,
    /// Inside `MPI_Win_post` ... `MPI_Win_wait` (or a successful
    /// `MPI_Win_test`): the post's site.
    pub posted: Option<usize>,
    /// The operations issued and not yet completed.
    pub issued: Vec<Issued>,
    /// Its ranks' fences and free went out of step (reported then): its
    /// later fences and its free are not made, which would hang.
    pub broken: bool,
    /// The fences so far: the number of the current fence epoch.
    pub fences: u64,
    /// A lock (or lock of all) taken right after a fence (no other
    /// synchronizing call between), before the next, and whether an
    /// operation followed it: the fence epoch then holds it.
    pub lock_after_fence: Option<(Origin, bool)>,
    /// This rank's synchronizing calls when the last fence returned.
    pub fence_syncs: u64,
    /// Each lock of `locks`, and whether it is shared.
    pub lock_epochs: Vec<(i32, bool)>,
    /// This rank's synchronizing calls at the window's creation: the
    /// passive-target accesses, exchanged at its free, count theirs from
    /// here.
    pub mark: u64,
    /// This rank's accesses since the last exchange (`race`).
    pub accesses: Vec<Access>,
    /// A copy of this rank's window memory at the last fence: a store
    /// of the program's own is told from MPI's writes at the next one.
    pub snapshot: Option<Vec<u8>>,
    /// A copy of this rank's window memory when it locked its own rank
    /// (or all), and the synchronizing calls then: its stores until the
    /// unlock are found by comparing.
    pub own_lock: Option<(Vec<u8>, u64, bool)>,
}

impl WinInfo {
    /// A window just created, no epoch open.
    pub fn new(shadow: u64, origin: Origin, extents: Vec<(i64, i64)>, memory: (usize, i64)) -> WinInfo {
        WinInfo {
            shadow,
            origin,
            rank: 0,
            extents,
            memory,
            fenced: false,
            fence_ops: false,
            fence_ra: 0,
            lock_all: false,
            locks: Vec::new(),
            started: None,
            posted: None,
            issued: Vec::new(),
            broken: false,
            fences: 0,
            lock_after_fence: None,
            fence_syncs: 0,
            lock_epochs: Vec::new(),
            mark: 0,
            accesses: Vec::new(),
            snapshot: None,
            own_lock: None,
        }
    }

    /// The epoch an operation to `target` issued now (`now`: this
    /// rank's synchronizing calls, `gate::syncs`) is in: a lock of it or
    /// of all, which its completion closes, else a fence's; `None` in an
    /// epoch of `MPI_Win_start` (not compared).
    pub fn epoch_to(&self, target: i32, now: u64) -> Option<Epoch> {
        let lock = self.lock_epochs.iter().find(|l| l.0 == target);
        if lock.is_some() || self.lock_all {
            return Some(Epoch::Passive {
                shared: lock.is_none_or(|l| l.1),
                opened: now,
                closed: None,
            });
        }
        (self.fenced && self.started.is_none()).then_some(Epoch::Fence(self.fences))
    }

    /// The epoch of this rank's own use of its window memory now (`now`
    /// as for [`WinInfo::epoch_to`]): the fence's, else a passive-target
    /// one of its own, closed now unless it is the buffer of a one-sided
    /// operation (`pending`), which its completion closes.
    pub fn local_epoch(&self, now: u64, pending: bool) -> Option<Epoch> {
        if self.started.is_some() || self.posted.is_some() {
            return None;
        }
        Some(if self.fenced {
            Epoch::Fence(self.fences)
        } else {
            Epoch::Passive {
                shared: true,
                opened: now,
                closed: (!pending).then_some(now),
            }
        })
    }

    /// Notes an access of this rank's (`race::note`).
    pub fn note(&mut self, a: Access) {
        race::note(&mut self.accesses, a);
    }

    /// Completes the passive-target accesses to `target` (all: `None`)
    /// at `now` (an unlock, a flush), and the pending operations' uses of
    /// this rank's window memory as their buffers.
    pub fn close_passive(&mut self, target: Option<i32>, now: u64) {
        for a in &mut self.accesses {
            if let Epoch::Passive { closed: c @ None, .. } = &mut a.epoch {
                if a.local || target.is_none_or(|t| t == a.target) {
                    *c = Some(now);
                }
            }
        }
    }

    /// Notes this rank's stores into its window memory between `then`
    /// (a copy taken when its passive-target epoch opened at `opened`,
    /// shared or not) and `now` (the memory, at `closed`): the changed
    /// bytes, of which the exchange takes out those MPI wrote. Only when
    /// no synchronizing call came between: a store's moment is not
    /// known, and a call in the epoch may order it with another rank.
    pub fn stores(&mut self, then: &[u8], now: &[u8], (opened, closed, shared): (u64, u64, bool)) {
        if opened != closed {
            return;
        }
        for range in race::changed(then, now) {
            self.note(Access {
                target: self.rank,
                range,
                kind: race::Kind::Write,
                local: true,
                epoch: Epoch::Passive {
                    shared,
                    opened,
                    closed: Some(closed),
                },
                routine: usize::MAX,
                ra: 0,
                sum: None,
            });
        }
    }

    /// The bytes `[start, end)` of this rank's window memory that
    /// `span` covers, as offsets; `None` outside it.
    pub fn offsets(&self, span: (usize, usize)) -> Option<(i64, i64)> {
        let (base, size) = self.memory;
        let end = base.checked_add(usize::try_from(size).ok()?)?;
        if size <= 0 || span.1 <= base || end <= span.0 {
            return None;
        }
        let s = span.0.max(base) - base;
        let e = span.1.min(end) - base;
        Some((s as i64, e as i64))
    }

    /// Whether an access epoch to `target` is open: a fence, a lock of
    /// it or of all, or `MPI_Win_start`.
    pub fn may_access(&self, target: i32) -> bool {
        self.fenced || self.lock_all || self.started.is_some() || self.locks.contains(&target)
    }

    /// Whether the last fence started an active-target epoch (an
    /// operation followed it) that no fence ended yet: a passive-target
    /// epoch may not start in it. A fence that no operation follows
    /// starts none, so a lock right after it is legal.
    pub fn in_fence_epoch(&self) -> bool {
        self.fenced && self.fence_ops
    }

    /// The epochs still open on the window (passive-target locks, an
    /// access or exposure epoch of `MPI_Win_start` or `MPI_Win_post`),
    /// named for a report, their sites by `site`; none: empty.
    pub fn open_epochs(&self, site: impl Fn(usize) -> String) -> Vec<String> {
        let mut open = Vec::new();
        if self.lock_all {
            open.push("the lock of all ranks (MPI_Win_lock_all)".to_string());
        }
        if !self.locks.is_empty() {
            let ranks: Vec<String> = self.locks.iter().map(i32::to_string).collect();
            open.push(format!("the lock of rank(s) {} (MPI_Win_lock)", ranks.join(", ")));
        }
        if let Some(ra) = self.started {
            open.push(format!("the access epoch of MPI_Win_start at {}", site(ra)));
        }
        if let Some(ra) = self.posted {
            open.push(format!("the exposure epoch of MPI_Win_post at {}", site(ra)));
        }
        open
    }

    /// A fence, with `MPI_MODE_NOSUCCEED` or not, at `ra`.
    pub fn fence(&mut self, nosucceed: bool, ra: usize) {
        self.fences += 1;
        self.lock_after_fence = None;
        self.fenced = !nosucceed;
        self.fence_ops = false;
        self.fence_ra = ra;
    }

    /// An operation was issued to `target`: one made in no other epoch
    /// (a lock of the target or of all, `MPI_Win_start`) after a fence
    /// is in the fence's epoch, which the fence then started.
    pub fn operation(&mut self, target: i32) {
        let other = self.lock_all || self.started.is_some() || self.locks.contains(&target);
        if self.fenced && !other {
            self.fence_ops = true;
        }
        if let Some((_, ops)) = &mut self.lock_after_fence {
            *ops = true;
        }
    }

    /// Takes the operations to `target` (all: `None`) out of the list:
    /// a synchronization completed them.
    pub fn complete(&mut self, target: Option<i32>) -> Vec<Issued> {
        let (done, left) = std::mem::take(&mut self.issued)
            .into_iter()
            .partition(|op| target.is_none_or(|t| t == op.target));
        self.issued = left;
        done
    }

    /// Whether an access of `bytes` bytes from displacement `disp` of
    /// `target`'s window (`lb` the true lower bound of the target
    /// datatype, in bytes) stays inside it; `None` if the window's size
    /// is not known (a dynamic window) or the access fits, else the
    /// window's size in bytes.
    pub fn outside(&self, target: i32, disp: i64, lb: i64, bytes: i64) -> Option<i64> {
        let &(size, unit) = self.extents.get(usize::try_from(target).ok()?)?;
        if size < 0 {
            return None;
        }
        let start = disp.checked_mul(unit)?.checked_add(lb)?;
        let end = start.checked_add(bytes)?;
        (start < 0 || end > size).then_some(size)
    }
}

/// The most bytes of origin buffers that the operations not yet
/// completed may hold checked (their checksums' bytes, and the gets'
/// scratch copies): an operation past it is not checked, so that a
/// program issuing many large operations in one epoch keeps its memory.
const BUDGET: usize = 32 << 20;

static HELD: AtomicUsize = AtomicUsize::new(0);

/// Takes `len` bytes of the budget, if they fit.
pub fn reserve(len: usize) -> bool {
    HELD.fetch_update(Relaxed, Relaxed, |held| {
        held.checked_add(len).filter(|&h| h <= BUDGET)
    })
    .is_ok()
}

/// Gives back `len` bytes taken by [`reserve`].
pub fn release(len: usize) {
    HELD.fetch_sub(len, Relaxed);
}

/// Windows by handle: few, and looked up by one-sided calls only.
static WINDOWS: LazyLock<Mutex<HashMap<u64, WinInfo>>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// The windows, locked. Never held across a blocking MPI call.
pub fn lock() -> MutexGuard<'static, HashMap<u64, WinInfo>> {
    WINDOWS.lock()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window() -> WinInfo {
        WinInfo::new(0, Origin::default(), vec![(40, 1), (40, 4)], (0, 40))
    }

    #[test]
    fn an_access_needs_an_epoch() {
        let mut w = window();
        assert!(!w.may_access(1));
        w.locks.push(1);
        assert!(w.may_access(1) && !w.may_access(0));
        w.locks.clear();
        w.fence(false, 0);
        assert!(
            w.may_access(0) && !w.in_fence_epoch(),
            "no operation followed the fence"
        );
        w.operation(0);
        assert!(w.in_fence_epoch());
        w.fence(false, 0);
        assert!(w.may_access(0) && !w.in_fence_epoch());
        w.locks.push(1);
        w.operation(1);
        assert!(!w.in_fence_epoch(), "in the lock's epoch, not the fence's");
        w.locks.clear();
        w.operation(0);
        w.fence(true, 0);
        assert!(!w.may_access(0) && !w.in_fence_epoch());
        w.operation(0);
        assert!(!w.in_fence_epoch(), "outside any fence's epoch");
    }

    #[test]
    fn the_open_epochs_are_named_with_their_sites() {
        let mut w = window();
        let site = |ra: usize| format!("{ra:#x}");
        assert!(w.open_epochs(site).is_empty());
        w.locks.extend([1, 0]);
        w.started = Some(0x10);
        w.posted = Some(0x20);
        assert_eq!(
            w.open_epochs(site),
            [
                "the lock of rank(s) 1, 0 (MPI_Win_lock)",
                "the access epoch of MPI_Win_start at 0x10",
                "the exposure epoch of MPI_Win_post at 0x20"
            ]
        );
        w.locks.clear();
        w.started = None;
        w.posted = None;
        w.lock_all = true;
        assert_eq!(w.open_epochs(site), ["the lock of all ranks (MPI_Win_lock_all)"]);
    }

    #[test]
    fn accesses_stay_inside_the_target_window() {
        let w = window();
        assert_eq!(w.outside(0, 0, 0, 40), None);
        assert_eq!(w.outside(0, 5, 0, 40), Some(40));
        assert_eq!(w.outside(1, 3, 0, 32), Some(40));
        assert_eq!(w.outside(1, 2, 0, 32), None);
        assert_eq!(w.outside(1, 2, 4, 32), Some(40));
        assert_eq!(w.outside(0, -1, 0, 4), Some(40));
        assert_eq!(w.outside(2, 0, 0, 4), None);
        let dynamic = WinInfo::new(0, Origin::default(), vec![(-1, 1)], (0, 0));
        assert_eq!(dynamic.outside(0, 1 << 40, 0, 4), None);
    }

    #[test]
    fn accesses_are_noted_in_their_epoch_and_completed() {
        let mut w = window();
        w.memory = (1000, 40);
        w.rank = 1;
        assert_eq!(w.epoch_to(0, 3), None, "no epoch");
        w.fence(false, 0);
        assert_eq!(w.epoch_to(0, 3), Some(Epoch::Fence(1)));
        assert_eq!(w.local_epoch(3, false), Some(Epoch::Fence(1)));
        w.fence(true, 0);
        w.lock_epochs.push((0, false));
        let open = Epoch::Passive {
            shared: false,
            opened: 5,
            closed: None,
        };
        assert_eq!(w.epoch_to(0, 5), Some(open));
        let access = |target, local, epoch| Access {
            target,
            range: (0, 4),
            kind: race::Kind::Write,
            local,
            epoch,
            routine: 0,
            ra: target as usize,
            sum: None,
        };
        w.note(access(0, false, open));
        w.note(access(1, true, w.local_epoch(6, true).unwrap()));
        w.note(access(
            2,
            false,
            Epoch::Passive {
                shared: true,
                opened: 6,
                closed: None,
            },
        ));
        w.close_passive(Some(0), 9);
        let closed: Vec<_> = w
            .accesses
            .iter()
            .map(|a| match a.epoch {
                Epoch::Passive { closed, .. } => closed,
                Epoch::Fence(_) => None,
            })
            .collect();
        assert_eq!(
            closed,
            [Some(9), Some(9), None],
            "the target's and this rank's buffers"
        );
        assert_eq!(w.offsets((990, 1004)), Some((0, 4)));
        assert_eq!(w.offsets((1036, 1100)), Some((36, 40)));
        assert_eq!(w.offsets((1040, 1100)), None);
    }

    #[test]
    fn stores_are_noted_only_without_a_call_between() {
        let mut w = window();
        let (then, mut now) = ([0u8; 16], [0u8; 16]);
        now[4] = 1;
        w.stores(&then, &now, (2, 3, true));
        assert!(w.accesses.is_empty(), "a call came between");
        w.stores(&then, &now, (3, 3, true));
        assert_eq!(w.accesses.len(), 1);
        assert_eq!((w.accesses[0].range, w.accesses[0].routine), ((4, 5), usize::MAX));
    }

    #[test]
    fn the_budget_bounds_the_bytes_checked() {
        assert!(reserve(BUDGET));
        assert!(!reserve(1));
        release(BUDGET);
        assert!(reserve(1));
        release(1);
    }

    #[test]
    fn a_synchronization_completes_its_targets_operations() {
        let mut w = window();
        for target in [0, 1, 1] {
            w.issued.push(Issued {
                origin: Origin::default(),
                target,
                sum: None,
                scratch: None,
                span: None,
            });
        }
        assert_eq!(w.complete(Some(1)).len(), 2);
        assert_eq!(w.complete(None).len(), 1);
        assert!(w.issued.is_empty());
    }
}
