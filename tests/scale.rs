//! The paper's robustness test: a chain of 1000 modules.

use crate::common;
use common::*;

#[test]
fn a_thousand_modules_each_see_every_call_in_order() {
    seq("A", &[]);
    let mut case = Case::new();
    case.conf(&"module seqA\n".repeat(1000));
    // 2000 count lines on stderr: mpirun may cut one of them with the
    // other rank's output under load, so the counts go to a file.
    let counts_dir = case.dir().join("counts");
    std::fs::create_dir(&counts_dir).expect("counts folder");
    case.env("SEQ_COUNTS_DIR", &counts_dir.to_string_lossy());
    let run = case.mpirun(2, &program("ring", Link::Pnmpi), &[]);
    run.assert_ok();
    assert_eq!(run.lines("ring:"), ["ring: size 2 token 2 sum 1 wtime_ok 1"]);
    // Each of the 1000 private instances saw rank 0's 4 wrapped application
    // calls (Init, Comm_rank, Send, Recv; Finalize is counted after the
    // print), plus one Finalize-time XMPI_Comm_rank from every
    // instance above it: the k-th saw 4 + k - 1 calls.
    let rank0 = std::fs::read_to_string(counts_dir.join("rank-0")).expect("rank 0's counts");
    let mut counts: Vec<usize> = rank0
        .lines()
        .filter_map(|l| l.strip_prefix("seq A: rank 0 saw "))
        .map(|l| l.trim_end_matches(" calls").parse().expect("a count"))
        .collect();
    counts.sort();
    let want: Vec<usize> = (0..1000).map(|k| 4 + k).collect();
    assert_eq!(counts, want);
}
