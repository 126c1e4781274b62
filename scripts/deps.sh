#!/usr/bin/env bash
# Installs the Debian packages pnmpi needs, if any is missing.
#   usage: scripts/deps.sh [openmpi|mpich]   what the build and the demo need
#          scripts/deps.sh --tests           what the whole test suite needs
# The build and the demo need one MPI (Open MPI by default), libclang for
# bindgen, a C compiler, and libotf2 with its tools (the demo reads its
# OTF2 export back with otf2-print). The test suite adds the other MPI
# (both are first-class), C++ and Fortran compilers (it builds C++ and
# Fortran MPI programs), SimGrid (smpirun replays the exported traces),
# HPC Challenge (hpcc, an Open MPI benchmark that times itself with
# MPI_Wtime: tests/vtime.rs runs it unmodified under vtime), python3-otf2
# (reads the OTF2 export), CMake and pkg-config (tests/package.rs builds
# modules against the installed package with each), valgrind and LAMMPS
# (the callgrind benchmark, tests/callgrind.rs, runs Debian's lmp as a
# real application), and mpi4py 4.1.2 built from its source for each MPI
# (tests/mpi4py.rs runs its test suite under replay and the checker),
# into target/mpi4py/MPI. Uses sudo when not run as root.
set -euo pipefail

tests=0
mpi=openmpi
for arg in "$@"; do
    case "$arg" in
        --tests) tests=1 ;;
        openmpi | mpich) mpi=$arg ;;
        *)
            echo "deps: unknown argument '$arg': use --tests, openmpi or mpich" >&2
            exit 2
            ;;
    esac
done
declare -A mpi_packages=([openmpi]="libopenmpi-dev openmpi-bin" [mpich]="libmpich-dev mpich")
read -ra packages <<<"${mpi_packages[$mpi]} libclang-dev gcc make binutils libopen-trace-format2-dev otf2-tools"
if ((tests)); then
    packages+=(${mpi_packages[openmpi]} ${mpi_packages[mpich]} g++ gfortran libsimgrid-dev hpcc python3-otf2 cmake pkg-config valgrind lammps python3-dev python3-pip)
fi
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
((tests)) || exit 0

# mpi4py, for each MPI, built by pip from the source release (pinned by
# its hash) with that MPI's mpicc into target/mpi4py/MPI/site, its test
# suite beside it in target/mpi4py/MPI/test. -O0, as mpi4py's own CI
# builds: the C file Cython makes is 6 MB, and -O2 takes 6 times longer.
# pip's wheel cache is bypassed, or the second MPI would get the first's.
mpi4py_version=4.1.2
mpi4py_sha256=56860286dc45f20e8821e93cb06669e30462348bf866f685553fa4b712d58d02
mpi4py_root="$(cd "$(dirname "$0")/.." && pwd)/target/mpi4py"
sdist="$mpi4py_root/mpi4py-$mpi4py_version.tar.gz"
if ! echo "$mpi4py_sha256  $sdist" | sha256sum -c --status 2>/dev/null; then
    mkdir -p "$mpi4py_root"
    /usr/bin/python3 -m pip download -q --no-binary :all: --no-deps --no-build-isolation \
        "mpi4py==$mpi4py_version" -d "$mpi4py_root"
    echo "$mpi4py_sha256  $sdist" | sha256sum -c --quiet
fi
# build_mpi4py MPI: one MPI's build; the two run side by side (each is
# one compiler process, about half a minute).
build_mpi4py() {
    local mpi=$1 dest="$mpi4py_root/$1"
    rm -rf "$dest"
    mkdir -p "$dest"
    MPICC="mpicc.$mpi" CFLAGS=-O0 /usr/bin/python3 -m pip install -q --no-cache-dir --root-user-action=ignore \
        --no-binary mpi4py --no-deps --target "$dest/site" "$sdist" &&
        tar -xzf "$sdist" -C "$dest" --strip-components=1 "mpi4py-$mpi4py_version/test" &&
        touch "$dest/.built-$mpi4py_version"
}
builds=()
for mpi in openmpi mpich; do
    [ -f "$mpi4py_root/$mpi/.built-$mpi4py_version" ] && continue
    echo "deps: building mpi4py $mpi4py_version for $mpi into $mpi4py_root/$mpi" >&2
    build_mpi4py "$mpi" &
    builds+=("$!:$mpi")
done
status=0
for build in "${builds[@]}"; do
    wait "${build%%:*}" || { echo "deps: building mpi4py for ${build#*:} failed (its pip output is above)" >&2; status=1; }
done
exit $status
