//! Collectives among virtual ranks, as one rendezvous per call.
//!
//! Each member *joins* the call with its contribution, copied in its own
//! context (so private globals are its own), and gets a request. When
//! the last member joins, the layer computes every member's result in
//! memory (reductions by `PMPI_Reduce_local`, in rank order) and
//! completes all the requests at the time vtime gives the same call: the
//! kernel's closed form from the latest entry, charged the largest part
//! (`pnmpi_sim::kernel::coll`, the machine file's levels). Each member copies its result out in its own
//! context when its request completes. Blocking collectives are a join
//! and a wait; nonblocking ones return the request. Communicator
//! constructors (dup, split, create, Cartesian) are the same rendezvous,
//! untimed as under vtime: each member's clock stays where it entered.
//!
//! Across processes (the `dist` layer), once every member of this
//! process joined, the process sends their contributions (the blocks
//! each other process needs) and their latest entry to the other
//! processes of the communicator ([`Colls::take_shares`]); every process
//! then holds every contribution and computes the same results and time
//! for its own members.
//!
//! This layer sits on point-to-point ([`crate::p2p`]), whose requests
//! its members wait on, and on the communicators ([`crate::comm`]).
use crate::comm::Registry;
use crate::p2p::{Out, P2p, Work};
use crate::sched::Sched;
use crate::timing::Timing;
use pnmpi_mpi_sys::ffi;
use pnmpi_sim::kernel::coll::{algorithm, steps, Member, Shape, Step};
use pnmpi_sim::machine::Machine;
use pnmpi_sim::units::Ns;
use pnmpi_trace::routine::Coll;
use serde::{Deserialize, Serialize};
use slab::Slab;
use std::collections::HashMap;
use std::ffi::c_int;

/// What a member brings to a call.
#[derive(Default, Clone, Serialize, Deserialize)]
pub enum Gift {
    #[default]
    Nothing,
    /// One block of data (packed, or raw for reductions).
    One(Vec<u8>),
    /// One block per member (scatter's root, all-to-all).
    Many(Vec<Vec<u8>>),
    /// A split's color and key.
    Split(c_int, c_int),
    /// A group of world ranks (create), or none (`MPI_UNDEFINED`).
    Group(Option<Vec<u32>>),
}

/// What a call computes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Op {
    /// A data collective of this kind.
    Data(Coll),
    /// A reduction: the result is the rank-ordered reduction (`scan`:
    /// each member gets its prefix; `exclusive`: the prefix before it).
    Reduce {
        coll: Coll,
        count: c_int,
        dtype: ffi::MPI_Datatype,
        op: ffi::MPI_Op,
        exclusive: bool,
    },
    /// `MPI_Comm_dup`, `_split`, `_create`: a new communicator per member.
    Constructor,
}

impl Op {
    /// The timed collective this call is (none for a constructor).
    fn coll(&self) -> Option<Coll> {
        match *self {
            Op::Data(coll) | Op::Reduce { coll, .. } => Some(coll),
            Op::Constructor => None,
        }
    }

    /// The algorithm whose point-to-point steps this call (`blocking` or
    /// not) runs on `machine`, and its collective; `None` for the closed
    /// form and for a constructor.
    pub fn algorithm<'m>(&self, machine: &'m Machine, blocking: bool) -> Option<(Coll, &'m str)> {
        let coll = self.coll()?;
        Some((coll, algorithm(machine, coll, blocking)?))
    }
}

/// One collective call.
pub struct CollectiveCall {
    pub op: Op,
    pub size: u32,
    pub root: u32,
    /// The communicator and the call's number on it.
    comm: usize,
    seq: u32,
    /// Members whose contribution is in, and of those, this process's.
    joined: u32,
    joined_here: u32,
    /// The latest member's entry time.
    pub latest: Ns,
    /// The largest size a member is charged ([`Member::charged`]).
    bytes: u64,
    /// A blocking call (only those run their algorithm's steps, as in
    /// the replay).
    blocking: bool,
    pub gifts: Vec<Gift>,
    /// This process's members' requests.
    reqs: Vec<Option<usize>>,
    /// Results per member (reductions, scans) or the one result.
    pub results: Vec<Vec<u8>>,
    /// New communicator per member (constructors).
    pub comms: Vec<Option<usize>>,
    /// The communicator's members (world ranks), for constructors.
    world: Vec<u32>,
    /// This process's members yet to copy their result out.
    outstanding: u32,
}

/// What the other processes' members brought to a call: their
/// contributions (by member) and the latest entry and largest charged
/// size among them.
#[derive(Serialize, Deserialize)]
pub struct Share {
    pub latest: Ns,
    pub bytes: u64,
    /// Member and its contribution.
    pub gifts: Vec<(u32, Gift)>,
}

/// The members of this process joined the `seq`-th collective on the
/// communicator known everywhere as `comm`: what another process of it
/// gets.
#[derive(Serialize, Deserialize)]
pub struct Join {
    pub comm: u64,
    pub seq: u32,
    pub share: Share,
}

/// A member's entry into a collective.
pub struct Entry {
    /// The communicator.
    pub comm: usize,
    pub op: Op,
    /// The root's rank in the communicator (0 if none).
    pub root: u32,
    /// Its contribution.
    pub gift: Gift,
    /// What it brings to the kernel's timing (its size, a `v`
    /// collective's per-peer bytes).
    pub part: Member,
    /// Where its result goes.
    pub out: Out,
    /// A blocking call (a nonblocking one returns the request).
    pub blocking: bool,
}

/// The lower layers a collective works with.
pub struct Below<'a> {
    pub sched: &'a mut Sched,
    pub timing: &'a mut Timing,
    pub comms: &'a mut Registry,
    pub p2p: &'a mut P2p,
}

impl Below<'_> {
    /// The same layers, lent again for a call (the loan kept after it).
    pub fn again(&mut self) -> Below<'_> {
        Below {
            sched: &mut *self.sched,
            timing: &mut *self.timing,
            comms: &mut *self.comms,
            p2p: &mut *self.p2p,
        }
    }
}

/// A member's entry made: its request, and the steps it runs before
/// waiting for it when the machine file makes the call algorithmic (its
/// algorithm's messages, [`pnmpi_sim::kernel::coll::steps`]; empty for
/// the closed form).
pub struct Joined {
    pub req: usize,
    pub steps: Vec<Step>,
}

/// Calls in progress.
#[derive(Default)]
pub struct Colls {
    calls: Slab<CollectiveCall>,
    open: HashMap<(usize, u32), usize>,
    /// Shares from other processes for calls no member here joined yet.
    early: HashMap<(usize, u32), Vec<Share>>,
    /// What this layer owes other processes: stamp (point-to-point's,
    /// [`P2p::stamp`]), process, share.
    out: Vec<(u64, u32, Join)>,
}

/// A reduction of `input` into `acc` (`acc = input op acc`, as
/// `MPI_Reduce_local` computes).
pub type Reducer<'a> = &'a dyn Fn(&[u8], &mut Vec<u8>);

impl Colls {
    /// The call a member's part names.
    pub fn call(&self, id: usize) -> &CollectiveCall {
        &self.calls[id]
    }

    /// What this layer owes other processes since last asked.
    pub fn take_shares(&mut self) -> Vec<(u64, u32, Join)> {
        std::mem::take(&mut self.out)
    }

    /// The running rank joins its next collective (`entry`). Returns its
    /// request and steps, or why the call could not be timed.
    pub fn join(&mut self, b: Below, entry: Entry) -> Result<Joined, String> {
        let Entry {
            comm,
            op,
            root,
            gift,
            part,
            out,
            blocking,
        } = entry;
        let w = b.sched.current();
        let size = b.comms.size(comm);
        let me = b.comms.rank_of(comm, w).unwrap_or(0);
        let (seq, id) = if size == 1 {
            (0, self.new_call(b.comms, op, size, root, comm, 0, w))
        } else {
            let seq = {
                let s = &mut b.comms.comms[comm].seq[me as usize];
                *s += 1;
                *s
            };
            match self.open.get(&(comm, seq)) {
                Some(&id) => (seq, id),
                None => {
                    let id = self.new_call(b.comms, op, size, root, comm, seq, w);
                    self.open.insert((comm, seq), id);
                    for share in self.early.remove(&(comm, seq)).unwrap_or_default() {
                        self.take_share(id, share);
                    }
                    (seq, id)
                }
            }
        };
        let t = b.sched.rank(w).clock;
        b.sched.rank_mut(w).stats.collectives += 1;
        let req = b.p2p.request(b.sched, Work::Coll { call: id, me, out }, false);
        let mut steps = Vec::new();
        if let Some((coll, name)) = op.algorithm(b.timing.machine(), blocking) {
            let shape = Shape {
                coll,
                size,
                me,
                root,
                bytes: part.bytes,
            };
            self::steps(name, &shape, part.counts.as_deref(), &mut steps);
        }
        let c = &mut self.calls[id];
        c.gifts[me as usize] = gift;
        c.bytes = c.bytes.max(part.charged());
        c.blocking = blocking;
        c.reqs[me as usize] = Some(req);
        c.latest = c.latest.max(t);
        c.joined += 1;
        c.joined_here += 1;
        if c.joined_here == b.comms.comms[comm].local && !b.comms.comms[comm].remote.is_empty() {
            self.share(b.comms, b.p2p, id);
        }
        self.close_if_complete(b, id, seq)?;
        Ok(Joined { req, steps })
    }

    /// Every member here joined call `id`: their contributions go to the
    /// communicator's other processes (of a scatter's or an all-to-all's
    /// blocks, only those for each process's members).
    fn share(&mut self, comms: &Registry, p2p: &mut P2p, id: usize) {
        let c = &self.calls[id];
        let comm = &comms.comms[c.comm];
        let blocks = comms.blocks;
        let here: Vec<u32> = (0..c.size).filter(|&m| c.reqs[m as usize].is_some()).collect();
        for &q in &comm.remote {
            let gifts = here
                .iter()
                .map(|&m| {
                    let g = match &c.gifts[m as usize] {
                        Gift::Many(all) => Gift::Many(
                            all.iter()
                                .enumerate()
                                .map(|(j, b)| {
                                    let w = comms.world_of(c.comm, j as u32, 0);
                                    if blocks.owner(w) == q {
                                        b.clone()
                                    } else {
                                        Vec::new()
                                    }
                                })
                                .collect(),
                        ),
                        g => g.clone(),
                    };
                    (m, g)
                })
                .collect();
            let share = Share {
                latest: c.latest,
                bytes: c.bytes,
                gifts,
            };
            let join = Join {
                comm: comm.gid,
                seq: c.seq,
                share,
            };
            self.out.push((p2p.stamp(), q, join));
        }
    }

    /// Another process's members' share of the `seq`-th call on `comm`.
    pub fn joined_elsewhere(&mut self, b: Below, comm: usize, seq: u32, share: Share) -> Result<(), String> {
        match self.open.get(&(comm, seq)) {
            Some(&id) => {
                self.take_share(id, share);
                self.close_if_complete(b, id, seq)
            }
            None => {
                self.early.entry((comm, seq)).or_default().push(share);
                Ok(())
            }
        }
    }

    fn take_share(&mut self, id: usize, share: Share) {
        let c = &mut self.calls[id];
        c.latest = c.latest.max(share.latest);
        c.bytes = c.bytes.max(share.bytes);
        for (m, g) in share.gifts {
            c.gifts[m as usize] = g;
            c.joined += 1;
        }
    }

    fn close_if_complete(&mut self, b: Below, id: usize, seq: u32) -> Result<(), String> {
        let c = &self.calls[id];
        if c.joined == c.size {
            if c.size > 1 {
                self.open.remove(&(c.comm, seq));
            }
            self.close(b, id)?;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn new_call(
        &mut self,
        comms: &Registry,
        op: Op,
        size: u32,
        root: u32,
        comm: usize,
        seq: u32,
        w: u32,
    ) -> usize {
        let world = if op == Op::Constructor {
            comms.list(comm, w)
        } else {
            Vec::new()
        };
        let outstanding = if size == 1 { 1 } else { comms.comms[comm].local };
        self.calls.insert(CollectiveCall {
            op,
            size,
            root,
            comm,
            seq,
            joined: 0,
            joined_here: 0,
            latest: 0.0,
            bytes: 0,
            blocking: false,
            gifts: (0..size).map(|_| Gift::Nothing).collect(),
            reqs: vec![None; size as usize],
            results: Vec::new(),
            comms: Vec::new(),
            world,
            outstanding,
        })
    }

    /// Everyone joined: compute, then complete every member.
    fn close(&mut self, b: Below, id: usize) -> Result<(), String> {
        let c = &mut self.calls[id];
        match c.op {
            Op::Reduce {
                coll,
                count,
                dtype,
                op,
                exclusive,
            } => {
                let gifts: Vec<Vec<u8>> = c
                    .gifts
                    .iter_mut()
                    .map(|g| match std::mem::take(g) {
                        Gift::One(v) => v,
                        _ => Vec::new(),
                    })
                    .collect();
                let reduce =
                    |input: &[u8], acc: &mut Vec<u8>| crate::dtype::reduce(input, acc, count, dtype, op);
                c.results = if coll == Coll::Scan {
                    scan(&gifts, &reduce, exclusive)
                } else {
                    vec![ordered(&gifts, &reduce)]
                };
            }
            Op::Constructor => self.construct(b.comms, id),
            Op::Data(_) => {}
        }
        let c = &self.calls[id];
        // The closed form times the call; an untimed constructor, and an
        // algorithmic call whose members timed themselves by their steps
        // (their clocks stay at their last step's end), complete each
        // member where it entered, the results now ready.
        let closed_form =
            c.op.coll()
                .filter(|_| c.op.algorithm(b.timing.machine(), c.blocking).is_none());
        let reqs: Vec<usize> = c.reqs.iter().flatten().copied().collect();
        match closed_form {
            Some(coll) => {
                let shape = Shape {
                    coll,
                    size: c.size,
                    me: 0,
                    root: c.root,
                    bytes: c.bytes,
                };
                let latest = c.latest;
                let nodes = (c.size != b.sched.n()).then(|| self.member_nodes(&b, id));
                let at = b.timing.collective(shape, nodes.as_deref(), latest);
                for r in reqs {
                    b.p2p.complete(b.sched, r, at);
                }
            }
            None => {
                for r in reqs {
                    let t = b.p2p.get(r).map_or(0.0, |q| q.posted);
                    b.p2p.complete(b.sched, r, t);
                }
            }
        }
        Ok(())
    }

    /// The nodes of call `id`'s members, in communicator order.
    fn member_nodes(&self, b: &Below, id: usize) -> Vec<u32> {
        let c = &self.calls[id];
        (0..c.size)
            .map(|m| b.timing.node(b.comms.world_of(c.comm, m, b.sched.current())))
            .collect()
    }

    /// A constructor's new communicators: by color and key (split), the
    /// group given (create), or the same members (dup).
    fn construct(&mut self, comms: &mut Registry, id: usize) {
        let c = &mut self.calls[id];
        let gifts = std::mem::take(&mut c.gifts);
        let world = std::mem::take(&mut c.world);
        let (parent, seq) = (comms.comms[c.comm].gid, c.seq);
        let gid = |k: usize| crate::comm::child_gid(parent, seq, k as u32);
        let mut out: Vec<Option<usize>> = vec![None; gifts.len()];
        let undefined = pnmpi_mpi_sys::constants::UNDEFINED();
        if matches!(gifts.first(), Some(Gift::Split(..))) {
            let mut by_color: std::collections::BTreeMap<c_int, Vec<(c_int, u32)>> = Default::default();
            for (i, g) in gifts.iter().enumerate() {
                if let Gift::Split(color, key) = g {
                    if *color != undefined {
                        by_color.entry(*color).or_default().push((*key, i as u32));
                    }
                }
            }
            for (k, (_, mut v)) in by_color.into_iter().enumerate() {
                v.sort();
                let list: Vec<u32> = v.iter().map(|&(_, i)| world[i as usize]).collect();
                let nc = comms.add(list, gid(k));
                for (_, i) in v {
                    out[i as usize] = nc;
                }
            }
        } else if let Some(Gift::Group(_)) = gifts.first() {
            let mut made: HashMap<Vec<u32>, Option<usize>> = HashMap::new();
            for (i, g) in gifts.iter().enumerate() {
                if let Gift::Group(Some(list)) = g {
                    if list.contains(&world[i]) {
                        let k = made.len();
                        let nc = *made
                            .entry(list.clone())
                            .or_insert_with(|| comms.add(list.clone(), gid(k)));
                        out[i] = nc;
                    }
                }
            }
        } else {
            let nc = comms.add(world, gid(0));
            out.iter_mut().for_each(|o| *o = nc);
        }
        self.calls[id].comms = out;
    }

    /// A member copied its result out; the last one frees the call.
    pub fn leave(&mut self, id: usize) {
        let c = &mut self.calls[id];
        c.outstanding -= 1;
        if c.outstanding == 0 {
            self.calls.remove(id);
        }
    }
}

/// `g[0] op g[1] op ... op g[n-1]`, in rank order (MPI's order, which a
/// non-commutative operation needs), `reduce` computing `acc = in op acc`.
fn ordered(gifts: &[Vec<u8>], reduce: Reducer) -> Vec<u8> {
    let Some(last) = gifts.last() else {
        return Vec::new();
    };
    let mut acc = last.clone();
    for g in gifts.iter().rev().skip(1) {
        reduce(g, &mut acc);
    }
    acc
}

/// Each member's inclusive (or exclusive) prefix reduction.
fn scan(gifts: &[Vec<u8>], reduce: Reducer, exclusive: bool) -> Vec<Vec<u8>> {
    let mut out = Vec::with_capacity(gifts.len());
    let mut acc: Option<Vec<u8>> = None;
    for g in gifts {
        if exclusive {
            out.push(acc.clone().unwrap_or_default());
        }
        acc = Some(match acc {
            None => g.clone(),
            Some(prev) => {
                // acc = prev op g: the reducer computes inout = in op inout.
                let mut next = g.clone();
                reduce(&prev, &mut next);
                next
            }
        });
        if !exclusive {
            out.push(acc.clone().unwrap_or_default());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A non-commutative operation: concatenation (`acc = in ++ acc`).
    fn concat(input: &[u8], acc: &mut Vec<u8>) {
        let mut v = input.to_vec();
        v.append(acc);
        *acc = v;
    }

    fn gifts() -> Vec<Vec<u8>> {
        vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec(), b"d".to_vec()]
    }

    #[test]
    fn a_reduction_combines_in_rank_order() {
        assert_eq!(ordered(&gifts(), &concat), b"abcd");
        assert_eq!(ordered(&gifts()[..1], &concat), b"a");
        assert!(ordered(&[], &concat).is_empty());
    }

    #[test]
    fn scans_give_each_member_its_prefix_in_rank_order() {
        let inclusive = scan(&gifts(), &concat, false);
        assert_eq!(inclusive, [&b"a"[..], b"ab", b"abc", b"abcd"]);
        // Exclusive: nothing for the first, the prefix before the others.
        let exclusive = scan(&gifts(), &concat, true);
        assert_eq!(exclusive, [&b""[..], b"a", b"ab", b"abc"]);
    }
}
