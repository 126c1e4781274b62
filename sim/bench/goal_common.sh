# Sourced by sim/bench/goal*.sh, after they set `mpi`: what both benches
# against LogGOPSim share. Checks LOGGOPSIM, sets the MPI's environment,
# `bin` (our release build) and `work` (KEEP, or a temporary folder
# removed at exit), and writes $work/m.toml, a machine file of LogGOPSim's
# default LogGOPS parameters (those the benches pass it as
# `-L 2500 -o 1500 -g 1000 -G 6 -O 0 -S 65535`).
# shellcheck shell=bash
: "${LOGGOPSIM:?set LOGGOPSIM to the folder of a LogGOPSim build (LogGOPSim, txt2bin)}"
# shellcheck source=scripts/mpi-env.sh
. scripts/mpi-env.sh "$mpi"
bin=$CARGO_TARGET_DIR/release
work=${KEEP:-$(mktemp -d /tmp/pnmpi-goal.XXXXXX)}
mkdir -p "$work"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
cat > "$work/m.toml" <<'TOML'
[machine]
name = "LogGOPSim's defaults"
nodes = 1
[network]
latency = "2500ns"
bandwidth = "1GB/s"
[model.loggops]
L = "2500ns"
o = "1500ns"
g = "1000ns"
G = "6ns"
O = "0ns"
S = "65535B"
TOML
