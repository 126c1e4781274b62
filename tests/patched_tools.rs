//! Binary PMPI tools made into modules by the real `pnmpi-patch`, run through the real libpnmpi
//! between two `seq` modules (`module seqA`, the tool, `module seqB`): Open MPI's own
//! libompitrace, and ptool (c-tests/tools/ptool.c, built with plain `mpicc -shared -fPIC`).
//! Also what libpnmpi does today with a tool listed without being patched.
//!
//! How the tool's position is proved: the seq modules log `NAME>Routine`/`NAME<Routine` into the
//! per-thread log that `chain` prints per call. A wrapper between A and B makes its own nested
//! calls (the rank it prints) through XMPI_Comm_rank, so they show up in the log inside
//! `A>Send`, seen by B but not by A, before `B>Send`. And on stderr, one rank's lines keep their
//! order: A prints its count in its Finalize wrapper before going down, B in its own, so the
//! tool's Finalize line must come between the two.

use crate::common;
use common::*;

use std::path::{Path, PathBuf};
use std::process::Command;

const OMPITRACE: &str = "/usr/lib/x86_64-linux-gnu/libompitrace.so.40";

/// A case that loads `seqA`, `tool` and `seqB`, in that order, looking for modules in its own
/// folder (where the tests put the tools) and in the test modules' folder.
fn stacked(tool: &str) -> Case {
    seq("A", &[]);
    seq("B", &[]);
    let mut case = Case::new();
    let path = format!("{}:{}", case.dir().display(), modules_dir().display());
    case.env("PNMPI_LIB_PATH", &path);
    case.conf(&format!("module seqA\nmodule {tool}\nmodule seqB\n"));
    case
}

fn pnmpi_patch(args: &[&Path]) -> Run {
    let out = Command::new(target_dir().join("pnmpi-patch"))
        .args(args)
        .output()
        .expect("pnmpi-patch runs");
    out.into()
}

/// `pnmpi-patch --against libpnmpi.so input -o out`, which must rename `n` imports.
fn patch(input: &Path, out: &Path, n: usize) {
    let run = pnmpi_patch(&[Path::new("--against"), &libpnmpi(), input, Path::new("-o"), out]);
    run.assert_ok();
    let want = format!("renamed {n} PMPI import(s) to XMPI_");
    assert!(run.stdout.contains(&want), "{}", run.stdout);
}

/// The symbol rows of `readelf --dyn-syms -W`.
fn dyn_syms(path: &Path) -> Vec<String> {
    let out = Command::new("readelf")
        .args(["--dyn-syms", "-W"])
        .arg(path)
        .output()
        .expect("readelf runs");
    assert!(out.status.success(), "readelf {}", path.display());
    let text = String::from_utf8_lossy(&out.stdout);
    let rows = text
        .lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()));
    rows.map(str::to_string).collect()
}

/// Asserts that `after`'s dynamic symbols are `before`'s with its `n` PMPI_ imports, and nothing
/// else, renamed to XMPI_.
fn assert_only_imports_renamed(before: &Path, after: &Path, n: usize) {
    let (old, new) = (dyn_syms(before), dyn_syms(after));
    assert_eq!(old.iter().filter(|l| l.contains(" UND PMPI_")).count(), n);
    assert_eq!(old.len(), new.len());
    let mut renamed = 0;
    for (o, a) in old.iter().zip(&new) {
        if o != a {
            assert_eq!(*a, o.replacen(" UND PMPI_", " UND XMPI_", 1), "changed: {o}");
            renamed += 1;
        }
    }
    assert_eq!(renamed, n);
}

/// Builds c-tests/tools/ptool.c with plain `mpicc -shared -fPIC` as `dir/libptool.so`.
fn ptool(dir: &Path) -> PathBuf {
    let out = dir.join("libptool.so");
    let src = repo().join("c-tests/tools/ptool.c");
    let run: Run = Command::new(mpicc())
        .args(["-shared", "-fPIC", "-o"])
        .arg(&out)
        .arg(src)
        .output()
        .expect("mpicc runs")
        .into();
    run.assert_ok();
    out
}

/// Asserts each of `want` is a whole line of `text`, in this order.
fn assert_in_order(text: &str, want: &[&str]) {
    let at: Vec<Option<usize>> = want.iter().map(|w| text.lines().position(|l| l == *w)).collect();
    let ordered = at.iter().all(Option::is_some) && at.windows(2).all(|p| p[0] < p[1]);
    assert!(ordered, "want, in this order: {want:#?}\ngot:\n{text}");
}

/// The sorted stderr lines starting with `prefix`, with the value after `buf` (an address) as `?`.
fn tool_lines(run: &Run, prefix: &str) -> Vec<String> {
    let mut lines: Vec<String> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with(prefix))
        .map(|l| {
            let mut words: Vec<&str> = l.split(' ').collect();
            if let Some(i) = words.iter().position(|w| *w == "buf") {
                words[i + 1] = "?";
            }
            words.join(" ")
        })
        .collect();
    lines.sort();
    lines
}

const PTOOL_CHAIN: [&str; 2] = [
    "ptool: rank 0 sends=1 recvs=0 bytes=4",
    "ptool: rank 1 sends=0 recvs=1 bytes=0",
];

#[test]
fn patched_libompitrace_traces_from_between_the_two_modules() {
    if FLAVOR == "mpich" {
        println!("note: NOT RUN under MPICH: libompitrace is Open MPI's tool (imports ompi_mpi_comm_world)");
        return;
    }
    let case = stacked("libompitrace.pnmpi");
    let out = case.dir().join("libompitrace.pnmpi.so");
    patch(Path::new(OMPITRACE), &out, 25);
    assert_only_imports_renamed(Path::new(OMPITRACE), &out, 25);

    let run = case.mpirun(2, &program("chain", Link::Pnmpi), &[]);
    run.assert_ok();
    // Every call the tool wraps, printed once, with the rank it got through XMPI_Comm_rank.
    assert_eq!(
        tool_lines(&run, "MPI_"),
        [
            "MPI_BARRIER[0]: comm MPI_COMM_WORLD",
            "MPI_BARRIER[1]: comm MPI_COMM_WORLD",
            "MPI_FINALIZE[0]",
            "MPI_FINALIZE[1]",
            "MPI_INIT: argc 1",
            "MPI_INIT: argc 1",
            "MPI_RECV[1]: buf ? count 1 datatype MPI_INT source 0 tag 0 comm MPI_COMM_WORLD",
            "MPI_SEND[0]: : buf ? count 1 datatype MPI_INT dest 1 tag 0 comm MPI_COMM_WORLD",
        ]
    );
    // Its Send and Barrier wrappers ask the rank before going down: B sees that inside A's call.
    assert_eq!(run.lines("Init:"), ["Init: A>Init B>Init B<Init A<Init"]);
    assert_eq!(
        run.lines("Send:"),
        ["Send: A>Send B>Comm_rank B<Comm_rank B>Send B<Send A<Send"]
    );
    assert_eq!(
        run.lines("Barrier:"),
        ["Barrier: A>Barrier B>Comm_rank B<Comm_rank B>Barrier B<Barrier A<Barrier"]
    );
    // It does not wrap MPI_Comm_rank: the call passes it by.
    assert_eq!(
        run.lines("Comm_rank:"),
        ["Comm_rank: A>Comm_rank B>Comm_rank B<Comm_rank A<Comm_rank"]
    );
    // B counts the application's 4 calls, the tool's 3 XMPI_Comm_rank (Send, Barrier, Finalize)
    // and A's Finalize-time one; the tool prints after A has entered Finalize, before B has.
    assert_in_order(
        &run.stderr,
        &[
            "seq A: rank 0 saw 4 calls",
            "MPI_FINALIZE[0]",
            "seq B: rank 0 saw 8 calls",
        ],
    );

    let run = case.mpirun(2, &program("ring", Link::Pnmpi), &[]);
    run.assert_ok();
    assert_eq!(run.lines("ring:"), ["ring: size 2 token 2 sum 1 wtime_ok 1"]);
    assert_eq!(tool_lines(&run, "MPI_ALLREDUCE").len(), 2, "{}", run.stderr);
}

#[test]
fn patched_ptool_counts_from_between_the_two_modules() {
    let case = stacked("libptool.pnmpi");
    let tool = ptool(case.dir());
    let out = case.dir().join("libptool.pnmpi.so");
    patch(&tool, &out, 6);
    assert_only_imports_renamed(&tool, &out, 6);

    let run = case.mpirun(2, &program("chain", Link::Pnmpi), &[]);
    run.assert_ok();
    assert_eq!(tool_lines(&run, "ptool:"), PTOOL_CHAIN);
    // ptool's Init and Send wrappers call XMPI_Comm_rank (and XMPI_Type_size, which no seq
    // module wraps) before going down.
    assert_eq!(
        run.lines("Init:"),
        ["Init: A>Init B>Init B<Init B>Comm_rank B<Comm_rank A<Init"]
    );
    assert_eq!(
        run.lines("Comm_rank:"),
        ["Comm_rank: A>Comm_rank B>Comm_rank B<Comm_rank A<Comm_rank"]
    );
    assert_eq!(
        run.lines("Send:"),
        ["Send: A>Send B>Comm_rank B<Comm_rank B>Send B<Send A<Send"]
    );
    assert_eq!(
        run.lines("Barrier:"),
        ["Barrier: A>Barrier B>Barrier B<Barrier A<Barrier"]
    );
    // B: the application's 4 calls, ptool's 2 XMPI_Comm_rank, A's Finalize-time one.
    assert_in_order(
        &run.stderr,
        &[
            "seq A: rank 0 saw 4 calls",
            PTOOL_CHAIN[0],
            "seq B: rank 0 saw 7 calls",
        ],
    );

    let run = case.mpirun(2, &program("ring", Link::Pnmpi), &[]);
    run.assert_ok();
    assert_eq!(run.lines("ring:"), ["ring: size 2 token 2 sum 1 wtime_ok 1"]);
    assert_eq!(
        tool_lines(&run, "ptool:"),
        [
            "ptool: rank 0 sends=1 recvs=1 bytes=4",
            "ptool: rank 1 sends=1 recvs=1 bytes=4"
        ]
    );
}

/// A PMPI tool that was not patched would call MPI directly from its wrappers and silently cut
/// the modules below it out of the chain; libpnmpi refuses it before MPI starts, naming the fix.
#[test]
fn an_unpatched_tool_is_refused_with_the_patch_command() {
    let case = stacked("libptool");
    let tool = ptool(case.dir());
    // The patcher calls it unpatched too.
    let check = pnmpi_patch(&[Path::new("--check"), Path::new("--against"), &libpnmpi(), &tool]);
    check.assert_ok();
    assert!(check.stdout.contains("state: unpatched"), "{}", check.stdout);

    let run = case.mpirun(2, &program("chain", Link::Pnmpi), &[]);
    assert!(
        !run.success(),
        "an unpatched tool must stop the run:\n{}",
        run.stderr
    );
    assert!(run.lines("Init:").is_empty(), "the program ran: {}", run.stdout);
    assert!(run.stderr.contains("module `libptool`"), "{}", run.stderr);
    assert!(
        run.stderr.contains("it is an unpatched PMPI tool"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("PMPI_Comm_rank"), "{}", run.stderr);
    assert!(
        run.stderr
            .contains(&format!("Patch it first: pnmpi-patch {}", tool.display())),
        "{}",
        run.stderr
    );
}
