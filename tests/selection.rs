//! Per-module selection: `routines`, `exclude`, `ranks` and `phases` each
//! change exactly which calls a counting module sees (classic and TOML),
//! and a routine pattern that names no routine stops the run.
//! counts.c makes known calls in Pcontrol phases 1, 2, 3 and 1 again.

use crate::common;
use crate::counting;
use common::*;
use counting::*;

fn names() {
    for n in ["A", "B", "C"] {
        count_module(n);
    }
}

#[test]
fn routines_keep_only_the_matching_routines() {
    names();
    let mut case = Case::new();
    case.conf("module countA\nroutines MPI_Send MPI_*ecv\nmodule countB\n");
    let run = run_counts(&case, 2);
    // A is first, so Pcontrol is meant for it, but MPI_Pcontrol is not in
    // its routines.
    assert_eq!(seen(&run, "A"), everywhere("A", 2, [3, 3, 0, 0, 0], &[], true));
    assert_eq!(seen(&run, "B"), everywhere("B", 2, ALL, &[], false));
}

#[test]
fn exclude_drops_the_matching_routines() {
    names();
    let mut case = Case::new();
    case.conf("module countA\nexclude MPI_Comm_* MPI_Barrier\nmodule countB\n");
    let run = run_counts(&case, 2);
    assert_eq!(
        seen(&run, "A"),
        everywhere("A", 2, [3, 3, 0, 0, 0], &LEVELS, true)
    );
    assert_eq!(seen(&run, "B"), everywhere("B", 2, ALL, &[], false));
}

#[test]
fn routines_and_exclude_combine_and_repeat() {
    names();
    let mut case = Case::new();
    case.conf("module countA\nroutines MPI_Comm_*\nroutines MPI_Barrier\nexclude MPI_Comm_size\n");
    let run = run_counts(&case, 2);
    assert_eq!(seen(&run, "A"), everywhere("A", 2, [0, 0, 10, 3, 0], &[], true));
}

#[test]
fn ranks_select_world_ranks() {
    names();
    let mut case = Case::new();
    case.conf("module countA\nranks 0,2-3\nmodule countB\nranks 1\n");
    let run = run_counts(&case, 4);
    // A does not apply on rank 1 and sees nothing there, not even Pcontrol.
    let a: Vec<String> = (0..4)
        .map(|r| match r {
            1 => line("A", r, NONE, &[], true),
            _ => line("A", r, ALL, &LEVELS, true),
        })
        .collect();
    assert_eq!(seen(&run, "A"), a);
    let b: Vec<String> = (0..4)
        .map(|r| line("B", r, if r == 1 { ALL } else { NONE }, &[], false))
        .collect();
    assert_eq!(seen(&run, "B"), b);
}

#[test]
fn ranks_follow_mpi_when_the_launcher_environment_is_wrong() {
    // Each rank is told by its environment that it is rank 3 - r; libpnmpi
    // selects with that at load, then corrects with PMPI_Comm_rank after
    // MPI_Init, before any counted call. Under Open MPI the variable is
    // informational; MPICH does not read it at all.
    names();
    let mut case = Case::new();
    case.conf("module countA\nranks 0\n");
    let fake = "r=${OMPI_COMM_WORLD_RANK:-$PMI_RANK}; export COUNT_RANK=$r OMPI_COMM_WORLD_RANK=$((3 - r));";
    // The environment each rank gets: its true rank, and the wrong one.
    let mut cmd = launcher(4);
    cmd.args([
        "sh",
        "-c",
        &format!("{fake} echo fake $COUNT_RANK $OMPI_COMM_WORLD_RANK"),
    ]);
    let run = case.finish(cmd);
    run.assert_ok();
    let mut env = run.lines("fake ");
    env.sort();
    assert_eq!(env, ["fake 0 3", "fake 1 2", "fake 2 1", "fake 3 0"]);

    let mut cmd = launcher(4);
    cmd.args(["sh", "-c", &format!("{fake} exec \"$0\"")])
        .arg(program("counts", Link::Pnmpi));
    let run = case.finish(cmd);
    run.assert_ok();
    assert_eq!(run.lines("counts:"), ["counts: size 4 token 9"]);
    let a: Vec<String> = (0..4)
        .map(|r| match r {
            0 => line("A", r, ALL, &LEVELS, true),
            _ => line("A", r, NONE, &[], true),
        })
        .collect();
    assert_eq!(seen(&run, "A"), a);
}

#[test]
fn phases_follow_the_last_pcontrol_level() {
    names();
    let mut case = Case::new();
    case.conf("module countA\nphases 2-3\nmodule countB\nphases 1\npcontrol on\nmodule countC\nphases 3\n");
    let run = run_counts(&case, 2);
    // The phase switches before MPI_Pcontrol(k) is delivered: A receives
    // Pcontrol(2) and (3), B (phase 1, before any Pcontrol too) Pcontrol(1).
    let sum = |x: Calls, y: Calls| -> Calls { std::array::from_fn(|i| x[i] + y[i]) };
    assert_eq!(
        seen(&run, "A"),
        everywhere("A", 2, sum(PHASE2, PHASE3), &[2, 3], true)
    );
    assert_eq!(seen(&run, "B"), everywhere("B", 2, PHASE1, &[1], true));
    assert_eq!(seen(&run, "C"), everywhere("C", 2, PHASE3, &[], false));
}

#[test]
fn toml_selection_matches_the_classic_one() {
    names();
    let mut case = Case::new();
    let file = case.write(
        "tools.toml",
        r#"[[module]]
name = "countA"
ranks = "0,2-3"
phases = "2-3"

[[module]]
name = "countB"
routines = ["MPI_Send", "MPI_*ecv"]
exclude = ["MPI_Recv"]
pcontrol = true

[[module]]
name = "countC"
phases = 1
"#,
    );
    case.env("PNMPI_CONF", &file.to_string_lossy());
    let run = run_counts(&case, 4);
    let a: Vec<String> = (0..4)
        .map(|r| match r {
            1 => line("A", r, NONE, &[], true),
            _ => line("A", r, [2, 2, 5, 1, 0], &[2, 3], true),
        })
        .collect();
    assert_eq!(seen(&run, "A"), a);
    assert_eq!(seen(&run, "B"), everywhere("B", 4, [3, 0, 0, 0, 0], &[], true));
    assert_eq!(seen(&run, "C"), everywhere("C", 4, PHASE1, &[], false));
}

/// Runs counts.c with the case's configuration; it must stop before MPI
/// starts. Returns stderr.
fn stopped(case: &Case) -> String {
    case.stopped("counts", &["counts:", "count "])
}

#[test]
fn a_routine_pattern_matching_nothing_stops_the_run_with_file_and_line() {
    names();
    let mut case = Case::new();
    let conf = case.conf("module countA\nroutines MPI_Send\nexclude MPI_Sned*\n");
    let err = stopped(&case);
    let want = format!("{}:3: `MPI_Sned*` matches no MPI routine", conf.display());
    assert!(err.contains(&want), "{want}\n{err}");

    let mut case = Case::new();
    let file = case.write(
        "tools.toml",
        "[[module]]\nname = \"countA\"\n\n[[module]]\nname = \"countB\"\nroutines = [\"MPI_Barier\"]\n",
    );
    case.env("PNMPI_CONF", &file.to_string_lossy());
    let err = stopped(&case);
    let want = format!("{}: line 4: `MPI_Barier` matches no MPI routine", file.display());
    assert!(err.contains(&want), "{want}\n{err}");
}
