#!/bin/sh
# Bytes per event of two builds' traces of the same programs, interleaved:
#
#   modules/tracer/bench/bytes-per-event.sh BEFORE_TARGET AFTER_TARGET [ROUNDS]
#
# BEFORE_TARGET and AFTER_TARGET are release folders of two Open MPI builds
# (each with libpnmpi.so, libtracer.so and pnmpi), e.g. a checkout of the
# previous commit's target/release and this one's. Each round traces
# c-tests/programs/stencil.c 512 1000 10 (4 ranks) and pingpong.c 20000 8
# (2 ranks) under each build, merges with that build's pnmpi, and prints
# "build program events rank-file-bytes rank-bytes/event merged-bytes/event".
set -eu
before=$(realpath "$1"); after=$(realpath "$2"); rounds=${3:-5}
src=$(cd "$(dirname "$0")/../../.." && pwd)/c-tests/programs
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
for b in before after; do
    eval d=\$$b
    for p in stencil pingpong; do
        ${MPICC:-mpicc.openmpi} -O2 -o "$p-$b" "$src/$p.c" -L"$d" -Wl,--no-as-needed -lpnmpi -Wl,-rpath,"$d" -lm
    done
    echo "module $d/libtracer.so" > "$b.conf"
done
run() { # build program ranks args...
    b=$1 p=$2 np=$3; shift 3
    eval d=\$$b
    rm -rf tr
    PNMPI_CONF=$work/$b.conf PNMPI_TRACE_DIR=$work/tr ${MPIRUN:-mpirun.openmpi --oversubscribe} -np "$np" "./$p-$b" "$@" > /dev/null 2>&1
    bytes=$(cat tr/*.pnr | wc -c)
    line=$("$d/pnmpi" trace merge tr -o tr.pnt 2>&1 | grep bytes/event)
    events=$(echo "$line" | sed 's/.*ranks, \([0-9]*\) events.*/\1/')
    echo "$b $p $events $bytes $(echo "scale=3; $bytes / $events" | bc) $(echo "$line" | sed 's/.*(\(.*\) bytes.event.*/\1/')"
}
i=0
while [ $i -lt "$rounds" ]; do
    for b in before after; do
        run $b stencil 4 512 1000 10
        run $b pingpong 2 20000 8
    done
    i=$((i + 1))
done
