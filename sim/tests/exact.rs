//! Exact predictions on constructed traces (SimGrid's time-independent
//! form, written by hand), checked against hand-computed values.

use crate::common;

use common::{run, TWO_NODES};
use pnmpi_sim::machine::Machine;
use pnmpi_sim::model;

fn pingpong(rounds: usize, bytes: u64) -> Vec<String> {
    let a = format!("send 1 0 {bytes}\nrecv 1 0 {bytes}\n").repeat(rounds);
    let b = format!("recv 0 0 {bytes}\nsend 0 0 {bytes}\n").repeat(rounds);
    vec![a, b]
}

fn refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn simple_pingpong_is_two_latencies_plus_transfers_per_round() {
    let t = pingpong(10, 1000);
    let out = run(TWO_NODES, "simple", &refs(&t)).unwrap();
    // 1 us + 1000 B / 1 GB/s = 2000 ns each way.
    assert_eq!(out.runtime, 10.0 * 2.0 * 2000.0);
    assert_eq!(out.stats.messages, 20);
}

#[test]
fn rendezvous_sender_waits_for_its_receive() {
    // 100 kB > 64 KiB: rank 0's send cannot start before rank 1 posts at 5 us.
    let out = run(
        TWO_NODES,
        "simple",
        &["send 1 0 100000", "compute 5000\nrecv 0 0 100000"],
    )
    .unwrap();
    let t = 5000.0 + 1000.0 + 100_000.0;
    assert_eq!(out.runtime, t);
    assert_eq!(out.stats.actors[0].end, t);
    assert_eq!(out.stats.actors[0].wait, 5000.0);
    // An eager message does not wait: the sender leaves at once.
    let out = run(
        TWO_NODES,
        "simple",
        &["send 1 0 1000", "compute 5000\nrecv 0 0 1000"],
    )
    .unwrap();
    assert_eq!(out.stats.actors[0].end, 0.0);
    assert_eq!(out.stats.actors[1].end, 5000.0);
}

#[test]
fn loggp_pingpong_follows_the_formula() {
    let m = format!("{TWO_NODES}[model.loggp]\nL = \"2us\"\no = \"1us\"\ng = \"500ns\"\nG = \"1ns\"\n");
    let t = pingpong(4, 1000);
    let out = run(&m, "loggp", &refs(&t)).unwrap();
    // 2 (2o + L + (s-1) G) per round.
    let round = 2.0 * (2.0 * 1000.0 + 2000.0 + 999.0);
    assert_eq!(out.runtime, 4.0 * round);
}

#[test]
fn loggp_without_its_table_is_a_clear_error() {
    let m = Machine::parse("m.toml", TWO_NODES).unwrap();
    let e = model::build("loggp", &m).err().unwrap().to_string();
    assert!(
        e.contains("m.toml") && e.contains("[model.loggp]") && e.contains("L, o, g and G"),
        "{e}"
    );
}

#[test]
fn cpu_ratio_two_halves_compute_and_nothing_else() {
    let body = "compute 80000\nsend 1 0 1000\nrecv 1 0 1000\ncompute 20000";
    let peer = "compute 80000\nrecv 0 0 1000\nsend 0 0 1000\ncompute 20000";
    let base = run(TWO_NODES, "simple", &[body, peer]).unwrap();
    let fast = run(
        &TWO_NODES.replace("nodes = 2", "nodes = 2\ncpu_ratio = 2"),
        "simple",
        &[body, peer],
    )
    .unwrap();
    for (b, f) in base.stats.actors.iter().zip(&fast.stats.actors) {
        assert_eq!(f.compute, b.compute / 2.0);
        assert_eq!(f.comm, b.comm);
    }
    assert_eq!(base.runtime - fast.runtime, 50_000.0);
}

#[test]
fn ten_times_the_bandwidth_shrinks_only_transfers() {
    let t = pingpong(3, 10_000);
    let base = run(TWO_NODES, "simple", &refs(&t)).unwrap();
    let fast = run(&TWO_NODES.replace("1GB/s", "10GB/s"), "simple", &refs(&t)).unwrap();
    // Each of 6 messages: 1 us + 10 us, then 1 us + 1 us.
    assert_eq!(base.runtime, 6.0 * 11_000.0);
    assert_eq!(fast.runtime, 6.0 * 2_000.0);
}

#[test]
fn wildcard_free_nonblocking_exchange() {
    let a = "irecv 1 0 1000\nisend 1 0 1000\nwaitall\ncompute 3000";
    let b = "irecv 0 0 1000\nisend 0 0 1000\nwaitall\ncompute 3000";
    let out = run(TWO_NODES, "simple", &[a, b]).unwrap();
    assert_eq!(out.runtime, 2000.0 + 3000.0);
}

#[test]
fn analytic_collective_scales_as_configured() {
    let m = format!(
        "{}\n[collectives.allreduce]\nscaling = \"linear\"\n",
        TWO_NODES.replace("nodes = 2", "nodes = 4")
    );
    let body = "allreduce 1000 0";
    let out = run(&m, "simple", &[body, body, body, body]).unwrap();
    assert_eq!(out.runtime, 3.0 * 2000.0);
    let log = TWO_NODES.replace("nodes = 2", "nodes = 4");
    let out = run(&log, "simple", &[body, body, body, body]).unwrap();
    assert_eq!(out.runtime, 2.0 * 2000.0);
}

#[test]
fn algorithmic_collective_sends_its_messages() {
    let m = format!(
        "{}\n[collectives]\nmode = \"algorithmic\"\n",
        TWO_NODES.replace("nodes = 2", "nodes = 4")
    );
    let body = "bcast 1000 0";
    let out = run(&m, "simple", &[body, body, body, body]).unwrap();
    let expected = pnmpi_sim::kernel::coll::algorithms_of(pnmpi_trace::routine::Coll::Bcast)[0];
    let mut steps = Vec::new();
    for me in 0..4 {
        pnmpi_sim::kernel::coll::steps(
            expected,
            &pnmpi_sim::kernel::coll::Shape {
                coll: pnmpi_trace::routine::Coll::Bcast,
                size: 4,
                me,
                root: 0,
                bytes: 1000,
            },
            None,
            &mut steps,
        );
    }
    let sends = steps
        .iter()
        .filter(|s| matches!(s, pnmpi_sim::kernel::coll::Step::Isend { .. }))
        .count();
    assert_eq!(out.stats.messages, sends as u64);
    assert_eq!(sends, 3);
}

#[test]
fn a_deadlock_names_the_ranks_and_what_they_wait_for() {
    let e = run(TWO_NODES, "simple", &["recv 1 7 10", "recv 0 8 10"])
        .err()
        .unwrap();
    let text = e.to_string();
    assert!(text.contains("deadlock"), "{text}");
    assert!(
        text.contains("rank 0") && text.contains("receive from rank 1 (tag 7"),
        "{text}"
    );
    assert!(
        text.contains("rank 1") && text.contains("receive from rank 0 (tag 8"),
        "{text}"
    );
}

#[test]
fn bad_trace_lines_name_file_and_line() {
    let e = run(TWO_NODES, "simple", &["send 1 0 banana", "recv 0 0 1"])
        .err()
        .unwrap();
    let text = e.to_string();
    assert!(text.contains("rank0.txt:2:") && text.contains("banana"), "{text}");
}

#[test]
fn a_topology_adds_its_hops_to_every_message_and_every_model() {
    // 16 nodes on a 4 x 4 torus, 100 ns a hop; ranks 0 and 15 sit at
    // (0, 0) and (3, 3), 2 hops apart with the wrap-around links (6 on a
    // mesh). The other ranks do nothing.
    let pair = |a: &str, b: &str| {
        let mut ranks = vec![String::new(); 16];
        ranks[0] = a.to_string();
        ranks[15] = b.to_string();
        ranks
    };
    let t = pair(
        &"send 15 0 1000\nrecv 15 0 1000\n".repeat(3),
        &"recv 0 0 1000\nsend 0 0 1000\n".repeat(3),
    );
    let grid = |shape: &str| {
        format!(
            "{}\n[network.topology]\nshape = \"{shape}\"\ndims = [4, 4]\nhop_latency = \"100ns\"\n\
             [model.loggp]\nL = \"2us\"\no = \"1us\"\ng = \"500ns\"\nG = \"1ns\"\n",
            TWO_NODES.replace("nodes = 2", "nodes = 16")
        )
    };
    for (shape, hops) in [("torus", 2.0), ("mesh", 6.0)] {
        let m = grid(shape);
        let simple = run(&m, "simple", &refs(&t)).unwrap();
        assert_eq!(
            simple.runtime,
            3.0 * 2.0 * (1000.0 + 1000.0 + hops * 100.0),
            "{shape}"
        );
        let loggp = run(&m, "loggp", &refs(&t)).unwrap();
        assert_eq!(
            loggp.runtime,
            3.0 * 2.0 * (2.0 * 1000.0 + 2000.0 + hops * 100.0 + 999.0),
            "{shape}"
        );
    }
}

#[test]
fn v_collectives_replay_each_peers_bytes_both_ways() {
    // Two ranks; rank 0 sends 1000 B to rank 1, rank 1 sends 9000 B to rank 0.
    let a = "alltoallv 1000 0 1000 9000 0 9000";
    let b = "alltoallv 9000 9000 0 1000 1000 0";
    // Analytic (PSINS simple, log2(2) = 1 step): the largest message, 1 us + 9 us.
    let out = run(TWO_NODES, "simple", &[a, b]).unwrap();
    assert_eq!(out.runtime, 10_000.0);
    // Algorithmic: SimGrid's ialltoallv, one message each way with its own size.
    let m = format!("{TWO_NODES}\n[collectives]\nmode = \"algorithmic\"\n");
    let out = run(&m, "simple", &[a, b]).unwrap();
    assert_eq!(out.stats.messages, 2);
    // Rank 0 waits for the 9000 B: 1 us + 9 us; rank 1 for 1000 B: 2 us.
    assert_eq!(out.stats.actors[0].end, 10_000.0);
    assert_eq!(out.stats.actors[1].end, 2_000.0);
    // A gatherv: the root receives rank 1's 3000 B, 1 us + 3 us.
    let g = ["gatherv 0 0 3000 0", "gatherv 3000 0 0 0"];
    let out = run(&m, "simple", &g).unwrap();
    assert_eq!(out.stats.messages, 1);
    assert_eq!(out.stats.actors[0].end, 4_000.0);
}
