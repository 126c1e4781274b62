//! Four threads under MPI_THREAD_MULTIPLE call wrapped routines at once;
//! every call must pass through the whole chain, in order.

mod common;
use common::*;

#[test]
fn each_threads_chain_stays_intact() {
    for m in ["A", "B", "C"] {
        seq(m, &[]);
    }
    let mut case = Case::new();
    case.conf("module seqA\nmodule seqB\nmodule seqC\n");
    let run = case.mpirun(2, &program("threads", Link::Pnmpi), &[]);
    run.assert_ok();
    assert_eq!(
        run.lines("reference"),
        [
            "reference Comm_rank: A>Comm_rank B>Comm_rank C>Comm_rank C<Comm_rank B<Comm_rank A<Comm_rank",
            "reference Send: A>Send B>Send C>Send C<Send B<Send A<Send"
        ]
    );
    // 4 threads x 2000 rounds x (Comm_rank + Send or Recv).
    let mut summary = run.lines("threads:");
    summary.sort();
    assert_eq!(
        summary,
        [
            "threads: rank 0 checked 16000 calls, 0 mismatches",
            "threads: rank 1 checked 16000 calls, 0 mismatches"
        ],
        "{}",
        run.stderr
    );
}
