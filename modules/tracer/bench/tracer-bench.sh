#!/usr/bin/env bash
# The tracer's benchmarks, as reported in docs/performance.md ("## Tracer"):
#  1. bytes per event of the merged trace, stencil and ping-pong, against
#     fixed-width records of the same fields (`pnmpi trace stats`);
#  2. cost per traced call: an MPI_Comm_rank loop (bench/c/comm_rank.c,
#     fastest of 20 batches per run) under the empty module vs the tracer;
#  3. whole-run overhead: the stencil's timed loop at 4 ranks under
#     libpnmpi with no module vs with the tracer.
# 2 and 3 take the median of ROUNDS runs per setup, the setups interleaved
# in each round so that machine noise spreads over both alike.
#   usage: modules/tracer/bench/tracer-bench.sh [openmpi|mpich] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../../.."
# shellcheck source=scripts/mpi-env.sh
. scripts/mpi-env.sh "${1:-openmpi}"
rounds=${2:-7}
cargo build --release --workspace >&2
target="$CARGO_TARGET_DIR/release"
work=$(mktemp -d -t pnmpi-tracer-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT
export HOME="$work" PNMPI_LIB_PATH="$target"
for p in stencil pingpong; do
    $MPICC -O2 -o "$work/$p" "c-tests/programs/$p.c"
done
$MPICC -O2 -o "$work/comm_rank" bench/c/comm_rank.c
: > "$work/none.conf"
printf 'module empty\n' > "$work/empty.conf"
printf 'module tracer\nargument outdir %s/trace\n' "$work" > "$work/tracer.conf"

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# spread VALUES...: "min-max" of the values.
spread() { tr ' ' '\n' | grep . | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo "-" hi }'; }

# run CONF NP PROGRAM ARGS...: one run under `pnmpi run`, stdout only.
run() {
    local conf=$1 np=$2
    shift 2
    rm -rf "$work/trace"
    (cd "$work" && "${MPIRUN[@]}" -np "$np" "$target/pnmpi" run --conf "$work/$conf.conf" -- "$@" 2>/dev/null)
}

echo "## 1. bytes per event (merged trace)"
stencil_args=(512 1000 10)
pingpong_args=(20000 8)
for case in "stencil 4 ${stencil_args[*]}" "pingpong 2 ${pingpong_args[*]}"; do
    read -r prog np args <<<"$case"
    # shellcheck disable=SC2086
    run tracer "$np" "$work/$prog" $args >/dev/null
    "$target/pnmpi" trace merge "$work/trace" -o "$work/$prog.pnt" >/dev/null
    echo "$prog (np $np, args $args): $("$target/pnmpi" trace stats "$work/$prog.pnt" | head -1)"
done

# compare BASE PATTERN NP PROGRAM ARGS...: ROUNDS rounds, each one run
# under BASE and one under the tracer, keeping what the awk PATTERN prints
# of a run's output; sets b and t to the medians of BASE's and the
# tracer's values, b_runs and t_runs to their min-max.
compare() {
    local base=$1 pattern=$2 np=$3 v
    shift 3
    local -A got=()
    for round in $(seq "$rounds"); do
        for setup in "$base" tracer; do
            v=$(run "$setup" "$np" "$@" | awk "$pattern")
            got[$setup]+="$v "
            echo "round $round $setup $v" >&2
        done
    done
    b=$(echo "${got[$base]}" | tr ' ' '\n' | grep . | median)
    t=$(echo "${got[tracer]}" | tr ' ' '\n' | grep . | median)
    b_runs=$(echo "${got[$base]}" | spread)
    t_runs=$(echo "${got[tracer]}" | spread)
}

echo
echo "## 2. ns per MPI_Comm_rank call, 1 rank, median of $rounds rounds"
compare empty '/ns_per_call/ { print $2 }' 1 "$work/comm_rank" 10000000
echo "empty module: $b ns (runs: $b_runs)   tracer: $t ns (runs: $t_runs)"
echo "added by the tracer: $(awk -v a="$t" -v b="$b" 'BEGIN { printf "%.1f", a - b }') ns per call"

echo
echo "## 3. stencil ${stencil_args[*]} at 4 ranks: timed loop, median of $rounds rounds"
compare none '/^stencil:/ { print $NF }' 4 "$work/stencil" "${stencil_args[@]}"
echo "no module: $b s (runs: $b_runs)   tracer: $t s (runs: $t_runs)"
echo "overhead: $(awk -v a="$t" -v b="$b" 'BEGIN { printf "%.1f", 100 * (a - b) / b }') %"
