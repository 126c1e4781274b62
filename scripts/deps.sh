#!/usr/bin/env bash
# Installs the Debian packages pnmpi needs, if any is missing: both MPIs
# (Open MPI and MPICH are both first-class), libclang for bindgen, C, C++
# and Fortran compilers (the tests build C++ and Fortran MPI programs), SimGrid (smpirun replays the tracer's exported traces) and
# HPC Challenge (hpcc, an Open MPI benchmark that times itself with
# MPI_Wtime: tests/vtime.rs runs it unmodified under vtime), CMake and
# pkg-config (tests/package.rs builds modules against the installed
# package with each), valgrind and LAMMPS (the callgrind benchmark,
# tests/callgrind.rs, runs Debian's lmp as a real application).
# Uses sudo when not run as root.
set -euo pipefail

packages=(libopenmpi-dev openmpi-bin libmpich-dev mpich libclang-dev gcc g++ gfortran make binutils libsimgrid-dev hpcc libopen-trace-format2-dev otf2-tools python3-otf2 cmake pkg-config valgrind lammps)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "deps: installing ${missing[*]}" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if ! command -v cargo >/dev/null; then
    echo "deps: cargo not found; install Rust 1.88 or newer (https://rustup.rs) and rerun" >&2
    exit 1
fi
