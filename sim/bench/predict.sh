#!/usr/bin/env bash
# Predicting this machine: calibrate, trace 2-rank c-tests
# programs, replay each trace with CPU ratio 1 under several models, and
# compare the predicted runtime (end of MPI_Init to start of
# MPI_Finalize) with the traced runs' own: the median of RUNS traced runs
# against the median of their predictions.
#   usage: sim/bench/predict.sh [openmpi|mpich] [RUNS]   (default openmpi 5)
#   env:   CALIBRATE_SECONDS (60), MODELS (simple,loggp,pmac)
set -euo pipefail
cd "$(dirname "$0")/../.."
mpi=${1:-openmpi}
runs=${2:-5}
# shellcheck source=scripts/mpi-env.sh
. scripts/mpi-env.sh "$mpi"
bin=$CARGO_TARGET_DIR/release
export PATH=$bin:$PATH PNMPI_LIB_PATH=$bin
work=$(mktemp -d /tmp/pnmpi-predict.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin"
for p in stencil pingpong imbalance; do
    "$MPICC" -O2 -o "$work/bin/$p" "c-tests/programs/$p.c"
done
echo "== calibrating ($mpi, ${CALIBRATE_SECONDS:-60} s)" >&2
"${MPIRUN[@]}" -np 2 pnmpi sim calibrate -o "$work/here.toml" --seconds "${CALIBRATE_SECONDS:-60}"
declare -A args=([stencil]="256 400 10" [pingpong]="20000 4096" [imbalance]="200 200000 0.5")
printf '%-10s %-7s %12s %12s %8s\n' program model measured_s predicted_s error
for p in stencil pingpong imbalance; do
    for i in $(seq "$runs"); do
        printf 'module tracer\nargument outdir %s\n' "$work/$p-$i" > "$work/.pnmpi-conf"
        (cd "$work" && "${MPIRUN[@]}" -np 2 pnmpi run -- "$work/bin/$p" ${args[$p]} > /dev/null 2>&1)
    done
    for model in ${MODELS:-simple loggp pmac}; do
        for i in $(seq "$runs"); do
            pnmpi sim replay "$work/$p-$i" -m "$work/here.toml" --model "$model" --compare \
                --json "$work/$p-$i-$model.json" > /dev/null
        done
        python3 - "$p" "$model" "$work"/"$p"-*-"$model".json <<'PY'
import json, statistics, sys
prog, model, files = sys.argv[1], sys.argv[2], sys.argv[3:]
runs = [json.load(open(f)) for f in files]
measured = statistics.median(r["measured_runtime_s"] for r in runs)
predicted = statistics.median(r["runtime_s"] for r in runs)
print(f"{prog:<10} {model:<7} {measured:12.6f} {predicted:12.6f} {100 * (predicted - measured) / measured:+7.1f}%")
PY
    done
done
