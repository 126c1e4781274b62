#!/usr/bin/env bash
# Record sizes of pnmpi's replay module beside LLNL's ReMPI on the same
# program: c-tests/programs/masterworker.c at 4 ranks (wildcard receives,
# Waitany, Testsome polling), RUNS records of each, interleaved; the
# median total bytes of all ranks' files. ReMPI runs as a pnmpi module
# (patched by pnmpi-patch), basic encoding, with and without its gzip.
# usage: . scripts/mpi-env.sh openmpi; cargo build --release --workspace
#        REMPI_PREFIX=... modules/replay/bench/rempi.sh [RUNS] [TASKS]
set -euo pipefail
runs=${1:-9}; tasks=${2:-300}
: "${REMPI_PREFIX:?set REMPI_PREFIX to the install prefix of a ReMPI build (lib/librempi.so, lib/libreomp.so)}"
t=$(realpath "${CARGO_TARGET_DIR:-target}/release")
here=$(realpath "$(dirname "$0")/../../..")
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
cd "$w"
${MPICC:-mpicc} -O2 -o mw "$here/c-tests/programs/masterworker.c" -L"$t" -lpnmpi -Wl,-rpath,"$t"
"$t/pnmpi-patch" --against "$t/libpnmpi.so" "$REMPI_PREFIX/lib/librempi.so" -o "$w/librempi.pnmpi.so" >/dev/null 2>&1
read -r -a mpirun <<< "${MPIRUN:-mpirun --oversubscribe}"
size() { cat "$1"/* | wc -c; }
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
for i in $(seq "$runs"); do
    for tool in ours ours-plain rempi rempi-gzip; do
        rm -rf "rec-$tool"; mkdir "rec-$tool"
        case $tool in
            ours*) c=on; [[ $tool == ours-plain ]] && c=off
                printf 'module %s/libreplay.so\nargument mode record\nargument dir rec-%s\nargument compress %s\n' "$t" "$tool" "$c" > conf
                PNMPI_CONF=$w/conf "${mpirun[@]}" -np 4 -x PNMPI_CONF ./mw "$tasks" 20 >/dev/null 2>&1 ;;
            rempi*) gz=0; [[ $tool == rempi-gzip ]] && gz=1
                printf 'module %s/librempi.pnmpi.so\n' "$w" > conf
                PNMPI_CONF=$w/conf REMPI_MODE=0 REMPI_DIR=rec-$tool REMPI_GZIP=$gz "${mpirun[@]}" -np 4 \
                    -x PNMPI_CONF -x REMPI_MODE -x REMPI_DIR -x REMPI_GZIP -x LD_PRELOAD="$REMPI_PREFIX/lib/libreomp.so" \
                    ./mw "$tasks" 20 >/dev/null 2>&1 ;;
        esac
        echo "$(size "rec-$tool")" >> "sizes-$tool"
    done
done
echo "masterworker $tasks 20, 4 ranks, median of $runs records (bytes, all ranks):"
for tool in ours ours-plain rempi rempi-gzip; do
    printf '  %-11s %s\n' "$tool" "$(median < "sizes-$tool")"
done
