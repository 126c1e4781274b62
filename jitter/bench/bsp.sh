#!/usr/bin/env bash
# Measured against reality: collect this machine's noise on
# cores 0 and 1, run a bulk-synchronous MPI program (a fixed compute
# quantum, then MPI_Barrier, PHASES times) with 1 and 2 ranks, and compare
# its measured slowdown against pure compute with what `pnmpi jitter sim`
# predicts for 1 and 2 tasks from the collected traces. Run it on an
# otherwise idle machine: the noise it collects is what it predicts from.
#   usage: jitter/bench/bsp.sh [openmpi|mpich] [QUANTUM_US] [PHASES] [ROUNDS]
#   (default openmpi 1000 2000 3)
set -euo pipefail
cd "$(dirname "$0")/../.."
mpi=${1:-openmpi}
quantum=${2:-1000}
phases=${3:-2000}
rounds=${4:-3}
# shellcheck source=scripts/mpi-env.sh
. scripts/mpi-env.sh "$mpi"
bin=$CARGO_TARGET_DIR/release
work=$(mktemp -d /tmp/pnmpi-bsp.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$MPICC" -O2 -o "$work/bsp" c-tests/programs/bsp.c
for round in $(seq "$rounds"); do
    "$bin/pnmpi" jitter collect --seconds 10 --cores 0,1 ${THRESHOLD:+--threshold "$THRESHOLD"} -o "$work/noise" > /dev/null 2>&1
    for np in 1 2; do
        line=$("${MPIRUN[@]}" -np "$np" --bind-to core "$work/bsp" "$quantum" "$phases" 2> /dev/null | grep '^bsp:')
        measured=$(sed 's/.*slowdown_pct \([-0-9.]*\).*/\1/' <<< "$line")
        pure_us=$(sed 's/.*quantum_us \([0-9.]*\).*/\1/' <<< "$line")
        predicted=$("$bin/pnmpi" jitter sim "$work/noise/core-0.txt" "$work/noise/core-1.txt" \
            --quantum "${pure_us}us" --phases "$phases" --tasks "$np" --seed "$round" |
            awk 'NR == 2 { sub("%", "", $3); print $3 }')
        printf 'round %s  ranks %s  quantum %7.1f us  measured %7.3f %%  predicted %7.3f %%\n' \
            "$round" "$np" "$pure_us" "$measured" "$predicted"
    done
done
