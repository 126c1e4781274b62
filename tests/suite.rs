//! The workspace's integration tests (package `pnmpi-suite`), as one test
//! binary: each file of `tests/` is a module of it. One binary compiles the harness
//! (`common`) once and links once, where a binary per file built it 43
//! times, and the harness builds each C program and module once for all
//! the files that use it. Run one file's tests with its module name as
//! the filter: `cargo test --release --test suite replay::`.
//!
//! No test here changes the process's environment (`std::env::set_var`):
//! the tests of all files share one process, and each sets what its
//! programs need on their own `Command`. `every_test_file_is_a_module`
//! keeps a new file from being left out.

mod common;
mod counting;

mod analyze;
mod binding;
mod callgrind;
mod chain;
mod checker;
mod corrbench;
mod delay;
mod errors;
mod exports;
mod fortran;
mod guide;
mod hooks;
mod jitter;
mod kernel;
mod launcher;
mod layers;
mod llnl_modules;
mod llnl_services;
mod mbi;
mod mpi4py;
mod otf2;
mod package;
mod patched_tools;
mod pcontrol;
mod profiler;
mod replay;
mod rma;
mod scale;
mod selection;
mod services;
mod sim_calibrate;
mod sim_goal;
mod sim_links;
mod sim_noise;
mod sim_parallel;
mod sim_simgrid;
mod sim_stream;
mod sim_synth;
mod stacks;
mod threads;
mod tracer;
mod vranks;
mod vranks_nas;
mod vranks_timing;
mod vtime;

/// Cargo builds only a suite's modules (`autotests = false`): a file in
/// `tests/` that its crate's `tests/suite.rs` does not declare would
/// never run. This package's, pnmpi-sim's and pnmpi-trace's.
#[test]
fn every_test_file_is_a_module() {
    let root = common::repo();
    let mut missing = Vec::new();
    for crate_dir in [".", "sim", "trace"] {
        let dir = root.join(crate_dir).join("tests");
        let suite = std::fs::read_to_string(dir.join("suite.rs")).expect("tests/suite.rs");
        for entry in std::fs::read_dir(&dir).expect("tests/") {
            let path = entry.expect("tests/ entry").path();
            let (Some(stem), Some("rs")) = (
                path.file_stem().and_then(|s| s.to_str()),
                path.extension().and_then(|s| s.to_str()),
            ) else {
                continue;
            };
            if stem != "suite" && !suite.contains(&format!("\nmod {stem};\n")) {
                missing.push(format!("{crate_dir}/tests/{stem}.rs"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "{}: not a module of its crate's tests/suite.rs, so cargo never runs it; add `mod NAME;` there",
        missing.join(", ")
    );
}
