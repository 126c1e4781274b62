//! Integration tests: real PMPI tools built from `c-tests/tools/` with `$MPICC` (default
//! `mpicc`) and `$CC` (default `cc`), patched by the `pnmpi-patch` binary.

mod bad_input;
mod common;
mod elf_variants;
mod fuzz;
mod mpi_tool;
mod ompitrace;
