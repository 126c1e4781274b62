//! The order in which a trace's ranks held each target's lock of each
//! window, read from the whole trace before a replay: the replay hands
//! each lock over in that order ([`crate::kernel::rma::handoff`]), as it
//! matches a wildcard receive with the source the trace recorded.
//!
//! Holders of one target's lock are ordered by the end of their
//! `MPI_Win_unlock` (or `_unlock_all`) on the trace's clock. An exclusive
//! holder's epoch lies between its predecessors' releases and its
//! successors' grants, so this is the order the run granted them in, and
//! a shared holder falls between the exclusive holders it came between.
//! An exclusive lock waits for every holder since the last exclusive one
//! (the shared ones after it, or that exclusive one itself); a shared
//! lock waits for the last exclusive one. A target no exclusive lock ever
//! named has no order to keep.

use super::events::EventSource;
use pnmpi_trace::fields::V;
use pnmpi_trace::rma::{RmaRole, LOCK_EXCLUSIVE};
use pnmpi_trace::trace::Event;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// A lock passing between two holders of a target's lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handover {
    /// World rank of the lock's target.
    pub target: u32,
    /// World rank of the holder it comes from (a lock's) or goes to (an
    /// unlock's).
    pub peer: u32,
}

/// One stream's lock calls, in its order: whom each `MPI_Win_lock` or
/// `_lock_all` waits for, and whom each `MPI_Win_unlock` or
/// `_unlock_all` hands the lock to.
#[derive(Debug, Default)]
pub struct LockTurns {
    locks: VecDeque<Box<[Handover]>>,
    unlocks: VecDeque<Box<[Handover]>>,
}

impl LockTurns {
    /// The stream's next lock call's predecessors.
    pub fn next_lock(&mut self) -> Box<[Handover]> {
        self.locks.pop_front().unwrap_or_default()
    }

    /// The stream's next unlock call's successors.
    pub fn next_unlock(&mut self) -> Box<[Handover]> {
        self.unlocks.pop_front().unwrap_or_default()
    }
}

/// One holding of one target's lock.
struct Holding {
    stream: usize,
    rank: u32,
    exclusive: bool,
    /// The end of the unlock that released it, on the trace's clock.
    released: Option<u64>,
}

/// A holding: its (window, target) and its index in their list.
type HoldingRef = ((u32, u32), usize);

/// Per stream, per lock or unlock call, the holdings it opened or closed.
type Calls = Vec<Vec<Vec<HoldingRef>>>;

/// The routines' roles that a lock order reads.
#[derive(Clone, Copy, PartialEq)]
enum Role {
    Lock,
    LockAll,
    Unlock,
    UnlockAll,
}

/// Whether a source of routines `names` may have lock calls to order (a
/// tracer folder's reader learns its windows as it reads).
pub fn needed(names: &[String]) -> bool {
    names.iter().any(|n| role(n).is_some())
}

fn role(name: &str) -> Option<Role> {
    Some(match RmaRole::of(name)? {
        RmaRole::Lock => Role::Lock,
        RmaRole::LockAll => Role::LockAll,
        RmaRole::Unlock => Role::Unlock,
        RmaRole::UnlockAll => Role::UnlockAll,
        _ => return None,
    })
}

/// Reads every stream of `src` and gives each its [`LockTurns`], by
/// stream.
pub fn scan(src: &mut dyn EventSource) -> pnmpi_trace::Result<Vec<LockTurns>> {
    let roles: Vec<Option<Role>> = src.routines().iter().map(|n| role(n)).collect();
    let streams = src.streams();
    // Per (window, target): its holdings, in the trace's order of calls.
    let mut holdings: FxHashMap<(u32, u32), Vec<Holding>> = FxHashMap::default();
    // Per stream and call: the holdings (key, index) it opened or closed.
    let mut locks: Calls = Vec::with_capacity(streams.len());
    let mut unlocks: Calls = Vec::with_capacity(streams.len());
    let mut ev = Event::default();
    for (si, info) in streams.iter().enumerate() {
        let (mut own_locks, mut own_unlocks) = (Vec::new(), Vec::new());
        let mut open: FxHashMap<(u32, u32), usize> = FxHashMap::default();
        while src.next(si, &mut ev)? {
            let Some(role) = roles.get(ev.routine as usize).copied().flatten() else {
                continue;
            };
            let Some(win) = ev.get(V::Win).and_then(|w| u32::try_from(w).ok()) else {
                continue;
            };
            // A folder's reader knows the windows its events created so far.
            let Some(group) = src.wins().get(win as usize) else {
                continue;
            };
            let targets: Vec<u32> = match role {
                Role::Lock | Role::Unlock => ev
                    .get(V::Peer)
                    .and_then(|p| u32::try_from(p).ok())
                    .into_iter()
                    .collect(),
                Role::LockAll | Role::UnlockAll => group
                    .members
                    .iter()
                    .filter_map(|&m| u32::try_from(m).ok())
                    .collect(),
            };
            let mut call = Vec::with_capacity(targets.len());
            for t in targets {
                let key = (win, t);
                match role {
                    Role::Lock | Role::LockAll => {
                        let list = holdings.entry(key).or_default();
                        open.insert(key, list.len());
                        call.push((key, list.len()));
                        list.push(Holding {
                            stream: si,
                            rank: info.rank,
                            exclusive: role == Role::Lock && ev.get(V::Lock) == Some(LOCK_EXCLUSIVE),
                            released: None,
                        });
                    }
                    Role::Unlock | Role::UnlockAll => {
                        if let Some(i) = open.remove(&key) {
                            holdings.get_mut(&key).expect("an open holding's list")[i].released =
                                Some(ev.end);
                            call.push((key, i));
                        }
                    }
                }
            }
            match role {
                Role::Lock | Role::LockAll => own_locks.push(call),
                Role::Unlock | Role::UnlockAll => own_unlocks.push(call),
            }
        }
        locks.push(own_locks);
        unlocks.push(own_unlocks);
    }
    // Per (window, target) and holding: whom it waits for, whom it hands to.
    let mut waits: FxHashMap<HoldingRef, Vec<u32>> = FxHashMap::default();
    let mut hands: FxHashMap<HoldingRef, Vec<u32>> = FxHashMap::default();
    for (&key, list) in &holdings {
        if !list.iter().any(|h| h.exclusive) {
            continue;
        }
        let mut order: Vec<usize> = (0..list.len()).filter(|&i| list[i].released.is_some()).collect();
        order.sort_by_key(|&i| (list[i].released, list[i].stream));
        // The last exclusive holding, and the shared ones since.
        let mut last_exclusive: Option<usize> = None;
        let mut shared: Vec<usize> = Vec::new();
        for &i in &order {
            let before: Vec<usize> = if list[i].exclusive && !shared.is_empty() {
                std::mem::take(&mut shared)
            } else {
                last_exclusive.into_iter().collect()
            };
            for &b in &before {
                waits.entry((key, i)).or_default().push(list[b].rank);
                hands.entry((key, b)).or_default().push(list[i].rank);
            }
            if list[i].exclusive {
                last_exclusive = Some(i);
            } else {
                shared.push(i);
            }
        }
    }
    let turns = |calls: Vec<Vec<HoldingRef>>, peers: &FxHashMap<HoldingRef, Vec<u32>>| {
        calls
            .into_iter()
            .map(|call| {
                call.iter()
                    .flat_map(|&(key, i)| {
                        let target = key.1;
                        peers
                            .get(&(key, i))
                            .into_iter()
                            .flatten()
                            .map(move |&peer| Handover { target, peer })
                    })
                    .collect()
            })
            .collect()
    };
    Ok(locks
        .into_iter()
        .zip(unlocks)
        .map(|(l, u)| LockTurns {
            locks: turns(l, &waits),
            unlocks: turns(u, &hands),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::events::MemorySource;
    use pnmpi_trace::rma::{Win, WinKind, LOCK_SHARED};
    use pnmpi_trace::trace::{Stream, Trace};

    /// A lock of world rank `target` (`kind` its type, `None` the `_all`
    /// form) by a rank, from `start`, released at `released`.
    fn epoch(target: Option<i64>, kind: i64, start: u64, released: u64) -> [Event; 2] {
        let (lock, unlock) = if target.is_some() { (0, 1) } else { (2, 3) };
        let mut l = Event {
            routine: lock,
            start,
            end: start + 1,
            ..Event::default()
        };
        l.set(V::Win, Some(0));
        l.set(V::Peer, target);
        l.set(V::Lock, target.map(|_| kind));
        let mut u = Event {
            routine: unlock,
            start: released - 1,
            end: released,
            ..Event::default()
        };
        u.set(V::Win, Some(0));
        u.set(V::Peer, target);
        [l, u]
    }

    fn turns(streams: Vec<Vec<Event>>) -> Vec<LockTurns> {
        let trace = Trace {
            world_size: streams.len() as u32,
            routines: [
                "MPI_Win_lock",
                "MPI_Win_unlock",
                "MPI_Win_lock_all",
                "MPI_Win_unlock_all",
            ]
            .map(String::from)
            .to_vec(),
            streams: (0..)
                .zip(streams)
                .map(|(rank, events)| Stream {
                    rank,
                    thread: 0,
                    events,
                })
                .collect(),
            wins: vec![Win {
                kind: WinKind::Allocate,
                comm: 0,
                members: vec![0, 1, 2],
            }],
            ..Trace::default()
        };
        scan(&mut MemorySource::new(trace)).expect("an in-memory trace")
    }

    fn h(target: u32, peer: u32) -> Handover {
        Handover { target, peer }
    }

    #[test]
    fn holders_are_handed_the_lock_in_the_order_they_released_it() {
        const X: i64 = LOCK_EXCLUSIVE;
        // Rank 1 holds target 0 exclusively twice, ranks 2 and 0 share it
        // in between; rank 0 also holds every target shared, before all.
        let mut t = turns(vec![
            [
                epoch(None, LOCK_SHARED, 10, 20),
                epoch(Some(0), LOCK_SHARED, 200, 260),
            ]
            .concat(),
            [epoch(Some(0), X, 30, 100), epoch(Some(0), X, 110, 300)].concat(),
            epoch(Some(0), LOCK_SHARED, 120, 250).to_vec(),
        ]);
        // Rank 0's lock_all waits for nobody and hands target 0 to rank
        // 1's first exclusive lock (targets 1 and 2 were never locked
        // exclusively: no order to keep).
        assert!(t[0].next_lock().is_empty());
        assert_eq!(*t[0].next_unlock(), [h(0, 1)]);
        assert_eq!(*t[1].next_lock(), [h(0, 0)]);
        // The shared holders after it wait for it; its release goes to both.
        assert_eq!(*t[1].next_unlock(), [h(0, 2), h(0, 0)]);
        assert_eq!(*t[2].next_lock(), [h(0, 1)]);
        assert_eq!(*t[0].next_lock(), [h(0, 1)]);
        // The second exclusive lock waits for both shared holders.
        assert_eq!(*t[1].next_lock(), [h(0, 2), h(0, 0)]);
        assert_eq!(*t[2].next_unlock(), [h(0, 1)]);
        assert_eq!(*t[0].next_unlock(), [h(0, 1)]);
        assert!(t[1].next_unlock().is_empty(), "the last holder hands to nobody");
    }
}
