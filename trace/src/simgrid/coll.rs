//! How the SimGrid export writes a collective so that SimGrid replays it
//! exactly, with the bytes each process sent to and received from each
//! other, or says why it cannot.
//!
//! SimGrid 3.32's replay (`src/smpi/internals/smpi_replay.cpp`) has
//! actions for blocking collectives on `MPI_COMM_WORLD` only, and reads
//! the counts of its `v` actions with `std::stoi` (in units of its
//! default datatype, `MPI_BYTE` after an `init` without arguments):
//!
//! | action | words after the name | per-peer |
//! |---|---|---|
//! | `alltoallv` | send buffer size, P send counts, receive buffer size, P receive counts | both |
//! | `allgatherv` | send count, P receive counts | receive |
//! | `gatherv` | send count, P receive counts, root | receive (root) |
//! | `scatterv` | P send counts, receive count, root | send (root) |
//! | `reducescatter` | P receive counts, computation | each share |
//!
//! Everything else that moves data between members, a nonblocking
//! collective, `MPI_Scan`/`MPI_Exscan`, a collective on a smaller
//! communicator, a `reducescatter` with unequal shares (SimGrid would then
//! switch to MPICH's algorithm, which `pnmpi sim` does not model), is
//! written as the messages of a *direct* algorithm: each process posts
//! its receives then its sends, each peer's exact bytes, where the call
//! was made, and waits for them where the call completed (at once for a
//! blocking call, at the `MPI_Wait*` for a nonblocking one). Both
//! simulators replay those messages alike.

use super::rank::{Rank, SimgridKey};
use crate::counts::PeerBytes;
use crate::routine::Coll;
use crate::trace::ReqRef;

/// Tags of the messages of directly written collectives: this, plus the
/// communicator id (12 bits) << 16, plus the call's number on its
/// communicator (16 bits). Below 2^31, as SimGrid's `std::stoi` needs.
pub const DIRECT_TAG: i64 = 1 << 29;

/// Messages of one process: (member index, bytes), in member order.
pub(super) type Messages = Vec<(usize, i64)>;

/// A collective call of one process, as the export writes it.
pub(super) struct Call<'a> {
    pub op: Coll,
    pub vector: bool,
    /// World ranks of the communicator, in its rank order.
    pub members: &'a [i64],
    /// This process's index in `members`.
    pub me: usize,
    /// The root's index in `members`.
    pub root: usize,
    pub bytes: i64,
    pub rbytes: i64,
    pub counts: Option<&'a PeerBytes>,
}

impl Call<'_> {
    fn size(&self) -> usize {
        self.members.len()
    }

    /// Bytes of side `of` (send or receive vector) for peer `j`: the
    /// recorded count, else `whole` (a total over the group for a `v`
    /// call recorded without per-peer counts: its average).
    fn peer(&self, of: fn(&PeerBytes) -> &Vec<i64>, j: usize, whole: i64) -> i64 {
        match self.counts.map(of).filter(|v| v.len() == self.size()) {
            Some(v) => v[j].max(0),
            None if self.vector => whole / self.size().max(1) as i64,
            None => whole,
        }
    }

    /// Whether a `v` call's per-peer counts, where it needs them, are
    /// missing (a trace of format version 1): it is then approximated.
    pub fn lacks_counts(&self) -> bool {
        let has = |of: fn(&PeerBytes) -> &Vec<i64>| self.counts.is_some_and(|c| of(c).len() == self.size());
        self.vector
            && match self.op {
                Coll::Alltoall => !has(send) || !has(recv),
                Coll::Allgather | Coll::ReduceScatter => !has(recv),
                Coll::Gather => self.me == self.root && !has(recv),
                Coll::Scatter => self.me == self.root && !has(send),
                _ => false,
            }
    }

    /// Each process's share of a reduce-scatter.
    fn share(&self, j: usize) -> i64 {
        self.peer(recv, j, self.bytes)
    }

    /// The messages of the direct algorithm: (receives, sends).
    pub fn direct(&self) -> (Messages, Messages) {
        let (me, root, n) = (self.me, self.root, self.size());
        let others = (0..n).filter(|&j| j != me);
        let all = |b: &dyn Fn(usize) -> i64| others.clone().map(|j| (j, b(j))).collect::<Vec<_>>();
        let none = Vec::new;
        let (b, rb) = (self.bytes, self.rbytes);
        match self.op {
            Coll::Barrier => (all(&|_| 0), all(&|_| 0)),
            Coll::Allreduce => (all(&|_| b), all(&|_| b)),
            Coll::Bcast if me == root => (none(), all(&|_| b)),
            Coll::Bcast => (vec![(root, b)], none()),
            Coll::Reduce if me == root => (all(&|_| b), none()),
            Coll::Reduce => (none(), vec![(root, b)]),
            Coll::Gather if me == root => (all(&|j| self.peer(recv, j, rb)), none()),
            Coll::Gather => (none(), vec![(root, b)]),
            Coll::Scatter if me == root => (none(), all(&|j| self.peer(send, j, b))),
            Coll::Scatter => (vec![(root, rb)], none()),
            Coll::Allgather => (all(&|j| self.peer(recv, j, rb)), all(&|_| b)),
            Coll::Alltoall => (all(&|j| self.peer(recv, j, rb)), all(&|j| self.peer(send, j, b))),
            Coll::ReduceScatter => (all(&|_| self.share(me)), all(&|j| self.share(j))),
            Coll::Scan => (
                (0..me).map(|j| (j, b)).collect(),
                (me + 1..n).map(|j| (j, b)).collect(),
            ),
        }
    }

    /// SimGrid's own action for this blocking call on `MPI_COMM_WORLD`
    /// (members are world ranks 0..P), if it has one that replays it
    /// exactly; `Err` names a count SimGrid would misread.
    pub fn world_action(&self) -> Result<Option<String>, String> {
        let n = self.size();
        let root = self.root;
        let list = |of: fn(&PeerBytes) -> &Vec<i64>, whole: i64, here: bool| -> Result<String, String> {
            let mut s = String::new();
            for j in 0..n {
                let v = if here { self.peer(of, j, whole) } else { 0 };
                s.push(' ');
                s.push_str(&count(v)?.to_string());
            }
            Ok(s)
        };
        if !self.vector && self.op != Coll::ReduceScatter {
            return Ok(None);
        }
        Ok(Some(match self.op {
            Coll::Alltoall => {
                let total = |of| (0..n).map(|j| self.peer(of, j, 0)).sum::<i64>();
                format!(
                    "alltoallv {}{} {}{}",
                    total(send),
                    list(send, self.bytes, true)?,
                    total(recv),
                    list(recv, self.rbytes, true)?
                )
            }
            Coll::Allgather => format!(
                "allgatherv {}{}",
                count(self.bytes)?,
                list(recv, self.rbytes, true)?
            ),
            Coll::Gather => format!(
                "gatherv {}{} {root}",
                count(self.bytes)?,
                list(recv, self.rbytes, self.me == root)?
            ),
            Coll::Scatter => format!(
                "scatterv{} {} {root}",
                list(send, self.bytes, self.me == root)?,
                count(self.rbytes)?
            ),
            Coll::ReduceScatter => {
                let first = self.share(0);
                if (0..n).any(|j| self.share(j) != first) {
                    return Ok(None);
                }
                format!("reducescatter{} 0", list(recv, self.bytes, true)?)
            }
            _ => return Ok(None),
        }))
    }
}

/// The send side of per-peer counts.
fn send(c: &PeerBytes) -> &Vec<i64> {
    &c.send
}

/// The receive side.
fn recv(c: &PeerBytes) -> &Vec<i64> {
    &c.recv
}

/// A count as SimGrid's `std::stoi` reads it.
fn count(v: i64) -> Result<i32, String> {
    i32::try_from(v).map_err(|_| {
        format!("a count of {v} bytes, beyond the 2^31 - 1 that SimGrid's replay reads (std::stoi)")
    })
}

impl Rank<'_> {
    /// The tag of the next directly written collective on `comm`.
    fn direct_tag(&mut self, comm: i64) -> i64 {
        let seq = self.direct_seq.entry(comm).or_insert(0);
        let tag = DIRECT_TAG + ((comm & 0xfff) << 16) + i64::from(*seq & 0xffff);
        *seq += 1;
        tag
    }

    /// Writes `call` as the messages of its direct algorithm, waited for
    /// at once, or, for a nonblocking call that created `req`, when a wait
    /// or test completes it.
    pub(super) fn direct(&mut self, call: &Call<'_>, comm: i64, req: Option<ReqRef>) {
        let tag = self.direct_tag(comm);
        let (recvs, sends) = call.direct();
        let me = self.me;
        let mut keys: Vec<SimgridKey> = Vec::with_capacity(recvs.len() + sends.len());
        for (j, b) in recvs {
            let p = call.members[j];
            self.act(&format!("irecv {p} {tag} {b}"));
            keys.push((p, me, tag));
        }
        for (j, b) in sends {
            let p = call.members[j];
            self.act(&format!("isend {p} {tag} {b}"));
            keys.push((me, p, tag));
        }
        match req {
            Some(r) => {
                self.nbc.insert(r, keys);
            }
            None => {
                for k in keys {
                    self.act(&format!("wait {} {} {}", k.0, k.1, k.2));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(op: Coll, me: usize, counts: Option<&PeerBytes>) -> Call<'_> {
        Call {
            op,
            vector: true,
            members: &[0, 1, 2, 3],
            me,
            root: 0,
            bytes: 40,
            rbytes: 80,
            counts,
        }
    }

    #[test]
    fn v_actions_carry_each_peers_count_in_simgrids_order() {
        let c = PeerBytes {
            send: vec![1, 2, 3, 4],
            recv: vec![10, 20, 30, 40],
        };
        let a = |op, me| call(op, me, Some(&c)).world_action().unwrap().unwrap();
        assert_eq!(a(Coll::Alltoall, 1), "alltoallv 10 1 2 3 4 100 10 20 30 40");
        assert_eq!(a(Coll::Allgather, 1), "allgatherv 40 10 20 30 40");
        assert_eq!(a(Coll::Gather, 0), "gatherv 40 10 20 30 40 0");
        assert_eq!(a(Coll::Gather, 2), "gatherv 40 0 0 0 0 0");
        assert_eq!(a(Coll::Scatter, 0), "scatterv 1 2 3 4 80 0");
        let equal = PeerBytes {
            send: vec![],
            recv: vec![8; 4],
        };
        assert_eq!(
            call(Coll::ReduceScatter, 3, Some(&equal))
                .world_action()
                .unwrap()
                .unwrap(),
            "reducescatter 8 8 8 8 0"
        );
        assert_eq!(
            call(Coll::ReduceScatter, 3, Some(&c)).world_action().unwrap(),
            None
        );
    }

    #[test]
    fn a_count_simgrid_cannot_read_is_an_error() {
        let c = PeerBytes {
            send: vec![1, 1 << 31, 3, 4],
            recv: vec![1; 4],
        };
        let e = call(Coll::Alltoall, 0, Some(&c)).world_action().unwrap_err();
        assert!(e.contains("2147483648"), "{e}");
    }

    #[test]
    fn the_direct_algorithm_moves_each_peers_bytes() {
        let c = PeerBytes {
            send: vec![],
            recv: vec![5, 6, 7, 8],
        };
        let (recvs, sends) = call(Coll::ReduceScatter, 2, Some(&c)).direct();
        assert_eq!(recvs, [(0, 7), (1, 7), (3, 7)]);
        assert_eq!(sends, [(0, 5), (1, 6), (3, 8)]);
        let (recvs, sends) = call(Coll::Scan, 2, None).direct();
        assert_eq!(recvs, [(0, 40), (1, 40)]);
        assert_eq!(sends, [(3, 40)]);
    }
}
