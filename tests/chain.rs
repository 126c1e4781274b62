//! The chain itself: order, partial wrapping, nested and re-entrant calls,
//! zero modules, duplicate modules. Real programs under real mpirun.

use crate::common;
use common::*;

fn conf_of(modules: &[&std::path::Path]) -> String {
    modules
        .iter()
        .map(|m| format!("module {}\n", m.file_stem().unwrap().to_string_lossy()))
        .collect()
}

#[test]
fn zero_modules_leave_results_intact() {
    let case = Case::new();
    for np in [1, 2, 4] {
        let run = case.mpirun(np, &program("ring", Link::Pnmpi), &[]);
        run.assert_ok();
        let sum = np * (np - 1) / 2;
        assert_eq!(
            run.lines("ring:"),
            [format!("ring: size {np} token {np} sum {sum} wtime_ok 1")]
        );
    }
}

#[test]
fn one_two_and_three_modules_run_in_configuration_order() {
    let (a, b, c) = (seq("A", &[]), seq("B", &[]), seq("C", &[]));
    let mut case = Case::new();
    case.conf(&conf_of(&[&a]));
    let run = case.mpirun(2, &program("chain", Link::Pnmpi), &[]);
    run.assert_ok();
    assert_eq!(run.lines("Comm_rank:"), ["Comm_rank: A>Comm_rank A<Comm_rank"]);

    case.conf(&conf_of(&[&b, &a]));
    let run = case.mpirun(2, &program("chain", Link::Pnmpi), &[]);
    run.assert_ok();
    assert_eq!(run.lines("Send:"), ["Send: B>Send A>Send A<Send B<Send"]);

    case.conf(&conf_of(&[&a, &b, &c]));
    let run = case.mpirun(3, &program("chain", Link::Pnmpi), &[]);
    run.assert_ok();
    assert_eq!(
        run.lines("Init:"),
        ["Init: A>Init B>Init C>Init C<Init B<Init A<Init"]
    );
    assert_eq!(
        run.lines("Barrier:"),
        ["Barrier: A>Barrier B>Barrier C>Barrier C<Barrier B<Barrier A<Barrier"]
    );
    // No module wraps MPI_Comm_size: it went straight to MPI.
    assert_eq!(run.lines("Comm_size:"), ["Comm_size: "]);
    // A saw the application's calls: Init, Comm_rank, Send or Recv (ranks 0
    // and 1 only), Barrier (Finalize is counted after the print). Each
    // module's Finalize wrapper calls XMPI_Comm_rank, which every module
    // below it sees too: B one call more than A, C two more.
    for (m, extra) in [("A", 0), ("B", 1), ("C", 2)] {
        let want0 = format!("seq {m}: rank 0 saw {} calls", 4 + extra);
        let want2 = format!("seq {m}: rank 2 saw {} calls", 3 + extra);
        assert!(run.stderr.contains(&want0), "{want0}\n{}", run.stderr);
        assert!(run.stderr.contains(&want2), "{want2}\n{}", run.stderr);
    }
}

#[test]
fn a_module_wrapping_only_send_is_skipped_for_other_routines() {
    let (a, s, c) = (seq("A", &[]), seq("S", &["ONLY_SEND"]), seq("C", &[]));
    let mut case = Case::new();
    case.conf(&conf_of(&[&a, &s, &c]));
    let run = case.mpirun(2, &program("chain", Link::Pnmpi), &[]);
    run.assert_ok();
    assert_eq!(
        run.lines("Send:"),
        ["Send: A>Send S>Send C>Send C<Send S<Send A<Send"]
    );
    assert_eq!(
        run.lines("Barrier:"),
        ["Barrier: A>Barrier C>Barrier C<Barrier A<Barrier"]
    );
}

#[test]
fn nested_downward_call_enters_the_other_routines_stack_below_the_caller() {
    let (a, n, c) = (seq("A", &[]), seq("N", &["NESTED"]), seq("C", &[]));
    let mut case = Case::new();
    case.conf(&conf_of(&[&a, &n, &c]));
    let run = case.mpirun(2, &program("chain", Link::Pnmpi), &[]);
    run.assert_ok();
    // N's Send wrapper calls XMPI_Comm_rank: only C (below N) sees it, not A.
    assert_eq!(
        run.lines("Send:"),
        ["Send: A>Send N>Send C>Comm_rank C<Comm_rank C>Send C<Send N<Send A<Send"]
    );
}

#[test]
fn plain_mpi_call_from_a_module_reenters_at_the_top() {
    let (a, r, c) = (seq("A", &[]), seq("R", &["REENTER"]), seq("C", &[]));
    let mut case = Case::new();
    case.conf(&conf_of(&[&a, &r, &c]));
    let run = case.mpirun(2, &program("chain", Link::Pnmpi), &[]);
    run.assert_ok();
    // R's Barrier wrapper calls MPI_Comm_rank: the whole chain sees it,
    // then R continues down its own Barrier chain.
    assert_eq!(
        run.lines("Barrier:"),
        ["Barrier: A>Barrier R>Barrier A>Comm_rank R>Comm_rank C>Comm_rank C<Comm_rank R<Comm_rank A<Comm_rank C>Barrier C<Barrier R<Barrier A<Barrier"]
    );
}

#[test]
fn a_module_listed_twice_gets_two_private_instances() {
    let a = seq("A", &[]);
    let mut case = Case::new();
    // Once by its path, once through a hard link: the same file either way.
    let link = case.dir().join("seqA-link.so");
    std::fs::hard_link(&a, &link).unwrap();
    case.conf(&format!("module {}\nmodule {}\n", a.display(), link.display()));
    let run = case.mpirun(2, &program("chain", Link::Pnmpi), &[]);
    run.assert_ok();
    assert_eq!(
        run.lines("Comm_rank:"),
        ["Comm_rank: A>Comm_rank A>Comm_rank A<Comm_rank A<Comm_rank"]
    );
    // Two instances, each with its own counter: the first saw the 4
    // application calls, the second also the first's Finalize-time
    // XMPI_Comm_rank. A shared instance would have printed one count twice.
    assert!(run.stderr.contains("seq A: rank 0 saw 4 calls"), "{}", run.stderr);
    assert!(run.stderr.contains("seq A: rank 0 saw 5 calls"), "{}", run.stderr);
}

#[test]
fn the_empty_module_passes_every_call_through() {
    let mut case = Case::new();
    case.conf(&format!(
        "module {}\nmodule {}\n",
        empty_module().display(),
        empty_module().display()
    ));
    let run = case.mpirun(4, &program("ring", Link::Pnmpi), &[]);
    run.assert_ok();
    assert_eq!(run.lines("ring:"), ["ring: size 4 token 4 sum 6 wtime_ok 1"]);
}

#[test]
fn a_modules_clock_wrappers_are_called_only_if_it_asks() {
    // clockwrap's MPI_Wtime returns a frozen clock. Without
    // PNMPI_WRAPS_CLOCK it is never called, as under LLNL's libpnmpi:
    // ring's 2 ms sleep then reads as 2 ms.
    for (defines, name, wtime_ok, calls) in [
        (&[][..], "clockwrap", 1, 0),
        (&["WRAPS"][..], "clockwrap_wraps", 0, 2),
    ] {
        let module = api_module("clockwrap", name, defines);
        let mut case = Case::new();
        case.conf(&format!("module {}\n", module.display()));
        let run = case.mpirun(2, &program("ring", Link::Pnmpi), &[]);
        run.assert_ok();
        assert_eq!(
            run.lines("ring:"),
            [format!("ring: size 2 token 2 sum 1 wtime_ok {wtime_ok}")],
            "{name}"
        );
        let mut counts = run.lines("clockwrap rank");
        counts.sort_unstable();
        assert_eq!(
            counts,
            (0..2)
                .map(|r| format!("clockwrap rank {r}: Wtime {calls} Wtick 0"))
                .collect::<Vec<_>>(),
            "{name}"
        );
    }
}

#[test]
fn toml_configuration_is_equivalent_to_the_classic_one() {
    // One module by path, one by name through PNMPI_LIB_PATH.
    let a = seq("A", &[]);
    seq("B", &[]);
    let mut case = Case::new();
    let toml = format!(
        "[[module]]\nname = \"{}\"\n\n[[module]]\nname = \"seqB\"\n",
        a.display()
    );
    let file = case.write("tools.toml", &toml);
    case.env("PNMPI_CONF", &file.to_string_lossy());
    let run = case.mpirun(2, &program("chain", Link::Pnmpi), &[]);
    run.assert_ok();
    assert_eq!(run.lines("Send:"), ["Send: A>Send B>Send B<Send A<Send"]);
}

/// The MPI-1 routines MPI-3 removed, which Open MPI 4.1 exports but hides
/// in `mpi.h` unless `OMPI_OMIT_MPI1_COMPAT_DECLS=0` (LLNL PnMPI builds
/// its modules so): a module built that way wraps `MPI_Type_hvector` and
/// calls down with `XMPI_Type_hvector`, and the type it makes works.
#[test]
fn a_module_wraps_a_removed_mpi1_routine_that_open_mpi_still_exports() {
    if FLAVOR != "openmpi" {
        eprintln!("skipped: {FLAVOR} exports no removed MPI-1 routine");
        return;
    }
    let compat = "OMPI_OMIT_MPI1_COMPAT_DECLS=0";
    let module = module("mpi1compat", "mpi1compat", &[compat]);
    let exe = program_with_flags("mpi1types", Link::Pnmpi, "compat", &[&format!("-D{compat}")]);
    let mut case = Case::new();
    case.conf(&conf_of(&[&module]));
    let run = case.mpirun(2, &exe, &[]);
    run.assert_ok();
    assert_eq!(
        run.lines("mpi1compat:"),
        ["mpi1compat: MPI_Type_hvector count 4 blocklength 1 stride 16"; 2],
        "{}",
        run.stdout
    );
    for r in 0..2 {
        let want = format!(
            "mpi1types: rank {r} size 16 received {} {} {} {}",
            r,
            40 + r,
            80 + r,
            120 + r
        );
        assert!(run.lines("mpi1types:").contains(&want.as_str()), "{}", run.stdout);
    }
}
