use super::*;

fn links(spec: &[(f64, bool)]) -> Vec<Link> {
    spec.iter()
        .map(|&(bandwidth, fatpipe)| Link {
            bandwidth,
            latency: 0.0,
            sharing: if fatpipe {
                Sharing::Fatpipe
            } else {
                Sharing::Shared
            },
        })
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn equal_flows_split_a_link_and_penalties_weigh_the_shares() {
    let mut m = MaxMin::new(&links(&[(10.0, false), (8.0, false)]));
    let a = m.add(1.0, f64::INFINITY, &[0]);
    let b = m.add(1.0, f64::INFINITY, &[0]);
    m.solve();
    assert_eq!((m.rate(a), m.rate(b)), (5.0, 5.0));
    // Penalties 1 and 3 on 8: rates 6 and 2 (level 6: 6/1 + 6/3 = 8).
    let c = m.add(1.0, f64::INFINITY, &[1]);
    let d = m.add(3.0, f64::INFINITY, &[1]);
    m.solve();
    assert!(
        close(m.rate(c), 6.0) && close(m.rate(d), 2.0),
        "{} {}",
        m.rate(c),
        m.rate(d)
    );
}

#[test]
fn the_bottleneck_fixes_first_and_the_rest_takes_what_remains() {
    // A (10): f1, f2; B (4): f2, f3. B saturates at 2 each; f1 gets 8.
    let mut m = MaxMin::new(&links(&[(10.0, false), (4.0, false)]));
    let f1 = m.add(1.0, f64::INFINITY, &[0]);
    let f2 = m.add(1.0, f64::INFINITY, &[0, 1]);
    let f3 = m.add(1.0, f64::INFINITY, &[1]);
    m.solve();
    assert_eq!((m.rate(f1), m.rate(f2), m.rate(f3)), (8.0, 2.0, 2.0));
    // f3 ends: B alone holds f2 at 4, f1 takes the 6 left of A.
    m.remove(f3);
    m.solve();
    assert_eq!((m.rate(f1), m.rate(f2)), (6.0, 4.0));
}

#[test]
fn a_bound_stops_a_flow_and_frees_the_rest_for_the_others() {
    let mut m = MaxMin::new(&links(&[(10.0, false)]));
    let a = m.add(1.0, 2.0, &[0]);
    let b = m.add(1.0, f64::INFINITY, &[0]);
    m.solve();
    assert_eq!((m.rate(a), m.rate(b)), (2.0, 8.0));
}

#[test]
fn a_fat_pipe_gives_every_flow_its_bandwidth_over_the_least_penalty() {
    // SimGrid's FATPIPE: usage is the largest 1/p, so the flow of penalty
    // 2 gets half of what the flow of penalty 1 gets.
    let mut m = MaxMin::new(&links(&[(10.0, true)]));
    let a = m.add(1.0, f64::INFINITY, &[0]);
    let b = m.add(1.0, f64::INFINITY, &[0]);
    let c = m.add(2.0, f64::INFINITY, &[0]);
    m.solve();
    assert_eq!((m.rate(a), m.rate(b), m.rate(c)), (10.0, 10.0, 5.0));
}

#[test]
fn a_solve_recomputes_only_the_flows_connected_to_a_change() {
    // Links 0-1 and 2-3 are two islands; a flow joining island 2-3
    // re-solves its island only.
    let mut m = MaxMin::new(&links(&[(10.0, false); 4]));
    let a = m.add(1.0, f64::INFINITY, &[0, 1]);
    let b = m.add(1.0, f64::INFINITY, &[1]);
    let c = m.add(1.0, f64::INFINITY, &[2]);
    let mut first = m.solve().to_vec();
    first.sort_unstable();
    assert_eq!(first, vec![a, b, c]);
    let d = m.add(1.0, f64::INFINITY, &[2, 3]);
    let mut again = m.solve().to_vec();
    again.sort_unstable();
    assert_eq!(again, vec![c, d]);
    assert_eq!((m.rate(a), m.rate(b), m.rate(c), m.rate(d)), (5.0, 5.0, 5.0, 5.0));
    assert!(m.solve().is_empty(), "nothing changed");
}

/// Max-min written plainly, for the random test: every round recomputes
/// each link's remainder and usage from the rates fixed so far, over
/// every flow; the next event is the least link level or the least
/// bound, over all open flows.
fn full_solve(links: &[Link], flows: &[(f64, f64, Vec<LinkId>)]) -> Vec<f64> {
    let mut rate = vec![f64::NAN; flows.len()];
    loop {
        let open: Vec<usize> = (0..flows.len()).filter(|&f| rate[f].is_nan()).collect();
        if open.is_empty() {
            return rate;
        }
        let mut level = f64::INFINITY;
        let mut at_link = vec![f64::INFINITY; links.len()];
        for (l, link) in links.iter().enumerate() {
            let on: Vec<usize> = (0..flows.len())
                .filter(|&f| flows[f].2.contains(&(l as u32)))
                .collect();
            let inv = on
                .iter()
                .filter(|&&f| rate[f].is_nan())
                .map(|&f| 1.0 / flows[f].0);
            let (remaining, usage) = if link.sharing == Sharing::Fatpipe {
                (link.bandwidth, inv.fold(0.0, f64::max))
            } else {
                let used: f64 = on.iter().filter(|&&f| !rate[f].is_nan()).map(|&f| rate[f]).sum();
                (link.bandwidth - used, inv.sum())
            };
            if usage > 0.0 {
                at_link[l] = remaining / usage;
                level = level.min(at_link[l]);
            }
        }
        let bound = open
            .iter()
            .map(|&f| flows[f].1 * flows[f].0)
            .fold(f64::INFINITY, f64::min);
        if bound < level {
            for &f in &open {
                if flows[f].1 * flows[f].0 == bound {
                    rate[f] = flows[f].1;
                }
            }
            continue;
        }
        for &f in &open {
            if flows[f]
                .2
                .iter()
                .any(|&l| at_link[l as usize] <= level * (1.0 + 1e-12))
            {
                rate[f] = level / flows[f].0;
            }
        }
    }
}

/// A flow of the random test: its penalty, its rate bound and its route.
type Flow = (f64, f64, Vec<LinkId>);

#[test]
fn incremental_solves_agree_with_a_full_solve_on_random_networks() {
    let mut rng = fastrand::Rng::with_seed(45);
    for round in 0..40 {
        let n = 3 + rng.usize(..12);
        let spec: Vec<(f64, bool)> = (0..n)
            .map(|_| (1e9 * (1.0 + 9.0 * rng.f64()), rng.u8(..8) == 0))
            .collect();
        let links = links(&spec);
        let mut m = MaxMin::new(&links);
        let mut live: Vec<(VarId, Flow)> = Vec::new();
        for step in 0..300 {
            if !live.is_empty() && rng.u8(..3) == 0 {
                let (v, _) = live.swap_remove(rng.usize(..live.len()));
                m.remove(v);
            } else {
                let mut route: Vec<LinkId> = (0..1 + rng.usize(..4)).map(|_| rng.u32(..n as u32)).collect();
                route.sort_unstable();
                route.dedup();
                // Drawn from continuous ranges: no two levels tie, as at a
                // tie a fat pipe's share depends on which link is taken
                // first, which rounding decides (in SimGrid too).
                let penalty = 5e-6 * (1.0 + 2.0 * rng.f64());
                let bound = if rng.u8(..4) == 0 {
                    1e8 * (1.0 + 50.0 * rng.f64())
                } else {
                    f64::INFINITY
                };
                let v = m.add(penalty, bound, &route);
                live.push((v, (penalty, bound, route)));
            }
            if rng.bool() {
                continue; // several changes, one solve
            }
            m.solve();
            let flows: Vec<_> = live.iter().map(|(_, f)| f.clone()).collect();
            let want = full_solve(&links, &flows);
            for ((v, _), w) in live.iter().zip(want) {
                let got = m.rate(*v);
                assert!(
                    (got - w).abs() <= 1e-6 * w,
                    "round {round} step {step}: flow {v} at {got}, the full solve says {w}\n{spec:?}\n{:?}",
                    live.iter()
                        .map(|(v, f)| (*v, f.clone(), m.rate(*v)))
                        .collect::<Vec<_>>()
                );
            }
        }
    }
}

#[test]
fn a_flow_becoming_active_on_a_link_marked_already_leaves_its_other_links_as_simgrid_does() {
    // Links a, b, c of 10. f1 alone on c, f2 alone on a; g1 over a, b and
    // g2 over b, c pay their latency, then become active together: g1
    // marks a, which follows it to b; g2's first link, b, is marked
    // already, so c is not, and f1 keeps its 10 while g2 gets 5 from b:
    // c carries 15, as SimGrid's selective update leaves it (smpirun
    // agrees flow for flow on the 4-host torus ring this stands for).
    let mut m = MaxMin::new(&links(&[(10.0, false), (10.0, false), (10.0, false)]));
    let f1 = m.add(1.0, f64::INFINITY, &[2]);
    let f2 = m.add(1.0, f64::INFINITY, &[0]);
    m.solve();
    let g1 = m.create(&[0, 1], 1.0, f64::INFINITY);
    let g2 = m.create(&[1, 2], 1.0, f64::INFINITY);
    m.solve();
    assert_eq!(
        (m.rate(f1), m.rate(f2)),
        (10.0, 10.0),
        "flows in their latency take nothing"
    );
    m.enable(g1);
    m.enable(g2);
    m.solve();
    assert_eq!((m.rate(f2), m.rate(g1), m.rate(g2)), (5.0, 5.0, 5.0));
    assert_eq!(m.rate(f1), 10.0, "c was not marked: f1 kept its rate");
    // f2 leaves: a is marked, and through g1 and g2 so are b and c.
    m.remove(f2);
    m.solve();
    assert_eq!((m.rate(g1), m.rate(g2), m.rate(f1)), (5.0, 5.0, 5.0));
}

/// A round as a plain scan finds it: every unsaturated link's level
/// computed afresh, the least kept, then those at it in their order.
fn scan_level(m: &mut MaxMin, at: &mut Vec<LinkId>) -> f64 {
    let level = m.light.iter().map(|&l| m.level(l)).fold(f64::INFINITY, f64::min);
    at.clear();
    at.extend(m.light.iter().copied().filter(|&l| m.level(l) == level));
    level
}

#[test]
fn the_level_heap_fills_as_a_full_scan_does_bit_for_bit_ties_included() {
    let mut rng = fastrand::Rng::with_seed(7);
    for round in 0..30 {
        let n = 4 + rng.usize(..60);
        // Few distinct bandwidths and penalties: many levels tie.
        let spec: Vec<(f64, bool)> = (0..n)
            .map(|_| (1e9 * [1.0, 2.0, 5.0, 10.0][rng.usize(..4)], rng.u8(..8) == 0))
            .collect();
        let links = links(&spec);
        let (mut heap, mut scan) = (MaxMin::new(&links), MaxMin::new(&links));
        let mut live: Vec<(VarId, bool)> = Vec::new();
        for step in 0..400 {
            match rng.u8(..4) {
                0 if !live.is_empty() => {
                    let (v, _) = live.swap_remove(rng.usize(..live.len()));
                    heap.remove(v);
                    scan.remove(v);
                }
                1 if live.iter().any(|&(_, active)| !active) => {
                    let waiting: Vec<usize> = (0..live.len()).filter(|&i| !live[i].1).collect();
                    let i = waiting[rng.usize(..waiting.len())];
                    heap.enable(live[i].0);
                    scan.enable(live[i].0);
                    live[i].1 = true;
                }
                _ => {
                    let route: Vec<LinkId> = (0..1 + rng.usize(..6)).map(|_| rng.u32(..n as u32)).collect();
                    let mut route = route;
                    route.dedup();
                    let penalty = 1e-6 * (1 + rng.u8(..3)) as f64;
                    let bound = if rng.u8(..4) == 0 {
                        1e9 * (1 + rng.u8(..4)) as f64
                    } else {
                        f64::INFINITY
                    };
                    let v = heap.create(&route, penalty, bound);
                    assert_eq!(scan.create(&route, penalty, bound), v);
                    live.push((v, false));
                }
            }
            if rng.bool() {
                continue;
            }
            let got = heap.solve().to_vec();
            let want = scan.solve_with(scan_level).to_vec();
            assert_eq!(got, want, "round {round} step {step}: the flows solved");
            for &(v, _) in &live {
                assert_eq!(
                    heap.rate(v).to_bits(),
                    scan.rate(v).to_bits(),
                    "round {round} step {step}: flow {v}"
                );
            }
        }
    }
}
