//! `pnmpi sim calibrate` under real mpirun: the machine file it writes
//! loads and replays, its figures are sane, one rank is refused, and a
//! traced 2-rank ping-pong replayed on it predicts the traced run.

use crate::common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Calibration measures timings: the other test (it starts an MPI
/// singleton) waits rather than run beside it on this 2-core machine.
static QUIET: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn pnmpi() -> PathBuf {
    target_dir().join("pnmpi")
}

/// Calibrates with 2 ranks (quick) into the case folder.
fn calibrate(case: &Case) -> PathBuf {
    let out = case.dir().join("here.toml");
    let mut cmd = launcher(2);
    cmd.arg(pnmpi())
        .args(["sim", "calibrate", "--quick", "-o"])
        .arg(&out);
    let run = case.finish(cmd);
    run.assert_ok();
    assert!(
        run.stderr.contains("pnmpi sim calibrate: wrote"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("collectives on 2 ranks"),
        "progress: {}",
        run.stderr
    );
    out
}

/// `key = "<number><unit>"` of the first line starting with `key =` after `table`.
fn value(text: &str, table: &str, key: &str) -> String {
    let rest = &text[text.find(table).unwrap_or_else(|| panic!("{table} in\n{text}"))..];
    let line = rest
        .lines()
        .find(|l| l.starts_with(&format!("{key} =")))
        .unwrap_or_else(|| panic!("{key} in {table}"));
    line.split('"').nth(1).expect("a quoted value").to_string()
}

fn ns(v: &str) -> f64 {
    v.strip_suffix("ns").expect("ns").parse().expect("a number")
}

/// Checks one calibration's machine file, then traces a 2-rank ping-pong
/// of 4 KiB messages and replays it on that machine with every model.
/// Returns the relative errors of the simple and PMaC predictions
/// against the traced run.
fn calibrate_and_predict(case: &Case) -> Vec<(String, f64, f64)> {
    let machine = calibrate(case);
    let text = std::fs::read_to_string(&machine).expect("machine file");
    assert!(text.starts_with("# Measured by `pnmpi sim calibrate`"), "{text}");
    let latency = ns(&value(&text, "[network.intra]", "latency"));
    assert!(latency > 10.0 && latency < 1e6, "latency {latency} ns");
    for routine in [
        "barrier",
        "bcast",
        "reduce",
        "allreduce",
        "gather",
        "scatter",
        "allgather",
        "alltoall",
    ] {
        let table = format!("[model.pmac.collectives.{routine}]");
        assert!(ns(&value(&text, &table, "alpha")) > 0.0, "{routine}: {text}");
    }
    // The raw figures stay beside it, and every size was measured.
    let raw = std::fs::read_to_string(machine.with_extension("toml.raw")).expect("raw figures");
    assert_eq!(
        raw.lines().filter(|l| l.starts_with("p2p intra ")).count(),
        23,
        "{raw}"
    );

    let (_traced, dir) = traced("pingpong", 2, &["5000", "4096"]);
    let mut predictions = Vec::new();
    for model in ["simple", "loggp", "pmac", "bus", "bcs"] {
        let json = case.dir().join(format!("{model}.json"));
        let out = Command::new(pnmpi())
            .args(["sim", "replay"])
            .arg(&dir)
            .arg("-m")
            .arg(&machine)
            .args(["--model", model, "--compare", "--json"])
            .arg(&json)
            .output()
            .expect("pnmpi runs");
        assert!(
            out.status.success(),
            "{model}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        if model == "simple" || model == "pmac" {
            let report: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&json).expect("json")).expect("JSON");
            let predicted = report["runtime_s"].as_f64().expect("runtime_s");
            let measured = report["measured_runtime_s"].as_f64().expect("measured");
            // The calibrated file says it describes this machine: an error.
            assert_eq!(report["comparison"], "error", "{model}");
            predictions.push((model.to_string(), predicted, measured));
        }
    }
    predictions
}

/// The calibrated machine file loads under every model and replays a
/// traced ping-pong to a positive, finite prediction, compared with the
/// traced time (`--compare` says the file describes this machine). How
/// close the prediction comes is a wall-clock figure, so a benchmark
/// holds it to 10 % on a quiet machine (sim/bench/predict.sh, in
/// docs/performance.md): a burst of other work during the calibration or
/// the traced run skews the pair.
#[test]
fn calibration_writes_a_machine_file_that_replays_a_pingpong() {
    let _quiet = QUIET.lock().unwrap_or_else(|e| e.into_inner());
    let case = Case::new();
    let predictions = calibrate_and_predict(&case);
    assert_eq!(predictions.len(), 2, "{predictions:?}");
    for (model, predicted, measured) in predictions {
        assert!(
            predicted.is_finite() && predicted > 0.0,
            "{model}: predicted {predicted} s"
        );
        assert!(measured > 0.0, "{model}: traced {measured} s");
    }
}

#[test]
fn one_rank_is_refused_with_the_command_to_run() {
    let _quiet = QUIET.lock().unwrap_or_else(|e| e.into_inner());
    let case = Case::new();
    let out = Command::new(pnmpi())
        .args(["sim", "calibrate", "--quick", "-o"])
        .arg(case.dir().join("m.toml"))
        .current_dir(case.dir())
        .output()
        .expect("pnmpi runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("needs at least 2 ranks"), "{stderr}");
    assert!(stderr.contains("mpirun -np 2 pnmpi sim calibrate"), "{stderr}");
    assert!(!Path::new(&case.dir().join("m.toml")).exists());
}
