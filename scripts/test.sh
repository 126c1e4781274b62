#!/usr/bin/env bash
# The whole test suite, against MPICH and then Open MPI: style checks, the library crates' documentation,
# then every unit and integration test, which run real programs under each
# MPI's own mpirun. Every step runs whatever failed before it (a failing
# test binary does not hide the others, nor one MPI the other); the last
# line says how many tests passed and failed, after the names of the
# failures. What does not depend on the MPI (the crates that never call
# it, the library docs) runs with the first MPI only.
# Both MPIs build into one cargo target folder, target/: the second
# build recompiles only the crates that call MPI, not the dependencies or
# the MPI-free crates, and the folder ends with Open MPI's build.
#   usage: scripts/test.sh [openmpi|mpich ...]   (default: mpich openmpi)
set -uo pipefail
cd "$(dirname "$0")/.."
mpis=("$@")
((${#mpis[@]})) || mpis=(mpich openmpi)

logs=$(mktemp -d -t pnmpi-test-XXXXXX)
trap 'rm -rf "$logs"' EXIT
# The packages the first build needs, then the rest (the other MPI, the
# compilers and tools the tests run, mpi4py's builds) beside that build:
# on a fresh machine their downloads and unpacking take a minute or two
# that the build's compilers would otherwise wait for. The tests wait for
# them.
scripts/deps.sh "${mpis[0]}" || exit 1
scripts/deps.sh --tests >"$logs/deps.log" 2>&1 &
deps=$!
# wait_for_deps: the packages installed beside the build, or the script
# stops with their output.
wait_for_deps() {
    ((deps)) || return 0
    if ! wait "$deps"; then
        cat "$logs/deps.log" >&2
        echo "test: installing the test suite's packages failed (above)" >&2
        exit 1
    fi
    cat "$logs/deps.log" >&2
    deps=0
}
passed=0
failed=()
timings=()

# step NAME COMMAND...: runs a step that is not a test binary (style,
# build, docs); a failure is counted as one failed test named NAME.
step() {
    local name=$1 start=$SECONDS
    shift
    echo "== $name" >&2
    if "$@"; then
        passed=$((passed + 1))
    else
        failed+=("$name")
    fi
    timings+=("$name: $((SECONDS - start)) s")
}

# The crates that never call MPI (their tests read and write traces,
# simulate, plot): their tests and lints run with the first MPI only.
mpi_free=(pnmpi-analyze pnmpi-jitter pnmpi-otf2 pnmpi-plot pnmpi-sim pnmpi-trace)

# The integration suite's tests whose subject does not depend on the MPI
# run with the first MPI only, as the MPI-free crates do: the simulators
# and trace tools on traces (their inputs are traces, whichever MPI ran the
# program; the tracer itself is tested under both), the cross-checks
# against SimGrid's smpirun, the scale tests of virtual ranks and of the
# parallel replay's memory (the same program at 16 virtual ranks, and the
# parallel replay's bit-for-bit tests, run under both), and the checks of
# the docs and of the source's layers. About 135 s of the suite's test
# time, a sixth of the second MPI's suite. (`--skip` matches a substring
# in every test binary: `jitter::` also skips the command's unit test of
# its jitter arguments, which calls no MPI either.)
first_mpi_only=(analyze:: guide:: jitter:: layers:: otf2:: sim_goal:: sim_links:: sim_noise:: sim_simgrid::
    sim_stream:: sim_synth:: sim_parallel::memory_per_process_follows_its_own_ranks
    vranks_nas::kernels_at_256_virtual_ranks_print_what_16_processes_print)

# tests MPI [cargo test options]: cargo test on the workspace, every
# binary run (--no-fail-fast); each test's result line is counted.
# Tests at a time, on two cores: Open MPI's ranks and launches wait, and
# its root suite took 414 s two at a time, 342 s three at a time (1.44 and
# 1.71 cores busy; 368 s and 388 s in whole runs of this script); MPICH's
# ranks spin while they wait (yielding only every 16 idle polls), and a
# third test did not help: its root suite took 327 s and 375 s two at a
# time, 397 s three at a time.
declare -A test_threads=([mpich]=2 [openmpi]=3)
tests() {
    local mpi=$1 start=$SECONDS log="$logs/$1.log" skip=()
    shift
    echo "== $mpi: tests" >&2
    if ((${#once[@]})); then
        for t in "${first_mpi_only[@]}"; do skip+=(--skip "$t"); done
    fi
    cargo test --release --workspace --locked --no-fail-fast "$@" -- --test-threads="${test_threads[$mpi]}" "${skip[@]}" 2>&1 | tee "$log"
    local status=${PIPESTATUS[0]}
    local ok bad
    ok=$(grep -cE '^test .* \.\.\. ok$' "$log")
    passed=$((passed + ok))
    # A failed test names its binary: "Running tests/x.rs (...)" or
    # "Running unittests src/lib.rs (target/.../deps/crate-hash)".
    while IFS= read -r bad; do
        failed+=("$mpi: $bad")
    done < <(awk '
        /^ *Running / {
            bin = $2
            if (bin == "unittests") { crate = $4; sub(/^\(.*\/deps\//, "", crate); sub(/-[0-9a-f]+\)$/, "", crate); bin = crate " " $3 }
        }
        /^ *Doc-tests / { bin = "doc-tests " $2 }
        /^test .* \.\.\. FAILED$/ { print bin " " $2 }
    ' "$log")
    # A binary that did not build, or that crashed, has no FAILED line.
    if ((status != 0)) && ! grep -qE '^test .* \.\.\. FAILED$' "$log"; then
        failed+=("$mpi: cargo test (exit $status, see its output above)")
    fi
    timings+=("$mpi: tests: $((SECONDS - start)) s")
}

# logged LOG COMMAND...: runs COMMAND, its output also appended to LOG.
logged() {
    local log=$1
    shift
    "$@" 2>&1 | tee -a "$log"
    return "${PIPESTATUS[0]}"
}

# lint_clean LOG: no crate's build in LOG had a warning (clippy's, or
# rustc's own): what `cargo clippy -- -D warnings` asks. Prints the
# crates that had one.
lint_clean() {
    ! grep -E '^warning: `[^`]+` \(.*\) generated [0-9]+ warnings?' "$1"
}

step "style: cargo fmt --check" cargo fmt --all -- --check

# Clippy lints the workspace's own crates as they are built: clippy-driver
# is their compiler (RUSTC_WORKSPACE_WRAPPER, what `cargo clippy` sets for
# its `cargo check`; the dependencies compile with plain rustc), so each
# crate is type-checked once, for its binary and its lints, where a
# `cargo clippy` of its own checked them all again (76 s and 22 s of a
# cold run's 1,353 s, MPICH and Open MPI; its check of the dependencies
# was what `cargo doc` reused, which now checks them itself). A warning
# does not stop the build: the step "clippy" fails, naming the crates,
# and the tests run. Cargo replays a built crate's warnings, so a warm
# run finds them too. (A plain `cargo build` after this script compiles
# the workspace's crates again, its compiler being another.)
clippy_driver="$(rustc --print sysroot)/bin/clippy-driver"
if [ ! -x "$clippy_driver" ]; then
    echo "test: no clippy-driver in $(rustc --print sysroot)/bin: run \`rustup component add clippy\`" >&2
    exit 1
fi
export RUSTC_WORKSPACE_WRAPPER="$clippy_driver"

once=()
# The test targets: the first MPI's run has every crate's unit and doc
# tests; the second's only the integration tests (`--test '*'`: the
# suite, run under both, and the crates' own). The unit tests of the
# crates that call MPI test their pure logic (configuration, tables,
# the checker's graphs, the virtual ranks' scheduler), whichever MPI
# the crate was built for, and building them again took about 80 s of
# CPU.
targets=(--tests)
test_targets=()
for mpi in "${mpis[@]}"; do
    # shellcheck source=scripts/mpi-env.sh
    . scripts/mpi-env.sh "$mpi" || exit 1
    export CARGO_TARGET_DIR="$PWD/target"
    # The libraries, modules and commands with the tests, in one build:
    # the tests' dev-dependencies change the features of shared ones
    # (proptest's regex-syntax and rand, and so bindgen's build of every
    # crate that calls MPI), so a plain `cargo build` first made `cargo
    # test` compile each crate that calls MPI a second time (172 s against
    # 121 s and 90 s, MPICH, the crates that call MPI only).
    build_log="$logs/$mpi-build.log"
    step "$mpi: build ($MPICC, $CARGO_TARGET_DIR)" logged "$build_log" \
        cargo build --release --workspace "${once[@]}" --lib --bins "${targets[@]}" --examples --locked
    # The benchmark smoke tests layer the compact empty module; its no_std
    # build (panic = "abort") only exists here, and is linted here.
    step "$mpi: build (compact empty module)" logged "$build_log" \
        cargo build --profile compact -p pnmpi-module-empty --locked
    step "$mpi: clippy (-D warnings, in the builds above)" lint_clean "$build_log"
    if ((${#once[@]} == 0)); then
        # --release, as the build: its build scripts and proc macros serve
        # the doc too; the documented crates' dependencies are checked for
        # it (45 s of a cold run: no `cargo clippy` checks them first).
        RUSTDOCFLAGS="-D warnings" step "$mpi: cargo doc of the library crates" \
            cargo doc --release --no-deps -p pnmpi-sdk -p pnmpi-trace -p pnmpi-sim --locked
    fi
    wait_for_deps
    tests "$mpi" "${once[@]}" "${test_targets[@]}"
    for crate in "${mpi_free[@]}"; do once+=(--exclude "$crate"); done
    targets=(--test '*')
    test_targets=(--test '*')
done

echo >&2
echo "== where the time went" >&2
printf '   %s\n' "${timings[@]}" >&2
if ((${#failed[@]})); then
    echo "== failed" >&2
    printf '   %s\n' "${failed[@]}" >&2
fi
echo "${passed} passed, ${#failed[@]} failed"
((${#failed[@]} == 0))
