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
//! Across processes ([`crate::dist`]), once every member of this process
//! joined, the process sends their contributions (the blocks each other
//! process needs) and their latest entry to the other processes of the
//! communicator; every process then holds every contribution and
//! computes the same results and time for its own members.
use crate::engine::Engine;
use crate::p2p::Work;
use pnmpi_sim::input::VCounts;
use pnmpi_sim::kernel::coll::{closed_form, Member, Shape};
use pnmpi_sim::machine::CollChoice;
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
        dtype: pnmpi_mpi_sys::ffi::MPI_Datatype,
        op: pnmpi_mpi_sys::ffi::MPI_Op,
        exclusive: bool,
    },
    /// `MPI_Comm_dup`, `_split`, `_create`: a new communicator per member.
    Constructor,
}

/// One collective call.
pub struct Call {
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
    /// Each member's entry time and part (for an algorithmic collective).
    entries: Vec<(Ns, Member)>,
    /// A blocking call (only those are replayed by their algorithm, as
    /// vtime does).
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
    /// Member, its entry time and part (size, per-peer bytes sent and
    /// received), and its contribution.
    pub gifts: Vec<(u32, Ns, Sent, Gift)>,
}

/// A [`Member`] as a process sends it: size, and the per-peer bytes.
type Sent = (u64, Option<(Vec<u64>, Vec<u64>)>);

fn sent(p: &Member) -> Sent {
    (
        p.bytes,
        p.counts.as_ref().map(|c| (c.send.clone(), c.recv.clone())),
    )
}

fn member((bytes, counts): Sent) -> Member {
    Member {
        bytes,
        counts: counts.map(|(send, recv)| Box::new(VCounts { send, recv })),
    }
}

/// A member's request's part: which call and which member.
pub struct Part {
    pub call: usize,
    pub me: u32,
    /// Where the result goes (used by the copy-out in `api`).
    pub out: crate::api::coll::Out,
}

/// Calls in progress.
#[derive(Default)]
pub struct State {
    calls: Slab<Call>,
    open: HashMap<(usize, u32), usize>,
    /// Shares from other processes for calls no member here joined yet.
    early: HashMap<(usize, u32), Vec<Share>>,
}

impl Engine {
    /// The running rank joins its next collective on communicator `comm`
    /// with `gift`; `part` is what it brings to the kernel's timing.
    /// Returns the request.
    #[allow(clippy::too_many_arguments)]
    pub fn join(
        &mut self,
        comm: usize,
        op: Op,
        root: u32,
        gift: Gift,
        part: Member,
        out: crate::api::coll::Out,
        blocking: bool,
    ) -> usize {
        let w = self.current;
        let size = self.comms.size(comm);
        let me = self.comms.rank_of(comm, w).unwrap_or(0);
        let (seq, id) = if size == 1 {
            (0, self.new_call(op, size, root, comm, 0, w))
        } else {
            let seq = {
                let s = &mut self.comms.comms[comm].seq[me as usize];
                *s += 1;
                *s
            };
            match self.colls.open.get(&(comm, seq)) {
                Some(&id) => (seq, id),
                None => {
                    let id = self.new_call(op, size, root, comm, seq, w);
                    self.colls.open.insert((comm, seq), id);
                    for share in self.colls.early.remove(&(comm, seq)).unwrap_or_default() {
                        self.take_share(id, share);
                    }
                    (seq, id)
                }
            }
        };
        let t = self.ranks[w as usize].clock;
        self.ranks[w as usize].stats.collectives += 1;
        let req = self.request(Work::Coll(Part { call: id, me, out }), false);
        let c = &mut self.colls.calls[id];
        c.gifts[me as usize] = gift;
        c.bytes = c.bytes.max(part.charged());
        c.entries[me as usize] = (t, part);
        c.blocking = blocking;
        c.reqs[me as usize] = Some(req);
        c.latest = c.latest.max(t);
        c.joined += 1;
        c.joined_here += 1;
        if c.joined_here == self.comms.comms[comm].local && !self.comms.comms[comm].remote.is_empty() {
            self.share(id);
        }
        self.close_if_complete(id, seq);
        req
    }

    /// Every member here joined call `id`: their contributions go to the
    /// communicator's other processes (of a scatter's or an all-to-all's
    /// blocks, only those for each process's members).
    fn share(&mut self, id: usize) {
        let c = &self.colls.calls[id];
        let comm = &self.comms.comms[c.comm];
        let gid = comm.gid;
        let blocks = self.comms.blocks;
        let here: Vec<u32> = (0..c.size).filter(|&m| c.reqs[m as usize].is_some()).collect();
        let mut out = Vec::with_capacity(comm.remote.len());
        for &q in &comm.remote {
            let gifts = here
                .iter()
                .map(|&m| {
                    let g = match &c.gifts[m as usize] {
                        Gift::Many(all) => Gift::Many(
                            all.iter()
                                .enumerate()
                                .map(|(j, b)| {
                                    let w = self.comms.world_of(c.comm, j as u32, 0);
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
                    let (entry, p) = &c.entries[m as usize];
                    (m, *entry, sent(p), g)
                })
                .collect();
            let share = Share {
                latest: c.latest,
                bytes: c.bytes,
                gifts,
            };
            out.push((
                q,
                crate::dist::Record::Join {
                    comm: gid,
                    seq: c.seq,
                    share,
                },
            ));
        }
        for (q, record) in out {
            self.dist_send(q, &record);
        }
    }

    /// Another process's members' share of the `seq`-th call on `comm`.
    pub fn joined_elsewhere(&mut self, comm: usize, seq: u32, share: Share) {
        match self.colls.open.get(&(comm, seq)) {
            Some(&id) => {
                self.take_share(id, share);
                self.close_if_complete(id, seq);
            }
            None => self.colls.early.entry((comm, seq)).or_default().push(share),
        }
    }

    fn take_share(&mut self, id: usize, share: Share) {
        let c = &mut self.colls.calls[id];
        c.latest = c.latest.max(share.latest);
        c.bytes = c.bytes.max(share.bytes);
        for (m, entry, p, g) in share.gifts {
            c.gifts[m as usize] = g;
            c.entries[m as usize] = (entry, member(p));
            c.joined += 1;
        }
    }

    fn close_if_complete(&mut self, id: usize, seq: u32) {
        let c = &self.colls.calls[id];
        if c.joined == c.size {
            if c.size > 1 {
                self.colls.open.remove(&(c.comm, seq));
            }
            self.close(id);
        }
    }

    fn new_call(&mut self, op: Op, size: u32, root: u32, comm: usize, seq: u32, w: u32) -> usize {
        let world = if op == Op::Constructor {
            self.comms.list(comm, w)
        } else {
            Vec::new()
        };
        let outstanding = if size == 1 {
            1
        } else {
            self.comms.comms[comm].local
        };
        self.colls.calls.insert(Call {
            op,
            size,
            root,
            comm,
            seq,
            joined: 0,
            joined_here: 0,
            latest: 0.0,
            bytes: 0,
            entries: vec![(0.0, Member::default()); size as usize],
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
    fn close(&mut self, id: usize) {
        let c = &mut self.colls.calls[id];
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
                c.results = if coll == Coll::Scan {
                    scan(&gifts, count, dtype, op, exclusive)
                } else {
                    vec![ordered(&gifts, count, dtype, op)]
                };
            }
            Op::Constructor => self.construct(id),
            Op::Data(_) => {}
        }
        let c = &self.colls.calls[id];
        let timed = match c.op {
            Op::Data(coll) | Op::Reduce { coll, .. } => Some(coll),
            Op::Constructor => None,
        };
        let reqs: Vec<usize> = c.reqs.iter().flatten().copied().collect();
        match timed {
            Some(coll) => {
                let algorithm = match self.machine.collective(coll) {
                    CollChoice::Algorithmic(name) if c.blocking => Some(name.clone()),
                    _ => None,
                };
                if let Some(name) = algorithm {
                    return self.replay_algorithm(id, coll, &name);
                }
                let shape = Shape {
                    coll,
                    size: c.size,
                    me: 0,
                    root: c.root,
                    bytes: c.bytes,
                };
                let latest = c.latest;
                let at = if c.size == self.n {
                    closed_form(&mut *self.model, shape, &self.node_of, latest)
                } else {
                    let nodes = self.member_nodes(id);
                    closed_form(&mut *self.model, shape, &nodes, latest)
                };
                for r in reqs {
                    self.complete(r, at);
                }
            }
            None => {
                for r in reqs {
                    let t = self.p2p.reqs[r].posted;
                    self.complete(r, t);
                }
            }
        }
    }

    /// The nodes of call `id`'s members, in communicator order.
    fn member_nodes(&self, id: usize) -> Vec<u32> {
        let c = &self.colls.calls[id];
        (0..c.size)
            .map(|m| self.node_of[self.comms.world_of(c.comm, m, self.current) as usize])
            .collect()
    }

    /// A blocking collective the machine file makes algorithmic: its
    /// algorithm's messages among the members, from their own entry
    /// times, replayed by `pnmpi sim`'s engine and model as vtime and
    /// `pnmpi sim replay` do; each member here completes at its own end.
    fn replay_algorithm(&mut self, id: usize, coll: Coll, name: &str) {
        let nodes = self.member_nodes(id);
        let c = &self.colls.calls[id];
        let rooted = matches!(coll, Coll::Bcast | Coll::Reduce | Coll::Gather | Coll::Scatter);
        let root = rooted.then_some(c.root);
        let replayed = pnmpi_sim::live::algorithmic::replay(
            &self.machine,
            &self.model_name,
            nodes,
            coll,
            name,
            root,
            &c.entries,
        );
        let ends = match replayed {
            Ok(ends) => ends,
            Err(e) => crate::api::fatal_in(
                self,
                "collective",
                &format!("cannot replay algorithm `{name}`: {e}"),
            ),
        };
        let c = &self.colls.calls[id];
        let mine: Vec<(usize, Ns)> = c
            .reqs
            .iter()
            .enumerate()
            .filter_map(|(m, r)| Some(((*r)?, ends.get(m)?.0)))
            .collect();
        for (r, at) in mine {
            self.complete(r, at);
        }
    }

    /// A constructor's new communicators: by color and key (split), the
    /// group given (create), or the same members (dup).
    fn construct(&mut self, id: usize) {
        let c = &mut self.colls.calls[id];
        let gifts = std::mem::take(&mut c.gifts);
        let world = std::mem::take(&mut c.world);
        let (parent, seq) = (self.comms.comms[c.comm].gid, c.seq);
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
                let nc = self.comms.add(list, gid(k));
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
                            .or_insert_with(|| self.comms.add(list.clone(), gid(k)));
                        out[i] = nc;
                    }
                }
            }
        } else {
            let nc = self.comms.add(world, gid(0));
            out.iter_mut().for_each(|o| *o = nc);
        }
        self.colls.calls[id].comms = out;
    }

    /// The call a member's part names.
    pub fn call(&self, id: usize) -> &Call {
        &self.colls.calls[id]
    }

    /// A member copied its result out; the last one frees the call.
    pub fn leave(&mut self, id: usize) {
        let c = &mut self.colls.calls[id];
        c.outstanding -= 1;
        if c.outstanding == 0 {
            self.colls.calls.remove(id);
        }
    }
}

/// `g[0] op g[1] op ... op g[n-1]`, in rank order (MPI's order, which a
/// non-commutative operation needs).
fn ordered(
    gifts: &[Vec<u8>],
    count: c_int,
    dtype: pnmpi_mpi_sys::ffi::MPI_Datatype,
    op: pnmpi_mpi_sys::ffi::MPI_Op,
) -> Vec<u8> {
    let Some(last) = gifts.last() else {
        return Vec::new();
    };
    let mut acc = last.clone();
    for g in gifts.iter().rev().skip(1) {
        crate::dtype::reduce(g, &mut acc, count, dtype, op);
    }
    acc
}

/// Each member's inclusive (or exclusive) prefix reduction.
fn scan(
    gifts: &[Vec<u8>],
    count: c_int,
    dtype: pnmpi_mpi_sys::ffi::MPI_Datatype,
    op: pnmpi_mpi_sys::ffi::MPI_Op,
    exclusive: bool,
) -> Vec<Vec<u8>> {
    let mut out = Vec::with_capacity(gifts.len());
    let mut acc: Option<Vec<u8>> = None;
    for g in gifts {
        if exclusive {
            out.push(acc.clone().unwrap_or_default());
        }
        acc = Some(match acc {
            None => g.clone(),
            Some(prev) => {
                // acc = prev op g: reduce_local computes inout = in op inout.
                let mut next = g.clone();
                crate::dtype::reduce(&prev, &mut next, count, dtype, op);
                next
            }
        });
        if !exclusive {
            out.push(acc.clone().unwrap_or_default());
        }
    }
    out
}
