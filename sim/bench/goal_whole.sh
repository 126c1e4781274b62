#!/usr/bin/env bash
# What a user waits for, beside LogGOPSim: the whole `pnmpi sim replay
# X.goal` against LogGOPSim's whole pair of commands (`txt2bin` of the
# same text, then `LogGOPSim` on its output), on two Schedgen2 schedules
# at RANKS ranks: a dissemination of 8-byte messages
# (sim/bench/goal_dissemination.py) and the recursive-doubling allreduce
# of 1 MiB (Schedgen2's own `allreduce --ptrn recdoub`). Runs are
# interleaved (LogGOPSim's pair, then ours, RUNS times), so that a load
# beside them weighs on both alike; it prints each run, then per schedule
# the median wall time of each, their spread (min-max), the ratio of the
# medians, the peak memories (/usr/bin/time's maximum resident set; for
# LogGOPSim the larger of its two commands') and their ratio. The finishes
# must be equal to the ns: a run that differs stops the script.
#   usage: LOGGOPSIM=/path/to/its/build [SCHEDGEN=/path/to/schedgen.py] \
#          sim/bench/goal_whole.sh [openmpi|mpich] [RANKS]
#   env:   RUNS (default 5), KEEP (a folder for the schedules, reused)
set -euo pipefail
cd "$(dirname "$0")/../.."
mpi=${1:-openmpi}
n=${2:-65536}
runs=${RUNS:-5}
# shellcheck source=sim/bench/goal_common.sh
. sim/bench/goal_common.sh
schedgen=${SCHEDGEN:-$LOGGOPSIM/../src/Schedgen2/schedgen.py}
[ -f "$schedgen" ] || { echo "no Schedgen2 at $schedgen: set SCHEDGEN to its schedgen.py" >&2; exit 1; }
diss=$work/dissemination$n.goal
allr=$work/allreduce$n.goal
[ -f "$diss" ] || python3 sim/bench/goal_dissemination.py "$n" 8 "$diss"
if [ ! -f "$allr" ]; then
    python3 "$schedgen" allreduce --ptrn recdoub --comm_size "$n" --datasize 1048576 --output "$allr.tmp"
    mv "$allr.tmp" "$allr"
fi
# One line per run: schedule, simulator, run, wall s, peak KB, finish ns.
log=$work/runs.txt
: > "$log"
timed() { /usr/bin/time -f "%e %M" -o "$work/t" "$@"; }
for r in $(seq "$runs"); do
    for goal in "$diss" "$allr"; do
        name=$(basename "$goal" .goal)
        timed "$LOGGOPSIM/txt2bin" -i "$goal" -o "$work/x.bin" > /dev/null
        read -r t1 m1 < "$work/t"
        timed "$LOGGOPSIM/LogGOPSim" -f "$work/x.bin" -L 2500 -o 1500 -g 1000 -G 6 -O 0 -S 65535 -b \
            > "$work/lgs.out"
        read -r t2 m2 < "$work/t"
        finish=$(sed -n 's/^Maximum finishing time at host [0-9]*: \([0-9]*\).*/\1/p' "$work/lgs.out")
        echo "$name LogGOPSim $r $(awk "BEGIN { print $t1 + $t2 }") $((m1 > m2 ? m1 : m2)) $finish" | tee -a "$log"
        timed "$bin/pnmpi" sim replay "$goal" -m "$work/m.toml" > "$work/ours.out"
        read -r t m < "$work/t"
        ours=$(sed -n 's/^Maximum finishing time at host [0-9]*: \([0-9]*\).*/\1/p' "$work/ours.out")
        echo "$name pnmpi $r $t $m $ours" | tee -a "$log"
        if [ "$ours" != "$finish" ]; then
            echo "$name: pnmpi finishes at $ours ns, LogGOPSim at $finish ns" >&2
            exit 1
        fi
    done
done
python3 - "$log" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    name, sim, _, wall, peak, finish = line.split()
    runs.setdefault(name, {}).setdefault(sim, []).append((float(wall), int(peak), int(finish)))
print(f"{'schedule':<22} {'finish ns':>12} {'LogGOPSim s (spread)':>22} {'pnmpi s (spread)':>20} "
      f"{'speed-up':>8} {'peak MB L / p':>15} {'memory':>7}")
for name, by in runs.items():
    lw = [w for w, _, _ in by["LogGOPSim"]]
    pw = [w for w, _, _ in by["pnmpi"]]
    lm = statistics.median(m for _, m, _ in by["LogGOPSim"])
    pm = statistics.median(m for _, m, _ in by["pnmpi"])
    ml, mp = statistics.median(lw), statistics.median(pw)
    print(f"{name:<22} {by['pnmpi'][0][2]:>12} {ml:>8.2f} ({min(lw):.2f}-{max(lw):.2f}) "
          f"{mp:>7.2f} ({min(pw):.2f}-{max(pw):.2f}) {ml / mp:>7.1f}x "
          f"{lm / 1024:>7.0f} / {pm / 1024:<5.0f} {pm / lm:>6.3f}x")
PY
