use super::*;
use std::collections::HashMap;

fn params(motif: Motif, ranks: u32) -> Params {
    Params {
        motif,
        ranks,
        iterations: 8,
        bytes: 1000,
        compute_ns: 500,
        allreduce_every: 3,
        seed: 7,
    }
}

#[test]
fn dims_are_balanced_like_mpi_dims_create() {
    assert_eq!(dims(12, 2), [4, 3]);
    assert_eq!(dims(64, 3), [4, 4, 4]);
    assert_eq!(dims(1024, 3), [16, 8, 8]);
    assert_eq!(dims(7, 2), [7, 1]);
    assert_eq!(dims(1, 3), [1, 1, 1]);
}

#[test]
fn neighbours_on_opposite_sides_name_each_other() {
    for shape in [vec![4u32, 3], vec![2, 2, 2], vec![5, 1, 3], vec![1, 1]] {
        let n: u32 = shape.iter().product();
        for r in 0..n {
            let nb = neighbours(&shape, r);
            for (s, &q) in nb.iter().enumerate() {
                assert_eq!(neighbours(&shape, q)[s ^ 1], r, "{shape:?} rank {r} side {s}");
            }
        }
    }
}

/// Every message any motif sends has one receive of the same source,
/// tag and size, and the other way round, at rank counts that are prime,
/// square, cubic and tiny.
#[test]
fn every_send_has_its_receive_in_every_motif() {
    for &(motif, name, _) in MOTIFS {
        for ranks in [1u32, 2, 7, 12, 27, 64] {
            let p = params(motif, ranks);
            let mut balance: HashMap<(u32, u32, i64, u64), i64> = HashMap::new();
            let mut colls = vec![0usize; ranks as usize];
            let mut calls = Vec::new();
            for r in 0..ranks {
                for it in 0..p.iterations {
                    calls.clear();
                    p.iteration(r, it, &mut calls);
                    for c in &calls {
                        match *c {
                            Call::Isend { to, tag, bytes } | Call::Send { to, tag, bytes } => {
                                *balance.entry((r, to, tag, bytes)).or_default() += 1
                            }
                            Call::Irecv { from, tag, bytes } | Call::Recv { from, tag, bytes } => {
                                *balance.entry((from, r, tag, bytes)).or_default() -= 1
                            }
                            Call::Allreduce(_) | Call::Alltoall(_) | Call::Bcast { .. } => {
                                colls[r as usize] += 1
                            }
                            _ => {}
                        }
                    }
                }
            }
            let unmatched: Vec<_> = balance.iter().filter(|(_, &v)| v != 0).collect();
            assert!(unmatched.is_empty(), "{name} at {ranks}: {unmatched:?}");
            assert!(
                colls.iter().all(|&c| c == colls[0]),
                "{name} at {ranks}: collectives {colls:?}"
            );
        }
    }
}

#[test]
fn random_draws_a_permutation_each_iteration() {
    let p = params(Motif::Random, 30);
    let mut calls = Vec::new();
    let mut targets = Vec::new();
    for it in 0..20 {
        let mut seen = [false; 30];
        for r in 0..30 {
            calls.clear();
            p.iteration(r, it, &mut calls);
            let Some(Call::Isend { to, .. }) = calls.iter().find(|c| matches!(c, Call::Isend { .. })) else {
                panic!("no send: {calls:?}");
            };
            assert!(!seen[*to as usize], "iteration {it}: two ranks send to {to}");
            seen[*to as usize] = true;
            if r == 0 {
                targets.push(*to);
            }
        }
    }
    // Not the same pattern every iteration.
    targets.dedup();
    assert!(targets.len() > 5, "{targets:?}");
}

#[test]
fn motif_names_parse_and_unknown_ones_are_listed() {
    for &(m, name, _) in MOTIFS {
        assert_eq!(name.parse::<Motif>(), Ok(m));
        assert_eq!(m.to_string(), name);
    }
    let e = "halo4d".parse::<Motif>().unwrap_err();
    assert!(e.contains("halo4d") && e.contains("sweep3d"), "{e}");
}
