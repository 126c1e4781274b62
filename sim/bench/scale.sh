#!/usr/bin/env bash
# The replay engine at scale: for each rank count, a synthetic
# halo3d trace (`pnmpi sim synth`, an allreduce every 10 iterations, about
# EVENTS events whatever the rank count), replayed serially and under
# `mpirun -np P` for each P of NPS, each run's events/s and peak memory
# (the report's own figures: the largest process's), and the JSON reports
# compared (they must be identical but for how the replay ran; "same"
# says so for all of a round's reports).
#   usage: sim/bench/scale.sh [openmpi|mpich] [RANKS...]   (default openmpi 1024 65536 262144 1048576)
#   env:   EVENTS (default 4000000), RUNS (interleaved runs of each, default 3),
#          NPS (the process counts, default "2"; e.g. "2 4"),
#          OLD (a previous build's pnmpi: its serial replay interleaved too,
#          and its report compared with this build's)
set -euo pipefail
cd "$(dirname "$0")/../.."
mpi=${1:-openmpi}
shift || true
ranks=("$@")
((${#ranks[@]})) || ranks=(1024 65536 262144 1048576)
# shellcheck source=scripts/mpi-env.sh
. scripts/mpi-env.sh "$mpi"
bin=$CARGO_TARGET_DIR/release
work=$(mktemp -d /tmp/pnmpi-scale.XXXXXX)
trap 'rm -rf "$work"' EXIT
events=${EVENTS:-4000000}
runs=${RUNS:-3}
strip='import json,sys
d=json.load(open(sys.argv[1]))
for k in ("sim_wall_s","events_per_s","peak_in_flight","peak_memory_bytes","processes","protocol"): d.pop(k,None)
print(json.dumps(d,sort_keys=True))'
printf '%9s %9s %10s %8s %12s %12s %10s\n' ranks events mode run "M events/s" "peak MB" "same"
for n in "${ranks[@]}"; do
    # halo3d: 13 events per rank and iteration, plus Init and Finalize.
    it=$(( events / (13 * n) ))
    ((it >= 2)) || it=2
    "$bin/pnmpi" sim synth halo3d --ranks "$n" --iterations "$it" --allreduce-every 10 -o "$work/h.pnt" > /dev/null
    printf '[machine]\nnodes = %d\ncores_per_node = 16\n[network]\nlatency = "1us"\nbandwidth = "10GB/s"\n' \
        $(( (n + 15) / 16 )) > "$work/m.toml"
    for r in $(seq "$runs"); do
        modes=(s)
        if [ -n "${OLD:-}" ]; then
            "$OLD" sim replay "$work/h.pnt" -m "$work/m.toml" --json "$work/o.json" > /dev/null
            modes=(o s)
        fi
        "$bin/pnmpi" sim replay "$work/h.pnt" -m "$work/m.toml" --json "$work/s.json" > /dev/null
        same=yes
        for np in ${NPS:-2}; do
            "${MPIRUN[@]}" -np "$np" "$bin/pnmpi" sim replay "$work/h.pnt" -m "$work/m.toml" --json "$work/p$np.json" > /dev/null
            [ "$(python3 -c "$strip" "$work/s.json")" = "$(python3 -c "$strip" "$work/p$np.json")" ] || same=no
            modes+=("p$np")
        done
        if [ -n "${OLD:-}" ] && [ "$(python3 -c "$strip" "$work/s.json")" != "$(python3 -c "$strip" "$work/o.json")" ]; then
            same=no
        fi
        for mode in "${modes[@]}"; do
            python3 - "$work/$mode.json" "$n" "$mode" "$r" "$same" <<'PY'
import json,sys
d=json.load(open(sys.argv[1]))
m=sys.argv[3]
mode={"o":"old serial","s":"serial"}.get(m, "np " + m[1:])
print(f'{sys.argv[2]:>9} {d["events"]:>9} {mode:>10} {sys.argv[4]:>8} {d["events_per_s"]/1e6:>12.2f} {d["peak_memory_bytes"]/2**20:>12.0f} {sys.argv[5]:>10}')
PY
        done
    done
done
