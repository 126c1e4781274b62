#!/bin/sh
# Instructions per recorded call of the replay module, counted by
# callgrind: replaycost.c (one rank, 4 recorded calls and 5 others a
# round) at N and 2N rounds with no module, recording and replaying;
# (I(2N) - I(N)) / 4NT for each, and the difference from no module. With
# T > 0, T threads under MPI_THREAD_MULTIPLE make the rounds at once.
# usage: . scripts/mpi-env.sh openmpi; cargo build --release --workspace
#        modules/replay/bench/cost.sh [N [T]]
set -eu
n=${1:-2000}
threads=${2:-0}
per_round=$((4 * (threads > 0 ? threads : 1)))
t=$(realpath "${CARGO_TARGET_DIR:-target}/release")
w=$(mktemp -d)
${MPICC:-mpicc} -O2 -o "$w/replaycost" "$(dirname "$0")/replaycost.c"
run() { # mode rounds -> total instructions
    case $1 in
        none) : > "$w/conf" ;;
        *) printf 'module %s/libreplay.so\nargument mode %s\nargument dir %s/rec-%s\n' "$t" "$1" "$w" "$2" > "$w/conf" ;;
    esac
    PNMPI_CONF=$w/conf LD_PRELOAD=$t/libpnmpi.so valgrind --tool=callgrind \
        --callgrind-out-file="$w/cg.$1.$2" "$w/replaycost" "$2" "$threads" > "$w/out.$1.$2" 2>&1
    awk '/^totals:/ {print $2}' "$w/cg.$1.$2"
}
per() { # mode -> instructions per recorded call
    a=$(run "$1" "$n"); b=$(run "$1" $((2 * n)))
    echo "$a $b $n $per_round" | awk '{printf "%.1f", ($2 - $1) / ($4 * $3)}'
}
own() { # mode -> the module's own instructions (self cost in libreplay.so) per recorded call
    for r in "$n" $((2 * n)); do
        callgrind_annotate --inclusive=no --threshold=100 "$w/cg.$1.$r" 2>/dev/null |
            awk '/libreplay.so\]/ {gsub(",", "", $1); s += $1} END {print s + 0}'
    done | paste -sd' ' | awk -v n="$n" -v k="$per_round" '{printf "%.1f", ($2 - $1) / (k * n)}'
}
none=$(per none); record=$(per record); replay=$(per replay)
echo "the module's own instructions per recorded call: record $(own record), replay $(own replay)"
bytes=$(cat "$w/rec-$((2 * n))"/rank-0.rpl | wc -c)
echo "instructions per recorded call ($per_round a round; the whole process, MPI included):"
echo "  no module $none, record $record (+$(echo "$record $none" | awk '{printf "%.1f", $1 - $2}')), replay $replay (+$(echo "$replay $none" | awk '{printf "%.1f", $1 - $2}'))"
echo "record of $((2 * n)) rounds: $bytes bytes, $(echo "$bytes $n $per_round" | awk '{printf "%.2f", $1 / (2 * $3 * $2)}') bytes per recorded call"
grep -h "pnmpi replay" "$w"/out.record.$((2 * n)) || true
rm -rf "$w"
