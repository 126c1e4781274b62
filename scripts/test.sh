#!/usr/bin/env bash
# The whole test suite, against Open MPI and against MPICH (one cargo
# target folder each): style checks, the library crates' documentation,
# then every unit and integration test, which run real programs under each
# MPI's own mpirun.
#   usage: scripts/test.sh [openmpi|mpich ...]   (default: both)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh

echo "== style: cargo fmt --check" >&2
cargo fmt --all -- --check

mpis=("$@")
((${#mpis[@]})) || mpis=(openmpi mpich)
for mpi in "${mpis[@]}"; do
    # shellcheck source=scripts/mpi-env.sh
    . scripts/mpi-env.sh "$mpi"
    echo "== $mpi: build ($MPICC, $CARGO_TARGET_DIR)" >&2
    cargo build --release --workspace --locked
    echo "== $mpi: clippy" >&2
    cargo clippy --release --workspace --all-targets --locked -- -D warnings
    # The empty module's no_std build (panic = "abort") only exists here.
    cargo clippy --profile compact -p pnmpi-module-empty --locked -- -D warnings
    echo "== $mpi: cargo doc of the library crates" >&2
    RUSTDOCFLAGS="-D warnings" cargo doc --no-deps -p pnmpi-sdk -p pnmpi-trace -p pnmpi-sim --locked
    echo "== $mpi: tests" >&2
    cargo test --release --workspace --locked -- --test-threads=2
done
echo "== all tests passed on: ${mpis[*]}" >&2
