//! Synthetic traces of the communication motifs machine designers use, as
//! SST's Ember does (`pnmpi sim synth`): nearest-neighbour stencils,
//! collective loops, a wavefront, random point-to-point and an incast.
//! Each rank's calls are made iteration by iteration as they are written
//! (`.pnt` or a tracer folder), so a trace of any size costs memory for
//! one iteration of one rank.

pub mod folder;
pub mod pnt;

use std::fmt;
use std::str::FromStr;

/// The motifs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Motif {
    /// 2-D periodic grid: compute, exchange with 4 neighbours (Irecv,
    /// Isend, Waitall), an allreduce every K iterations.
    Halo2d,
    /// The same on a 3-D grid with 6 neighbours.
    Halo3d,
    /// Compute, then an `MPI_Allreduce` of `bytes`.
    Allreduce,
    /// Compute, then an `MPI_Alltoall` of `bytes` to each peer.
    Alltoall,
    /// Compute, then an `MPI_Bcast` of `bytes` from a root that moves
    /// round the ranks.
    Bcast,
    /// A wavefront on a 2-D grid (Sweep3D): each rank receives from its
    /// upstream neighbours, computes, and sends downstream (blocking
    /// `MPI_Recv`, `MPI_Send`); the sweep starts from each corner in turn.
    Sweep3d,
    /// Every iteration, each rank sends to another drawn at random (a
    /// random affine permutation of the ranks, so each receives one) a
    /// message of a random size up to twice `bytes`.
    Random,
    /// Every rank but 0 sends `bytes` to rank 0, which receives them all.
    Incast,
}

/// Every motif, with its name and what it does (for `--help` and errors).
pub const MOTIFS: &[(Motif, &str, &str)] = &[
    (
        Motif::Halo2d,
        "halo2d",
        "2-D periodic stencil: 4 neighbours, Irecv/Isend/Waitall, allreduce every K",
    ),
    (
        Motif::Halo3d,
        "halo3d",
        "3-D periodic stencil: 6 neighbours, Irecv/Isend/Waitall, allreduce every K",
    ),
    (Motif::Allreduce, "allreduce", "compute, MPI_Allreduce"),
    (
        Motif::Alltoall,
        "alltoall",
        "compute, MPI_Alltoall (bytes to each peer)",
    ),
    (Motif::Bcast, "bcast", "compute, MPI_Bcast from a moving root"),
    (
        Motif::Sweep3d,
        "sweep3d",
        "wavefront on a 2-D grid from each corner in turn (blocking Recv/Send)",
    ),
    (
        Motif::Random,
        "random",
        "each rank sends to a random one (random permutation), random sizes",
    ),
    (Motif::Incast, "incast", "every rank sends to rank 0"),
];

impl FromStr for Motif {
    type Err = String;
    fn from_str(s: &str) -> Result<Motif, String> {
        MOTIFS.iter().find(|m| m.1 == s).map(|m| m.0).ok_or_else(|| {
            let names: Vec<&str> = MOTIFS.iter().map(|m| m.1).collect();
            format!("unknown motif `{s}`: use one of {}", names.join(", "))
        })
    }
}

impl fmt::Display for Motif {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let name = MOTIFS.iter().find(|m| m.0 == *self).map_or("?", |m| m.1);
        f.write_str(name)
    }
}

/// A synthetic run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// The motif.
    pub motif: Motif,
    /// Ranks.
    pub ranks: u32,
    /// Iterations.
    pub iterations: u64,
    /// Message size (per peer for alltoall; the mean for random).
    pub bytes: u64,
    /// CPU burst per iteration, ns.
    pub compute_ns: u64,
    /// `halo*`: an allreduce every this many iterations (0: none).
    pub allreduce_every: u64,
    /// `random`: the seed of its draws.
    pub seed: u64,
}

/// The routines a synthetic trace calls; [`Call`]s index this table.
pub const ROUTINES: [&str; 11] = [
    "MPI_Init",
    "MPI_Finalize",
    "MPI_Irecv",
    "MPI_Isend",
    "MPI_Waitall",
    "MPI_Recv",
    "MPI_Send",
    "MPI_Allreduce",
    "MPI_Alltoall",
    "MPI_Bcast",
    "MPI_Barrier",
];

/// How long each synthetic MPI call lasts in the trace, ns (what the
/// traced run would have spent in it; replays compute their own).
pub const CALL_NS: u64 = 1000;

/// One step of a rank's program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    /// CPU, ns.
    Compute(u64),
    /// `MPI_Irecv` from a world rank.
    Irecv { from: u32, tag: i64, bytes: u64 },
    /// `MPI_Isend` to a world rank.
    Isend { to: u32, tag: i64, bytes: u64 },
    /// `MPI_Waitall` on every request posted since the last one.
    Waitall,
    /// `MPI_Recv`.
    Recv { from: u32, tag: i64, bytes: u64 },
    /// `MPI_Send`.
    Send { to: u32, tag: i64, bytes: u64 },
    /// `MPI_Allreduce` of `bytes`.
    Allreduce(u64),
    /// `MPI_Alltoall` of `bytes` to each peer.
    Alltoall(u64),
    /// `MPI_Bcast` of `bytes` from `root`.
    Bcast { bytes: u64, root: u32 },
}

impl Call {
    /// Its routine's index in [`ROUTINES`] (`None` for compute).
    pub fn routine(&self) -> Option<u32> {
        Some(match self {
            Call::Compute(_) => return None,
            Call::Irecv { .. } => 2,
            Call::Isend { .. } => 3,
            Call::Waitall => 4,
            Call::Recv { .. } => 5,
            Call::Send { .. } => 6,
            Call::Allreduce(_) => 7,
            Call::Alltoall(_) => 8,
            Call::Bcast { .. } => 9,
        })
    }
}

/// The most balanced factorisation of `n` into `d` factors, largest
/// first, as `MPI_Dims_create` gives it.
pub fn dims(n: u32, d: usize) -> Vec<u32> {
    let mut out = vec![1u32; d];
    let mut left = n.max(1);
    // Prime factors, largest first, each onto the smallest dimension.
    let mut factors = Vec::new();
    let mut p = 2;
    while p * p <= left {
        while left.is_multiple_of(p) {
            factors.push(p);
            left /= p;
        }
        p += 1;
    }
    if left > 1 {
        factors.push(left);
    }
    for f in factors.into_iter().rev() {
        let smallest = (0..d).min_by_key(|&i| out[i]).unwrap_or(0);
        out[smallest] *= f;
    }
    out.sort_unstable_by(|a, b| b.cmp(a));
    out
}

/// splitmix64: the motifs' deterministic draws.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// `x` with `a * x = 1 (mod n)`, for `a` coprime to `n`.
fn inverse(a: u64, n: u64) -> u64 {
    let (mut t, mut nt, mut r, mut nr) = (0i128, 1i128, n as i128, a as i128);
    while nr != 0 {
        let q = r / nr;
        (t, nt) = (nt, t - q * nt);
        (r, nr) = (nr, r - q * nr);
    }
    t.rem_euclid(n as i128) as u64
}

impl Params {
    /// The permutation of iteration `it` of `random`: `r -> a r + b mod n`,
    /// `a` coprime to `n`, both drawn from the seed.
    fn permutation(&self, it: u64) -> (u64, u64) {
        let n = u64::from(self.ranks.max(1));
        let h = mix(self.seed ^ mix(it));
        let mut a = 1 + h % n.max(2);
        while gcd(a, n) != 1 {
            a = a % n + 1;
        }
        (a % n.max(1), mix(h) % n)
    }

    /// The size of the message rank `from` sends in iteration `it` of
    /// `random`: 1 to twice `bytes`.
    fn random_size(&self, it: u64, from: u32) -> u64 {
        1 + mix(self.seed ^ mix(it ^ (u64::from(from) << 32))) % (2 * self.bytes.max(1))
    }

    /// Rank `r`'s calls in iteration `it`, appended to `out`.
    pub fn iteration(&self, r: u32, it: u64, out: &mut Vec<Call>) {
        let n = self.ranks;
        let b = self.bytes;
        out.push(Call::Compute(self.compute_ns));
        match self.motif {
            Motif::Halo2d | Motif::Halo3d => {
                let d = if self.motif == Motif::Halo2d { 2 } else { 3 };
                let shape = dims(n, d);
                let nb = neighbours(&shape, r);
                // Receive from side s with tag s; a neighbour on my side s
                // sends with its side s ^ 1, which is mine s.
                for (s, &from) in nb.iter().enumerate() {
                    out.push(Call::Irecv {
                        from,
                        tag: s as i64,
                        bytes: b,
                    });
                }
                for (s, &to) in nb.iter().enumerate() {
                    out.push(Call::Isend {
                        to,
                        tag: (s ^ 1) as i64,
                        bytes: b,
                    });
                }
                out.push(Call::Waitall);
                if self.allreduce_every > 0 && (it + 1).is_multiple_of(self.allreduce_every) {
                    out.push(Call::Allreduce(8));
                }
            }
            Motif::Allreduce => out.push(Call::Allreduce(b)),
            Motif::Alltoall => out.push(Call::Alltoall(b)),
            Motif::Bcast => out.push(Call::Bcast {
                bytes: b,
                root: (it % u64::from(n.max(1))) as u32,
            }),
            Motif::Sweep3d => self.sweep(r, it, out),
            Motif::Random => {
                let (a, c) = self.permutation(it);
                let m = u64::from(n.max(1));
                let to = ((a * u64::from(r) + c) % m) as u32;
                let from = ((inverse(a, m) * ((u64::from(r) + m - c) % m)) % m) as u32;
                out.push(Call::Irecv {
                    from,
                    tag: 0,
                    bytes: self.random_size(it, from),
                });
                out.push(Call::Isend {
                    to,
                    tag: 0,
                    bytes: self.random_size(it, r),
                });
                out.push(Call::Waitall);
            }
            Motif::Incast => {
                if r == 0 {
                    for from in 1..n {
                        out.push(Call::Irecv {
                            from,
                            tag: 0,
                            bytes: b,
                        });
                    }
                } else {
                    out.push(Call::Isend {
                        to: 0,
                        tag: 0,
                        bytes: b,
                    });
                }
                out.push(Call::Waitall);
            }
        }
    }

    /// Sweep3D's wavefront: from corner `it mod 4`, receive from the
    /// upstream neighbours, compute (already pushed: the burst moves after
    /// the receives), send downstream.
    fn sweep(&self, r: u32, it: u64, out: &mut Vec<Call>) {
        let shape = dims(self.ranks, 2);
        let (w, h) = (shape[1] as i64, shape[0] as i64);
        let (x, y) = (i64::from(r) % w, i64::from(r) / w);
        let (dx, dy) = match it % 4 {
            0 => (1, 1),
            1 => (-1, 1),
            2 => (-1, -1),
            _ => (1, -1),
        };
        let at = |x: i64, y: i64| (x >= 0 && x < w && y >= 0 && y < h).then(|| (y * w + x) as u32);
        let compute = out.pop().expect("the burst was pushed first");
        if let Some(from) = at(x - dx, y) {
            out.push(Call::Recv {
                from,
                tag: 0,
                bytes: self.bytes,
            });
        }
        if let Some(from) = at(x, y - dy) {
            out.push(Call::Recv {
                from,
                tag: 1,
                bytes: self.bytes,
            });
        }
        out.push(compute);
        if let Some(to) = at(x + dx, y) {
            out.push(Call::Send {
                to,
                tag: 0,
                bytes: self.bytes,
            });
        }
        if let Some(to) = at(x, y + dy) {
            out.push(Call::Send {
                to,
                tag: 1,
                bytes: self.bytes,
            });
        }
    }

    /// Rank `r`'s MPI calls in iteration `it` into `out` (cleared first),
    /// each with its routine and the CPU burst before it, ns; `scratch`
    /// holds the iteration's raw calls.
    pub fn timed_iteration(&self, r: u32, it: u64, scratch: &mut Vec<Call>, out: &mut Vec<(Call, u32, u64)>) {
        scratch.clear();
        out.clear();
        self.iteration(r, it, scratch);
        let mut gap = 0;
        for c in scratch.iter() {
            match (c.routine(), c) {
                (Some(routine), _) => {
                    out.push((*c, routine, gap));
                    gap = 0;
                }
                (None, Call::Compute(ns)) => gap += ns,
                (None, _) => {}
            }
        }
    }

    /// Calls per rank, Init and Finalize included, for progress figures.
    pub fn calls_per_rank_estimate(&self) -> u64 {
        let per = match self.motif {
            Motif::Halo2d => 9,
            Motif::Halo3d => 13,
            Motif::Random => 3,
            Motif::Incast => 2,
            Motif::Sweep3d => 4,
            _ => 1,
        };
        2 + self.iterations * per
    }
}

/// The neighbours of `r` on a periodic grid of `shape` (slowest dimension
/// first): for each dimension, the one below then the one above.
pub fn neighbours(shape: &[u32], r: u32) -> Vec<u32> {
    let mut coords = vec![0u32; shape.len()];
    let mut left = r;
    for i in (0..shape.len()).rev() {
        coords[i] = left % shape[i];
        left /= shape[i];
    }
    let rank = |c: &[u32]| c.iter().zip(shape).fold(0u32, |acc, (&x, &s)| acc * s + x);
    let mut out = Vec::with_capacity(2 * shape.len());
    for i in 0..shape.len() {
        for step in [shape[i] - 1, 1] {
            let mut c = coords.clone();
            c[i] = (c[i] + step) % shape[i];
            out.push(rank(&c));
        }
    }
    out
}

#[cfg(test)]
mod tests;
