#!/usr/bin/env bash
# What the checker adds to an 8-byte MPI_Allreduce on MPI_COMM_WORLD (its
# comparison of each collective across ranks), at 2 and 4 ranks: native
# and under `module checker` in turn, each round, median over rounds.
#   usage: bench/checker/allreduce.sh [openmpi|mpich] [ROUNDS] [CALLS]
# Uses the build of that MPI (target/release or target/mpich/release).
# MPICH's ranks preload c-tests/tools/yield_when_idle.c, as the tests do:
# at 4 ranks on 2 cores its busy polling would otherwise measure the
# scheduler's time slice.
set -euo pipefail
cd "$(dirname "$0")/../.."
mpi=${1:-openmpi}; rounds=${2:-7}; calls=${3:-20000}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
if [ "$mpi" = openmpi ]; then
    target=$PWD/target/release cc=mpicc.openmpi
    run=(mpirun.openmpi --oversubscribe)
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
else
    target=$PWD/target/mpich/release cc=mpicc.mpich
    "$cc" -O2 -shared -fPIC -o "$work/libyield.so" c-tests/tools/yield_when_idle.c -ldl
    run=(mpirun.mpich -genv LD_PRELOAD "$work/libyield.so")
fi
"$cc" -O2 -o "$work/allreduce" bench/c/allreduce.c
echo "module $target/libchecker.so" > "$work/checker.conf"
measure() { # ranks, then the command's prefix after the launcher
    local np=$1; shift
    "${run[@]}" -np "$np" "$@" "$work/allreduce" "$calls" | awk '/ns_per_call/ {print $2}'
}
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
for np in 2 4; do
    : > "$work/native.$np"; : > "$work/checker.$np"; : > "$work/ratio.$np"
done
for r in $(seq "$rounds"); do
    for np in 2 4; do
        a=$(measure "$np")
        b=$(PNMPI_CONF=$work/checker.conf measure "$np" "$target/pnmpi" run --)
        echo "$a" >> "$work/native.$np"; echo "$b" >> "$work/checker.$np"
        awk -v a="$a" -v b="$b" 'BEGIN {print b / a}' >> "$work/ratio.$np"
        echo "round $r, $np ranks: native $a ns, checker $b ns" >&2
    done
done
printf '%-6s %12s %12s %14s\n' ranks native checker "ratio (median)"
for np in 2 4; do
    printf '%-6s %12s %12s %14s\n' "$np" "$(median < "$work/native.$np")" \
        "$(median < "$work/checker.$np")" "$(median < "$work/ratio.$np")"
done
