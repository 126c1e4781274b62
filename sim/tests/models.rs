//! The contention, PMaC and BCS models on constructed traces, against
//! hand-computed values.

use crate::common;

use common::{nodes, run, run_observed, Messages};

/// 1 us + 1 MB at 1 GB/s.
const T: f64 = 1000.0 + 1_000_000.0;

/// Rank r receives from r-1 and sends 1 MB to r+1, all posted at time 0.
fn ring4() -> Vec<String> {
    (0..4)
        .map(|r| {
            format!(
                "irecv {} 0 1000000\nisend {} 0 1000000\nwaitall",
                (r + 3) % 4,
                (r + 1) % 4
            )
        })
        .collect()
}

/// Ranks 1, 2, 3 each send 1 MB to rank 0 at time 0.
fn fan_in4() -> Vec<String> {
    let mut v = vec!["irecv 1 0 1000000\nirecv 2 0 1000000\nirecv 3 0 1000000\nwaitall".to_string()];
    v.extend((1..4).map(|_| "send 0 0 1000000".to_string()));
    v
}

fn refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn with(machine: &str, extra: &str) -> String {
    format!("{machine}{extra}")
}

#[test]
fn one_bus_serialises_the_ring_and_reports_the_waits() {
    let ring = ring4();
    let one = run(
        &nodes(4).replace("[network]", "[network]\nbuses = 1"),
        "bus",
        &refs(&ring),
    )
    .unwrap();
    // Four transfers one after another, in the order the receives were posted.
    assert_eq!(one.runtime, 4.0 * T);
    assert_eq!(one.stats.resource_wait, (1.0 + 2.0 + 3.0) * T);
    let two = run(
        &nodes(4).replace("[network]", "[network]\nbuses = 2"),
        "bus",
        &refs(&ring),
    )
    .unwrap();
    assert_eq!(two.runtime, 2.0 * T);
    assert_eq!(two.stats.resource_wait, 2.0 * T);
    let unlimited = run(&nodes(4), "bus", &refs(&ring)).unwrap();
    let simple = run(&nodes(4), "simple", &refs(&ring)).unwrap();
    assert_eq!(unlimited.runtime, T);
    assert_eq!(unlimited.runtime, simple.runtime);
    assert_eq!(unlimited.stats.resource_wait, 0.0);
}

#[test]
fn each_message_reports_its_own_wait_for_a_bus() {
    // One bus, the ring's four 1 MB messages: each waits for the ones
    // before it (0, T, 2T, 3T), then takes T; the waits are reported per
    // message, apart from the transfer.
    let mut seen = Messages::default();
    run_observed(
        &nodes(4).replace("[network]", "[network]\nbuses = 1"),
        "bus",
        &refs(&ring4()),
        &mut seen,
    )
    .unwrap();
    let mut waits: Vec<(f64, f64)> = seen.0.iter().map(|m| (m.5, m.3 - m.2)).collect();
    waits.sort_by(|a, b| a.0.total_cmp(&b.0));
    assert_eq!(
        waits,
        [(0.0, T), (T, 2.0 * T), (2.0 * T, 3.0 * T), (3.0 * T, 4.0 * T)]
    );
}

#[test]
fn links_limit_only_their_own_direction() {
    let fan = fan_in4();
    // Rank 0's node has one incoming link: three transfers in a row.
    let inl = run(&nodes(4), "inlink", &refs(&fan)).unwrap();
    assert_eq!(inl.runtime, 3.0 * T);
    // Each sender uses its own outgoing link: no contention.
    let outl = run(&nodes(4), "outlink", &refs(&fan)).unwrap();
    assert_eq!(outl.runtime, T);
    // Two incoming links: two at once, then the third.
    let two = run(
        &nodes(4).replace("nodes = 4", "nodes = 4\nlinks_in = 2"),
        "inlink",
        &refs(&fan),
    )
    .unwrap();
    assert_eq!(two.runtime, 2.0 * T);
    // The ring sends one message per node each way: links never contend.
    let ring = ring4();
    assert_eq!(run(&nodes(4), "inlink", &refs(&ring)).unwrap().runtime, T);
    assert_eq!(run(&nodes(4), "outlink", &refs(&ring)).unwrap().runtime, T);
}

const PMAC: &str = "[model.pmac]\n";

#[test]
fn pmac_divides_bandwidth_by_the_load() {
    let fan = fan_in4();
    let out = run(&with(&nodes(4), PMAC), "pmac", &refs(&fan)).unwrap();
    // In order: alone (1 x), with one in flight (2 x), with two (3 x the transfer).
    let wire = 1_000_000.0;
    assert_eq!(out.runtime, 1000.0 + 3.0 * wire);
    let simple = run(&nodes(4), "simple", &refs(&fan)).unwrap();
    assert!(out.runtime >= simple.runtime);
}

#[test]
fn pmac_is_simple_with_one_message_at_a_time_and_never_faster() {
    let pingpong: Vec<String> = vec![
        "send 1 0 100000\nrecv 1 0 100000\n".repeat(5),
        "recv 0 0 100000\nsend 0 0 100000\n".repeat(5),
    ];
    let p = run(&with(&nodes(2), PMAC), "pmac", &refs(&pingpong)).unwrap();
    let s = run(&nodes(2), "simple", &refs(&pingpong)).unwrap();
    assert_eq!(p.runtime, s.runtime);
    for trace in [ring4(), fan_in4()] {
        let p = run(&with(&nodes(4), PMAC), "pmac", &refs(&trace)).unwrap();
        let s = run(&nodes(4), "simple", &refs(&trace)).unwrap();
        assert!(p.runtime >= s.runtime, "{} < {}", p.runtime, s.runtime);
    }
    // With a fitted collective faster than simple, simple still bounds it.
    let fitted = with(
        &nodes(4),
        "[model.pmac.collectives.allreduce]\nalpha = \"10ns\"\nbeta = \"0ns\"\n",
    );
    let body = "allreduce 1000 0";
    let p = run(&fitted, "pmac", &[body, body, body, body]).unwrap();
    let s = run(&nodes(4), "simple", &[body, body, body, body]).unwrap();
    assert_eq!(p.runtime, s.runtime);
    let slow = with(
        &nodes(4),
        "[model.pmac.collectives.allreduce]\nalpha = \"10us\"\nalpha_log = \"5us\"\nbeta = \"1ns\"\n",
    );
    let p = run(&slow, "pmac", &[body, body, body, body]).unwrap();
    // 10 us + 5 us x log2 4 + 1 ns x 1000.
    assert_eq!(p.runtime, 10_000.0 + 10_000.0 + 1000.0);
}

const BCS: &str = "[model.bcs]\ntime_slice = \"100us\"\n";

#[test]
fn bcs_blocking_pingpong_costs_one_and_a_half_slices_per_call() {
    // Half a slice of compute before each blocking call.
    let a = "compute 50000\nsend 1 0 1000\ncompute 50000\nrecv 1 0 1000\n".repeat(5);
    let b = "recv 0 0 1000\ncompute 50000\nsend 0 0 1000\ncompute 50000\n".repeat(5);
    let out = run(&with(&nodes(2), BCS), "bcs", &[&a, &b]).unwrap();
    // Each call: posted mid-slice i, moved in slice i+1, resumed at i+2.
    assert_eq!(out.stats.actors[0].end, 10.0 * 200_000.0);
    // Rank 1 computes once more after its last send.
    assert_eq!(out.runtime, 10.0 * 200_000.0 + 50_000.0);
    let a0 = &out.stats.actors[0];
    assert_eq!(a0.compute, 10.0 * 50_000.0);
    assert_eq!((a0.comm + a0.wait) / 10.0, 150_000.0);
}

#[test]
fn bcs_hides_a_nonblocking_halo_behind_compute() {
    let body = |peer: u32| format!("irecv {peer} 0 1000\nisend {peer} 0 1000\ncompute 500000\nwaitall");
    let out = run(&with(&nodes(2), BCS), "bcs", &[&body(1), &body(0)]).unwrap();
    assert_eq!(out.runtime, 500_000.0);
    // Blocking, the same exchange waits for the strobes.
    let blocking = run(
        &with(&nodes(2), BCS),
        "bcs",
        &[
            "compute 500000\nsend 1 0 1000\nrecv 1 0 1000",
            "compute 500000\nrecv 0 0 1000\nsend 0 0 1000",
        ],
    )
    .unwrap();
    assert_eq!(blocking.runtime, 500_000.0 + 2.0 * 200_000.0);
}

#[test]
fn bcs_chunks_a_message_larger_than_a_slice() {
    // 1 us + 250 kB at 1 GB/s = 251 us: three slices.
    let out = run(
        &with(&nodes(2), BCS),
        "bcs",
        &["send 1 0 250000", "recv 0 0 250000"],
    )
    .unwrap();
    assert_eq!(out.runtime, 100_000.0 + 3.0 * 100_000.0);
}

#[test]
fn bcs_collectives_take_the_next_slice() {
    let out = run(
        &with(&nodes(4), BCS),
        "bcs",
        &[
            "compute 30000\nbarrier",
            "barrier",
            "compute 120000\nbarrier",
            "barrier",
        ],
    )
    .unwrap();
    // The last member enters in slice 1: done at the end of slice 2.
    assert_eq!(out.runtime, 300_000.0);
}

#[test]
fn models_without_their_parameters_are_clear_errors() {
    let m = pnmpi_sim::machine::Machine::parse("m.toml", &nodes(2)).unwrap();
    for (name, needle) in [("bcs", "[model.bcs]"), ("pmac", "pnmpi sim calibrate")] {
        let e = pnmpi_sim::model::build(name, &m).err().unwrap().to_string();
        assert!(e.contains("m.toml") && e.contains(needle), "{e}");
    }
    let m = pnmpi_sim::machine::Machine::parse(
        "m.toml",
        &format!("{}[model.bcs]\ntime_slice = \"0us\"\n", nodes(2)),
    )
    .unwrap();
    let e = pnmpi_sim::model::build("bcs", &m).err().unwrap().to_string();
    assert!(e.contains("time_slice must be above 0"), "{e}");
}
