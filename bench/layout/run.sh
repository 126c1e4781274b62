#!/usr/bin/env bash
# Cost per layer of deep chains whose layers share one page layout (N
# copies of one module) against chains whose layers do not (copies of 64
# builds, each with its code and GOT slot shifted by a different number of
# cache lines). Same program, same libpnmpi, one run, median of ROUNDS.
#   usage: bench/layout/run.sh [ROUNDS] [LAYERS...]   (Open MPI build in target/release)
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-5}; shift || true
layers=("${@:-10 20 50 100 1000}")
[ $# -gt 0 ] && layers=("$@")
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
target=$PWD/target/release
mpicc -O2 -o "$work/comm_rank" bench/c/comm_rank.c -L"$target" -Wl,--no-as-needed -lpnmpi -Wl,-rpath,"$target"
for k in $(seq 0 63); do
    mpicc -O2 -shared -fPIC -DPAD="$k" -I"$target/include" -o "$work/pad$k.so" bench/layout/empty_padded.c
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
measure() { # conf file, calls -> ns per call
    PNMPI_CONF=$1 mpirun -np 1 "$work/comm_rank" "$2" | awk '/ns_per_call/ {print $2}'
}
printf '%-8s %-10s %12s %12s\n' layers layout ns/call ns/layer
for n in ${layers[*]}; do
    calls=$(( 20000000 / n )); (( calls < 2000 )) && calls=2000
    : > "$work/same.conf"; : > "$work/spread.conf"
    for i in $(seq 0 $((n - 1))); do
        echo "module $work/pad0.so" >> "$work/same.conf"
        echo "module $work/pad$((i % 64)).so" >> "$work/spread.conf"
    done
    for layout in same spread; do
        runs=()
        for _ in $(seq "$rounds"); do runs+=("$(measure "$work/$layout.conf" "$calls")"); done
        med=$(printf '%s\n' "${runs[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
        printf '%-8s %-10s %12.2f %12.2f\n' "$n" "$layout" "$med" "$(echo "$med / $n" | bc -l)"
    done
done
