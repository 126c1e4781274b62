//! The `count` module (c-tests/modules/count.c) and the `counts` program
//! (c-tests/programs/counts.c), shared by tests/pcontrol.rs,
//! tests/selection.rs and tests/profiler.rs: what each counting module
//! saw, on each rank.

use crate::common::*;
use std::path::PathBuf;

/// Calls of Send, Recv, Barrier, Comm_rank, Comm_size seen by a module.
pub type Calls = [u32; 5];

/// What counts.c does on every rank, in total and in each Pcontrol phase.
pub const ALL: Calls = [3, 3, 10, 3, 1];
pub const PHASE1: Calls = [1, 1, 5, 2, 1];
pub const PHASE2: Calls = [2, 2, 2, 1, 0];
pub const PHASE3: Calls = [0, 0, 3, 0, 0];
pub const NONE: Calls = [0; 5];
/// The levels counts.c passes to MPI_Pcontrol, in order.
pub const LEVELS: [u32; 3] = [2, 3, 1];

/// Builds count.c as `count<NAME>.so`, logging as NAME.
pub fn count_module(name: &str) -> PathBuf {
    api_module("count", &format!("count{name}"), &[&format!("NAME={name}")])
}

/// The line count.c prints for module `name` on `rank`.
pub fn line(name: &str, rank: usize, calls: Calls, levels: &[u32], pcself: bool) -> String {
    let [send, recv, barrier, comm_rank, comm_size] = calls;
    let shown = if levels.is_empty() {
        "-".to_string()
    } else {
        levels.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
    };
    format!(
        "count {name} rank {rank}: Send {send} Recv {recv} Barrier {barrier} Comm_rank {comm_rank} \
         Comm_size {comm_size} Pcontrol {} levels {shown} pcself {}",
        levels.len(),
        u8::from(pcself)
    )
}

/// The same line on every rank of `np`.
pub fn everywhere(name: &str, np: usize, calls: Calls, levels: &[u32], pcself: bool) -> Vec<String> {
    (0..np).map(|r| line(name, r, calls, levels, pcself)).collect()
}

/// What module `name` printed, sorted by rank.
pub fn seen(run: &Run, name: &str) -> Vec<String> {
    let mut lines: Vec<(usize, String)> = run
        .lines(&format!("count {name} rank "))
        .into_iter()
        .map(|l| {
            let rank = l.split_whitespace().nth(3).unwrap_or("").trim_end_matches(':');
            (rank.parse().unwrap_or(usize::MAX), l.to_string())
        })
        .collect();
    lines.sort();
    lines.into_iter().map(|(_, l)| l).collect()
}

/// Runs counts.c on `np` ranks in `case` and checks that it ran intact.
pub fn run_counts(case: &Case, np: usize) -> Run {
    let run = case.mpirun(np, &program("counts", Link::Pnmpi), &[]);
    run.assert_ok();
    assert_eq!(
        run.lines("counts:"),
        [format!("counts: size {np} token {}", 3 * (np - 1))],
        "{}",
        run.stderr
    );
    run
}
