//! Exchange algorithms: rounds of `sendrecv` between partners given by
//! a shift around the ring (ring, Bruck, dissemination) or by flipping a
//! bit of the rank (recursive doubling, pairwise), after SimGrid's
//! `src/smpi/colls/{allgather,allreduce,alltoall,barrier}/*.cpp`.

use super::blocks::{recv, send, sendrecv};
use super::linear::allreduce_redbcast;
use super::shape::{Shape, Step};

/// One `sendrecv` round: send `sbytes` to `d` ranks to the right and
/// receive `rbytes` from `d` ranks to the left (`d` taken modulo P).
fn shift(s: &Shape, d: u32, sbytes: u64, rbytes: u64, out: &mut Vec<Step>) {
    let p = s.size;
    let d = d % p;
    sendrecv(out, (s.me + d) % p, sbytes, (s.me + p - d) % p, rbytes);
}

/// The largest power of two not above `p` (`p` ≥ 1).
fn floor_pow2(p: u32) -> u32 {
    1 << (31 - p.leading_zeros())
}

/// SimGrid's `barrier:ompi_recursivedoubling`: the tasks beyond the
/// largest power of two first report to a partner below it (`sendrecv`
/// for them, a receive for the partner), the power of two exchanges by
/// recursive doubling, then the partners release them.
pub(super) fn barrier_recursive_doubling(s: &Shape, out: &mut Vec<Step>) {
    let (p, me) = (s.size, s.me);
    let adj = floor_pow2(p);
    if me >= adj {
        sendrecv(out, me - adj, 0, me - adj, 0);
        return;
    }
    if me + adj < p {
        recv(out, me + adj, 0);
    }
    let mut mask = 1;
    while mask < adj {
        let peer = me ^ mask;
        sendrecv(out, peer, 0, peer, 0);
        mask <<= 1;
    }
    if me + adj < p {
        send(out, me + adj, 0);
    }
}

/// SimGrid's `barrier:ompi_bruck` (dissemination): ⌈log2 P⌉ rounds, in
/// round k send to `me + 2^k` and receive from `me - 2^k`.
pub(super) fn barrier_bruck(s: &Shape, out: &mut Vec<Step>) {
    let mut d = 1;
    while d < s.size {
        shift(s, d, 0, 0, out);
        d <<= 1;
    }
}

/// SimGrid's `allreduce:rdb` (MPICH recursive doubling). With P not a
/// power of two, the first 2·rem tasks (rem = P − 2^⌊log2 P⌋) pair up:
/// each even one hands its vector to the odd one above and sits out,
/// the rest exchange full vectors by recursive doubling, and the odd
/// ones finally return the result.
pub(super) fn allreduce_rdb(s: &Shape, out: &mut Vec<Step>) {
    let (p, me, b) = (s.size, s.me, s.bytes);
    let pof2 = floor_pow2(p);
    let rem = p - pof2;
    let newrank = if me < 2 * rem {
        if me % 2 == 0 {
            send(out, me + 1, b);
            None
        } else {
            recv(out, me - 1, b);
            Some(me / 2)
        }
    } else {
        Some(me - rem)
    };
    if let Some(nr) = newrank {
        let mut mask = 1;
        while mask < pof2 {
            let nd = nr ^ mask;
            let dst = if nd < rem { nd * 2 + 1 } else { nd + rem };
            sendrecv(out, dst, b, dst, b);
            mask <<= 1;
        }
    }
    if me < 2 * rem {
        if me % 2 == 1 {
            send(out, me - 1, b);
        } else {
            recv(out, me + 1, b);
        }
    }
}

/// SimGrid's `allreduce:lr` (logical ring): a ring reduce-scatter then a
/// ring allgather, 2(P−1) rounds of ⌊bytes/P⌋ to the right neighbour.
/// Counts are elements in SimGrid; a byte-counted trace replays with
/// one-byte elements, so the vector is `bytes` elements. Fewer elements
/// than tasks fall back to `allreduce:default`, and the ⌊bytes/P⌋·P
/// remainder is reduced afterwards by the same algorithm (which, being
/// under P elements, is the default one), as SimGrid does.
pub(super) fn allreduce_lr(s: &Shape, out: &mut Vec<Step>) {
    let p = u64::from(s.size);
    if s.bytes < p {
        return allreduce_redbcast(s, out);
    }
    let chunk = s.bytes / p;
    for _ in 0..2 * (s.size - 1) {
        shift(s, 1, chunk, chunk, out);
    }
    let rest = s.bytes % p;
    if rest > 0 {
        allreduce_redbcast(&Shape { bytes: rest, ..*s }, out);
    }
}

/// SimGrid's `allgather:ring`: P−1 rounds, in round i send the own block
/// to `me + i` and receive one from `me − i`.
pub(super) fn allgather_ring(s: &Shape, out: &mut Vec<Step>) {
    for i in 1..s.size {
        shift(s, i, s.bytes, s.bytes, out);
    }
}

/// SimGrid's `allgather:bruck`: the held blocks double each round (sent
/// to `me − 2^k`, received from `me + 2^k`), and a last round moves the
/// P − 2^⌊log2 P⌋ blocks still missing.
pub(super) fn allgather_bruck(s: &Shape, out: &mut Vec<Step>) {
    let p = s.size;
    let mut pof2 = 1;
    while pof2 <= p / 2 {
        let n = u64::from(pof2) * s.bytes;
        shift(s, p - pof2, n, n, out);
        pof2 *= 2;
    }
    let rem = p - pof2;
    if rem > 0 {
        let n = u64::from(rem) * s.bytes;
        shift(s, p - pof2, n, n, out);
    }
}

/// SimGrid's `allgather:rdb` (MPICH recursive doubling): in round k swap
/// everything held with `me xor 2^k`. With P not a power of two some
/// partners do not exist; then the tasks of the half that did receive
/// pass the partner subtree's blocks on down a binomial tree, as MPICH
/// does. Before round k a task holds the blocks of its aligned 2^k
/// subtree that exist, `min(2^k, P − subtree root)`.
pub(super) fn allgather_rdb(s: &Shape, out: &mut Vec<Step>) {
    let (p, me, b) = (i64::from(s.size), i64::from(s.me), s.bytes);
    let held = |root: i64, mask: i64| mask.min(p - root) as u64;
    let (mut have, mut last) = (1u64, 0u64);
    let (mut mask, mut i) = (1i64, 0u32);
    while mask < p {
        let dst = me ^ mask;
        let dst_root = dst >> i << i;
        let my_root = me >> i << i;
        if dst < p {
            let got = held(dst_root, mask);
            sendrecv(out, dst as u32, have * b, dst as u32, got * b);
            last = got;
            have += got;
        }
        if dst_root + mask > p {
            // Tasks of this subtree that got the partner's blocks.
            let done = p - my_root - mask;
            let mut k = i;
            let mut sub = mask >> 1;
            while sub > 0 {
                let peer = me ^ sub;
                let root = me >> k << k;
                if peer > me && me < root + done && peer >= root + done {
                    send(out, peer as u32, last * b);
                } else if peer < me && peer < root + done && me >= root + done {
                    recv(out, peer as u32, done as u64 * b);
                    last = done as u64;
                    have += last;
                }
                sub >>= 1;
                k = k.saturating_sub(1);
            }
        }
        mask <<= 1;
        i += 1;
    }
}

/// SimGrid's `alltoall:basic_linear`: receives posted from `me + 1`
/// upwards around the ring, then sends from `me − 1` downwards, then one
/// wait.
pub(super) fn alltoall_basic_linear(s: &Shape, out: &mut Vec<Step>) {
    let (p, me, bytes) = (s.size, s.me, s.bytes);
    out.extend((1..p).map(|i| Step::Irecv {
        from: (me + i) % p,
        bytes,
    }));
    out.extend((1..p).map(|i| Step::Isend {
        to: (me + p - i) % p,
        bytes,
    }));
    out.push(Step::WaitAll);
}

/// SimGrid's `alltoall:pair`: P−1 rounds, in round i swap one block with
/// `me xor i`. SimGrid refuses P not a power of two; here such P runs
/// `alltoall:ring`, which has the same rounds and volume.
pub(super) fn alltoall_pair(s: &Shape, out: &mut Vec<Step>) {
    if !s.size.is_power_of_two() {
        return alltoall_ring(s, out);
    }
    for i in 1..s.size {
        let peer = s.me ^ i;
        sendrecv(out, peer, s.bytes, peer, s.bytes);
    }
}

/// SimGrid's `alltoall:ring`: P−1 rounds, in round i send the block for
/// `me + i` and receive the one from `me − i`.
pub(super) fn alltoall_ring(s: &Shape, out: &mut Vec<Step>) {
    for i in 1..s.size {
        shift(s, i, s.bytes, s.bytes, out);
    }
}

/// SimGrid's `alltoall:bruck`: ⌈log2 P⌉ rounds; in round k every task
/// sends to `me + 2^k` (and receives from `me − 2^k`) the blocks whose
/// index in 1..P has bit k set.
pub(super) fn alltoall_bruck(s: &Shape, out: &mut Vec<Step>) {
    let mut pof2 = 1;
    while pof2 < s.size {
        let blocks = (1..s.size).filter(|blk| blk & pof2 != 0).count() as u64;
        let n = blocks * s.bytes;
        shift(s, pof2, n, n, out);
        pof2 <<= 1;
    }
}

/// Which algorithm SimGrid 3.32's `alltoall:ompi` picks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pick {
    Linear,
    Pair,
    Bruck,
}

/// SimGrid 3.32's `alltoall__ompi` decision (Open MPI's fixed rules,
/// `src/smpi/colls/smpi_openmpi_selector.cpp`, "Updated 02/2022"), from
/// the communicator size and the block size in bytes. Its
/// `linear_sync` and `two_proc` both run `basic_linear` in SimGrid.
pub(crate) fn alltoall_ompi_pick(p: u32, block: u64) -> Pick {
    use Pick::{Bruck as B, Linear as L, Pair as X};
    // Per communicator-size class: (block size below which, pick)...,
    // then the pick for larger blocks.
    let (rules, big): (&[(u64, Pick)], Pick) = match p {
        2 => (
            &[
                (2, X),
                (4, L),
                (16, X),
                (64, L),
                (256, X),
                (4096, L),
                (32768, X),
                (1048576, L),
            ],
            X,
        ),
        0..=7 => (&[(524288, L), (1048576, X)], L),
        8..=15 => (&[], L),
        16..=31 => (&[(4, L), (512, B)], L),
        32..=63 => (&[(512, B)], L),
        64..=127 => (&[(1024, B), (262144, L)], X),
        128..=255 => (&[(1024, B), (262144, L)], X),
        256..=511 => (&[(1024, B), (32768, L)], X),
        512..=1023 => (&[(512, B), (262144, L)], X),
        1024..=2047 => (&[(512, B)], L),
        2048..=4095 => (&[(1024, B)], L),
        _ => (&[(2048, B)], L),
    };
    rules
        .iter()
        .find(|(below, _)| block < *below)
        .map_or(big, |r| r.1)
}

/// SimGrid's `alltoall:ompi`, which its `default` selector runs: the
/// Open MPI decision above, then that algorithm.
pub(super) fn alltoall_ompi(s: &Shape, out: &mut Vec<Step>) {
    match alltoall_ompi_pick(s.size, s.bytes) {
        Pick::Linear => alltoall_basic_linear(s, out),
        Pick::Pair => alltoall_pair(s, out),
        Pick::Bruck => alltoall_bruck(s, out),
    }
}
