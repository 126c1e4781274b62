//! The `checker` module (modules/checker) under real mpirun.
//!
//! The corpus `c-tests/checker` holds, for each error class, correct and
//! incorrect twins (`*_ok.c`, `*_bad.c`, each starting with
//! `// expect: CLASS` or `// expect: none`). Every program runs at 2 ranks
//! under the checker; a program's verdict is the set of classes in its
//! ranks' JSON reports. Per class and overall: recall (incorrect programs
//! of the class reported with it) and precision (reports of the class
//! that are on a program of that class), printed as a table; asserted:
//! recall >= 0.9, precision >= 0.95, no report on any correct program,
//! a non-zero exit status exactly when an error was found, and every
//! report naming its rank, call and `file:line` site and saying what to
//! change; where an incorrect program marks lines `// reported`, a
//! report of its class at one of them. The NAS-like
//! kernels, in C and in Fortran, hpcc and LAMMPS (Debian's, built for
//! Open MPI) run under the checker without a report.

use crate::common;
use common::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The classes the checker reports (docs/checker.md).
const CLASSES: [&str; 8] = [
    "argument",
    "collective",
    "p2p",
    "deadlock",
    "nonblocking",
    "leak",
    "thread",
    "rma",
];
/// Ranks per corpus run.
const RANKS: usize = 2;
/// Runs at a time (each is mostly mpirun's start-up and a timeout).
const PARALLEL: usize = 4;

fn checker() -> PathBuf {
    let lib = target_dir().join("libchecker.so");
    assert!(
        lib.is_file(),
        "{} missing: run `cargo build --release --workspace` first",
        lib.display()
    );
    lib
}

/// A corpus program: its name, expected class (None: correct) and the
/// lines marked `// reported`, where a report of that class must be.
struct Program {
    name: String,
    expect: Option<String>,
    lines: Vec<usize>,
}

fn corpus() -> Vec<Program> {
    let dir = repo().join("c-tests/checker");
    let mut programs: Vec<Program> = std::fs::read_dir(&dir)
        .expect("c-tests/checker")
        .filter_map(|e| {
            let path = e.ok()?.path();
            (path.extension()? == "c").then_some(path)
        })
        .map(|path| {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&path).expect("source");
            let expect = text
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("// expect: "))
                .unwrap_or_else(|| panic!("{name}.c: no `// expect: CLASS` first line"))
                .trim()
                .to_string();
            assert!(
                expect == "none" || CLASSES.contains(&expect.as_str()),
                "{name}.c: unknown class {expect}"
            );
            assert_eq!(
                name.ends_with("_ok"),
                expect == "none",
                "{name}.c: the name and the verdict disagree"
            );
            let lines = text
                .lines()
                .enumerate()
                .filter(|(_, l)| l.contains("// reported"))
                .map(|(i, _)| i + 1)
                .collect();
            Program {
                name,
                expect: (expect != "none").then_some(expect),
                lines,
            }
        })
        .collect();
    programs.sort_by(|a, b| a.name.cmp(&b.name));
    programs
}

/// What the checker said about one run.
struct Verdict {
    classes: BTreeSet<String>,
    reports: Vec<serde_json::Value>,
    run: Run,
}

/// Runs `exe` at `np` ranks under the checker, with `conf` lines added.
fn checked(exe: &Path, np: usize, extra: &str, args: &[&str]) -> Verdict {
    let mut case = Case::new();
    let out = case.dir().join("checker-out");
    case.conf(&format!(
        "module {}\nargument deadlock_timeout 0.5\nargument output {}\n{extra}",
        checker().display(),
        out.display()
    ));
    let run = case.mpirun(np, exe, args);
    verdict(&out, run)
}

/// Reads the JSON reports in `out`.
fn verdict(out: &Path, run: Run) -> Verdict {
    let mut reports = Vec::new();
    if let Ok(entries) = std::fs::read_dir(out) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "json") {
                let text = std::fs::read_to_string(&path).expect("report");
                let list: Vec<serde_json::Value> =
                    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display()));
                reports.extend(list);
            }
        }
    }
    let classes = reports
        .iter()
        .map(|r| r["class"].as_str().unwrap_or("?").to_string())
        .collect();
    Verdict {
        classes,
        reports,
        run,
    }
}

/// Recall and precision of one class: (true positives, false negatives,
/// false positives).
#[derive(Default, Clone, Copy)]
struct Score {
    tp: u32,
    fn_: u32,
    fp: u32,
}

impl Score {
    fn recall(&self) -> f64 {
        if self.tp + self.fn_ == 0 {
            1.0
        } else {
            f64::from(self.tp) / f64::from(self.tp + self.fn_)
        }
    }
    fn precision(&self) -> f64 {
        if self.tp + self.fp == 0 {
            1.0
        } else {
            f64::from(self.tp) / f64::from(self.tp + self.fp)
        }
    }
}

#[test]
fn the_corpus_is_found_with_recall_and_precision() {
    let programs = corpus();
    assert!(programs.len() >= 2 * CLASSES.len(), "a small corpus");
    // Compile once, two at a time (the machine's cores), then run.
    let exes: Mutex<BTreeMap<String, PathBuf>> = Mutex::new(BTreeMap::new());
    let next = Mutex::new(programs.iter());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let Some(p) = next.lock().unwrap().next() else {
                    break;
                };
                let exe = checker_program(&p.name);
                exes.lock().unwrap().insert(p.name.clone(), exe);
            });
        }
    });
    let exes = exes.into_inner().unwrap();
    let verdicts: Mutex<BTreeMap<String, Verdict>> = Mutex::new(BTreeMap::new());
    let next = Mutex::new(programs.iter());
    std::thread::scope(|s| {
        for _ in 0..PARALLEL {
            s.spawn(|| loop {
                let Some(p) = next.lock().unwrap().next() else {
                    break;
                };
                let v = checked(&exes[&p.name], RANKS, "", &[]);
                verdicts.lock().unwrap().insert(p.name.clone(), v);
            });
        }
    });
    let verdicts = verdicts.into_inner().unwrap();
    let mut scores: BTreeMap<&str, Score> = CLASSES.iter().map(|c| (*c, Score::default())).collect();
    let mut failures = Vec::new();
    for p in &programs {
        let v = &verdicts[&p.name];
        let detail = || format!("{}: classes {:?}\n{}", p.name, v.classes, v.run.stderr);
        for class in CLASSES {
            let reported = v.classes.contains(class);
            let expected = p.expect.as_deref() == Some(class);
            let s = scores.get_mut(class).unwrap();
            match (expected, reported) {
                (true, true) => s.tp += 1,
                (true, false) => s.fn_ += 1,
                (false, true) => s.fp += 1,
                (false, false) => {}
            }
        }
        match &p.expect {
            None => {
                if !v.reports.is_empty() || !v.run.success() {
                    failures.push(format!(
                        "correct program reported or failed ({:?}): {}",
                        v.run.code,
                        detail()
                    ));
                }
            }
            Some(class) => {
                // Notes (leaks) leave the exit status alone; errors fail it.
                let errors = v.reports.iter().any(|r| r["severity"] != "note");
                if errors == v.run.success() {
                    failures.push(format!(
                        "errors reported: {errors}, yet exit status {:?}: {}",
                        v.run.code,
                        detail()
                    ));
                }
                let at_a_marked_line = v.reports.iter().any(|r| {
                    let site = r["site"].as_str().unwrap_or_default();
                    r["class"] == class.as_str()
                        && p.lines
                            .iter()
                            .any(|l| site.contains(&format!("{}.c:{l} ", p.name)))
                });
                if !p.lines.is_empty() && !at_a_marked_line {
                    failures.push(format!(
                        "no {class} report at a line marked `// reported` ({:?}): {}",
                        p.lines,
                        detail()
                    ));
                }
            }
        }
        for r in &v.reports {
            let site = r["site"].as_str().unwrap_or_default();
            let call = r["call"].as_str().unwrap_or_default();
            if r["rank"].as_i64().is_none()
                || !call.starts_with("MPI_")
                || !site.contains(&format!("{}.c:", p.name))
            {
                failures.push(format!("a report without rank, call or file:line site: {r}"));
            }
            if r["fix"].as_str().is_none_or(|f| f.len() < 10) {
                failures.push(format!("a report without what to change: {r}"));
            }
        }
    }
    let total = scores.values().fold(Score::default(), |a, s| Score {
        tp: a.tp + s.tp,
        fn_: a.fn_ + s.fn_,
        fp: a.fp + s.fp,
    });
    println!(
        "checker corpus ({FLAVOR}, {} programs, {RANKS} ranks):",
        programs.len()
    );
    println!(
        "{:<12} {:>4} {:>4} {:>4} {:>8} {:>10}",
        "class", "tp", "fn", "fp", "recall", "precision"
    );
    for (class, s) in scores.iter().map(|(c, s)| (*c, *s)).chain([("overall", total)]) {
        println!(
            "{class:<12} {:>4} {:>4} {:>4} {:>8.2} {:>10.2}",
            s.tp,
            s.fn_,
            s.fp,
            s.recall(),
            s.precision()
        );
        if s.recall() < 0.9 || s.precision() < 0.95 {
            failures.push(format!(
                "{class}: recall {:.2}, precision {:.2}",
                s.recall(),
                s.precision()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// A deadlock's report is the wait-for graph: every rank's blocking call
/// and site, and the cycle.
#[test]
fn a_deadlock_report_names_each_rank_s_call_and_the_cycle() {
    let exe = checker_program("deadlock_recv_bad");
    let v = checked(&exe, 3, "", &[]);
    assert!(!v.run.success());
    let report = v
        .reports
        .iter()
        .find(|r| r["class"] == "deadlock")
        .expect("a deadlock report");
    let what = report["what"].as_str().unwrap();
    let line = marked_line("c-tests/checker/deadlock_recv_bad.c", "MPI_STATUS_IGNORE);");
    for rank in 0..3 {
        assert!(
            what.contains(&format!("rank {rank}: MPI_Recv at "))
                && what.contains(&format!("deadlock_recv_bad.c:{line} ")),
            "{what}"
        );
    }
    assert!(what.contains("cycle: 0 -> 2 -> 1 -> 0"), "{what}");
}

/// Under the default `sends eager`, a standard send of at most the
/// portable eager limit completes locally and a larger one waits for its
/// receive: hpcc's pattern (an empty send, then a broadcast the receiver
/// is in first) is not reported, and is a potential deadlock under
/// `sends synchronous`; a cycle of 8192-byte sends is one under the
/// default, its report naming each send's bytes and the limit.
#[test]
fn standard_sends_above_the_eager_limit_are_checked_as_synchronous() {
    let eager = checker_program("deadlock_eager_ok");
    let strict = checked(&eager, 2, "argument sends synchronous\n", &[]);
    assert!(!strict.run.success(), "{}", strict.run.stderr);
    let report = strict
        .reports
        .iter()
        .find(|r| r["check"] == "potential-deadlock")
        .unwrap_or_else(|| {
            panic!(
                "no potential deadlock: {:?}\n{}",
                strict.reports, strict.run.stderr
            )
        });
    let what = report["what"].as_str().unwrap();
    let line = marked_line("c-tests/checker/deadlock_eager_ok.c", "102, MPI_COMM_WORLD);");
    assert!(
        what.contains("rank 0: MPI_Send at ")
            && what.contains(&format!("deadlock_eager_ok.c:{line} (main) waits for rank 1 to receive its message of 0 bytes (tag 102)"))
            && what.contains("rank 1: MPI_Bcast at "),
        "{what}"
    );
    let v = checked(&eager, 2, "argument sends eager\nargument eager_limit 0\n", &[]);
    v.run.assert_ok();
    assert!(
        v.reports.is_empty(),
        "0 bytes is within a limit of 0: {:?}",
        v.reports
    );

    let cycle = checker_program("deadlock_sendcycle_bad");
    let v = checked(&cycle, 2, "", &[]);
    let report = v
        .reports
        .iter()
        .find(|r| r["check"] == "potential-deadlock")
        .unwrap_or_else(|| panic!("no potential deadlock: {:?}\n{}", v.reports, v.run.stderr));
    let what = report["what"].as_str().unwrap();
    assert!(
        what.contains("standard sends of more than 4040 bytes")
            && what.contains("its message of 8192 bytes (tag 0)")
            && what.contains("cycle: 0 -> 1 -> 0"),
        "{what}"
    );
}

/// A buffer is compared with the C variable it points into, as the
/// program's debug information describes it (built `-O2 -g`): the
/// report names the variable, its C type, the part the datatype misses
/// and the bytes; the call is made (legal MPI) and the run fails at its end.
#[test]
fn buffers_are_compared_with_their_c_variables() {
    for (program, check, expected) in [
        ("arg_bufsize_bad", "buffer-size", "MPI_Recv's buffer: 8 x MPI_INT span 32 bytes, past the end of `counts` (int[4]), which holds 16 bytes"),
        ("arg_bufglobal_bad", "buffer-size", "32 x MPI_FLOAT span 128 bytes, past the end of `field` (float[16]), which holds 64 bytes"),
        ("arg_buftype_bad", "buffer-type", "element 0 of 4 x MPI_FLOAT is a float (4 bytes) but falls on `vals[0]`, an int, byte 0 of `vals` (int[4])"),
        ("arg_bufstruct_bad", "buffer-type", "element 1 of 3 x the derived datatype is a double (8 bytes) but falls on byte 4 of `p` (struct particle[3]), where no C scalar starts"),
    ] {
        let v = checked(&checker_program(program), 2, "", &[]);
        assert!(!v.run.success(), "{program}: {}", v.run.stderr);
        let (report, what) = report_of(&v, check);
        assert_eq!(report["class"], "argument", "{program}");
        assert!(what.contains(expected), "{program}: {what}");
        assert!(report["fix"].as_str().is_some_and(|f| !f.is_empty()), "{program}");
    }
}

/// The report of `check` in `v`, with its text.
fn report_of<'a>(v: &'a Verdict, check: &str) -> (&'a serde_json::Value, &'a str) {
    let r = v
        .reports
        .iter()
        .find(|r| r["check"] == check)
        .unwrap_or_else(|| panic!("no {check} report: {:?}\n{}", v.reports, v.run.stderr));
    (r, r["what"].as_str().unwrap_or_default())
}

/// Under MPI_THREAD_MULTIPLE, a cycle between threads of two ranks is a
/// deadlock whose graph names each blocked thread, its call and site;
/// each of MPI's rules on threads is reported naming the threads
/// involved and the other thread's call and site (`c-tests/checker/thread_*`;
/// their correct twins, without a report, are in the corpus). A threaded
/// program of the suite (`threadrace.c`: 4 ranks, racing wildcard
/// receives) runs under the checker without a report.
#[test]
fn threads_deadlocks_and_rules_name_the_threads() {
    let v = checked(&checker_program("thread_deadlock_bad"), 2, "", &[]);
    assert!(!v.run.success());
    let (_, what) = report_of(&v, "deadlock");
    let path = "c-tests/checker/thread_deadlock_bad.c";
    let first = marked_line(path, "// reported");
    let second = marked_line(path, "2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);");
    for rank in 0..2 {
        assert!(
            what.lines().any(|l| {
                l.contains(&format!("rank {rank} thread 0: MPI_Recv at "))
                    && l.ends_with(&format!(
                        "thread_deadlock_bad.c:{first} (main) waits for a message from rank {} (tag 1)",
                        1 - rank
                    ))
            }) && what.lines().any(|l| {
                l.contains(&format!("rank {rank} thread 1: MPI_Recv at "))
                    && l.ends_with(&format!(
                        "thread_deadlock_bad.c:{second} (second) waits for a message from rank {} (tag 2)",
                        1 - rank
                    ))
            }),
            "{what}"
        );
    }
    assert!(what.contains("cycle: rank 0 thread "), "{what}");

    let v = checked(&checker_program("thread_request_bad"), 2, "", &[]);
    let (r, what) = report_of(&v, "same-request");
    let line = marked_line(
        "c-tests/checker/thread_request_bad.c",
        "MPI_Wait(&req, MPI_STATUS_IGNORE);",
    );
    assert!(
        r["thread"] == 0
            && what.contains("thread 0 waits on a request that thread 1 is inside MPI_Wait at ")
            && what.contains(&format!("thread_request_bad.c:{line} (waiter)")),
        "{what}"
    );

    let v = checked(&checker_program("thread_collective_bad"), 2, "", &[]);
    let (r, what) = report_of(&v, "same-communicator");
    let other = if r["thread"] == 1 { 2 } else { 1 };
    assert!(
        r["rank"] == 0
            && what.contains(&format!("where thread {other} is inside MPI_Barrier at "))
            && what.contains("thread_collective_bad.c:"),
        "{what}"
    );

    let v = checked(&checker_program("thread_finalize_bad"), 2, "", &[]);
    let (_, what) = report_of(&v, "finalize-inside");
    let line = marked_line("c-tests/checker/thread_finalize_bad.c", "MPI_STATUS_IGNORE);");
    assert!(
        what.contains("thread 0 calls MPI_Finalize while thread 1 is inside MPI_Recv at ")
            && what.contains(&format!("thread_finalize_bad.c:{line} (receiver)")),
        "{what}"
    );

    let v = checked(&checker_program("thread_funneled_bad"), 2, "", &[]);
    let (r, what) = report_of(&v, "above-level");
    assert!(
        r["thread"] == 1 && what.contains("under MPI_THREAD_FUNNELED, which MPI granted: only the thread that initialized MPI (thread 0) may call MPI"),
        "{what}"
    );
    assert!(
        v.run
            .stderr
            .contains("pnmpi checker: rank 0 thread 1: MPI_Send at "),
        "{}",
        v.run.stderr
    );

    let v = checked(&program("threadrace", Link::Pnmpi), 4, "", &[]);
    v.run.assert_ok();
    assert!(v.reports.is_empty(), "threadrace: {:?}", v.reports);
    let provided = v.run.lines("threadrace: provided");
    assert!(
        provided.len() == 4
            && provided.iter().all(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                w.len() == 5 && w[2] == w[4]
            }),
        "MPI_THREAD_MULTIPLE granted on every rank: {}",
        v.run.stdout
    );
    assert_eq!(v.run.lines("threadrace: rank").len(), 4, "{}", v.run.stdout);
    let got: usize = v
        .run
        .lines("threadrace: thread")
        .iter()
        .filter_map(|l| l.split_whitespace().nth(4)?.parse::<usize>().ok())
        .sum();
    assert_eq!(got, 60, "{}", v.run.stdout);
}

/// `action abort` ends the job at the first error, with the exit code;
/// notes (leaks) neither abort nor fail the run.
#[test]
fn action_abort_stops_at_the_first_error() {
    let exe = checker_program("rma_lock_bad");
    let v = checked(&exe, 2, "argument action abort\nargument exit_code 7\n", &[]);
    assert!(!v.run.success());
    assert_eq!(v.reports.len(), 1, "{:?}", v.reports);
    let report = checked(&exe, 2, "", &[]);
    assert_eq!(report.run.code, Some(3), "{}", report.run.stderr);
    assert!(
        report.reports.len() > 1,
        "the lock, then the unlock without it: {:?}",
        report.reports
    );
    let leaks = checker_program("leak_group_bad");
    let notes = checked(&leaks, 2, "argument action abort\n", &[]);
    assert!(notes.run.success(), "{}", notes.run.stderr);
    assert_eq!(notes.reports.len(), 4, "two groups on each rank");
    assert!(
        notes.reports.iter().all(|r| r["severity"] == "note"),
        "{:?}",
        notes.reports
    );
}

/// The NAS-like kernels, C and Fortran (through the MPI's Fortran
/// bindings, under `pnmpi run`), finish under the checker as they do
/// natively, without a report; at 2 ranks, two runs at a time.
#[test]
fn nas_kernels_in_c_and_fortran_run_without_a_report() {
    let kernels = ["cg", "mg", "ft", "is", "lu", "ep"];
    let exes: Vec<(String, PathBuf, PathBuf)> = kernels
        .iter()
        .map(|k| (k.to_string(), nas_kernel(k), nas_fortran_kernel(k)))
        .collect();
    let next = Mutex::new(exes.iter());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let Some((kernel, c, fortran)) = next.lock().unwrap().next() else {
                    break;
                };
                let v = checked(c, 2, "", &[]);
                v.run.assert_ok();
                assert!(v.reports.is_empty(), "{kernel} (C): {:?}", v.reports);
                assert!(v.run.lines(&format!("{kernel}: ")).len() >= 2, "{}", v.run.stdout);

                let mut case = Case::new();
                let out = case.dir().join("checker-out");
                case.conf(&format!(
                    "module {}\nargument deadlock_timeout 0.5\nargument output {}\n",
                    checker().display(),
                    out.display()
                ));
                let mut cmd = launcher(2);
                cmd.arg(target_dir().join("pnmpi"))
                    .args(["run", "--"])
                    .arg(fortran);
                let v = verdict(&out, case.finish(cmd));
                v.run.assert_ok();
                assert!(v.reports.is_empty(), "{kernel} (Fortran): {:?}", v.reports);
                assert!(v.run.lines(&format!("{kernel}: ")).len() >= 2, "{}", v.run.stdout);
            });
        }
    });
}

/// Our C++ hydrodynamics proxy (`c-tests/cxx/hydro.cpp`: a Cartesian
/// communicator, struct, resized, vector and contiguous datatypes, a
/// persistent halo exchange with MPI_PROC_NULL at the walls, a user-defined
/// reduction on a struct) runs clean under the checker at 4 ranks, and
/// computes what it computes on 1 rank without it.
#[test]
fn a_cxx_hydro_proxy_runs_without_a_report() {
    let exe = cxx_program("hydro");
    let alone = Case::new().mpirun(1, &exe, &[]);
    alone.assert_ok();
    let v = checked(&exe, 4, "", &[]);
    v.run.assert_ok();
    assert!(v.reports.is_empty(), "{:?}", v.reports);
    assert_eq!(
        v.run.lines("hydro: grid 96x64 on 2x2 ranks").len(),
        1,
        "{}",
        v.run.stdout
    );
    assert_eq!(v.run.lines("hydro: verified yes").len(), 1, "{}", v.run.stdout);
    let checksum = |run: &Run| run.lines("hydro: checksum ").first().map(|l| l.to_string());
    assert!(checksum(&alone).is_some(), "{}", alone.stdout);
    assert_eq!(checksum(&v.run), checksum(&alone));
}

/// Debian's hpcc and LAMMPS are built for Open MPI: under MPICH they
/// cannot run (another ABI), and the test says so.
fn debian_binary(path: &str, package: &str) -> Option<PathBuf> {
    if FLAVOR != "openmpi" {
        eprintln!("skipped: Debian's {package} is built for Open MPI, this build for {FLAVOR}");
        return None;
    }
    let exe = PathBuf::from(path);
    assert!(
        exe.is_file(),
        "{} missing: run scripts/deps.sh (Debian package {package})",
        exe.display()
    );
    Some(exe)
}

/// HPC Challenge (Debian's `hpcc`, all its tests: HPL, PTRANS,
/// RandomAccess, FFT, STREAM, DGEMM, latency-bandwidth) at 2 ranks on a
/// 1 x 2 grid with a small HPL problem: no report, exit status 0, and
/// hpcc's own verdict `Success=1`. Its latency-bandwidth controller
/// sends empty messages that complete only because MPI buffers them,
/// which every MPI does (`sends eager`).
#[test]
fn hpcc_runs_without_a_report() {
    let Some(hpcc) = debian_binary("/usr/bin/hpcc", "hpcc") else {
        return;
    };
    let example =
        std::fs::read_to_string("/usr/share/doc/hpcc/examples/_hpccinf.txt").expect("hpcc's example input");
    let input: String = example
        .lines()
        .map(|l| match l.split_whitespace().last() {
            Some("Ns") => "200          Ns",
            Some("Ps") => "1            Ps",
            _ => l,
        })
        .map(|l| format!("{l}\n"))
        .collect();
    let mut case = Case::new();
    case.write("hpccinf.txt", &input);
    let out = case.dir().join("checker-out");
    case.conf(&format!(
        "module {}\nargument deadlock_timeout 0.5\nargument output {}\n",
        checker().display(),
        out.display()
    ));
    let mut cmd = launcher(2);
    cmd.arg(target_dir().join("pnmpi")).args(["run", "--"]).arg(&hpcc);
    let v = verdict(&out, case.finish(cmd));
    v.run.assert_ok();
    assert!(v.reports.is_empty(), "hpcc: {:?}", v.reports);
    let results = std::fs::read_to_string(case.dir().join("hpccoutf.txt")).expect("hpcc's output");
    assert!(
        results.lines().any(|l| l == "Success=1") && results.contains("End of LatencyBandwidth section."),
        "{results}"
    );
}

/// LAMMPS (Debian's `lmp`), the Lennard-Jones melt of
/// bench/callgrind/in.lj at 2 ranks: no report, exit status 0, and its
/// thermodynamic rows.
#[test]
fn lammps_runs_without_a_report() {
    let Some(lmp) = debian_binary("/usr/bin/lmp", "lammps") else {
        return;
    };
    let mut case = Case::new();
    case.write(
        "in.lj",
        &std::fs::read_to_string(repo().join("bench/callgrind/in.lj")).expect("in.lj"),
    );
    let out = case.dir().join("checker-out");
    case.conf(&format!(
        "module {}\nargument deadlock_timeout 0.5\nargument output {}\n",
        checker().display(),
        out.display()
    ));
    let mut cmd = launcher(2);
    cmd.arg(target_dir().join("pnmpi"))
        .args(["run", "--"])
        .arg(&lmp)
        .args(["-in", "in.lj", "-var", "steps", "100", "-log", "none"]);
    let v = verdict(&out, case.finish(cmd));
    v.run.assert_ok();
    assert!(v.reports.is_empty(), "LAMMPS: {:?}", v.reports);
    let rows = v
        .run
        .stdout
        .lines()
        .filter(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            w.len() == 6 && w.iter().all(|x| x.parse::<f64>().is_ok())
        })
        .count();
    assert_eq!(rows, 3, "steps 0, 50 and 100:\n{}", v.run.stdout);
}
