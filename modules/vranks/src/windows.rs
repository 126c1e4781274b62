//! One-sided windows of the virtual ranks: what each window is (its
//! members, each one's memory, its own communicator for fences and
//! notifications), each member's epochs on it, and each target's lock.
//! Pure bookkeeping; the API layer (`api::rma`) moves the data and asks
//! the kernel's one-sided rule (`pnmpi_sim::kernel::rma`) for the times,
//! as the replay and vtime do.
//!
//! A window is made by the `k`-th creation call of its members on one
//! communicator: the first member to call makes it, the others join it
//! ([`Windows::join`]), and the creation's synchronization (a barrier
//! of the window's communicator) lets every member see all the others'
//! memory before its call returns.
//!
//! A lock is granted in the order the ranks ask for it, in virtual time
//! (the API layer lets the simulation catch up before asking): a
//! compatible request is granted at once, an incompatible one waits in
//! line until the holders release it. When it is granted, the lock's
//! clocks say what the kernel's hand-over waits for, as the replay reads
//! the holders' order from its trace and vtime from its shadow window
//! ([`Lock::released_for`]).

use crate::one_sided::{LockEvent, Record};
use pnmpi_mpi_sys::ffi::{MPI_Aint, MPI_Datatype};
use pnmpi_sim::kernel::rma::Pending;
use pnmpi_sim::units::Ns;
use pnmpi_trace::rma::WinKind;
use slab::Slab;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::ffi::{c_int, c_void};

/// A member's memory in a window: `size` bytes at `base`, addressed in
/// units of `disp_unit`; a dynamic window's member has its attached
/// regions instead (addressed by absolute address).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Region {
    pub base: usize,
    pub size: usize,
    pub disp_unit: usize,
}

/// Memory a window owns (`MPI_Win_allocate`, `_allocate_shared`), in
/// 16-byte units so that any MPI datatype is aligned in it.
pub type Owned = Box<[u128]>;

/// A fresh, zeroed block of at least `bytes` (one unit for 0 bytes, so
/// that the base is a real address).
pub fn allocate(bytes: usize) -> Owned {
    vec![0u128; bytes.div_ceil(16).max(1)].into_boxed_slice()
}

/// The attributes MPI predefines on a window, one member's:
/// `MPI_Win_get_attr` hands out pointers to them, so they live (boxed)
/// as long as the window does.
#[derive(Debug)]
pub struct Attributes {
    pub base: *mut c_void,
    pub size: MPI_Aint,
    pub disp_unit: c_int,
    pub flavor: c_int,
    pub model: c_int,
}

/// One member's epochs on a window.
#[derive(Debug, Default)]
pub struct Epochs {
    /// Its operations no call has completed yet, by target (world rank).
    pub pending: Pending,
    /// The origins of its last `MPI_Win_post` (window ranks).
    pub posted: Vec<u32>,
    /// The targets of its last `MPI_Win_start` (window ranks).
    pub started: Vec<u32>,
    /// The locks it holds, by target (window rank): whether exclusive.
    pub held: HashMap<u32, bool>,
    /// Its operations whose data moves as flows over shared links (their
    /// done time not known yet): target (world rank) and the request
    /// their last flow's end completes.
    pub flowing: Vec<(u32, usize)>,
}

impl Epochs {
    /// The requests of its flowing operations to `target` (`None`: to
    /// every target), which the closing call waits for.
    pub fn take_flowing(&mut self, target: Option<u32>) -> Vec<usize> {
        let (taken, kept) = std::mem::take(&mut self.flowing)
            .into_iter()
            .partition(|&(t, _)| target.is_none_or(|want| want == t));
        self.flowing = kept;
        taken.into_iter().map(|(_, q)| q).collect()
    }
}

/// A target's lock.
#[derive(Debug)]
pub struct Lock {
    /// The holders (world ranks) and whether each holds it exclusively.
    holders: Vec<(u32, bool)>,
    /// Those who asked while it was held incompatibly, in order.
    waiting: VecDeque<(u32, bool)>,
    /// When its last exclusive holder released it, and the latest of
    /// its shared holders (`-inf`: none yet).
    exclusive_release: Ns,
    shared_release: Ns,
}

impl Default for Lock {
    fn default() -> Lock {
        Lock {
            holders: Vec::new(),
            waiting: VecDeque::new(),
            exclusive_release: f64::NEG_INFINITY,
            shared_release: f64::NEG_INFINITY,
        }
    }
}

impl Lock {
    /// Whether a request of this kind can be granted beside the holders.
    fn fits(&self, exclusive: bool) -> bool {
        if exclusive {
            self.holders.is_empty()
        } else {
            self.holders.iter().all(|&(_, x)| !x)
        }
    }

    /// `origin` asks for the lock: granted at once (`true`) if it fits
    /// beside the holders and nobody waits before it, else it waits in
    /// line (`false`) until [`Lock::release`] grants it.
    pub fn ask(&mut self, origin: u32, exclusive: bool) -> bool {
        if self.waiting.is_empty() && self.fits(exclusive) {
            self.holders.push((origin, exclusive));
            true
        } else {
            self.waiting.push_back((origin, exclusive));
            false
        }
    }

    /// The release a holder granted now waits for, by the kernel's rule:
    /// an exclusive lock for every holder before it, a shared lock for
    /// the last exclusive one (`-inf`: nobody hands it over).
    pub fn released_for(&self, exclusive: bool) -> Ns {
        if exclusive {
            self.exclusive_release.max(self.shared_release)
        } else {
            self.exclusive_release
        }
    }

    /// `origin` releases the lock at `at`: returns those it is granted
    /// to now (world ranks, and whether exclusively), in line order,
    /// while they fit.
    pub fn release(&mut self, origin: u32, at: Ns) -> Vec<(u32, bool)> {
        if let Some(i) = self.holders.iter().position(|&(o, _)| o == origin) {
            let (_, exclusive) = self.holders.remove(i);
            let clock = if exclusive {
                &mut self.exclusive_release
            } else {
                &mut self.shared_release
            };
            *clock = clock.max(at);
        }
        let mut granted = Vec::new();
        while let Some(&(o, x)) = self.waiting.front() {
            if !self.fits(x) {
                break;
            }
            self.waiting.pop_front();
            self.holders.push((o, x));
            granted.push((o, x));
        }
        granted
    }
}

/// A window.
pub struct Window {
    pub kind: WinKind,
    /// Its own communicator (a private duplicate of the one it was made
    /// over: its fences' barriers and its notifications).
    pub comm: usize,
    /// Its members as world ranks, in window rank order.
    pub members: Vec<u32>,
    /// Each member's memory (a dynamic window's: its attached regions).
    pub regions: Vec<Vec<Region>>,
    /// Memory the window owns, freed with it.
    pub owned: Vec<Owned>,
    /// Each member's epochs.
    pub epochs: Vec<Epochs>,
    /// Each target's lock.
    pub locks: Vec<Lock>,
    /// Each member's predefined attributes, once asked for.
    pub attrs: Vec<Option<Box<Attributes>>>,
    /// Its members in this process; those that made or joined it, and
    /// that freed it.
    pub local: u32,
    pub joined: u32,
    pub freed: u32,
}

impl Window {
    /// Whether its ranks run in several processes.
    pub fn spread(&self) -> bool {
        (self.local as usize) < self.members.len()
    }

    /// The address of `bytes` at displacement `disp` of window rank
    /// `target`'s memory (a dynamic window's displacement is an
    /// address), or why it lies outside.
    pub fn address(&self, target: u32, disp: i64, bytes: usize) -> Result<usize, String> {
        let regions = &self.regions[target as usize];
        let dynamic = self.kind == WinKind::Dynamic;
        let inside = |r: &Region| -> Option<usize> {
            let off = if dynamic {
                (disp as i128) - r.base as i128
            } else {
                (disp as i128) * r.disp_unit as i128
            };
            (off >= 0 && off as u128 + bytes as u128 <= r.size as u128).then(|| r.base + off as usize)
        };
        regions.iter().find_map(inside).ok_or_else(|| {
            let what = if dynamic {
                format!("address {disp:#x}")
            } else {
                format!("displacement {disp}")
            };
            format!(
                "{bytes} bytes at {what} lie outside window rank {target}'s memory ({})",
                describe(regions, dynamic)
            )
        })
    }
}

/// A member's memory, for an error message.
fn describe(regions: &[Region], dynamic: bool) -> String {
    if regions.is_empty() {
        return if dynamic {
            "nothing attached".into()
        } else {
            "0 bytes".into()
        };
    }
    regions
        .iter()
        .map(|r| {
            if dynamic {
                format!("{} bytes at {:#x}", r.size, r.base)
            } else {
                format!("{} bytes in units of {}", r.size, r.disp_unit)
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Allocates a shared window's one block and places each member's part
/// in it, in rank order.
fn place_shared(w: &mut Window) {
    let total = w.regions.iter().flatten().map(|r| r.size).sum();
    let block = allocate(total);
    let mut at = block.as_ptr() as usize;
    for r in w.regions.iter_mut().flatten() {
        r.base = at;
        at += r.size;
    }
    w.owned.push(block);
}

/// A fetching operation to another process's rank, until its data comes
/// back: where it goes (`count` elements of `dt` at `buf`, rank `rank`'s
/// memory), and the requests its arrival completes, with their times.
pub struct Fetch {
    pub rank: u32,
    pub buf: usize,
    pub count: c_int,
    pub dt: MPI_Datatype,
    pub done: (usize, Ns),
    pub local: Option<(usize, Ns)>,
}

/// A lock granted to a rank here by the events of several processes:
/// when (the event that granted it), and the release its hand-over waits
/// for ([`Lock::released_for`] then).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Grant {
    pub at: Ns,
    pub released: Ns,
}

/// A lock event waiting to be applied, ordered as they are applied: by
/// virtual time (times are never negative, so their bits order them),
/// then origin, then the origin's order (which makes every key unique).
#[derive(Debug)]
struct Queued(LockEvent);

impl Queued {
    fn key(&self) -> (u64, u32, u64) {
        (self.0.at.to_bits(), self.0.origin, self.0.seq)
    }
}

impl PartialEq for Queued {
    fn eq(&self, other: &Queued) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Queued {}

impl PartialOrd for Queued {
    fn partial_cmp(&self, other: &Queued) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Queued {
    fn cmp(&self, other: &Queued) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

/// Every window of this process's ranks.
#[derive(Default)]
pub struct Windows {
    wins: Slab<Window>,
    /// Windows by their communicator's global id.
    by_gid: HashMap<u64, usize>,
    /// What this process owes others: stamp, process, record.
    out: Vec<(u64, u32, Record)>,
    /// Fetches waiting for their data, by token; the next token.
    fetches: HashMap<u64, Fetch>,
    tokens: u64,
    /// Lock events not applied yet, of windows within this process and
    /// of windows across processes, earliest first; the next event's
    /// number.
    events: [BinaryHeap<Reverse<Queued>>; 2],
    seq: u64,
    /// Locks granted to ranks here, by window, origin and target.
    granted: HashMap<(usize, u32, u32), Grant>,
    /// How many windows each rank made on each communicator (world rank,
    /// communicator index).
    made: HashMap<(u32, usize), u32>,
    /// Windows some members have not joined yet: by communicator and
    /// number.
    making: HashMap<(usize, u32), usize>,
}

/// What [`Windows::join`] found.
pub struct Joined {
    /// The window's index (its handle's).
    pub win: usize,
    /// Its number among its communicator's windows (the same for every
    /// member), when this member made it (it must give it its own
    /// communicator, [`Windows::set_comm`]).
    pub made: Option<u32>,
}

impl Windows {
    /// Window `w`, if live.
    pub fn get(&self, w: usize) -> Option<&Window> {
        self.wins.get(w)
    }

    /// Window `w`, to change, if live.
    pub fn get_mut(&mut self, w: usize) -> Option<&mut Window> {
        self.wins.get_mut(w)
    }

    /// The window world rank `me`'s next creation on communicator
    /// `parent` joins, if another member made it already.
    pub fn joins(&self, parent: usize, me: u32) -> Option<usize> {
        let number = self.made.get(&(me, parent)).copied().unwrap_or(0);
        self.making.get(&(parent, number)).copied()
    }

    /// World rank `me`, whose rank in communicator `parent` is `rank`,
    /// makes its next window of `kind` there with `region` (memory the
    /// window allocated for it: `owned`): the window it makes (of
    /// `members`, world ranks in order, given when [`Windows::joins`]
    /// finds none) or joins. A shared window's memory is one block, each
    /// member's part after the one before, allocated once the last member
    /// gave its size.
    pub fn join(
        &mut self,
        parent: usize,
        members: Option<(&[u32], u32)>,
        me: u32,
        rank: u32,
        (kind, region, owned): (WinKind, Option<Region>, Option<Owned>),
    ) -> Joined {
        let k = self.made.entry((me, parent)).or_insert(0);
        let number = *k;
        *k += 1;
        let (win, made) = match (self.making.get(&(parent, number)), members) {
            (Some(&w), _) => (w, None),
            (None, members) => {
                let (members, local) = members.expect("the maker lists the group");
                let members = members.to_vec();
                let n = members.len();
                let w = self.wins.insert(Window {
                    kind,
                    comm: 0,
                    members,
                    regions: vec![Vec::new(); n],
                    owned: Vec::new(),
                    epochs: (0..n).map(|_| Epochs::default()).collect(),
                    locks: (0..n).map(|_| Lock::default()).collect(),
                    attrs: (0..n).map(|_| None).collect(),
                    local,
                    joined: 0,
                    freed: 0,
                });
                self.making.insert((parent, number), w);
                (w, Some(number))
            }
        };
        let w = &mut self.wins[win];
        if let Some(r) = region {
            w.regions[rank as usize].push(r);
        }
        w.owned.extend(owned);
        w.joined += 1;
        if w.joined == w.local {
            self.making.remove(&(parent, number));
            if w.kind == WinKind::AllocateShared {
                place_shared(w);
            }
        }
        Joined { win, made }
    }

    /// Gives window `w` its own communicator, known to every process as
    /// `gid`.
    pub fn set_comm(&mut self, w: usize, comm: usize, gid: u64) {
        self.wins[w].comm = comm;
        self.by_gid.insert(gid, w);
    }

    /// The window whose communicator every process calls `gid`.
    pub fn by_gid(&self, gid: u64) -> Option<usize> {
        self.by_gid.get(&gid).copied()
    }

    /// One member freed window `w`; the last one here removes it (and its
    /// memory) and returns it.
    pub fn free(&mut self, w: usize) -> Option<Window> {
        let win = &mut self.wins[w];
        win.freed += 1;
        if win.freed < win.local {
            return None;
        }
        self.by_gid.retain(|_, &mut i| i != w);
        Some(self.wins.remove(w))
    }

    /// Owes process `to` `record`, ordered by `stamp` among what every
    /// layer owes.
    pub fn owe(&mut self, stamp: u64, to: u32, record: Record) {
        self.out.push((stamp, to, record));
    }

    /// What this process owes others since last asked.
    pub fn take_remote(&mut self) -> Vec<(u64, u32, Record)> {
        std::mem::take(&mut self.out)
    }

    /// Keeps `f` until its data comes back: returns its token.
    pub fn fetching(&mut self, f: Fetch) -> u64 {
        self.tokens += 1;
        self.fetches.insert(self.tokens, f);
        self.tokens
    }

    /// The fetch of `token`, its data come back.
    pub fn fetched(&mut self, token: u64) -> Option<Fetch> {
        self.fetches.remove(&token)
    }

    /// A lock event of a rank here on window `gid`, at `at`: numbered,
    /// kept to apply, and returned to send to the window's other
    /// processes.
    pub fn lock_event(
        &mut self,
        gid: u64,
        at: Ns,
        (origin, target): (u32, u32),
        ask: Option<bool>,
    ) -> LockEvent {
        self.seq += 1;
        let e = LockEvent {
            win: gid,
            at,
            origin,
            seq: self.seq,
            target,
            ask,
        };
        let spread = self.by_gid.get(&gid).is_some_and(|&w| self.wins[w].spread());
        self.events[usize::from(spread)].push(Reverse(Queued(e)));
        e
    }

    /// Another process's lock event (of a window across processes), to
    /// apply.
    pub fn lock_event_from(&mut self, e: LockEvent) {
        self.events[1].push(Reverse(Queued(e)));
    }

    /// Whether lock events of windows within this process wait.
    pub fn locks_asked(&self) -> bool {
        !self.events[0].is_empty()
    }

    /// The earliest lock event not applied yet: the simulation must
    /// reach it, though no rank's event comes then.
    pub fn earliest_event(&self) -> Option<Ns> {
        self.events
            .iter()
            .filter_map(|h| h.peek().map(|Reverse(q)| q.0.at))
            .min_by(f64::total_cmp)
    }

    /// Whether [`Windows::resolve`] would apply any event.
    pub fn due(&self, spread: bool, upto: Ns) -> bool {
        self.events[usize::from(spread)]
            .peek()
            .is_some_and(|Reverse(q)| q.0.at < upto)
    }

    /// Applies the lock events earlier than `upto` of the windows whose
    /// ranks run in several processes (`spread`) or of the others to each
    /// window's copy of its locks, in virtual-time order (ties by origin,
    /// then by the origin's order), as every process of a window does
    /// with the same events: returns the ranks granted a lock for which
    /// `here` holds (and keeps their [`Grant`]s). An event of a window
    /// freed meanwhile is dropped.
    pub fn resolve(&mut self, spread: bool, upto: Ns, here: impl Fn(u32) -> bool) -> Vec<(u32, Ns)> {
        let mut woken = Vec::new();
        while self.due(spread, upto) {
            let Some(Reverse(Queued(e))) = self.events[usize::from(spread)].pop() else {
                break;
            };
            let (at, origin) = (e.at, e.origin);
            let Some(&w) = self.by_gid.get(&e.win) else {
                continue;
            };
            let lock = &mut self.wins[w].locks[e.target as usize];
            let granted = match e.ask {
                Some(x) => {
                    if lock.ask(origin, x) {
                        vec![(origin, x)]
                    } else {
                        Vec::new()
                    }
                }
                None => lock.release(origin, at),
            };
            for (o, x) in granted {
                if here(o) {
                    let released = lock.released_for(x);
                    self.granted.insert((w, o, e.target), Grant { at, released });
                    woken.push((o, at));
                }
            }
        }
        woken
    }

    /// The grant of window `w`'s target `target` to `origin`, once
    /// [`Windows::resolve`] made it.
    pub fn take_grant(&mut self, w: usize, origin: u32, target: u32) -> Option<Grant> {
        self.granted.remove(&(w, origin, target))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exclusive_lock_waits_for_every_holder_and_is_granted_in_line_order() {
        let mut l = Lock::default();
        assert!(l.ask(1, false) && l.ask(2, false), "shared holders share it");
        assert_eq!(
            l.released_for(false),
            f64::NEG_INFINITY,
            "nobody handed it over yet"
        );
        assert!(
            !l.ask(3, true),
            "an exclusive request waits for the shared holders"
        );
        assert!(!l.ask(4, false), "a shared request waits behind it, in line");
        assert_eq!(l.release(1, 10.0), Vec::new(), "rank 2 still holds it");
        assert_eq!(l.release(2, 7.0), vec![(3, true)]);
        assert_eq!(l.released_for(true), 10.0, "the latest shared release");
        assert_eq!(l.release(3, 20.0), vec![(4, false)]);
        assert_eq!(
            l.released_for(false),
            20.0,
            "a shared holder waits for the exclusive one"
        );
    }

    /// Windows 0 (within this process, gid 10) and 1 (across processes,
    /// gid 11), of world ranks 0 to 3.
    fn two_windows() -> Windows {
        let mut ws = Windows::default();
        for (parent, local, gid) in [(0, 4, 10), (1, 2, 11)] {
            let j = ws.join(
                parent,
                Some((&[0, 1, 2, 3], local)),
                0,
                0,
                (WinKind::Create, None, None),
            );
            ws.set_comm(j.win, parent, gid);
        }
        ws
    }

    #[test]
    fn locks_are_granted_in_virtual_time_then_rank_order_whoever_asked_first() {
        let mut ws = two_windows();
        // Rank 3 asks first (in this process's order), ranks 1 and 2 at
        // the same time: rank 1 is granted it, the others wait in line.
        ws.lock_event(10, 5.0, (3, 0), Some(true));
        ws.lock_event(10, 5.0, (1, 0), Some(true));
        ws.lock_event(10, 4.0, (2, 0), Some(true));
        assert_eq!(ws.earliest_event(), Some(4.0));
        assert_eq!(
            ws.resolve(false, 4.5, |_| true),
            vec![(2, 4.0)],
            "only the due one"
        );
        assert_eq!(ws.resolve(false, 6.0, |_| true), Vec::new(), "rank 2 holds it");
        ws.lock_event(10, 9.0, (2, 0), None);
        assert_eq!(ws.resolve(false, f64::INFINITY, |_| true), vec![(1, 9.0)]);
        let g = ws.take_grant(0, 1, 0).expect("granted");
        assert_eq!((g.at, g.released), (9.0, 9.0), "handed over by rank 2's release");
        assert!(ws.take_grant(0, 3, 0).is_none(), "rank 3 still waits");
    }

    #[test]
    fn locks_across_processes_wait_for_their_own_resolution_and_grant_only_ranks_here() {
        let mut ws = two_windows();
        // Another process's rank 2 asked before rank 0 here.
        ws.lock_event_from(LockEvent {
            win: 11,
            at: 1.0,
            origin: 2,
            seq: 1,
            target: 1,
            ask: Some(true),
        });
        ws.lock_event(11, 2.0, (0, 1), Some(true));
        assert!(!ws.locks_asked(), "none of a window within this process");
        assert!(ws.due(true, 3.0) && !ws.due(true, 1.0));
        assert_eq!(
            ws.resolve(true, 3.0, |r| r < 2),
            Vec::new(),
            "rank 2 is granted it, elsewhere"
        );
        ws.lock_event_from(LockEvent {
            win: 11,
            at: 7.0,
            origin: 2,
            seq: 2,
            target: 1,
            ask: None,
        });
        assert_eq!(ws.resolve(true, 8.0, |r| r < 2), vec![(0, 7.0)]);
        // A freed window's events are dropped.
        ws.lock_event(10, 1.0, (0, 0), Some(false));
        while ws.free(0).is_none() {}
        assert_eq!(ws.resolve(false, 2.0, |_| true), Vec::new());
        assert!(!ws.locks_asked());
    }

    fn window(kind: WinKind, regions: Vec<Vec<Region>>) -> Window {
        let n = regions.len();
        Window {
            kind,
            comm: 0,
            members: (0..n as u32).collect(),
            regions,
            owned: Vec::new(),
            epochs: (0..n).map(|_| Epochs::default()).collect(),
            locks: (0..n).map(|_| Lock::default()).collect(),
            attrs: (0..n).map(|_| None).collect(),
            local: n as u32,
            joined: n as u32,
            freed: 0,
        }
    }

    #[test]
    fn an_access_is_addressed_in_the_targets_units_and_kept_inside_its_memory() {
        let r = |base, size, disp_unit| Region {
            base,
            size,
            disp_unit,
        };
        let w = window(
            WinKind::Create,
            vec![vec![r(0x1000, 64, 8)], vec![r(0x2000, 16, 1)]],
        );
        assert_eq!(w.address(0, 2, 8), Ok(0x1010));
        assert_eq!(w.address(0, 7, 8), Ok(0x1038), "the last element");
        let err = w.address(0, 7, 16).unwrap_err();
        assert!(err.contains("64 bytes in units of 8"), "{err}");
        assert!(w.address(1, -1, 1).is_err(), "a negative displacement");
        let d = window(WinKind::Dynamic, vec![vec![r(0x5000, 32, 1), r(0x9000, 8, 1)]]);
        assert_eq!(
            d.address(0, 0x9000, 8),
            Ok(0x9000),
            "an attached region, by address"
        );
        assert!(d.address(0, 0x5010, 32).unwrap_err().contains("address 0x5010"));
    }

    #[test]
    fn members_join_the_window_their_communicator_made_in_turn() {
        let mut ws = Windows::default();
        let region = |b| {
            Some(Region {
                base: b,
                size: 8,
                disp_unit: 1,
            })
        };
        let a = ws.join(0, Some((&[0, 1], 2)), 0, 0, (WinKind::Create, region(0x10), None));
        assert_eq!(a.made, Some(0));
        // Rank 0 makes a second window before rank 1 joins the first.
        assert_eq!(ws.joins(0, 0), None, "rank 0's next is new");
        let b = ws.join(0, Some((&[0, 1], 2)), 0, 0, (WinKind::Create, region(0x20), None));
        assert_eq!(b.made, Some(1));
        assert_eq!(ws.joins(0, 1), Some(a.win), "rank 1's first is made");
        let a1 = ws.join(0, None, 1, 1, (WinKind::Create, region(0x30), None));
        assert_eq!(
            (a1.win, a1.made),
            (a.win, None),
            "rank 1's first is rank 0's first"
        );
        assert_eq!(ws.get(a.win).unwrap().regions[1][0].base, 0x30);
        assert!(ws.free(a.win).is_none(), "one member left");
        assert!(ws.free(a.win).is_some());
    }

    #[test]
    fn a_shared_windows_parts_follow_each_other_in_one_block() {
        let mut ws = Windows::default();
        let part = |size| {
            Some(Region {
                base: 0,
                size,
                disp_unit: 8,
            })
        };
        let a = ws.join(
            3,
            Some((&[4, 5, 6], 3)),
            5,
            1,
            (WinKind::AllocateShared, part(24), None),
        );
        ws.join(3, None, 4, 0, (WinKind::AllocateShared, part(16), None));
        assert_eq!(
            ws.get(a.win).unwrap().regions[0][0].base,
            0,
            "placed once all gave their size"
        );
        ws.join(3, None, 6, 2, (WinKind::AllocateShared, part(0), None));
        let w = ws.get(a.win).unwrap();
        let base = |r: usize| w.regions[r][0].base;
        assert_ne!(base(0), 0);
        assert_eq!((base(1) - base(0), base(2) - base(1)), (16, 24), "in rank order");
        assert_eq!(w.owned.len(), 1, "one block");
    }
}
