#!/usr/bin/env bash
# Installs the Debian packages pnmpi needs, if any is missing: both MPIs
# (Open MPI and MPICH are both first-class), libclang for bindgen, C, C++
# and Fortran compilers (the tests build C++ and Fortran MPI programs), SimGrid (smpirun replays the tracer's exported traces) and
# HPC Challenge (hpcc, an Open MPI benchmark that times itself with
# MPI_Wtime: tests/vtime.rs runs it unmodified under vtime), CMake and
# pkg-config (tests/package.rs builds modules against the installed
# package with each), valgrind and LAMMPS (the callgrind benchmark,
# tests/callgrind.rs, runs Debian's lmp as a real application), and
# mpi4py 4.1.2 built from its source for each MPI (tests/mpi4py.rs runs
# its test suite under replay and the checker), into target/mpi4py/MPI.
# Uses sudo when not run as root.
set -euo pipefail

packages=(libopenmpi-dev openmpi-bin libmpich-dev mpich libclang-dev gcc g++ gfortran make binutils libsimgrid-dev hpcc libopen-trace-format2-dev otf2-tools python3-otf2 cmake pkg-config valgrind lammps python3-dev python3-pip)
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
    echo "deps: cargo not found; install Rust 1.95 or newer (https://rustup.rs) and rerun" >&2
    exit 1
fi

# mpi4py, for each MPI, built by pip from the source release (pinned by
# its hash) with that MPI's mpicc into target/mpi4py/MPI/site, its test
# suite beside it in target/mpi4py/MPI/test. -O0, as mpi4py's own CI
# builds: the C file Cython makes is 6 MB, and -O2 takes 6 times longer.
# pip's wheel cache is bypassed, or the second MPI would get the first's.
mpi4py_version=4.1.2
mpi4py_sha256=56860286dc45f20e8821e93cb06669e30462348bf866f685553fa4b712d58d02
mpi4py_root="$(cd "$(dirname "$0")/.." && pwd)/target/mpi4py"
for mpi in openmpi mpich; do
    dest="$mpi4py_root/$mpi"
    [ -f "$dest/.built-$mpi4py_version" ] && continue
    echo "deps: building mpi4py $mpi4py_version for $mpi into $dest" >&2
    sdist="$mpi4py_root/mpi4py-$mpi4py_version.tar.gz"
    if ! echo "$mpi4py_sha256  $sdist" | sha256sum -c --status 2>/dev/null; then
        mkdir -p "$mpi4py_root"
        /usr/bin/python3 -m pip download -q --no-binary :all: --no-deps --no-build-isolation \
            "mpi4py==$mpi4py_version" -d "$mpi4py_root"
        echo "$mpi4py_sha256  $sdist" | sha256sum -c --quiet
    fi
    rm -rf "$dest"
    mkdir -p "$dest"
    MPICC="mpicc.$mpi" CFLAGS=-O0 /usr/bin/python3 -m pip install -q --no-cache-dir --root-user-action=ignore \
        --no-binary mpi4py --no-deps --target "$dest/site" "$sdist"
    tar -xzf "$sdist" -C "$dest" --strip-components=1 "mpi4py-$mpi4py_version/test"
    touch "$dest/.built-$mpi4py_version"
done
