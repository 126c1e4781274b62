//! Fortran applications, through each of the MPI's Fortran bindings
//! (`mpif.h`, `use mpi`, `use mpi_f08`), under `pnmpi run` with a chain of
//! the tracer, the profiler and a C counting module: every call reaches
//! every module as a C call with C handles, exactly once (the bindings'
//! own helper calls and the tools' own calls stay out), the trace's messages all match, the
//! profiler's call sites name the Fortran lines, and the program computes
//! what it computes without tools. c-tests/fortran/calls.F90 lists the
//! calls; its C library (clib.c) calls MPI too.

use crate::common;
use common::*;
use std::collections::BTreeMap;
use std::process::Command;

/// What each rank of calls.F90 calls, as fcount prints it.
const CALLS: [(&str, u32); 17] = [
    ("MPI_Allreduce", 2),
    ("MPI_Barrier", 2),
    ("MPI_Bcast", 1),
    ("MPI_Comm_dup", 1),
    ("MPI_Comm_free", 2),
    ("MPI_Comm_rank", 2),
    ("MPI_Comm_size", 2),
    ("MPI_Comm_split", 1),
    ("MPI_Finalize", 1),
    ("MPI_Gatherv", 1),
    ("MPI_Init", 1),
    ("MPI_Irecv", 1),
    ("MPI_Isend", 1),
    ("MPI_Recv", 1),
    ("MPI_Send", 1),
    ("MPI_Sendrecv", 1),
    ("MPI_Waitall", 1),
];
/// Point-to-point messages per rank: Send, Isend and clib's Sendrecv.
const MESSAGES_PER_RANK: usize = 3;
const RANKS: usize = 2;

/// `pnmpi run` of `exe` on `RANKS` ranks, in `case`'s folder.
fn under_pnmpi(case: &Case, exe: &std::path::Path) -> Run {
    let mut cmd = launcher(RANKS);
    cmd.arg(target_dir().join("pnmpi")).args(["run", "--"]).arg(exe);
    case.finish(cmd)
}

/// The program's own result lines, sorted by rank.
fn results(run: &Run) -> Vec<String> {
    let mut lines: Vec<String> = run.lines("calls result").iter().map(|l| l.to_string()).collect();
    lines.sort();
    assert_eq!(lines.len(), RANKS, "{}\n{}", run.stdout, run.stderr);
    lines
}

/// The line of calls.F90 that holds `! MARKER`.
fn fortran_line(marker: &str) -> u32 {
    marked_line("c-tests/fortran/calls.F90", &format!("! {marker}"))
}

#[test]
fn every_fortran_binding_reaches_each_module_with_c_handles() {
    let fcount = module("fcount", "fcount", &[]);
    let want: BTreeMap<String, u32> = CALLS.iter().map(|&(r, n)| (r.to_string(), n)).collect();
    for binding in ["mpif.h", "use mpi", "use mpi_f08"] {
        let exe = fortran_calls(binding);
        let native = Case::new().mpirun(RANKS, &exe, &[]);
        native.assert_ok();

        let mut case = Case::new();
        // The tracer first and fcount last: the tools' own calls (the
        // tracer's clock alignment, the profiler's gather) go straight to
        // MPI, so the modules below count the program's calls only; the
        // Fortran bindings' `PMPI_` slots libpnmpi binds into the chain are
        // the bindings' own, never a module's.
        case.conf(&format!(
            "module {}\nargument outdir trace\nmodule {}\nargument output profile.txt\nmodule {}\n",
            target_dir().join("libtracer.so").display(),
            target_dir().join("libprofiler.so").display(),
            fcount.display()
        ));
        let run = under_pnmpi(&case, &exe);
        run.assert_ok();
        assert_eq!(
            results(&run),
            results(&native),
            "{binding}: results differ under tools"
        );

        // The counting module: every call once, with C handles.
        let mut ranks = 0;
        for line in run.lines("fcount rank") {
            let fields: Vec<&str> = line.split_whitespace().skip(3).collect();
            let (bad, counts) = fields.split_last().expect("fields");
            assert_eq!(*bad, "bad=0", "{binding}: {line}");
            let seen: BTreeMap<String, u32> = counts
                .iter()
                .map(|f| {
                    let (r, n) = f.split_once('=').expect("routine=count");
                    (r.to_string(), n.parse().expect("count"))
                })
                .collect();
            assert_eq!(seen, want, "{binding}: {line}");
            ranks += 1;
        }
        assert_eq!(ranks, RANKS, "{binding}:\n{}\n{}", run.stdout, run.stderr);

        // The tracer: every message's send matched its receive.
        let json = case.dir().join("trace.json");
        let export = Command::new(target_dir().join("pnmpi"))
            .args(["trace", "export", "--format", "chrome", "-o"])
            .arg(&json)
            .arg(case.dir().join("trace"))
            .output()
            .expect("pnmpi trace export runs");
        assert!(
            export.status.success(),
            "{}",
            String::from_utf8_lossy(&export.stderr)
        );
        let text = std::fs::read_to_string(&json).expect("trace.json");
        let arrows = text.lines().filter(|l| l.contains("\"ph\":\"s\"")).count();
        assert_eq!(arrows, RANKS * MESSAGES_PER_RANK, "{binding}: matched messages");

        // The profiler: the sends' sites are the Fortran lines.
        let profile = std::fs::read_to_string(case.dir().join("profile.txt")).expect("profile.txt");
        let mut sends: Vec<(String, u32)> = profile
            .lines()
            .skip_while(|l| !l.starts_with("@--- Callsites:"))
            .skip(2)
            .take_while(|l| !l.starts_with("-----"))
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .filter(|f| f.len() >= 6 && f.last() == Some(&"Send"))
            .map(|f| (f[2].to_string(), f[3].parse().unwrap_or(0)))
            .collect();
        sends.sort_by_key(|s| s.1);
        let mut lines = vec![fortran_line("FSITE_SEND"), fortran_line("FSITE_SEND2")];
        lines.sort_unstable();
        assert_eq!(
            sends.iter().map(|s| s.1).collect::<Vec<_>>(),
            lines,
            "{binding}:\n{profile}"
        );
        for (file, _) in &sends {
            assert!(file.ends_with("calls.F90"), "{binding}: {file}\n{profile}");
        }
        assert!(
            profile
                .lines()
                .any(|l| l.contains("clib.c") && l.trim_end().ends_with("Sendrecv")),
            "{binding}: no Sendrecv site in clib.c:\n{profile}"
        );
        // Every call site is the program's or its C library's: none of the
        // tracer's.
        let outside: Vec<&str> = profile
            .lines()
            .skip_while(|l| !l.starts_with("@--- Callsites:"))
            .skip(3) // the title, its rule and the column heads
            .take_while(|l| !l.starts_with("-----"))
            .filter(|l| !l.contains("calls.F90") && !l.contains("clib.c"))
            .collect();
        assert!(
            outside.is_empty(),
            "{binding}: sites outside the program: {outside:?}\n{profile}"
        );
    }
}

#[test]
fn the_tracer_records_fortran_and_shared_library_call_sites() {
    let clib = format!(
        "{}:{}",
        repo().join("c-tests/fortran/clib.c").display(),
        marked_line("c-tests/fortran/clib.c", "// CSITE_SENDRECV")
    );
    let calls = repo().join("c-tests/fortran/calls.F90").display().to_string();
    let mut sends = [fortran_line("FSITE_SEND"), fortran_line("FSITE_SEND2")];
    sends.sort_unstable();
    for binding in ["mpif.h", "use mpi", "use mpi_f08"] {
        let exe = fortran_calls(binding);
        let mut case = Case::new();
        case.conf(&format!(
            "module {}\nargument outdir trace\n",
            target_dir().join("libtracer.so").display()
        ));
        under_pnmpi(&case, &exe).assert_ok();
        let trace = case.dir().join("trace").display().to_string();
        let dump = succeeded(pnmpi_cli(&["trace", "dump", &trace], case.dir()));
        let sites = |routine: &str| -> Vec<String> {
            dump.lines()
                .filter(|l| l.split_whitespace().nth(3) == Some(routine))
                .filter_map(|l| l.split_whitespace().find_map(|f| f.strip_prefix("site=")))
                .map(str::to_string)
                .collect()
        };
        // Rank 0's send and rank 1's, each from its Fortran line.
        let mut got: Vec<String> = sites("MPI_Send");
        got.sort();
        let mut want: Vec<String> = sends.iter().map(|l| format!("{calls}:{l}")).collect();
        want.sort();
        assert_eq!(got, want, "{binding}:\n{dump}");
        // The C library's exchange, from its own line in libclib.so.
        assert_eq!(
            sites("MPI_Sendrecv"),
            [clib.clone(), clib.clone()],
            "{binding}:\n{dump}"
        );
    }
}
