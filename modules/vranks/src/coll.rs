//! Collectives among virtual ranks, as one rendezvous per call.
//!
//! Each member *joins* the call with its contribution, copied in its own
//! context (so private globals are its own), and gets a request. When
//! the last member joins, the layer computes every member's result in
//! memory (reductions by `PMPI_Reduce_local`, in rank order) and
//! completes all the requests at the time vtime gives the same call: the
//! latest entry plus the shared model's closed form
//! (`Model::collective`, `pnmpi sim`'s analytic collectives on the
//! machine file's levels). Each member copies its result out in its own
//! context when its request completes. Blocking collectives are a join
//! and a wait; nonblocking ones return the request. Communicator
//! constructors (dup, split, create, Cartesian) are the same rendezvous,
//! untimed as under vtime: each member's clock stays where it entered.

use crate::engine::Engine;
use crate::p2p::Work;
use pnmpi_sim::coll::Shape;
use pnmpi_sim::model::CollCall;
use pnmpi_sim::units::Ns;
use pnmpi_trace::routine::Coll;
use slab::Slab;
use std::collections::HashMap;
use std::ffi::c_int;

/// What a member brings to a call.
#[derive(Default)]
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
    joined: u32,
    /// The latest member's entry time.
    pub latest: Ns,
    bytes: u64,
    pub gifts: Vec<Gift>,
    reqs: Vec<usize>,
    /// Results per member (reductions, scans) or the one result.
    pub results: Vec<Vec<u8>>,
    /// New communicator per member (constructors).
    pub comms: Vec<Option<usize>>,
    /// The communicator's members (world ranks), for constructors.
    world: Vec<u32>,
    outstanding: u32,
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
}

impl Engine {
    /// The running rank joins its next collective on communicator `comm`
    /// with `gift`; `bytes` is its size for the model. Returns the
    /// request.
    #[allow(clippy::too_many_arguments)]
    pub fn join(
        &mut self,
        comm: usize,
        op: Op,
        root: u32,
        gift: Gift,
        bytes: u64,
        out: crate::api::coll::Out,
    ) -> usize {
        let w = self.current;
        let size = self.comms.size(comm);
        let me = self.comms.rank_of(comm, w).unwrap_or(0);
        let id = if size == 1 {
            self.new_call(op, size, root, comm, w)
        } else {
            let seq = {
                let s = &mut self.comms.comms[comm].seq[me as usize];
                *s += 1;
                *s
            };
            match self.colls.open.get(&(comm, seq)) {
                Some(&id) => id,
                None => {
                    let id = self.new_call(op, size, root, comm, w);
                    self.colls.open.insert((comm, seq), id);
                    id
                }
            }
        };
        let t = self.ranks[w as usize].clock;
        self.ranks[w as usize].stats.collectives += 1;
        let req = self.request(Work::Coll(Part { call: id, me, out }), false);
        let c = &mut self.colls.calls[id];
        c.gifts[me as usize] = gift;
        c.reqs[me as usize] = req;
        c.latest = c.latest.max(t);
        c.bytes = c.bytes.max(bytes);
        c.joined += 1;
        if c.joined == c.size {
            if size > 1 {
                let seq = self.comms.comms[comm].seq[me as usize];
                self.colls.open.remove(&(comm, seq));
            }
            self.close(id);
        }
        req
    }

    fn new_call(&mut self, op: Op, size: u32, root: u32, comm: usize, w: u32) -> usize {
        let world = if op == Op::Constructor {
            self.comms.list(comm, w)
        } else {
            Vec::new()
        };
        self.colls.calls.insert(Call {
            op,
            size,
            root,
            joined: 0,
            latest: 0.0,
            bytes: 0,
            gifts: (0..size).map(|_| Gift::Nothing).collect(),
            reqs: vec![0; size as usize],
            results: Vec::new(),
            comms: Vec::new(),
            world,
            outstanding: size,
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
        let reqs = c.reqs.clone();
        match timed {
            Some(coll) => {
                let nodes: Vec<u32> = if c.size as usize == self.n as usize {
                    self.node_of.clone()
                } else {
                    reqs.iter()
                        .map(|&r| self.node_of[self.p2p.reqs[r].owner as usize])
                        .collect()
                };
                let shape = Shape {
                    coll,
                    size: c.size,
                    me: 0,
                    root: c.root,
                    bytes: c.bytes,
                };
                let latest = c.latest;
                let at = self.model.collective(&CollCall { shape, nodes: &nodes }, latest);
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

    /// A constructor's new communicators: by color and key (split), the
    /// group given (create), or the same members (dup).
    fn construct(&mut self, id: usize) {
        let c = &mut self.colls.calls[id];
        let gifts = std::mem::take(&mut c.gifts);
        let world = std::mem::take(&mut c.world);
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
            for (_, mut v) in by_color {
                v.sort();
                let list: Vec<u32> = v.iter().map(|&(_, i)| world[i as usize]).collect();
                let nc = self.comms.add(list);
                for (_, i) in v {
                    out[i as usize] = Some(nc);
                }
            }
        } else if let Some(Gift::Group(_)) = gifts.first() {
            let mut made: HashMap<Vec<u32>, usize> = HashMap::new();
            for (i, g) in gifts.iter().enumerate() {
                if let Gift::Group(Some(list)) = g {
                    if list.contains(&world[i]) {
                        let nc = *made
                            .entry(list.clone())
                            .or_insert_with(|| self.comms.add(list.clone()));
                        out[i] = Some(nc);
                    }
                }
            }
        } else {
            let nc = self.comms.add(world);
            out.iter_mut().for_each(|o| *o = Some(nc));
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
