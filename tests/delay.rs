//! The paper's delay layers (section 5.4): each layer adds its 100 us to
//! every MPI_Send, independently of the others.

use crate::common;
use common::*;

fn one_way_us(layers: usize) -> f64 {
    module("delay", "delay", &[]);
    let mut case = Case::new();
    case.conf(&"module delay\n".repeat(layers));
    let run = case.mpirun(2, &program("delay_bench", Link::Pnmpi), &["200"]);
    run.assert_ok();
    let line = run.lines("delay:")[0].to_string();
    line.trim_start_matches("delay: one_way_us ").parse().unwrap()
}

#[test]
fn each_delay_layer_adds_its_100_microseconds() {
    let base = one_way_us(0);
    for layers in [1, 3] {
        let added = one_way_us(layers) - base;
        // A lower bound only: time is measured by the benchmarks
        // (pnmpi-bench), not by cargo test.
        // Fewer than `layers` private instances would add less.
        assert!(
            added >= 95.0 * layers as f64,
            "{layers} layers added only {added:.1} us"
        );
    }
}
