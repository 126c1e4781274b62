//! pnmpi-sim's integration tests, as one test binary: each file of
//! `tests/` is a module of it, so that they compile and link once (the
//! root crate's `tests/suite.rs` checks that no file is left out). Run
//! one file's tests with its module name as the filter: `cargo test
//! --release -p pnmpi-sim --test suite MODULE::`.

mod common;
mod exact;
mod folder;
mod machine_file;
mod models;
mod one_sided;
mod parallel;
mod simgrid_routes;
