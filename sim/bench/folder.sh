#!/usr/bin/env bash
# Real traces at scale: for each rank count, a tracer folder
# (`pnmpi sim synth halo3d --folder`, ITERATIONS iterations, an allreduce
# every 10) merged, replayed serially and under `mpirun -np 2`, and its
# merged .pnt replayed, in a shell limited to 1,024 open files; each
# step's wall time and peak RSS (`/usr/bin/time`; for np 2 the larger
# process's). The merged files must be identical and the reports identical
# but for how the replay ran ("same" says so for the round).
#   usage: sim/bench/folder.sh [openmpi|mpich] [RANKS...]   (default openmpi 4096 16384)
#   env:   ITERATIONS (default 20), RUNS (interleaved runs, default 1),
#          OLD (a previous build's pnmpi: every step interleaved with it)
set -euo pipefail
cd "$(dirname "$0")/../.."
mpi=${1:-openmpi}
shift || true
ranks=("$@")
((${#ranks[@]})) || ranks=(4096 16384)
# shellcheck source=scripts/mpi-env.sh
. scripts/mpi-env.sh "$mpi"
bin=$CARGO_TARGET_DIR/release/pnmpi
work=$(mktemp -d /tmp/pnmpi-folder.XXXXXX)
trap 'rm -rf "$work"' EXIT
ulimit -n 1024
runs=${RUNS:-1}
builds=(new)
[ -n "${OLD:-}" ] && builds=(old new)
strip='import json,sys
d=json.load(open(sys.argv[1]))
for k in ("sim_wall_s","events_per_s","peak_in_flight","peak_memory_bytes","processes","protocol"): d.pop(k,None)
print(json.dumps(d,sort_keys=True))'
# A step's "wall_s peak_MB", of the files /usr/bin/time wrote (the
# largest of several processes').
times() {
    awk '{w = $1 > w ? $1 : w; m = $2 > m ? $2 : m} END {printf "%.2f %.0f", w, m / 1024}' "$work"/time.*
    rm -f "$work"/time.*
}
serial() { /usr/bin/time -o "$work/time.0" -f "%e %M" "$@" > /dev/null; times; }
np2() {
    # shellcheck disable=SC2016
    "${MPIRUN[@]}" -np 2 bash -c '/usr/bin/time -o "$0.${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}" -f "%e %M" "$@"' \
        "$work/time" "$@" > /dev/null
    times
}
report() { python3 -c "$strip" "$1"; }
printf '%7s %5s %4s %-14s %8s %9s %5s\n' ranks build run step "wall s" "peak MB" same
for n in "${ranks[@]}"; do
    "$bin" sim synth halo3d --ranks "$n" --iterations "${ITERATIONS:-20}" --allreduce-every 10 --folder \
        -o "$work/f" > /dev/null
    printf '[machine]\nnodes = %d\ncores_per_node = 16\n[network]\nlatency = "1us"\nbandwidth = "10GB/s"\n' \
        $(( (n + 15) / 16 )) > "$work/m.toml"
    rm -f "$work"/*.pnt "$work"/*.json
    for r in $(seq "$runs"); do
        for b in "${builds[@]}"; do
            p=$bin
            [ "$b" = old ] && p=$OLD
            row() { printf '%7s %5s %4s %-14s %8s %9s %5s\n' "$n" "$b" "$r" "$1" $2 "${3:-}"; }
            row merge "$(serial "$p" trace merge "$work/f" -o "$work/$b.pnt")"
            row replay-folder "$(serial "$p" sim replay "$work/f" -m "$work/m.toml" --json "$work/$b-s.json")"
            row np2-folder "$(np2 "$p" sim replay "$work/f" -m "$work/m.toml" --json "$work/$b-p.json")"
            same=yes
            [ "$(report "$work/$b-s.json")" = "$(report "$work/$b-p.json")" ] || same=no
            for o in old new; do
                if [ -f "$work/$o-s.json" ] && [ "$(report "$work/$b-s.json")" != "$(report "$work/$o-s.json")" ]; then
                    same=no
                fi
            done
            if [ -f "$work/old.pnt" ] && [ -f "$work/new.pnt" ] && ! cmp -s "$work/old.pnt" "$work/new.pnt"; then
                same=no
            fi
            row replay-pnt "$(serial "$p" sim replay "$work/$b.pnt" -m "$work/m.toml")" "$same"
        done
    done
done
