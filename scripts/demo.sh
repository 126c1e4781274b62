#!/usr/bin/env bash
# Builds pnmpi and shows it chaining tools on a real 4-rank MPI program:
# the same unmodified binary runs without tools, then with two tracing
# layers and the paper's delay layer, loaded from a .pnmpi-conf; then the
# bundled tracer and profiler on a stencil, the replay of its trace on
# another machine, the same run under vtime on that machine's model, a
# hello world as 65,536 virtual ranks in one process, the stencil's
# trace as an OTF2 archive, read back by otf2-print, and its wait states
# and critical path (pnmpi trace analyze, with an SVG); then the checker
# on a program with a real error, and the replay module making a racy
# master-worker repeat. It installs only what it runs (scripts/deps.sh).
#   usage: scripts/demo.sh [openmpi|mpich]   (default: openmpi)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
scripts/deps.sh "${1:-openmpi}"
# shellcheck source=scripts/mpi-env.sh
. scripts/mpi-env.sh "${1:-openmpi}"
cargo build --release --workspace --locked
target="$CARGO_TARGET_DIR/release"

work=$(mktemp -d -t pnmpi-demo-XXXXXX)
trap 'rm -rf "$work"' EXIT
inc=(-I c-tests/modules -I "$target/include")
$MPICC -shared -fPIC -O2 -o "$work/libchaincheck.so" c-tests/modules/chaincheck.c
link=(-L"$work" -lchaincheck -Wl,-rpath,"$work")
for name in A B; do
    $MPICC -shared -fPIC -O2 "${inc[@]}" -DNAME=$name -o "$work/seq$name.so" c-tests/modules/seq.c "${link[@]}"
done
$MPICC -shared -fPIC -O2 "${inc[@]}" -o "$work/delay.so" c-tests/modules/delay.c
# The application is linked with libmpi only: pnmpi run preloads libpnmpi.
$MPICC -O2 "${inc[@]}" -o "$work/chain" c-tests/programs/chain.c "${link[@]}"
$MPICC -O2 -o "$work/delay_bench" c-tests/programs/delay_bench.c
$MPICC -O2 -g -o "$work/stencil" c-tests/programs/stencil.c
$MPICC -O2 -o "$work/vhello" c-tests/programs/vhello.c
$MPICC -O2 -o "$work/masterworker" c-tests/programs/masterworker.c
$MPICC -O0 -g -o "$work/p2p_type_bad" c-tests/checker/p2p_type_bad.c

echo
echo "### 1. No tools: chain prints an empty layer log for each call"
"${MPIRUN[@]}" -np 4 "$work/chain"

cat > "$work/.pnmpi-conf" <<CONF
# two tracing layers, in this order
module seqA
module seqB
CONF
echo
echo "### 2. Two modules from $work/.pnmpi-conf, same binary, under pnmpi run"
(cd "$work" && PNMPI_LIB_PATH="$work" "${MPIRUN[@]}" -np 4 "$target/pnmpi" run --verbose -- "$work/chain")

echo
echo "### 3. The paper's delay layer: 0 then 2 layers of +100 us per MPI_Send"
printf 'module delay\nmodule delay\n' > "$work/delay.conf"
cd "$work"
rm .pnmpi-conf
"${MPIRUN[@]}" -np 2 "$target/pnmpi" run -- "$work/delay_bench"
"${MPIRUN[@]}" -np 2 "$target/pnmpi" run --conf "$work/delay.conf" --lib-path "$work" -- "$work/delay_bench"

echo
echo "### 4. The tracer on a 4-rank stencil (halo exchange + allreduce): merge, statistics, Perfetto JSON"
printf 'module tracer\nargument outdir %s\n' "$work/trace" > "$work/trace.conf"
"${MPIRUN[@]}" -np 4 "$target/pnmpi" run --conf "$work/trace.conf" --lib-path "$target" -- "$work/stencil" 64 200 10
"$target/pnmpi" trace merge "$work/trace" -o "$target/stencil.pnt"
"$target/pnmpi" trace stats "$target/stencil.pnt"
"$target/pnmpi" trace export --format chrome "$target/stencil.pnt" -o "$target/stencil.json"

echo
echo "### 5. The profiler on the same stencil: mpiP-style report with call sites (file:line)"
printf 'module profiler\nargument output %s\n' "$work/profile.txt" > "$work/prof.conf"
"${MPIRUN[@]}" -np 4 "$target/pnmpi" run --conf "$work/prof.conf" --lib-path "$target" -- "$work/stencil" 64 200 10
awk '/^@--- Callsites:/ { p = 1 } /^@--- Callsite Time/ { p = 0 } p' "$work/profile.txt"

machine="$repo/sim/machine.example.toml"
echo
echo "### 6. What would that run take on another machine? Replay the trace on $machine"
"$target/pnmpi" sim replay "$work/trace" -m "$machine" --compare > "$work/replay.txt"
head -12 "$work/replay.txt"

echo
echo "### 7. Run it on that machine's model instead (vtime), traced on the virtual clock"
printf 'module tracer\nargument outdir %s\nmodule vtime\nargument machine %s\n' "$work/vtrace" "$machine" > "$work/vtime.conf"
PNMPI_TRACE_CLOCK=vtime "${MPIRUN[@]}" -np 4 "$target/pnmpi" run --conf "$work/vtime.conf" --lib-path "$target" -- "$work/stencil" 64 200 10
echo "The replay of that virtual-clock trace on the same machine: vtime's time less the tracer's own set-up in MPI_Init:"
"$target/pnmpi" sim replay "$work/vtrace" -m "$machine" | grep -i "predicted runtime"

echo
echo "### 8. 65,536 ranks of an unmodified hello world (allreduce, barrier) as virtual ranks of one process"
"${MPIRUN[@]}" -np 1 "$target/pnmpi" run --vranks 65536 -- "$work/vhello" 2>&1 | grep -E '^(pnmpi vranks: [0-9]+ (virtual ranks|context)|pnmpi vtime: virtual run time|vhello:)'

echo
echo "### 9. The stencil's trace as an OTF2 archive (Vampir, Scalasca), read back by otf2-print"
"$target/pnmpi" trace export --format otf2 "$work/trace" -o "$work/otf2"
echo "The system tree: the host each rank ran on, as the tracer recorded it"
otf2-print -G "$work/otf2/traces.otf2" | grep -E '^(SYSTEM_TREE_NODE|LOCATION_GROUP) '
echo "Rank 0's first calls, and its first messages and collective:"
otf2-print -L 0 "$work/otf2/traces.otf2" |
    awk '/^(ENTER|LEAVE) / && e < 6 { print; e++ } /^MPI_(I?SEND|IRECV|COLLECTIVE_END) / && m < 4 { print; m++ }'

echo
echo "### 10. Where the stencil lost its time: wait states and the critical path (pnmpi trace analyze)"
"$target/pnmpi" trace analyze "$work/trace" --svg "$target/stencil-analyze.svg" | head -24
echo "The critical path and the wait matrix as a picture: $target/stencil-analyze.svg"

echo
echo "### 11. The checker on a small program with a real error: rank 1 receives 4 floats where rank 0 sent 4 ints"
printf 'module checker\n' > "$work/check.conf"
status=0
"${MPIRUN[@]}" -np 2 "$target/pnmpi" run --conf "$work/check.conf" --lib-path "$target" -- "$work/p2p_type_bad" \
    2> "$work/check.err" || status=$?
grep '^pnmpi checker:' "$work/check.err"
echo "(exit status $status: 3 means the checker reported an error)"

echo
echo "### 12. A racy master-worker (wildcard receives, Waitany, Testsome): its checksum changes from run to run"
for i in 1 2 3; do "${MPIRUN[@]}" -np 4 "$work/masterworker" 300 20; done
echo "Recorded once by the replay module, then replayed three times: the recorded run each time"
printf 'module replay\nargument mode record\nargument dir %s\n' "$work/rec" > "$work/record.conf"
printf 'module replay\nargument mode replay\nargument dir %s\n' "$work/rec" > "$work/replay.conf"
"${MPIRUN[@]}" -np 4 "$target/pnmpi" run --conf "$work/record.conf" --lib-path "$target" -- "$work/masterworker" 300 20
for i in 1 2 3; do
    "${MPIRUN[@]}" -np 4 "$target/pnmpi" run --conf "$work/replay.conf" --lib-path "$target" -- "$work/masterworker" 300 20
done
