//! Virtual communicators and groups, as xSim tracks them: a
//! communicator is its members' world ranks in order (the world and
//! `MPI_COMM_SELF` need no list), shared by all its members, who each
//! hold the same handle; a group is such a list on its own.

use slab::Slab;
use std::collections::HashMap;

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
}

impl Registry {
    /// The world (index 0) and self (index 1) of `n` ranks.
    pub fn new(n: u32) -> Registry {
        let mut comms = Slab::new();
        comms.insert(Comm {
            members: Members::World,
            seq: vec![0; n as usize],
            refs: n,
            cart: None,
        });
        comms.insert(Comm {
            members: Members::Own,
            seq: Vec::new(),
            refs: n,
            cart: None,
        });
        Registry {
            comms,
            groups: Slab::new(),
            n,
        }
    }

    /// A new communicator of `list` (world ranks, in order).
    pub fn add(&mut self, list: Vec<u32>) -> usize {
        let index = list.iter().enumerate().map(|(i, &w)| (w, i as u32)).collect();
        let n = list.len();
        self.comms.insert(Comm {
            members: Members::List(list, index),
            seq: vec![0; n],
            refs: n as u32,
            cart: None,
        })
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
