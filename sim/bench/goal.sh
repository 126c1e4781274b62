#!/usr/bin/env bash
# pnmpi sim beside LogGOPSim on the same GOAL schedule: a
# dissemination of 8-byte messages (Schedgen2's format, written by
# sim/bench/goal_dissemination.py) at each rank count, run RUNS times
# interleaved by both: the finish each gives (they must be equal), their
# simulation's events/s, and peak memory (/usr/bin/time). LogGOPSim runs
# on its binary schedule (txt2bin's, made once, not timed), with its
# defaults; pnmpi on the text, whose reading it reports apart.
#   usage: LOGGOPSIM=/path/to/its/build sim/bench/goal.sh [openmpi|mpich] [RANKS...]
#   env:   RUNS (default 3), KEEP (a folder for the schedules, reused)
set -euo pipefail
cd "$(dirname "$0")/../.."
mpi=${1:-openmpi}
shift || true
ranks=("$@")
((${#ranks[@]})) || ranks=(65536 1048576)
runs=${RUNS:-3}
# shellcheck source=sim/bench/goal_common.sh
. sim/bench/goal_common.sh
printf '%9s %10s %4s %14s %12s %10s %12s\n' ranks simulator run "finish ns" "M events/s" "peak MB" "events"
for n in "${ranks[@]}"; do
    goal=$work/d$n.goal
    [ -f "$goal" ] || python3 sim/bench/goal_dissemination.py "$n" 8 "$goal"
    [ -f "$goal.bin" ] || "$LOGGOPSIM/txt2bin" -i "$goal" -o "$goal.bin" > /dev/null
    for r in $(seq "$runs"); do
        /usr/bin/time -f "%M" -o "$work/lgs.mem" "$LOGGOPSIM/LogGOPSim" -f "$goal.bin" \
            -L 2500 -o 1500 -g 1000 -G 6 -O 0 -S 65535 -b > "$work/lgs.out"
        /usr/bin/time -f "%M" -o "$work/ours.mem" "$bin/pnmpi" sim replay "$goal" -m "$work/m.toml" \
            --json "$work/ours.json" > /dev/null
        python3 - "$work" "$n" "$r" <<'PY'
import json, re, sys
work, n, r = sys.argv[1:4]
out = open(f"{work}/lgs.out").read()
finish = int(re.search(r"Maximum finishing time at host \d+: (\d+)", out).group(1))
perf = re.search(r"Events: (\d+)\s+Time: (\d+) s\s+Speed: ([\d.inf]+)", out)
events, secs = int(perf.group(1)), int(perf.group(2))
# LogGOPSim times itself in whole seconds.
rate = f"{events / secs / 1e6:.2f}" if secs else f">{events / 1e6:.2f}"
mem = int(open(f"{work}/lgs.mem").read().split()[-1]) / 1024
print(f"{n:>9} {'LogGOPSim':>10} {r:>4} {finish:>14} {rate:>12} {mem:>10.0f} {events:>12}")
d = json.load(open(f"{work}/ours.json"))
mem = int(open(f"{work}/ours.mem").read().split()[-1]) / 1024
same = "" if d["runtime_ns"] == finish else "  DIFFERENT"
print(f"{n:>9} {'pnmpi':>10} {r:>4} {d['runtime_ns']:>14} {d['events_per_s'] / 1e6:>12.2f} {mem:>10.0f} {d['events']:>12}{same}")
PY
    done
done
