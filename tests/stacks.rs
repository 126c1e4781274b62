//! Named stacks: a router module in the default stack sends barriers on
//! communicators of size 1 into another stack (XMPI_X_NewStack, or
//! PNMPI_Service_ChangeStack) and the rest down the default stack; seq
//! modules in each stack log which chain ran. route.c prints, on rank 0,
//! the layer log of each barrier.

use crate::common;
use common::*;

const NP: usize = 4;

const DEFAULT_BARRIER: &str = "router>Barrier A>Barrier A<Barrier router<Barrier";

fn build() {
    api_module("router", "router", &[]);
    api_module("router", "routerchange", &["CHANGE"]);
    for name in ["A", "B1", "B2"] {
        seq(name, &[]);
    }
    seq("S", &["ONLY_SEND"]);
}

/// Builds the modules and runs route.c under configuration `conf`.
fn route(conf: &str) -> Run {
    build();
    let mut case = Case::new();
    case.conf(conf);
    let run = case.mpirun(NP, &program("route", Link::Pnmpi), &[]);
    run.assert_ok();
    assert_eq!(run.lines("route:"), ["route: ok"], "{}", run.stderr);
    run
}

/// The log lines for world, self, solo, pair, again and send.
fn logs(run: &Run) -> Vec<&str> {
    ["world:", "self:", "solo:", "pair:", "again:", "send:"]
        .iter()
        .flat_map(|p| run.lines(p))
        .collect()
}

/// Checks that the barriers on the communicators of size 1 (self, solo)
/// took the chain `routed` (the `self:` line) and every other call the
/// default stack; the application's calls never enter the named stack.
fn assert_routed(run: &Run, routed: &str) {
    assert_eq!(
        logs(run),
        [
            format!("world: {DEFAULT_BARRIER}"),
            routed.to_string(),
            routed.replacen("self:", "solo:", 1),
            format!("pair: {DEFAULT_BARRIER}"),
            format!("again: {DEFAULT_BARRIER}"),
            "send: A>Send A<Send".to_string(),
        ]
    );
}

#[test]
fn newstack_routes_small_communicators_to_the_named_stack() {
    let run = route("module router\nargument stack B\nmodule seqA\nstack B\nmodule seqB1\nmodule seqB2\n");
    // Stack B's bottom is MPI: the routed call does not fall through into
    // A. Afterwards the router is back at its own level: its
    // XMPI_Comm_rank goes to A.
    let routed = "self: router>Barrier B1>Barrier B2>Barrier B2<Barrier B1<Barrier A>Comm_rank A<Comm_rank \
                  router<Barrier";
    assert_routed(&run, routed);
    // A saw Init, 3 barriers, the router's 2 Comm_rank calls and a Send
    // or Recv (ranks 0 and 1). B1 and B2 never see the application's
    // MPI_Finalize, so they print nothing.
    for (rank, calls) in [(0, 7), (1, 7), (2, 6), (3, 6)] {
        let want = format!("seq A: rank {rank} saw {calls} calls");
        assert!(run.stderr.contains(&want), "{want}\n{}", run.stderr);
    }
    assert!(!run.stderr.contains("seq B"), "{}", run.stderr);
}

#[test]
fn change_stack_moves_the_wrapper_into_the_named_stack_until_it_returns() {
    let run =
        route("module routerchange\nargument stack B\nmodule seqA\nstack B\nmodule seqB1\nmodule seqB2\n");
    // After ChangeStack the router's own XMPI_Comm_rank goes to stack B
    // too; the application's next call is back in the default stack.
    let routed =
        "self: router>Barrier B1>Barrier B2>Barrier B2<Barrier B1<Barrier B1>Comm_rank B2>Comm_rank \
                  B2<Comm_rank B1<Comm_rank router<Barrier";
    assert_routed(&run, routed);
}

#[test]
fn a_named_stack_that_does_not_wrap_the_routine_goes_to_mpi() {
    let run = route("module router\nargument stack C\nmodule seqA\nstack C\nmodule seqS_only_send\n");
    let routed = "self: router>Barrier A>Comm_rank A<Comm_rank router<Barrier";
    assert_routed(&run, routed);
}
