//! A communicator's members, with each member's position found without a
//! scan: a collective's every member asks for its own position (and the
//! root's), and a scan of a million members by each of a million members
//! made one allreduce at a million ranks cost 10^12 steps.

use rustc_hash::FxHashMap;
use std::ops::Deref;

/// World ranks in communicator rank order.
#[derive(Debug)]
pub struct Members {
    ranks: Box<[u32]>,
    find: Find,
}

/// How a world rank's position is found.
#[derive(Debug)]
enum Find {
    /// Member `i` is world rank `i` (`MPI_COMM_WORLD`, and any prefix).
    Identity,
    /// Increasing world ranks (a split that kept the world's order).
    Sorted,
    /// Any other order: a table, made once per communicator.
    Table(FxHashMap<u32, u32>),
}

impl Members {
    /// `ranks`, in communicator rank order.
    pub fn new(ranks: Vec<u32>) -> Members {
        let find = if ranks.iter().enumerate().all(|(i, &r)| r as usize == i) {
            Find::Identity
        } else if ranks.windows(2).all(|w| w[0] < w[1]) {
            Find::Sorted
        } else {
            let mut table = FxHashMap::default();
            for (i, &r) in ranks.iter().enumerate() {
                // A rank listed twice (a damaged trace) answers its first place, as a scan would.
                table.entry(r).or_insert(i as u32);
            }
            Find::Table(table)
        };
        Members {
            ranks: ranks.into(),
            find,
        }
    }

    /// The communicator rank of world rank `rank`, if a member.
    pub fn position(&self, rank: u32) -> Option<u32> {
        match &self.find {
            Find::Identity => ((rank as usize) < self.ranks.len()).then_some(rank),
            Find::Sorted => self.ranks.binary_search(&rank).ok().map(|i| i as u32),
            Find::Table(t) => t.get(&rank).copied(),
        }
    }
}

impl Deref for Members {
    type Target = [u32];

    fn deref(&self) -> &[u32] {
        &self.ranks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every way of finding agrees with a scan, for members and others.
    #[test]
    fn positions_agree_with_a_scan() {
        let lists: [Vec<u32>; 5] = [
            (0..100).collect(),
            (0..100).map(|r| r * 3 + 1).collect(),
            (0..100).rev().collect(),
            vec![5, 2, 9, 2, 7],
            vec![],
        ];
        for ranks in lists {
            let m = Members::new(ranks.clone());
            for r in 0..400 {
                let scan = ranks.iter().position(|&x| x == r).map(|i| i as u32);
                assert_eq!(m.position(r), scan, "rank {r} in {ranks:?}");
            }
            assert_eq!(&*m, &ranks[..]);
        }
    }
}
