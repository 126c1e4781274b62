//! Checks every algorithm over many communicator sizes and roots: the
//! steps of all tasks pair up, replay without deadlock, send what the
//! algorithm's formula says, and (broadcast-like ones) only forward data
//! already received; a few are compared step by step with lists worked
//! out by hand from SimGrid's code.

use crate::algorithms::exchange::{alltoall_ompi_pick, Pick};
use crate::algorithms::{algorithms_of, default_algorithm, expand, log2_ceil, Shape, Step};
use pnmpi_trace::routine::Coll;
use std::collections::HashMap;

fn sizes() -> Vec<u32> {
    (1..=17).chain([32, 64]).collect()
}

fn roots(p: u32) -> Vec<u32> {
    let mut r = vec![0, 1 % p, p / 2, p - 1];
    r.sort_unstable();
    r.dedup();
    r
}

fn shape(coll: Coll, size: u32, me: u32, root: u32, bytes: u64) -> Shape {
    Shape {
        coll,
        size,
        me,
        root,
        bytes,
    }
}

fn expand_all(coll: Coll, name: &str, p: u32, root: u32, bytes: u64) -> Vec<Vec<Step>> {
    (0..p)
        .map(|me| {
            let mut v = Vec::new();
            expand(name, &shape(coll, p, me, root, bytes), &mut v);
            v
        })
        .collect()
}

/// (a): per (src, dst), the sends and the receives agree in number and
/// sizes, in order; no task messages itself.
fn check_pairing(steps: &[Vec<Step>]) -> Result<(), String> {
    let mut sends: HashMap<(u32, u32), Vec<u64>> = HashMap::new();
    let mut recvs: HashMap<(u32, u32), Vec<u64>> = HashMap::new();
    for (me, list) in steps.iter().enumerate() {
        let me = me as u32;
        for st in list {
            match *st {
                Step::Isend { to, bytes } => sends.entry((me, to)).or_default().push(bytes),
                Step::Irecv { from, bytes } => recvs.entry((from, me)).or_default().push(bytes),
                Step::WaitAll => {}
            }
            if matches!(*st, Step::Isend { to, .. } | Step::Irecv { from: to, .. } if to == me) {
                return Err(format!("task {me} messages itself"));
            }
            if matches!(*st, Step::Isend { to, .. } | Step::Irecv { from: to, .. } if to as usize >= steps.len())
            {
                return Err(format!("task {me} names a peer out of range: {st:?}"));
            }
        }
    }
    for (k, v) in &sends {
        if recvs.get(k) != Some(v) {
            return Err(format!("{k:?}: sends {v:?} but receives {:?}", recvs.get(k)));
        }
    }
    for (k, v) in &recvs {
        if !sends.contains_key(k) {
            return Err(format!("{k:?}: receives {v:?} never sent"));
        }
    }
    Ok(())
}

/// An operation posted since the task's last `WaitAll`: (is a send,
/// source, destination, its index among that pair's messages, bytes).
type Posted = (bool, u32, u32, usize, u64);

/// What the round simulation saw.
#[derive(Default)]
struct Replay {
    /// Per task: the WaitAll at which its first receive completed.
    got_data_at: Vec<Option<usize>>,
}

/// (b): tasks advance step by step; a `WaitAll` blocks until all its
/// posted operations completed. Receives complete once the matching send
/// is posted; sends of at most `eager` bytes complete at once, larger
/// ones once the matching receive is posted (FIFO per pair). With
/// `source` set, a non-source task may only post a send after a receive
/// of its completed (data flow of a broadcast or scatter).
fn simulate(steps: &[Vec<Step>], eager: u64, source: Option<u32>) -> Result<Replay, String> {
    let p = steps.len();
    let mut pc = vec![0usize; p];
    let mut pending: Vec<Vec<Posted>> = vec![Vec::new(); p];
    let mut nsend: HashMap<(u32, u32), usize> = HashMap::new();
    let mut nrecv: HashMap<(u32, u32), usize> = HashMap::new();
    let mut rep = Replay {
        got_data_at: vec![None; p],
    };
    let mut clock = 0usize;
    loop {
        let mut progress = false;
        for t in 0..p {
            while pc[t] < steps[t].len() {
                let me = t as u32;
                match steps[t][pc[t]] {
                    Step::Isend { to, bytes } => {
                        if let Some(src) = source {
                            if me != src && rep.got_data_at[t].is_none() {
                                return Err(format!("task {me} sends to {to} before it received"));
                            }
                        }
                        let k = nsend.entry((me, to)).or_default();
                        pending[t].push((true, me, to, *k, bytes));
                        *k += 1;
                    }
                    Step::Irecv { from, bytes } => {
                        let k = nrecv.entry((from, me)).or_default();
                        pending[t].push((false, from, me, *k, bytes));
                        *k += 1;
                    }
                    Step::WaitAll => {
                        let done = pending[t].iter().all(|&(is_send, s, d, k, bytes)| {
                            if is_send {
                                bytes <= eager || nrecv.get(&(s, d)).copied().unwrap_or(0) > k
                            } else {
                                nsend.get(&(s, d)).copied().unwrap_or(0) > k
                            }
                        });
                        if !done {
                            break;
                        }
                        if pending[t].iter().any(|o| !o.0) && rep.got_data_at[t].is_none() {
                            rep.got_data_at[t] = Some(clock);
                        }
                        clock += 1;
                        pending[t].clear();
                    }
                }
                pc[t] += 1;
                progress = true;
            }
        }
        if (0..p).all(|t| pc[t] == steps[t].len()) {
            if let Some(t) = (0..p).find(|&t| !pending[t].is_empty()) {
                return Err(format!("task {t} ends with operations not waited for"));
            }
            return Ok(rep);
        }
        if !progress {
            let stuck: Vec<_> = (0..p).filter(|&t| pc[t] < steps[t].len()).collect();
            return Err(format!("deadlock; blocked tasks {stuck:?}"));
        }
    }
}

/// Messages and bytes over all tasks.
fn totals(steps: &[Vec<Step>]) -> (u64, u64) {
    let mut n = 0;
    let mut b = 0;
    for st in steps.iter().flatten() {
        if let Step::Isend { bytes, .. } = *st {
            n += 1;
            b += bytes;
        }
    }
    (n, b)
}

fn floor_pow2(p: u32) -> u32 {
    1 << (31 - p.leading_zeros())
}

/// Tasks in the binomial subtree of relative rank v (v ≥ 1).
fn subtree(v: u32, p: u32) -> u64 {
    u64::from((v & v.wrapping_neg()).min(p - v))
}

/// (c): the expected (messages, bytes) of an algorithm, from its formula.
fn formula(coll: Coll, name: &str, p: u32, b: u64) -> Option<(u64, u64)> {
    let pu = u64::from(p);
    let lg = u64::from(log2_ceil(p));
    let pof2 = u64::from(floor_pow2(p));
    let lg2 = u64::from(pof2.trailing_zeros());
    let binomial_blocks: u64 = (1..p).map(|v| subtree(v, p)).sum();
    Some(match (coll, name) {
        (Coll::Barrier, "ompi_basic_linear" | "default") => (2 * (pu - 1), 0),
        (Coll::Barrier, "ompi_recursivedoubling") => (pof2 * lg2 + 2 * (pu - pof2), 0),
        (Coll::Barrier, "ompi_bruck") => (pu * lg, 0),
        (Coll::Bcast, _) | (Coll::Reduce, _) => (pu - 1, (pu - 1) * b),
        (Coll::Allreduce, "redbcast" | "default") => (2 * (pu - 1), 2 * (pu - 1) * b),
        (Coll::Allreduce, "rdb") => (pof2 * lg2 + 2 * (pu - pof2), (pof2 * lg2 + 2 * (pu - pof2)) * b),
        (Coll::Allreduce, "lr") if b >= pu => {
            let ring = 2 * pu * (pu - 1);
            let (n, by) = if !b.is_multiple_of(pu) {
                (2 * (pu - 1), 2 * (pu - 1) * (b % pu))
            } else {
                (0, 0)
            };
            (ring + n, ring * (b / pu) + by)
        }
        (Coll::Allreduce, "lr") => (2 * (pu - 1), 2 * (pu - 1) * b),
        (Coll::ReduceScatter, _) => (
            2 * (pu - 1),
            (pu - 1) * b + b - (b / pu + u64::from(!b.is_multiple_of(pu))),
        ),
        (Coll::Scan, _) => (pu * (pu - 1) / 2, pu * (pu - 1) / 2 * b),
        (Coll::Gather | Coll::Scatter, "ompi_binomial") => (pu - 1, binomial_blocks * b),
        (Coll::Gather | Coll::Scatter, _) => (pu - 1, (pu - 1) * b),
        (Coll::Allgather, "default" | "ring") => (pu * (pu - 1), pu * (pu - 1) * b),
        (Coll::Allgather, "bruck") => (pu * lg, pu * (pu - 1) * b),
        (Coll::Allgather, "rdb") if pof2 == pu => (pu * lg, pu * (pu - 1) * b),
        (Coll::Allgather, "rdb") => return None,
        (Coll::Alltoall, "bruck") => {
            let blocks: u64 = (0..lg)
                .map(|k| (1..pu).filter(|x| x & (1 << k) != 0).count() as u64)
                .sum();
            (pu * lg, pu * blocks * b)
        }
        (Coll::Alltoall, "default" | "ompi") => return None,
        (Coll::Alltoall, _) => (pu * (pu - 1), pu * (pu - 1) * b),
        _ => return None,
    })
}

#[test]
fn every_algorithm_pairs_replays_and_matches_its_formula() {
    for coll in Coll::ALL {
        for name in algorithms_of(coll) {
            for p in sizes() {
                for root in roots(p) {
                    for bytes in [0u64, 10, 1000, 1003, 100_000] {
                        let what = format!("{coll:?}/{name} P={p} root={root} bytes={bytes}");
                        let steps = expand_all(coll, name, p, root, bytes);
                        check_pairing(&steps).unwrap_or_else(|e| panic!("{what}: {e}"));
                        for eager in [0, u64::MAX] {
                            simulate(&steps, eager, None)
                                .unwrap_or_else(|e| panic!("{what} eager={eager}: {e}"));
                        }
                        if let Some(want) = formula(coll, name, p, bytes) {
                            assert_eq!(totals(&steps), want, "{what}: (messages, bytes)");
                        }
                    }
                }
            }
        }
    }
}

/// Bytes a task's steps receive.
fn received(list: &[Step]) -> u64 {
    list.iter()
        .map(|s| match *s {
            Step::Irecv { bytes, .. } => bytes,
            _ => 0,
        })
        .sum()
}

#[test]
fn gathering_algorithms_deliver_every_block_once() {
    for p in sizes() {
        for name in algorithms_of(Coll::Allgather) {
            let steps = expand_all(Coll::Allgather, name, p, 0, 7);
            for (t, list) in steps.iter().enumerate() {
                let got = received(list);
                assert_eq!(got, u64::from(p - 1) * 7, "allgather/{name} P={p} task {t}");
            }
        }
        for root in roots(p) {
            let steps = expand_all(Coll::Gather, "ompi_binomial", p, root, 5);
            let at_root = received(&steps[root as usize]);
            assert_eq!(
                at_root,
                u64::from(p - 1) * 5,
                "gather/ompi_binomial P={p} root={root}"
            );
        }
    }
}

#[test]
fn broadcasts_forward_only_what_they_received() {
    for p in sizes() {
        for root in roots(p) {
            for (coll, name) in [
                (Coll::Bcast, "binomial_tree"),
                (Coll::Bcast, "flattree"),
                (Coll::Scatter, "ompi_binomial"),
                (Coll::Scatter, "default"),
                (Coll::Scatter, "ompi_basic_linear"),
            ] {
                let what = format!("{coll:?}/{name} P={p} root={root}");
                let steps = expand_all(coll, name, p, root, 64);
                let rep = simulate(&steps, 0, Some(root)).unwrap_or_else(|e| panic!("{what}: {e}"));
                for (t, list) in steps.iter().enumerate() {
                    let recvs: Vec<u32> = list
                        .iter()
                        .filter_map(|s| {
                            if let Step::Irecv { from, .. } = *s {
                                Some(from)
                            } else {
                                None
                            }
                        })
                        .collect();
                    if t as u32 == root {
                        assert!(recvs.is_empty(), "{what}: root receives");
                    } else {
                        // One parent, which had the data before this task got it.
                        assert_eq!(recvs.len(), 1, "{what}: task {t} receives {recvs:?}");
                        let parent = recvs[0] as usize;
                        if parent as u32 != root {
                            assert!(
                                rep.got_data_at[parent] < rep.got_data_at[t],
                                "{what}: task {t} before parent {parent}"
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn binomial_bcast_tree_is_simgrids() {
    // bcast__binomial_tree, P=5, root 1: relative ranks 0..4 are tasks
    // 1,2,3,4,0; the root sends to relative 4, 2, 1 (tasks 0, 3, 2).
    use Step::{Irecv as R, Isend as S, WaitAll as W};
    let steps = expand_all(Coll::Bcast, "binomial_tree", 5, 1, 8);
    let want: Vec<Vec<Step>> = vec![
        vec![R { from: 1, bytes: 8 }, W],
        vec![
            S { to: 0, bytes: 8 },
            W,
            S { to: 3, bytes: 8 },
            W,
            S { to: 2, bytes: 8 },
            W,
        ],
        vec![R { from: 1, bytes: 8 }, W],
        vec![R { from: 1, bytes: 8 }, W, S { to: 4, bytes: 8 }, W],
        vec![R { from: 3, bytes: 8 }, W],
    ];
    assert_eq!(steps, want);
}

#[test]
fn rdb_allreduce_non_power_of_two_is_simgrids() {
    // allreduce__rdb, P=6: pof2 4, rem 2. Task 0 hands over to 1 and
    // waits for the result; 1 (new rank 0) swaps with 3 then 4; 4 (new
    // rank 2) swaps with 5 then 1.
    use Step::{Irecv as R, Isend as S, WaitAll as W};
    let steps = expand_all(Coll::Allreduce, "rdb", 6, 0, 4);
    assert_eq!(
        steps[0],
        vec![S { to: 1, bytes: 4 }, W, R { from: 1, bytes: 4 }, W]
    );
    assert_eq!(
        steps[1],
        vec![
            R { from: 0, bytes: 4 },
            W,
            S { to: 3, bytes: 4 },
            R { from: 3, bytes: 4 },
            W,
            S { to: 4, bytes: 4 },
            R { from: 4, bytes: 4 },
            W,
            S { to: 0, bytes: 4 },
            W
        ]
    );
    assert_eq!(
        steps[4],
        vec![
            S { to: 5, bytes: 4 },
            R { from: 5, bytes: 4 },
            W,
            S { to: 1, bytes: 4 },
            R { from: 1, bytes: 4 },
            W
        ]
    );
}

#[test]
fn binomial_gather_sizes_are_simgrids() {
    // gather__ompi_binomial, P=6, root 0: in-order tree 0:{1,2,4},
    // 2:{3}, 4:{5}; task 4 receives 1 block from 5, sends 2 to 0.
    use Step::{Irecv as R, Isend as S, WaitAll as W};
    let steps = expand_all(Coll::Gather, "ompi_binomial", 6, 0, 10);
    assert_eq!(
        steps[0],
        vec![
            R { from: 1, bytes: 10 },
            W,
            R { from: 2, bytes: 20 },
            W,
            R { from: 4, bytes: 20 },
            W
        ]
    );
    assert_eq!(
        steps[4],
        vec![R { from: 5, bytes: 10 }, W, S { to: 0, bytes: 20 }, W]
    );
    assert_eq!(steps[5], vec![S { to: 4, bytes: 10 }, W]);
}

#[test]
fn defaults_are_simgrids_replay_defaults() {
    let want = [
        (Coll::Barrier, "ompi_basic_linear"),
        (Coll::Bcast, "binomial_tree"),
        (Coll::Reduce, "default"),
        (Coll::Allreduce, "redbcast"),
        (Coll::ReduceScatter, "default"),
        (Coll::Scan, "default"),
        (Coll::Gather, "default"),
        (Coll::Scatter, "default"),
        (Coll::Allgather, "default"),
        (Coll::Alltoall, "ompi"),
    ];
    for (c, n) in want {
        assert_eq!(default_algorithm(c), n, "{c:?}");
        assert!(algorithms_of(c).contains(&"default"), "{c:?} accepts `default`");
    }
}

#[test]
fn ompi_alltoall_decision() {
    assert_eq!(alltoall_ompi_pick(2, 1), Pick::Pair);
    assert_eq!(alltoall_ompi_pick(2, 100), Pick::Pair);
    assert_eq!(alltoall_ompi_pick(2, 1000), Pick::Linear);
    assert_eq!(alltoall_ompi_pick(4, 600_000), Pick::Pair);
    assert_eq!(alltoall_ompi_pick(12, 1 << 30), Pick::Linear);
    assert_eq!(alltoall_ompi_pick(16, 2), Pick::Linear);
    assert_eq!(alltoall_ompi_pick(16, 100), Pick::Bruck);
    assert_eq!(alltoall_ompi_pick(64, 1000), Pick::Bruck);
    assert_eq!(alltoall_ompi_pick(64, 300_000), Pick::Pair);
    assert_eq!(alltoall_ompi_pick(5000, 2000), Pick::Bruck);
    // What the default expands to follows the pick.
    let steps = expand_all(Coll::Alltoall, "default", 16, 0, 100);
    assert_eq!(steps, expand_all(Coll::Alltoall, "bruck", 16, 0, 100));
}

/// Bytes task `from` sends task `to` in the `v` checks: unequal per pair.
fn pair_bytes(from: u32, to: u32) -> u64 {
    100 + u64::from((from * 7 + to * 13) % 11) * 1000
}

#[test]
fn v_collectives_pair_up_with_each_peers_bytes_and_replay() {
    use super::vector::expand_v;
    use crate::input::VCounts;
    for p in sizes() {
        for root in roots(p) {
            for coll in [
                Coll::Alltoall,
                Coll::Allgather,
                Coll::Gather,
                Coll::Scatter,
                Coll::ReduceScatter,
            ] {
                let steps: Vec<Vec<Step>> = (0..p)
                    .map(|me| {
                        // Each task's own view of the call, as the tracer records it.
                        let (bytes, counts) = match coll {
                            Coll::Alltoall => (
                                0,
                                VCounts {
                                    send: (0..p).map(|j| pair_bytes(me, j)).collect(),
                                    recv: (0..p).map(|j| pair_bytes(j, me)).collect(),
                                },
                            ),
                            Coll::Allgather | Coll::Gather => (
                                pair_bytes(me, 0),
                                VCounts {
                                    send: Vec::new(),
                                    recv: (0..p).map(|j| pair_bytes(j, 0)).collect(),
                                },
                            ),
                            Coll::Scatter => (
                                pair_bytes(me, 0),
                                VCounts {
                                    send: (0..p).map(|j| pair_bytes(j, 0)).collect(),
                                    recv: Vec::new(),
                                },
                            ),
                            _ => (
                                0,
                                VCounts {
                                    send: Vec::new(),
                                    recv: (0..p).map(|j| pair_bytes(j, 0)).collect(),
                                },
                            ),
                        };
                        let mut v = Vec::new();
                        expand_v(&shape(coll, p, me, root, bytes), &counts, &mut v);
                        v
                    })
                    .collect();
                let what = format!("{coll:?} p={p} root={root}");
                check_pairing(&steps).unwrap_or_else(|e| panic!("{what}: {e}"));
                simulate(&steps, 0, None).unwrap_or_else(|e| panic!("{what}: {e}"));
                // Each pair's message carries its own count.
                if coll == Coll::Alltoall {
                    for (me, list) in steps.iter().enumerate() {
                        for st in list {
                            if let Step::Isend { to, bytes } = *st {
                                assert_eq!(bytes, pair_bytes(me as u32, to), "{what}");
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn a_member_is_charged_its_largest_block_and_a_v_collective_runs_its_v_form() {
    use super::{charged, steps, Member};
    use crate::input::VCounts;
    // An alltoallv member: the mean block it sends is 20, its largest
    // block 70 (received).
    let v = VCounts {
        send: vec![0, 10, 50],
        recv: vec![70, 0, 5],
    };
    let m = Member {
        bytes: 20,
        counts: Some(Box::new(v.clone())),
    };
    assert_eq!(m.charged(), 70);
    assert_eq!(charged(20, None), 20);
    assert_eq!(Member::of(8).charged(), 8);
    // A reduce-scatter's whole vector is above every share.
    assert_eq!(
        charged(
            300,
            Some(&VCounts {
                send: vec![],
                recv: vec![100, 200]
            })
        ),
        300
    );
    // With per-peer bytes, the `v` form whatever the algorithm's name.
    let s = Shape {
        coll: Coll::Alltoall,
        size: 3,
        me: 0,
        root: 0,
        bytes: 20,
    };
    let mut got = Vec::new();
    steps("pair", &s, Some(&v), &mut got);
    let sends: Vec<u64> = got
        .iter()
        .filter_map(|st| match st {
            Step::Isend { bytes, .. } => Some(*bytes),
            _ => None,
        })
        .collect();
    assert_eq!(sends, vec![10, 50]);
}
