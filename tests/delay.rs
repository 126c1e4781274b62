//! The paper's delay layers (section 5.4): each layer adds its 100 us to
//! every MPI_Send, independently of the others.

use crate::common;
use common::*;

/// Runs the ping-pong under `layers` delay layers and gives the one-way
/// time and the number of delay instances PnMPI says it stacked (the
/// second and later as private copies).
fn one_way_us(layers: usize) -> (f64, usize) {
    module("delay", "delay", &[]);
    let mut case = Case::new();
    case.conf(&"module delay\n".repeat(layers));
    case.env("PNMPI_VERBOSE", "1");
    let run = case.mpirun(2, &program("delay_bench", Link::Pnmpi), &["200"]);
    run.assert_ok();
    let line = run.lines("delay:")[0].to_string();
    let us = line.trim_start_matches("delay: one_way_us ").parse().unwrap();
    let delay = modules_dir().join("delay.so");
    let instances = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("pnmpi:") && l.contains(&format!(" {} (1 routines", delay.display())))
        .count();
    (us, instances)
}

#[test]
fn each_delay_layer_adds_its_100_microseconds() {
    for layers in [0, 1, 3] {
        let (us, instances) = one_way_us(layers);
        assert_eq!(instances, layers, "the stack of {layers} delay layers");
        // Each layer spins 100 us on the monotonic clock before it sends,
        // so a busy machine can only lengthen the one-way time: a lower
        // bound with nothing subtracted cannot fail there. Time itself is
        // measured by the benchmarks (pnmpi-bench), not by cargo test.
        assert!(
            us >= 100.0 * layers as f64,
            "{layers} layers gave a one-way time of only {us:.1} us"
        );
    }
}
