//! `pnmpi sim calibrate` under real mpirun: the machine file it writes
//! loads and replays, its figures are sane, one rank is refused, and a
//! traced 2-rank ping-pong replayed on it predicts the traced run.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

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

#[test]
fn calibration_writes_a_machine_file_that_replays_and_predicts_a_pingpong() {
    let case = Case::new();
    let machine = calibrate(&case);
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

    // Trace a 2-rank ping-pong of 4 KiB messages, replay it on the
    // calibrated machine: the prediction is near the traced run (the
    // benchmark, sim/bench/predict.sh, holds it to 10 %).
    let (_traced, dir) = traced("pingpong", 2, &["5000", "4096"]);
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
            let error = (predicted - measured).abs() / measured;
            assert!(
                error < 0.5,
                "{model}: predicted {predicted} s, traced {measured} s"
            );
        }
    }
}

#[test]
fn one_rank_is_refused_with_the_command_to_run() {
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
