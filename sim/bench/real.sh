#!/usr/bin/env bash
# The replay engine on real applications' traces: each
# application runs under the tracer, its trace is merged, and the merged
# trace is replayed RUNS times, interleaved with a previous build's replay
# when OLD is given. Prints each run's events, M events/s and peak memory
# (the report's own figures) and whether the old and new reports agree;
# with SMPIRUN=1, also smpirun's wall time on the SimGrid export of the
# same trace over ours on the .pnt (each run's whole commands, wall time).
#   usage: sim/bench/real.sh [openmpi|mpich] [APP...]
#   APP:   hpcc lammps cg mg ft is lu randmix masterworker   (default: all;
#          hpcc and lammps are Debian's, built for Open MPI only)
#   env:   RUNS (default 3), OLD (a previous build's pnmpi), SMPIRUN=1,
#          KEEP (a folder to keep the traces in, reused when present)
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
mpi=${1:-openmpi}
shift || true
apps=("$@")
((${#apps[@]})) || apps=(hpcc lammps cg mg ft is lu randmix masterworker)
# shellcheck source=scripts/mpi-env.sh
. scripts/mpi-env.sh "$mpi"
bin=$CARGO_TARGET_DIR/release
runs=${RUNS:-3}
work=${KEEP:-$(mktemp -d /tmp/pnmpi-real.XXXXXX)}
mkdir -p "$work"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
machine=$repo/sim/machine.example.toml
printf 'module %s\n' "$bin/libtracer.so" > "$work/conf"

# Runs `np` ranks of a command under the tracer into $work/$app/trace.
trace() {
    local app=$1 np=$2
    shift 2
    local dir=$work/$app
    rm -rf "$dir/trace"
    mkdir -p "$dir"
    (cd "$dir" && PNMPI_CONF=$work/conf PNMPI_TRACE_DIR=$dir/trace "${MPIRUN[@]}" -np "$np" "$@" > run.out 2>&1) \
        || { echo "$app: the traced run failed (see $dir/run.out)" >&2; exit 1; }
}

# A c-tests program linked with libpnmpi (more arguments: compiler flags).
build() {
    local src=$1 out=$2
    shift 2
    "$MPICC" -O2 "$@" -o "$out" "$src" -lm -L"$bin" -lpnmpi -Wl,-rpath,"$bin"
}

for app in "${apps[@]}"; do
    dir=$work/$app
    if [ ! -f "$dir/t.pnt" ]; then
        case $app in
            hpcc | lammps)
                if [ "$mpi" != openmpi ]; then
                    echo "$app: skipped (Debian's build is for Open MPI)" >&2
                    continue
                fi
                mkdir -p "$dir"
                if [ "$app" = hpcc ]; then
                    # The example input with a small HPL problem.
                    sed 's/^.* Ns$/200          Ns/' /usr/share/doc/hpcc/examples/_hpccinf.txt > "$dir/hpccinf.txt"
                    trace hpcc 2 "$bin/pnmpi" run -- /usr/bin/hpcc
                else
                    cp bench/callgrind/in.lj "$dir/in.lj"
                    trace lammps 2 "$bin/pnmpi" run -- /usr/bin/lmp -in in.lj -var steps 5000 -log none -screen none
                fi
                ;;
            cg | mg | ft | is | lu)
                # Longer runs than the kernels' defaults (class S-like).
                case $app in
                    cg) longer=-DOUTER=60 ;;
                    mg) longer=-DCYCLES=60 ;;
                    ft) longer=-DITERS=100 ;;
                    is) longer=-DITERS=300 ;;
                    lu) longer=-DITERS=150 ;;
                esac
                build "c-tests/nas/$app.c" "$work/$app.exe" "$longer"
                trace "$app" 4 "$work/$app.exe"
                ;;
            randmix)
                # Every pattern, collectives included; MPI_Test polling.
                build c-tests/programs/randmix.c "$work/randmix.exe"
                trace randmix 4 "$work/randmix.exe" 7 400 all
                ;;
            masterworker)
                # Wildcard receives, Waitany and Testsome polling.
                build c-tests/programs/masterworker.c "$work/masterworker.exe"
                trace masterworker 4 "$work/masterworker.exe" 3000 5
                ;;
            *)
                echo "unknown application '$app'" >&2
                exit 2
                ;;
        esac
        "$bin/pnmpi" trace merge "$dir/trace" -o "$dir/t.pnt" > /dev/null
        if [ -n "${SMPIRUN:-}" ]; then
            "$bin/pnmpi" trace export --format simgrid "$dir/t.pnt" -o "$dir/sg" > /dev/null
        fi
    fi
done

strip='import json,sys
d=json.load(open(sys.argv[1]))
for k in ("sim_wall_s","events_per_s","peak_in_flight","peak_memory_bytes","processes","protocol","trace"): d.pop(k,None)
print(json.dumps(d,sort_keys=True))'
printf '%-13s %11s %10s %4s %12s %9s %6s %12s\n' app events build run "M events/s" "peak MB" same "smpirun x"
for app in "${apps[@]}"; do
    dir=$work/$app
    [ -f "$dir/t.pnt" ] || continue
    builds=(new)
    [ -z "${OLD:-}" ] || builds=(old new)
    for r in $(seq "$runs"); do
        for b in "${builds[@]}"; do
            exe=$bin/pnmpi
            [ "$b" = new ] || exe=$OLD
            t0=$(date +%s%N)
            rm -f "$dir/$b.json"
            # A previous build may refuse a trace this one replays.
            "$exe" sim replay "$dir/t.pnt" -m "$machine" --json "$dir/$b.json" > /dev/null 2> "$dir/$b.err" \
                || [ "$b" = old ] || { cat "$dir/$b.err" >&2; exit 1; }
            wall=$(( $(date +%s%N) - t0 ))
        done
        same=-
        if [ -n "${OLD:-}" ]; then
            same=no
            if [ ! -f "$dir/old.json" ]; then
                same=-
                echo "$app: the old build fails: $(head -1 "$dir/old.err")" >&2
            elif [ "$(python3 -c "$strip" "$dir/old.json")" = "$(python3 -c "$strip" "$dir/new.json")" ]; then
                same=yes
            fi
        fi
        ratio=-
        if [ -n "${SMPIRUN:-}" ]; then
            line=$(grep '^smpirun' "$dir/sg/README.txt")
            t0=$(date +%s%N)
            (cd "$dir/sg" && sh -c "$line" > /dev/null 2>&1)
            t1=$(date +%s%N)
            # Whole commands' wall times: smpirun's on the export, ours on the .pnt.
            ratio=$(python3 -c "print(f'{($t1 - $t0) / $wall:.1f}')")
        fi
        for b in "${builds[@]}"; do
            [ -f "$dir/$b.json" ] || continue
            python3 - "$dir/$b.json" "$app" "$b" "$r" "$same" "$ratio" <<'PY'
import json,sys
d=json.load(open(sys.argv[1]))
app,b,r,same,ratio=sys.argv[2:7]
print(f'{app:<13} {d["events"]:>11} {b:>10} {r:>4} {d["events_per_s"]/1e6:>12.2f} {d["peak_memory_bytes"]/2**20:>9.0f} {same:>6} {ratio if b=="new" else "-":>12}')
PY
        done
    done
done
