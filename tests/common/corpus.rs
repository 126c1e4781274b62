//! What the runs of public corpora under the checker share
//! (`corrbench`, `mbi`): each program built against libpnmpi, run under
//! the checker with a time limit, two at a time, and scored.

use super::{launcher_within, mpicc, target_dir, Case};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Runs at a time: the machine's two cores.
pub const PARALLEL: usize = 2;

/// What happened to one program.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Outcome {
    /// The checker wrote a report.
    Reported,
    /// It ran to its end with no report (its exit status).
    Silent(Option<i32>),
    /// Killed at the time limit with no report.
    Hung,
    /// It does not build here (another MPI's extension, a missing header).
    Unbuilt,
}

impl Outcome {
    /// The column of a table of outcomes: reported, silent, hung, unbuilt.
    pub fn column(self) -> usize {
        match self {
            Outcome::Reported => 0,
            Outcome::Silent(_) => 1,
            Outcome::Hung => 2,
            Outcome::Unbuilt => 3,
        }
    }
}

/// Builds the C program `src` with `mpicc -g -O0` and `flags`, linked to
/// libpnmpi (and then `libs`), as `a.out` in `dir`; `None` if it does
/// not build.
pub fn build(src: &Path, dir: &Path, flags: &[String], libs: &[&str]) -> Option<PathBuf> {
    let exe = dir.join("a.out");
    let target = target_dir();
    let out = std::process::Command::new(mpicc())
        .args(["-g", "-O0"])
        .args(flags)
        .arg("-o")
        .arg(&exe)
        .arg(src)
        .arg(format!("-L{}", target.display()))
        .args(["-Wl,--no-as-needed", "-lpnmpi"])
        .arg(format!("-Wl,-rpath,{}", target.display()))
        .args(libs)
        .output()
        .ok()?;
    out.status.success().then_some(exe)
}

/// Runs `src` (built by [`build`] with `flags` and `libs`) at `ranks`
/// ranks under the checker with `arguments` (lines `argument KEY VALUE`)
/// within `limit` seconds.
pub fn outcome(
    src: &Path,
    flags: &[String],
    libs: &[&str],
    ranks: usize,
    limit: u32,
    arguments: &str,
) -> Outcome {
    let mut case = Case::new();
    let Some(exe) = build(src, case.dir(), flags, libs) else {
        return Outcome::Unbuilt;
    };
    let out = case.dir().join("checker-out");
    case.conf(&format!(
        "module {}\n{arguments}argument output {}\n",
        target_dir().join("libchecker.so").display(),
        out.display()
    ));
    let mut cmd = launcher_within(ranks, limit);
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

/// `f` of each of `0..n`, [`PARALLEL`] at a time, in order.
pub fn each<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let results: Mutex<Vec<(usize, T)>> = Mutex::new(Vec::new());
    let next = Mutex::new(0..n);
    std::thread::scope(|s| {
        for _ in 0..PARALLEL {
            s.spawn(|| loop {
                let Some(i) = next.lock().unwrap().next() else {
                    break;
                };
                let o = f(i);
                results.lock().unwrap().push((i, o));
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|r| r.0);
    results.into_iter().map(|r| r.1).collect()
}

/// Recall, precision and F1 over (true positives, false negatives, false
/// positives).
pub fn scores(tp: u32, fn_: u32, fp: u32) -> (f64, f64, f64) {
    let r = if tp + fn_ == 0 {
        1.0
    } else {
        f64::from(tp) / f64::from(tp + fn_)
    };
    let p = if tp + fp == 0 {
        1.0
    } else {
        f64::from(tp) / f64::from(tp + fp)
    };
    let f = if r + p == 0.0 { 0.0 } else { 2.0 * r * p / (r + p) };
    (r, p, f)
}
