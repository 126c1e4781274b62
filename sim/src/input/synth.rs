//! A synthetic 2-D stencil, generated op by op: the benchmark input for
//! the engine's speed, and (through `pnmpi sim synth`) a trace of any
//! size for tests. Each iteration, every rank computes, posts a receive
//! and a send to each of its four neighbours on a periodic grid, waits
//! for all eight, and every `allreduce_every` iterations joins an
//! allreduce.

use super::ops::{Actor, Completion, Measured, Op, OpKind, OpSource};
use crate::SimError;
use pnmpi_trace::routine::Coll;

/// The stencil's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stencil {
    /// Ranks (laid out on the squarest grid that holds them).
    pub ranks: u32,
    /// Iterations.
    pub iterations: u64,
    /// Halo message size.
    pub bytes: u64,
    /// CPU per iteration, ns.
    pub compute_ns: u64,
    /// An allreduce every this many iterations (0: none).
    pub allreduce_every: u64,
}

/// Ops per iteration: 4 receives, 4 sends, a wait.
const OPS_PER_ITERATION: u64 = 9;

/// The routines a stencil calls.
pub const ROUTINES: [&str; 6] = [
    "MPI_Init",
    "MPI_Irecv",
    "MPI_Isend",
    "MPI_Waitall",
    "MPI_Allreduce",
    "MPI_Finalize",
];

impl Stencil {
    /// Grid width: the largest divisor of `ranks` at most its square root.
    pub fn width(&self) -> u32 {
        let mut w = (f64::from(self.ranks).sqrt() as u32).max(1);
        while !self.ranks.is_multiple_of(w) {
            w -= 1;
        }
        w
    }

    /// The four neighbours of `r`: left, right, up, down.
    pub fn neighbours(&self, r: u32) -> [u32; 4] {
        let w = self.width();
        let h = self.ranks / w;
        let (x, y) = (r % w, r / w);
        [
            y * w + (x + w - 1) % w,
            y * w + (x + 1) % w,
            ((y + h - 1) % h) * w + x,
            ((y + 1) % h) * w + x,
        ]
    }

    /// Ops of one rank, in order (including Init and Finalize).
    pub fn ops_per_rank(&self) -> u64 {
        let colls = self.iterations.checked_div(self.allreduce_every).unwrap_or(0);
        2 + self.iterations * OPS_PER_ITERATION + colls
    }
}

/// The stencil as an op source.
pub struct StencilOps {
    s: Stencil,
    actors: Vec<Actor>,
    routines: Vec<String>,
    /// Per rank: ops emitted.
    pos: Vec<u64>,
    /// Ops per rank ([`Stencil::ops_per_rank`], a division: once, not per op).
    ops: u64,
    /// Per rank: its four neighbours (computed once, not per op).
    neighbours: Vec<[u32; 4]>,
    world: Vec<u32>,
    /// Completion lists of waits already run, reused by the next waits
    /// (an op holds one kind at a time: a list would be freed in between).
    spare: Vec<Vec<Completion>>,
}

impl StencilOps {
    /// A source for `s`.
    pub fn new(s: Stencil) -> StencilOps {
        StencilOps {
            actors: (0..s.ranks).map(|rank| Actor { rank, thread: 0 }).collect(),
            routines: ROUTINES.iter().map(|r| r.to_string()).collect(),
            pos: vec![0; s.ranks as usize],
            ops: s.ops_per_rank(),
            neighbours: (0..s.ranks).map(|r| s.neighbours(r)).collect(),
            world: (0..s.ranks).collect(),
            spare: Vec::new(),
            s,
        }
    }
}

impl OpSource for StencilOps {
    fn actors(&self) -> &[Actor] {
        &self.actors
    }

    fn world_size(&self) -> u32 {
        self.s.ranks
    }

    fn routines(&self) -> &[String] {
        &self.routines
    }

    fn next(&mut self, actor: usize, op: &mut Op) -> Result<bool, SimError> {
        if let OpKind::Wait(v) = std::mem::take(&mut op.kind) {
            self.spare.push(v);
        }
        let s = &self.s;
        let i = self.pos[actor];
        if i >= self.ops {
            return Ok(false);
        }
        self.pos[actor] += 1;
        let last = self.ops - 1;
        op.gap = 0.0;
        op.dur = 0.0;
        if i == 0 {
            op.routine = 0;
            op.kind = OpKind::Init;
            return Ok(true);
        }
        if i == last {
            op.routine = 5;
            op.kind = OpKind::Finalize;
            return Ok(true);
        }
        // Iterations with an allreduce have one op more.
        let per = OPS_PER_ITERATION;
        let (it, k) = if s.allreduce_every > 0 {
            let block = per * s.allreduce_every + 1;
            let (b, r) = ((i - 1) / block, (i - 1) % block);
            if r == block - 1 {
                op.routine = 4;
                op.kind = OpKind::Coll {
                    op: Coll::Allreduce,
                    comm: 0,
                    bytes: 8,
                    root: None,
                    req: None,
                    counts: None,
                };
                return Ok(true);
            }
            (b * s.allreduce_every + r / per, r % per)
        } else {
            ((i - 1) / per, (i - 1) % per)
        };
        let nb = self.neighbours[actor];
        let req = |j: u64| ((actor as u64) << 32) | ((it * 8 + j) & 0x7fff_ffff);
        // Tags say the direction, so a 2-wide grid's two links to one neighbour stay apart.
        let tag_to = |d: usize| (d ^ 1) as i64;
        match k {
            0..=3 => {
                op.routine = 1;
                if k == 0 {
                    op.gap = s.compute_ns as f64;
                }
                op.kind = OpKind::Recv {
                    from: Some(nb[k as usize]),
                    tag: k as i64,
                    comm: 0,
                    bytes: s.bytes,
                    req: Some(req(k)),
                };
            }
            4..=7 => {
                let d = (k - 4) as usize;
                op.routine = 2;
                op.kind = OpKind::Send {
                    to: nb[d],
                    tag: tag_to(d),
                    comm: 0,
                    bytes: s.bytes,
                    req: Some(req(k)),
                };
            }
            _ => {
                op.routine = 3;
                let mut done = self.spare.pop().unwrap_or_default();
                done.clear();
                done.extend((0..8).map(|j| Completion::new(req(j), None)));
                op.kind = OpKind::Wait(done);
            }
        }
        Ok(true)
    }

    fn members(&self, comm: i64, rank: u32) -> Option<Vec<u32>> {
        match comm {
            0 => Some(self.world.clone()),
            1 => Some(vec![rank]),
            _ => None,
        }
    }

    fn measured(&self) -> Option<Measured> {
        None
    }

    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }
}
