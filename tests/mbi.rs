//! The MPI Bugs Initiative (MBI, a public corpus of small MPI programs
//! that nobody here wrote), its one-sided programs under the checker,
//! when `PNMPI_MBI` names a folder of the programs its generators write
//! (`scripts/generators/*Generator.py`, run in that folder, as MBI's own
//! `MBI.py -c generate` runs them; github mquinson/MBI); without it the
//! test says it is skipped.
//!
//! A program is one-sided when it calls `MPI_Win_*` or a one-sided
//! operation (152 of the corpus: 31 correct, 121 erroneous). Each is
//! built with `mpicc -g` and run at the rank count of its header's
//! command line (`$ mpirun -np N ${EXE}`) under the checker; the header
//! gives its expected result (`| OK`, or `| ERROR: CLASS`). The checker
//! found its error when it wrote a report that is not a note. Per class,
//! recall, and precision: the class's programs found over those plus the
//! correct programs of the same generator family (the file name's first
//! word: `EpochLifecycle`, `GlobalConcurrency`, `LocalConcurrency`,
//! `InvalidParam`) reported; then F1 over all one-sided programs.
//! Asserted: no correct program reported, every correct program exits 0,
//! none left hanging, F1 at least 0.9.

use crate::common;
use common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Runs at a time: the machine's two cores.
const PARALLEL: usize = 2;
/// Seconds a run may take before it counts as hanging: the programs run
/// in well under a second natively; the checker's deadlock report comes
/// after two to three `deadlock_timeout`s.
const LIMIT: u32 = 60;
/// The least F1 over the one-sided programs (issue 48).
const F1_MIN: f64 = 0.9;

/// The calls that make a program one-sided.
const ONE_SIDED: &[&str] = &[
    "MPI_Win_",
    "MPI_Put(",
    "MPI_Get(",
    "MPI_Rput(",
    "MPI_Rget(",
    "MPI_Accumulate(",
    "MPI_Get_accumulate(",
    "MPI_Fetch_and_op(",
    "MPI_Compare_and_swap(",
];

/// One program of the corpus.
struct Program {
    path: PathBuf,
    /// `OK`, or the error class of its header.
    class: String,
    /// Its generator family: the file name's first word.
    family: String,
    ranks: usize,
}

/// The one-sided programs of the folder `root`, with their class.
fn programs(root: &Path) -> Vec<Program> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(root)
        .expect("PNMPI_MBI names a folder")
        .flatten()
    {
        let path = e.path();
        if path.extension().is_none_or(|x| x != "c") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        if !ONE_SIDED.iter().any(|c| text.contains(c)) {
            continue;
        }
        let class = text.lines().find_map(|l| {
            let l = l.trim();
            if l == "| OK" {
                Some("OK".to_string())
            } else {
                l.strip_prefix("| ERROR: ").map(|c| c.trim().to_string())
            }
        });
        let ranks = text.lines().find_map(|l| {
            l.split("mpirun -np ")
                .nth(1)
                .and_then(|r| r.split_whitespace().next())
                .and_then(|n| n.parse().ok())
        });
        let (Some(class), Some(ranks)) = (class, ranks) else {
            continue;
        };
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let family = name.split('_').next().unwrap_or("?").to_string();
        out.push(Program {
            path,
            class,
            family,
            ranks,
        });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// What happened to one program.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Outcome {
    /// The checker wrote a report.
    Reported,
    /// It ran to its end with no report (its exit status).
    Silent(Option<i32>),
    /// Killed at the time limit with no report.
    Hung,
    /// It does not build here.
    Unbuilt,
}

/// Builds `p` in `dir`; the executable, or `None`.
fn build(p: &Program, dir: &Path) -> Option<PathBuf> {
    let exe = dir.join("a.out");
    let target = target_dir();
    let out = std::process::Command::new(mpicc())
        .args(["-g", "-O0", "-o"])
        .arg(&exe)
        .arg(&p.path)
        .arg(format!("-L{}", target.display()))
        .args(["-Wl,--no-as-needed", "-lpnmpi"])
        .arg(format!("-Wl,-rpath,{}", target.display()))
        .output()
        .ok()?;
    out.status.success().then_some(exe)
}

/// Runs one program under the checker.
fn outcome(p: &Program) -> Outcome {
    let mut case = Case::new();
    let Some(exe) = build(p, case.dir()) else {
        return Outcome::Unbuilt;
    };
    let out = case.dir().join("checker-out");
    case.conf(&format!(
        "module {}\nargument deadlock_timeout 1\nargument output {}\n",
        target_dir().join("libchecker.so").display(),
        out.display()
    ));
    let mut cmd = launcher_within(p.ranks, LIMIT);
    cmd.arg(&exe);
    let run = case.finish(cmd);
    let reported = std::fs::read_dir(&out).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            std::fs::read_to_string(e.path())
                .ok()
                .and_then(|t| serde_json::from_str::<Vec<serde_json::Value>>(&t).ok())
                .is_some_and(|list| list.iter().any(|r| r["severity"] != "note"))
        })
    });
    if reported {
        Outcome::Reported
    } else if matches!(run.code, Some(124) | Some(137) | None) {
        Outcome::Hung
    } else {
        Outcome::Silent(run.code)
    }
}

/// `n / (n + m)`, 1 when both are 0.
fn ratio(n: u32, m: u32) -> f64 {
    if n + m == 0 {
        1.0
    } else {
        f64::from(n) / f64::from(n + m)
    }
}

#[test]
fn mbi_one_sided_programs_are_scored_per_class() {
    let Some(root) = std::env::var_os("PNMPI_MBI").map(PathBuf::from) else {
        eprintln!("skipped: PNMPI_MBI names no folder of MBI's generated programs");
        return;
    };
    let all = programs(&root);
    assert!(!all.is_empty(), "no one-sided programs in {}", root.display());
    let results: Mutex<Vec<(usize, Outcome)>> = Mutex::new(Vec::new());
    let next = Mutex::new(0..all.len());
    std::thread::scope(|s| {
        for _ in 0..PARALLEL {
            s.spawn(|| loop {
                let Some(i) = next.lock().unwrap().next() else {
                    break;
                };
                let o = outcome(&all[i]);
                results.lock().unwrap().push((i, o));
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|r| r.0);
    // Per class: (reported, silent, hung, unbuilt); correct programs
    // reported, per family.
    let mut table: BTreeMap<&str, [u32; 4]> = BTreeMap::new();
    let mut false_by_family: BTreeMap<&str, u32> = BTreeMap::new();
    let mut family_of: BTreeMap<&str, &str> = BTreeMap::new();
    let mut failures = Vec::new();
    for &(i, o) in &results {
        let p = &all[i];
        let row = table.entry(p.class.as_str()).or_default();
        let slot = match o {
            Outcome::Reported => 0,
            Outcome::Silent(_) => 1,
            Outcome::Hung => 2,
            Outcome::Unbuilt => 3,
        };
        row[slot] += 1;
        if p.class != "OK" {
            family_of.insert(p.class.as_str(), p.family.as_str());
        }
        let name = p.path.file_name().unwrap().to_string_lossy();
        match (p.class == "OK", o) {
            (true, Outcome::Reported) => {
                *false_by_family.entry(p.family.as_str()).or_default() += 1;
                failures.push(format!("correct program reported: {name}"));
            }
            (true, Outcome::Silent(code)) if code != Some(0) => {
                failures.push(format!("correct program exited {code:?}: {name}"))
            }
            (_, Outcome::Hung) => failures.push(format!("hung: {name}")),
            (false, Outcome::Silent(_)) => println!("missed: {name}"),
            (_, Outcome::Unbuilt) => println!("not built: {name}"),
            _ => {}
        }
    }
    println!("MBI one-sided programs under the checker ({FLAVOR}):");
    println!(
        "{:<20} {:>5} {:>8} {:>6} {:>4} {:>7} {:>7} {:>9}",
        "class", "built", "reported", "silent", "hung", "unbuilt", "recall", "precision"
    );
    let (mut tp, mut fn_) = (0, 0);
    let fp = table.get("OK").map_or(0, |r| r[0]);
    for (class, r) in &table {
        let built = r[0] + r[1] + r[2];
        let (recall, precision) = if *class == "OK" {
            (f64::NAN, f64::NAN)
        } else {
            tp += r[0];
            fn_ += r[1] + r[2];
            let family_fp = family_of
                .get(class)
                .and_then(|f| false_by_family.get(f))
                .copied()
                .unwrap_or(0);
            (ratio(r[0], r[1] + r[2]), ratio(r[0], family_fp))
        };
        println!(
            "{class:<20} {built:>5} {:>8} {:>6} {:>4} {:>7} {recall:>7.2} {precision:>9.2}",
            r[0], r[1], r[2], r[3]
        );
    }
    let (recall, precision) = (ratio(tp, fn_), ratio(tp, fp));
    let f1 = if recall + precision == 0.0 {
        0.0
    } else {
        2.0 * recall * precision / (recall + precision)
    };
    println!(
        "all one-sided: recall {recall:.3}, precision {precision:.3}, F1 {f1:.3} ({tp} of {} erroneous found, {fp} correct reported)",
        tp + fn_
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(f1 >= F1_MIN, "F1 {f1:.3} is below {F1_MIN}");
}
