//! LLNL PnMPI's module hooks and the PNMPI_VERBOSE stack listing.

use crate::common;
use common::*;

#[test]
fn hooks_run_in_llnl_order_around_the_run() {
    module("hooks", "hooks", &[]);
    let mut case = Case::new();
    case.conf("module hooks\n");
    let run = case.mpirun(1, &program("ring", Link::Pnmpi), &[]);
    run.assert_ok();
    let hooks: Vec<&str> = run.stderr.lines().filter(|l| l.starts_with("hooks: ")).collect();
    assert_eq!(
        hooks,
        [
            "hooks: RegistrationPoint",
            "hooks: Init",
            "hooks: MPI_Init wrapper",
            "hooks: Fini",
            "hooks: UnregistrationPoint"
        ]
    );
}

#[test]
fn verbose_lists_the_stack_once_on_rank_zero() {
    module("hooks", "hooks", &[]);
    let a = seq("A", &[]);
    let mut case = Case::new();
    let conf = case.conf(&format!(
        "module hooks\nmodule {}\nstack other\nmodule seqB\n",
        a.display()
    ));
    seq("B", &[]);
    case.env("PNMPI_VERBOSE", "1");
    let run = case.mpirun(2, &program("ring", Link::Pnmpi), &[]);
    run.assert_ok();
    let mut listing: Vec<&str> = run.stderr.lines().filter(|l| l.starts_with("pnmpi:")).collect();
    // The last line says how long setting up took.
    let took = listing.pop().unwrap_or_default();
    let ms = took
        .strip_prefix("pnmpi: set up 3 modules in ")
        .and_then(|t| t.strip_suffix(" ms"))
        .and_then(|t| t.parse::<f64>().ok());
    assert!(ms.is_some_and(|ms| ms > 0.0), "{took}");
    let hooks = modules_dir().join("hooks.so");
    let b = modules_dir().join("seqB.so");
    assert_eq!(
        listing,
        [
            format!("pnmpi: configuration {}", conf.display()),
            "pnmpi: stack default: 2 module(s)".to_string(),
            format!("pnmpi:   1. hook-tester {} (1 routines)", hooks.display()),
            format!("pnmpi:   2. seqA {} (7 routines)", a.display()),
            "pnmpi: stack other: 1 module(s)".to_string(),
            format!("pnmpi:   1. seqB {} (7 routines)", b.display()),
            // One XMPI_Init in hooks.c, seven XMPI_ imports in each seq.
            "pnmpi: binding: direct (15 XMPI_ slots bound)".to_string(),
        ]
    );
}
