//! One-sided communication in `pnmpi trace stats`: the bytes each rank
//! moved as an origin, to and from which targets, and its epochs'
//! synchronization calls. A put or accumulate sends its bytes to the
//! target; a get fetches them; a get-accumulate or atomic does both (its
//! origin bytes unless its operation is `MPI_NO_OP`, then its result).

use crate::fields::V;
use crate::rma::{DataOp, RmaRole, OP_NAMES};
use crate::trace::Event;
use std::collections::BTreeMap;
use std::fmt;

/// The operation code of `MPI_NO_OP`, which sends nothing.
const NO_OP: i64 = OP_NAMES.len() as i64 - 1;

/// One rank's one-sided bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct RmaRank {
    /// Data calls it made as an origin.
    pub ops: u64,
    /// Bytes it sent to targets.
    pub sent: u64,
    /// Bytes it fetched from targets.
    pub fetched: u64,
    /// Bytes other ranks' calls moved to or from its windows.
    pub as_target: u64,
    /// Synchronization calls (fences, PSCW, locks, flushes).
    pub syncs: u64,
}

/// The one-sided traffic of one origin to one target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct RmaPair {
    /// Data calls.
    pub ops: u64,
    /// Bytes sent to the target.
    pub sent: u64,
    /// Bytes fetched from it.
    pub fetched: u64,
}

/// The trace's one-sided figures.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct RmaStats {
    /// Per world rank.
    pub ranks: Vec<RmaRank>,
    /// Per (origin, target) world ranks, in order.
    pub pairs: BTreeMap<(u32, i64), RmaPair>,
    /// Windows created (summed over ranks: a window of 4 ranks counts 4).
    pub creations: u64,
}

impl RmaStats {
    /// Empty figures for `world_size` ranks.
    pub fn new(world_size: u32) -> RmaStats {
        RmaStats {
            ranks: vec![RmaRank::default(); world_size as usize],
            ..RmaStats::default()
        }
    }

    /// Whether the trace has any one-sided call.
    pub fn any(&self) -> bool {
        self.creations > 0 || self.ranks.iter().any(|r| r.ops + r.syncs > 0)
    }

    /// Counts event `e` of `rank`, a call of a routine of role `role`.
    pub fn add(&mut self, rank: u32, role: Option<RmaRole>, e: &Event) {
        let Some(role) = role else {
            return;
        };
        let Some(r) = self.ranks.get_mut(rank as usize) else {
            return;
        };
        let op = match role {
            RmaRole::Create(_) => {
                self.creations += 1;
                return;
            }
            RmaRole::Free => return,
            RmaRole::Data(op) => op,
            _ => {
                r.syncs += 1;
                return;
            }
        };
        let (sent, fetched) = moved(op, e);
        r.ops += 1;
        r.sent += sent;
        r.fetched += fetched;
        let Some(target) = e.get(V::Peer) else {
            return;
        };
        if let Some(t) = usize::try_from(target).ok().and_then(|t| self.ranks.get_mut(t)) {
            t.as_target += sent + fetched;
        }
        let p = self.pairs.entry((rank, target)).or_default();
        p.ops += 1;
        p.sent += sent;
        p.fetched += fetched;
    }
}

/// The bytes a data call sends to its target and fetches from it.
pub fn moved(op: DataOp, e: &Event) -> (u64, u64) {
    let bytes = e.get(V::Bytes).unwrap_or(0).max(0) as u64;
    let rbytes = e.get(V::Rbytes).unwrap_or(0).max(0) as u64;
    match op {
        DataOp::Put | DataOp::Accumulate => (bytes, 0),
        DataOp::Get => (0, bytes),
        _ if e.get(V::Op) == Some(NO_OP) => (0, rbytes),
        _ => (bytes, rbytes),
    }
}

impl fmt::Display for RmaStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let total = |g: fn(&RmaRank) -> u64| self.ranks.iter().map(g).sum::<u64>();
        writeln!(
            f,
            "one-sided: windows created {}  data calls {}  bytes sent {}  fetched {}  synchronization calls {}",
            self.creations,
            total(|r| r.ops),
            total(|r| r.sent),
            total(|r| r.fetched),
            total(|r| r.syncs)
        )?;
        writeln!(
            f,
            "{:<6} {:>10} {:>14} {:>14} {:>14} {:>10}",
            "rank", "rma calls", "sent", "fetched", "as target", "syncs"
        )?;
        for (i, r) in self.ranks.iter().enumerate() {
            writeln!(
                f,
                "{:<6} {:>10} {:>14} {:>14} {:>14} {:>10}",
                i, r.ops, r.sent, r.fetched, r.as_target, r.syncs
            )?;
        }
        writeln!(
            f,
            "{:<8} {:<8} {:>10} {:>14} {:>14}",
            "origin", "target", "calls", "sent", "fetched"
        )?;
        for ((origin, target), p) in &self.pairs {
            writeln!(
                f,
                "{:<8} {:<8} {:>10} {:>14} {:>14}",
                origin, target, p.ops, p.sent, p.fetched
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(peer: i64, bytes: i64, rbytes: Option<i64>, op: Option<i64>) -> Event {
        let mut e = Event::default();
        e.set(V::Peer, Some(peer));
        e.set(V::Bytes, Some(bytes));
        e.set(V::Rbytes, rbytes);
        e.set(V::Op, op);
        e
    }

    #[test]
    fn origins_and_targets_count_what_moved() {
        let mut s = RmaStats::new(3);
        let put = Some(RmaRole::Data(DataOp::Put));
        let get = Some(RmaRole::Data(DataOp::Get));
        let fop = Some(RmaRole::Data(DataOp::FetchAndOp));
        s.add(0, put, &call(1, 100, None, None));
        s.add(0, put, &call(1, 100, None, None));
        s.add(2, get, &call(1, 40, None, None));
        s.add(1, fop, &call(0, 8, Some(8), Some(2)));
        s.add(1, fop, &call(0, 8, Some(8), Some(NO_OP)));
        s.add(1, Some(RmaRole::Fence), &Event::default());
        s.add(1, None, &call(0, 1000, None, None));
        assert_eq!(s.ranks[0].sent, 200);
        assert_eq!(s.ranks[1].as_target, 240);
        assert_eq!((s.ranks[1].ops, s.ranks[1].sent, s.ranks[1].fetched), (2, 8, 16));
        assert_eq!(s.ranks[1].syncs, 1);
        assert_eq!(
            s.pairs[&(2, 1)],
            RmaPair {
                ops: 1,
                sent: 0,
                fetched: 40
            }
        );
        assert_eq!(s.pairs[&(0, 1)].ops, 2);
        let text = s.to_string();
        assert!(text.contains("bytes sent 208  fetched 56"), "{text}");
    }
}
