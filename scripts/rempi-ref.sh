#!/usr/bin/env bash
# Builds LLNL's ReMPI (github PRUNERS/ReMPI), the reference record-and-
# replay tool, OUTSIDE this repository, for the cross-checks that run when
# REMPI_PREFIX points at the result (tests/replay.rs, bench/rempi.sh).
# Its "lite" build: ReMPI's OpenMP pass (ReOMP) needs an older LLVM, so
# only its runtime, libreomp.so, which librempi.so calls, is built.
#   usage: scripts/rempi-ref.sh SRC PREFIX   (SRC: a checkout of PRUNERS/ReMPI)
set -euo pipefail
src=$(realpath "${1:?usage: rempi-ref.sh SRC PREFIX}")
prefix=$(realpath -m "${2:?usage: rempi-ref.sh SRC PREFIX}")
apt-get install -y -q autoconf automake libtool zlib1g-dev >/dev/null
cd "$src"
./autogen.sh >/dev/null
./configure --prefix="$prefix" CC="${MPICC:-mpicc}" CXX="${MPICXX:-mpicxx}" \
    MPICC="${MPICC:-mpicc}" MPICXX="${MPICXX:-mpicxx}" >/dev/null
make -C src/rempi install >/dev/null
make -C src/reomp libreomp.la >/dev/null
cp -a src/reomp/.libs/libreomp.so* "$prefix/lib/"
echo "ReMPI installed in $prefix: export REMPI_PREFIX=$prefix"
