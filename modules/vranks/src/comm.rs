//! Virtual communicators and groups, as xSim tracks them: a
//! communicator is its members' world ranks in order (the world and
//! `MPI_COMM_SELF` need no list), shared by all its members, who each
//! hold the same handle; a group is such a list on its own.
//!
//! When the ranks are spread over processes (the `dist` layer), each
//! process holds the communicators its own ranks are in, under its own
//! handles; a communicator's *global id*, the same in every process
//! (made from its parent's id, the constructor call's number and the
//! new communicator's place among the call's results), names it in what
//! processes send each other.

use slab::Slab;
use std::collections::HashMap;

/// How the world's ranks are spread over the processes: blocks of
/// consecutive ranks (`pnmpi_sim`'s parallel replay does the same).
#[derive(Clone, Copy)]
pub struct Blocks {
    /// The world's size.
    pub n: u32,
    /// The number of processes, and this one's index.
    pub procs: u32,
    pub me: u32,
}

impl Blocks {
    /// The process that runs world rank `r`.
    pub fn owner(&self, r: u32) -> u32 {
        pnmpi_sim::engine::parallel::owner(r, self.n, self.procs)
    }

    /// The first world rank of process `p` (`p == procs`: the world's size).
    pub fn first(&self, p: u32) -> u32 {
        (u64::from(p) * u64::from(self.n)).div_ceil(u64::from(self.procs)) as u32
    }

    /// Whether world rank `r` runs here.
    pub fn local(&self, r: u32) -> bool {
        r >= self.first(self.me) && r < self.first(self.me + 1)
    }
}

/// Who is in a communicator.
pub enum Members {
    /// Every rank, in order.
    World,
    /// The calling rank alone.
    Own,
    /// These world ranks, in communicator order, and the reverse map.
    List(Vec<u32>, HashMap<u32, u32>),
}

/// A communicator.
pub struct Comm {
    pub members: Members,
    /// The id every process knows it by.
    pub gid: u64,
    /// Its members in this process.
    pub local: u32,
    /// The other processes that run some of its members.
    pub remote: Vec<u32>,
    /// Collectives each member has entered on it.
    pub seq: Vec<u32>,
    /// Members that have not freed it yet.
    pub refs: u32,
    /// A Cartesian topology: dimensions and periodicity.
    pub cart: Option<(Vec<i32>, Vec<bool>)>,
}

/// Every communicator and group.
pub struct Registry {
    pub comms: Slab<Comm>,
    pub groups: Slab<Vec<u32>>,
    n: u32,
    pub blocks: Blocks,
    /// Communicators by global id.
    by_gid: HashMap<u64, usize>,
}

/// The global id of the `k`-th communicator a constructor makes: the
/// `seq`-th collective on communicator `parent` (a 64-bit mix, the same
/// in every process; SplitMix64's finalizer).
pub fn child_gid(parent: u64, seq: u32, k: u32) -> u64 {
    let mut z = parent ^ (u64::from(seq) << 32 | u64::from(k)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) | 2
}

impl Registry {
    /// The world (index 0, global id 0) and self (index 1) of `n` ranks
    /// spread as `blocks` says.
    pub fn new(n: u32, blocks: Blocks) -> Registry {
        let mut comms = Slab::new();
        let here = blocks.first(blocks.me + 1) - blocks.first(blocks.me);
        comms.insert(Comm {
            members: Members::World,
            gid: 0,
            local: here,
            remote: (0..blocks.procs).filter(|&p| p != blocks.me).collect(),
            seq: vec![0; n as usize],
            refs: here,
            cart: None,
        });
        comms.insert(Comm {
            members: Members::Own,
            gid: 1,
            local: 1,
            remote: Vec::new(),
            seq: Vec::new(),
            refs: here,
            cart: None,
        });
        Registry {
            comms,
            groups: Slab::new(),
            n,
            blocks,
            by_gid: HashMap::from([(0, 0)]),
        }
    }

    /// A new communicator of `list` (world ranks, in order) known
    /// everywhere as `gid`, or `None` if none of its members runs here.
    pub fn add(&mut self, list: Vec<u32>, gid: u64) -> Option<usize> {
        let b = self.blocks;
        let local = list.iter().filter(|&&w| b.local(w)).count() as u32;
        if local == 0 {
            return None;
        }
        let mut remote: Vec<u32> = list.iter().map(|&w| b.owner(w)).filter(|&p| p != b.me).collect();
        remote.sort_unstable();
        remote.dedup();
        let index = list.iter().enumerate().map(|(i, &w)| (w, i as u32)).collect();
        let n = list.len();
        let i = self.comms.insert(Comm {
            members: Members::List(list, index),
            gid,
            local,
            remote,
            seq: vec![0; n],
            refs: local,
            cart: None,
        });
        if !self.comms[i].remote.is_empty() {
            self.by_gid.insert(gid, i);
        }
        Some(i)
    }

    /// One member freed communicator `c`; the last one here removes it.
    pub fn release(&mut self, c: usize) {
        let comm = &mut self.comms[c];
        comm.refs -= 1;
        if comm.refs == 0 {
            let gid = comm.gid;
            self.comms.remove(c);
            if self.by_gid.get(&gid) == Some(&c) {
                self.by_gid.remove(&gid);
            }
        }
    }

    /// The communicator another process calls `gid` (one with members in
    /// several processes).
    pub fn by_gid(&self, gid: u64) -> Option<usize> {
        self.by_gid.get(&gid).copied()
    }

    /// Size of communicator `c`.
    pub fn size(&self, c: usize) -> u32 {
        match &self.comms[c].members {
            Members::World => self.n,
            Members::Own => 1,
            Members::List(l, _) => l.len() as u32,
        }
    }

    /// World rank `w`'s rank in `c`, if a member.
    pub fn rank_of(&self, c: usize, w: u32) -> Option<u32> {
        match &self.comms[c].members {
            Members::World => Some(w),
            Members::Own => Some(0),
            Members::List(_, idx) => idx.get(&w).copied(),
        }
    }

    /// The world rank of rank `r` of `c`, as seen by world rank `me`.
    pub fn world_of(&self, c: usize, r: u32, me: u32) -> u32 {
        match &self.comms[c].members {
            Members::World => r,
            Members::Own => me,
            Members::List(l, _) => l[r as usize],
        }
    }

    /// The members of `c` as world ranks, as seen by `me`.
    pub fn list(&self, c: usize, me: u32) -> Vec<u32> {
        match &self.comms[c].members {
            Members::World => (0..self.n).collect(),
            Members::Own => vec![me],
            Members::List(l, _) => l.clone(),
        }
    }

    /// Whether `c` names a live communicator.
    pub fn exists(&self, c: usize) -> bool {
        self.comms.contains(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_give_every_rank_to_exactly_one_process_in_order() {
        for (n, procs) in [(10u32, 3u32), (4, 4), (7, 1), (1_000_003, 7)] {
            let mut next = 0;
            for me in 0..procs {
                let b = Blocks { n, procs, me };
                let (lo, hi) = (b.first(me), b.first(me + 1));
                assert_eq!(
                    lo, next,
                    "{n} ranks in {procs}: block {me} starts where the last ended"
                );
                assert!(hi > lo, "{n} ranks in {procs}: block {me} is empty");
                for r in [lo, (lo + hi) / 2, hi - 1] {
                    assert!(b.local(r));
                    assert_eq!(b.owner(r), me);
                }
                assert!(!b.local(hi) || hi == n);
                next = hi;
            }
            assert_eq!(next, n);
        }
    }

    #[test]
    fn a_communicator_across_processes_is_known_by_its_global_id() {
        // 8 ranks in 2 processes, seen from process 0 (ranks 0 to 3).
        let mut reg = Registry::new(
            8,
            Blocks {
                n: 8,
                procs: 2,
                me: 0,
            },
        );
        let gid = child_gid(0, 1, 0);
        assert_eq!(gid, child_gid(0, 1, 0));
        assert_ne!(gid, child_gid(0, 1, 1));
        assert_ne!(gid, child_gid(0, 2, 0));
        let across = reg.add(vec![6, 2, 3], gid).expect("two members here");
        assert_eq!(reg.by_gid(gid), Some(across));
        assert_eq!(
            (
                reg.size(across),
                reg.rank_of(across, 2),
                reg.world_of(across, 0, 2)
            ),
            (3, Some(1), 6)
        );
        assert_eq!(reg.comms[across].remote, [1]);
        // None of its members here: not made.
        assert_eq!(reg.add(vec![5, 7], child_gid(0, 3, 0)), None);
        // Local only: no global id needed.
        let here = reg.add(vec![1, 0], child_gid(0, 4, 0)).expect("made");
        assert_eq!(reg.by_gid(child_gid(0, 4, 0)), None);
        assert_eq!(reg.list(here, 0), [1, 0]);
        // The last member here to free it removes it.
        reg.release(across);
        assert!(reg.exists(across));
        reg.release(across);
        assert!(!reg.exists(across));
        assert_eq!(reg.by_gid(gid), None);
    }
}
