//! pnmpi-trace's integration tests, as one test binary: each file of
//! `tests/` is a module of it, so that they compile and link once (the
//! root crate's `tests/suite.rs` checks that no file is left out). Run
//! one file's tests with its module name as the filter: `cargo test
//! --release -p pnmpi-trace --test suite MODULE::`.

mod common;
mod corrupt;
mod folder;
mod merge;
mod old_version;
mod outputs;
mod rank_roundtrip;
mod simgrid_v;
