//! MPI-CorrBench (github tudasc/MPI-Corrbench), a public corpus of small
//! MPI programs that nobody here wrote, under the checker, when
//! `PNMPI_CORRBENCH` names an export of it (e.g.
//! `git --git-dir=... archive HEAD | tar -x -C /work/ref/corrbench`);
//! without it the test says it is skipped.
//!
//! Every program of `micro-benches/0-level` but the hybrid MPI+OpenMP
//! ones (`openmp/`, which need threads the checker does not grant) is
//! built with `mpicc -g` and run at 2 ranks (as CorrBench's own scripts
//! run them) under the checker, with `sends synchronous`: CorrBench
//! counts a program that completes only because MPI buffers a standard
//! send as erroneous (the MPI standard's strict reading, as MUST checks),
//! and none of its correct programs needs the buffering. A program is erroneous unless it is under
//! `correct/`; the checker found its error when it wrote a report that
//! is not a note (a leak: CorrBench counts none as an error). Per
//! CorrBench class (the file name's prefix: `ArgError`, `ArgMismatch`,
//! `MisplacedCall`, `MissingCall`) and folder (`coll`, `pt2pt`, `rma`,
//! `usertypes`, their `conflo/` twins whose error depends on control
//! flow), recall and precision are printed as a table, with F1 overall
//! and without one-sided programs (`rma`). Asserted: no correct program
//! reported, none left hanging.

use crate::common;
use common::corpus::{self, Outcome};
use common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Seconds a run may take before it counts as hanging: the checker's
/// deadlock report comes after two to three `deadlock_timeout`s, but
/// MPICH's `large_type_sendrec.c` (correct) sends a 4 GiB message, which
/// takes 40 to 55 s natively on the 2-core VM, without the checker.
const LIMIT: u32 = 120;

/// One program of the corpus.
struct Program {
    path: PathBuf,
    /// `correct`, or `CLASS in FOLDER`.
    class: String,
}

/// The corpus's programs, with their class.
fn programs(root: &Path) -> Vec<Program> {
    let base = root.join("micro-benches/0-level");
    let mut out = Vec::new();
    let mut stack = vec![base.clone()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            let rel = path.strip_prefix(&base).unwrap().to_string_lossy().into_owned();
            if rel.starts_with("openmp") {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == "c") {
                let class = if rel.starts_with("correct/") {
                    "correct".to_string()
                } else {
                    let name = path.file_name().unwrap().to_string_lossy();
                    let prefix = name.split('-').next().unwrap_or("?").to_string();
                    let folder = rel.rsplit_once('/').map_or("", |(d, _)| d).to_string();
                    format!("{prefix} in {folder}")
                };
                out.push(Program { path, class });
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// Runs one program under the checker, built with CorrBench's own
/// definitions and headers.
fn outcome(p: &Program) -> Outcome {
    let Some(correct) = p
        .path
        .ancestors()
        .find(|a| a.ends_with("0-level"))
        .map(|b| b.join("correct/include"))
    else {
        return Outcome::Unbuilt;
    };
    let flags = [
        "-DNUM_THREADS=2".to_string(),
        "-DBUFFER_LENGTH_INT=10".to_string(),
        format!("-I{}", correct.display()),
    ];
    corpus::outcome(
        &p.path,
        &flags,
        &["-lm", "-lpthread"],
        2,
        LIMIT,
        "argument deadlock_timeout 1\nargument sends synchronous\n",
    )
}

#[test]
fn corrbench_is_scored_per_class() {
    let Some(root) = std::env::var_os("PNMPI_CORRBENCH").map(PathBuf::from) else {
        eprintln!("skipped: PNMPI_CORRBENCH names no export of MPI-CorrBench");
        return;
    };
    let all = programs(&root);
    assert!(!all.is_empty(), "no programs under {}", root.display());
    let results = corpus::each(all.len(), |i| outcome(&all[i]));
    // Per class: (reported, silent, hung, unbuilt).
    let mut table: BTreeMap<&str, [u32; 4]> = BTreeMap::new();
    let mut failures = Vec::new();
    for (p, &o) in all.iter().zip(&results) {
        let row = table.entry(p.class.as_str()).or_default();
        row[o.column()] += 1;
        let name = p.path.strip_prefix(&root).unwrap_or(&p.path).display();
        match (p.class == "correct", o) {
            (true, Outcome::Reported) => failures.push(format!("correct program reported: {name}")),
            (_, Outcome::Hung) => failures.push(format!("hung: {name}")),
            (false, Outcome::Silent(_)) => println!("missed: {name}"),
            (_, Outcome::Unbuilt) => println!("not built: {name}"),
            _ => {}
        }
    }
    println!("MPI-CorrBench 0-level under the checker ({FLAVOR}, 2 ranks):");
    println!(
        "{:<28} {:>5} {:>8} {:>6} {:>4} {:>7} {:>7} {:>9}",
        "class", "built", "reported", "silent", "hung", "unbuilt", "recall", "precision"
    );
    let (mut tp, mut fn_, mut tp_local, mut fn_local) = (0, 0, 0, 0);
    let fp = table.get("correct").map_or(0, |r| r[0]);
    for (class, r) in &table {
        let built = r[0] + r[1] + r[2];
        let (recall, precision) = if *class == "correct" {
            (f64::NAN, f64::NAN)
        } else {
            tp += r[0];
            fn_ += r[1] + r[2];
            if !class.contains("rma") {
                tp_local += r[0];
                fn_local += r[1] + r[2];
            }
            (corpus::scores(r[0], r[1] + r[2], 0).0, 1.0)
        };
        println!(
            "{class:<28} {built:>5} {:>8} {:>6} {:>4} {:>7} {recall:>7.2} {precision:>9.2}",
            r[0], r[1], r[2], r[3]
        );
    }
    let (r, p, f) = corpus::scores(tp, fn_, fp);
    println!(
        "all erroneous: recall {r:.3}, precision {p:.3}, F1 {f:.3} ({tp} of {} found, {fp} correct reported)",
        tp + fn_
    );
    let (r, p, f) = corpus::scores(tp_local, fn_local, fp);
    println!(
        "without rma:   recall {r:.3}, precision {p:.3}, F1 {f:.3} ({tp_local} of {} found)",
        tp_local + fn_local
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
