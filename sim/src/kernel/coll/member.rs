//! What one member brings to a collective's timing ([`Member`]), derived
//! from its call by one rule ([`Member::of_call`]) in every mode: the
//! replay from the sizes the tracer recorded, vtime and virtual ranks
//! from the call's counts times its datatypes' sizes.

use crate::algorithms::member_bytes;
use crate::input::VCounts;
use pnmpi_trace::routine::Coll;

/// What one member brings to a collective's timing, the same in every
/// mode: what its process's trace records of the call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Member {
    /// Its size, as [`super::Shape::bytes`] (a `v` all-to-all: the mean
    /// block; a scatter: its own block; `reduce_scatter`: the whole
    /// vector): [`member_bytes`].
    pub bytes: u64,
    /// A `v` collective's per-peer bytes where significant on this
    /// member (`alltoallv`: both sides; `allgatherv`, `reduce_scatter`:
    /// the receive side; `gatherv`'s root: the receive side,
    /// `scatterv`'s: the send side); `None` for the others. Boxed: a
    /// collective of a million virtual ranks holds a part per member.
    pub counts: Option<Box<VCounts>>,
}

impl Member {
    /// A member of a collective with one size.
    pub fn of(bytes: u64) -> Member {
        Member { bytes, counts: None }
    }

    /// The member a call of collective `coll` brings, in every mode: its
    /// size from the bytes it sends and receives by [`member_bytes`]'s
    /// rule (`vector`: a `v` form; `members`: the communicator's size),
    /// and the per-peer bytes it knows, `counts`.
    pub fn of_call(
        coll: Coll,
        vector: bool,
        send: u64,
        recv: u64,
        members: u64,
        counts: Option<VCounts>,
    ) -> Member {
        Member {
            bytes: member_bytes(coll, vector, send, recv, members),
            counts: counts.map(Box::new),
        }
    }

    /// What the closed form charges for this member: [`charged`].
    pub fn charged(&self) -> u64 {
        charged(self.bytes, self.counts.as_deref())
    }
}

/// The size the closed form charges for a member of size `bytes` with
/// per-peer bytes `counts`: its size, or the largest block it sends or
/// receives. The collective is charged the largest over its members.
pub fn charged(bytes: u64, counts: Option<&VCounts>) -> u64 {
    counts.map_or(bytes, |c| {
        c.send
            .iter()
            .chain(&c.recv)
            .copied()
            .max()
            .unwrap_or(0)
            .max(bytes)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(send: &[u64], recv: &[u64]) -> Option<VCounts> {
        Some(VCounts {
            send: send.to_vec(),
            recv: recv.to_vec(),
        })
    }

    #[test]
    fn an_alltoallv_brings_its_mean_block_and_every_block() {
        // 4 members; this one sends 10 + 20 + 30 + 0 bytes.
        let m = Member::of_call(
            Coll::Alltoall,
            true,
            60,
            8,
            4,
            counts(&[10, 20, 30, 0], &[2, 2, 2, 2]),
        );
        assert_eq!(m.bytes, 15);
        assert_eq!(
            m.counts.as_deref(),
            counts(&[10, 20, 30, 0], &[2, 2, 2, 2]).as_ref()
        );
        // Charged its largest block, not the mean.
        assert_eq!(m.charged(), 30);
        // A plain all-to-all's size is its one block.
        assert_eq!(Member::of_call(Coll::Alltoall, false, 60, 60, 4, None).bytes, 60);
    }

    #[test]
    fn a_scatter_brings_its_own_block() {
        // scatterv's root sends 3 + 5 + 7 and keeps 5 (its receive side).
        let root = Member::of_call(Coll::Scatter, true, 15, 5, 3, counts(&[3, 5, 7], &[]));
        assert_eq!(root.bytes, 5);
        assert_eq!(root.charged(), 7);
        // A non-root knows only its block.
        let other = Member::of_call(Coll::Scatter, true, 0, 7, 3, None);
        assert_eq!(other, Member::of(7));
        // A plain scatter's non-root: its receive block, whatever its
        // (not significant) send arguments say.
        assert_eq!(
            Member::of_call(Coll::Scatter, false, 999, 4, 3, None),
            Member::of(4)
        );
    }

    #[test]
    fn a_reduce_scatter_brings_the_whole_vector() {
        // reduce_scatter_block: a block of 8 per member of 5.
        assert_eq!(
            Member::of_call(Coll::ReduceScatter, false, 8, 8, 5, None),
            Member::of(40)
        );
        // reduce_scatter: the sum of the shares, recorded as such, and
        // every share.
        let v = Member::of_call(Coll::ReduceScatter, true, 12, 12, 3, counts(&[], &[2, 4, 6]));
        assert_eq!(v.bytes, 12);
        assert_eq!(v.charged(), 12);
    }

    #[test]
    fn a_gatherv_brings_its_contribution_and_at_the_root_every_one() {
        let root = Member::of_call(Coll::Gather, true, 4, 4 + 6 + 9, 3, counts(&[], &[4, 6, 9]));
        assert_eq!(root.bytes, 4);
        assert_eq!(root.charged(), 9);
        // A non-root: its contribution, no per-peer bytes.
        assert_eq!(Member::of_call(Coll::Gather, true, 6, 0, 3, None), Member::of(6));
        // allgatherv: its contribution and every one.
        let all = Member::of_call(Coll::Allgather, true, 6, 19, 3, counts(&[], &[4, 6, 9]));
        assert_eq!((all.bytes, all.charged()), (6, 9));
    }

    #[test]
    fn the_others_bring_what_they_send() {
        for c in [
            Coll::Bcast,
            Coll::Reduce,
            Coll::Allreduce,
            Coll::Scan,
            Coll::Gather,
            Coll::Allgather,
        ] {
            assert_eq!(
                Member::of_call(c, false, 32, 64, 4, None),
                Member::of(32),
                "{c:?}"
            );
        }
        assert_eq!(
            Member::of_call(Coll::Barrier, false, 0, 0, 4, None),
            Member::default()
        );
    }
}
