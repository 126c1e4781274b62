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
use common::corpus::{self, Outcome};
use common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
/// Seconds a run may take before it counts as hanging: the programs run
/// in well under a second natively; the checker's deadlock report comes
/// after two to three `deadlock_timeout`s.
const LIMIT: u32 = 60;
/// The least F1 over the one-sided programs: the bar the checker must
/// meet on a corpus nobody here wrote.
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

#[test]
fn mbi_one_sided_programs_are_scored_per_class() {
    let Some(root) = std::env::var_os("PNMPI_MBI").map(PathBuf::from) else {
        eprintln!("skipped: PNMPI_MBI names no folder of MBI's generated programs");
        return;
    };
    let all = programs(&root);
    assert!(!all.is_empty(), "no one-sided programs in {}", root.display());
    let results = corpus::each(all.len(), |i| {
        let p = &all[i];
        corpus::outcome(&p.path, &[], &[], p.ranks, LIMIT, "argument deadlock_timeout 1\n")
    });
    // Per class: (reported, silent, hung, unbuilt); correct programs
    // reported, per family.
    let mut table: BTreeMap<&str, [u32; 4]> = BTreeMap::new();
    let mut false_by_family: BTreeMap<&str, u32> = BTreeMap::new();
    let mut family_of: BTreeMap<&str, &str> = BTreeMap::new();
    let mut failures = Vec::new();
    for (p, &o) in all.iter().zip(&results) {
        let row = table.entry(p.class.as_str()).or_default();
        row[o.column()] += 1;
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
            let (recall, precision, _) = corpus::scores(r[0], r[1] + r[2], family_fp);
            (recall, precision)
        };
        println!(
            "{class:<20} {built:>5} {:>8} {:>6} {:>4} {:>7} {recall:>7.2} {precision:>9.2}",
            r[0], r[1], r[2], r[3]
        );
    }
    let (recall, precision, f1) = corpus::scores(tp, fn_, fp);
    println!(
        "all one-sided: recall {recall:.3}, precision {precision:.3}, F1 {f1:.3} ({tp} of {} erroneous found, {fp} correct reported)",
        tp + fn_
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(f1 >= F1_MIN, "F1 {f1:.3} is below {F1_MIN}");
}

/// Each of the corpus's correct one-sided programs through every tool, as
/// natively: traced (exit 0), merged, replayed (a network 10 times slower
/// gives a longer run: each moves data with one-sided calls), exported to
/// OTF2 and read back with the trace's one-sided figures, and run as
/// virtual ranks (exit 0, as natively).
#[test]
fn mbi_correct_one_sided_programs_run_through_every_tool() {
    let Some(root) = std::env::var_os("PNMPI_MBI").map(PathBuf::from) else {
        eprintln!("skipped: PNMPI_MBI names no folder of MBI's generated programs");
        return;
    };
    let correct: Vec<Program> = programs(&root).into_iter().filter(|p| p.class == "OK").collect();
    assert!(
        !correct.is_empty(),
        "no correct one-sided programs in {}",
        root.display()
    );
    let failures: Vec<String> = corpus::each(correct.len(), |i| through_the_tools(&correct[i]))
        .into_iter()
        .flatten()
        .collect();
    println!(
        "MBI: {} of {} correct one-sided programs traced, merged, replayed, exported to OTF2 and read back, and run as virtual ranks",
        correct.len() - failures.len(),
        correct.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// What went wrong with correct program `p` through the tools, if
/// anything ([`mbi_correct_one_sided_programs_run_through_every_tool`]).
fn through_the_tools(p: &Program) -> Option<String> {
    let name = p.path.file_name().unwrap().to_string_lossy().into_owned();
    let mut case = Case::new();
    let Some(exe) = corpus::build(&p.path, case.dir(), &[], &[]) else {
        return Some(format!("{name}: does not build"));
    };
    case.conf(&format!(
        "module {}\nargument outdir tr\n",
        target_dir().join("libtracer.so").display()
    ));
    let mut cmd = launcher_within(p.ranks, LIMIT);
    cmd.arg(&exe);
    let traced = case.finish(cmd);
    if !traced.success() {
        return Some(format!(
            "{name}: traced run exited {:?}\n{}",
            traced.code, traced.stderr
        ));
    }
    let cli = |args: &[&str]| -> Result<String, String> {
        let out = pnmpi_cli(args, case.dir());
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        match out.status.success() {
            true => Ok(text),
            false => Err(format!(
                "{name}: pnmpi {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr)
            )),
        }
    };
    let checked = (|| -> Result<(), String> {
        cli(&["trace", "merge", "tr", "-o", "t.pnt"])?;
        let mut runtimes = Vec::new();
        for (file, latency, bandwidth) in [("fast.toml", "1us", "10GB/s"), ("slow.toml", "10us", "1GB/s")] {
            let nodes = p.ranks;
            case.write(
                file,
                &format!("[machine]\nnodes = {nodes}\n[network]\nlatency = \"{latency}\"\nbandwidth = \"{bandwidth}\"\n"),
            );
            cli(&["sim", "replay", "t.pnt", "-m", file, "--json", "r.json"])?;
            let text = std::fs::read_to_string(case.dir().join("r.json")).map_err(|e| e.to_string())?;
            let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
            runtimes.push(v["runtime_s"].as_f64().unwrap_or(f64::NAN));
        }
        if runtimes[1].partial_cmp(&runtimes[0]) != Some(std::cmp::Ordering::Greater) {
            return Err(format!("{name}: a 10 times slower network, {runtimes:?} s"));
        }
        cli(&["trace", "export", "--format", "otf2", "t.pnt", "-o", "otf2"])?;
        let rma = |input: &str| -> Result<serde_json::Value, String> {
            let text = cli(&["trace", "stats", "--json", input])?;
            let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
            Ok(v["rma"].clone())
        };
        let (ours, back) = (rma("t.pnt")?, rma("otf2/traces.otf2")?);
        if ours.is_null() || ours != back {
            return Err(format!(
                "{name}: one-sided figures {ours} in the trace, {back} read back from OTF2"
            ));
        }
        Ok(())
    })();
    if let Err(what) = checked {
        return Some(what);
    }
    case.write("v.conf", "");
    case.env("PNMPI_LIB_PATH", "");
    let mut cmd = launcher_within(1, LIMIT);
    cmd.arg(target_dir().join("pnmpi"))
        .args(["run", &format!("--vranks={}", p.ranks), "--conf", "v.conf", "--"])
        .arg(&exe);
    let virt = case.finish(cmd);
    (!virt.success()).then(|| {
        format!(
            "{name}: as virtual ranks, exited {:?}\n{}",
            virt.code, virt.stderr
        )
    })
}
