//! Noise in `pnmpi sim replay` (`--noise`): none gives exactly the
//! noise-free prediction, a periodic noise of duty cycle d stretches a
//! compute-only trace by d/(1-d), and a traced stencil loses more to the
//! same noise at more ranks.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn pnmpi() -> PathBuf {
    target_dir().join("pnmpi")
}

/// `pnmpi sim replay TRACE -m MACHINE ARGS --json`: the predicted runtime, s.
fn replay(dir: &Path, trace: &Path, machine: &Path, args: &[&str]) -> f64 {
    let json = dir.join("out.json");
    let out = Command::new(pnmpi())
        .args(["sim", "replay"])
        .arg(trace)
        .arg("-m")
        .arg(machine)
        .args(args)
        .arg("--json")
        .arg(&json)
        .output()
        .expect("pnmpi runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    v["runtime_s"].as_f64().unwrap()
}

fn machine(dir: &Path, nodes: u32) -> PathBuf {
    let p = dir.join("m.toml");
    std::fs::write(
        &p,
        format!("[machine]\nnodes = {nodes}\n[network]\nlatency = \"2us\"\nbandwidth = \"10GB/s\"\n"),
    )
    .unwrap();
    p
}

/// A one-rank SimGrid trace that computes `ns` (1 flop per ns) in 10 bursts.
fn compute_only(dir: &Path, ns: u64) -> PathBuf {
    let body: String = (0..10).map(|_| format!("0 compute {}\n", ns / 10)).collect();
    std::fs::write(dir.join("r0.txt"), format!("0 init\n{body}0 finalize\n")).unwrap();
    std::fs::write(dir.join("index.txt"), "r0.txt\n").unwrap();
    dir.join("index.txt")
}

#[test]
fn no_noise_is_exactly_the_noise_free_replay_and_duty_cycle_d_costs_d_over_1_minus_d() {
    let dir = tempfile::tempdir().unwrap();
    let trace = compute_only(dir.path(), 9_000_000);
    let m = machine(dir.path(), 1);
    let plain = replay(dir.path(), &trace, &m, &[]);
    assert_eq!(plain, 0.009);
    let quiet_trace = dir.path().join("quiet.txt");
    std::fs::write(&quiet_trace, "# pnmpi jitter trace v1\n# tsc_hz 1e9\n0 1000000\n").unwrap();
    let quiet = replay(
        dir.path(),
        &trace,
        &m,
        &["--noise", &quiet_trace.display().to_string()],
    );
    assert_eq!(quiet, plain);
    // LogGOPSim lines: 1 us of noise every 10 us (d = 0.1) over 10 ms.
    let lines: String = (0..1000u64)
        .map(|i| format!("{} 1000\n", i * 10_000 + 5_000))
        .collect();
    let noise = dir.path().join("duty.txt");
    std::fs::write(&noise, lines).unwrap();
    let noisy = replay(dir.path(), &trace, &m, &["--noise", &noise.display().to_string()]);
    let stretch = noisy / plain - 1.0;
    // d / (1 - d) = 11.1 %, give or take the one event at either end.
    assert!((stretch - 1.0 / 9.0).abs() < 0.002, "stretched by {stretch}");
}

#[test]
fn a_traced_stencil_loses_more_to_the_same_noise_at_more_ranks() {
    // Rare long noise (50 us every 1 ms): a rank meets it now and then,
    // but with more ranks some rank meets it in more of the iterations,
    // and the halo exchange makes its neighbours wait.
    let dir = tempfile::tempdir().unwrap();
    let lines: String = (0..2000u64)
        .map(|i| format!("{} 50000\n", i * 1_000_000 + 300_000))
        .collect();
    let noise = dir.path().join("rare.txt");
    std::fs::write(&noise, lines).unwrap();
    let mut slowdown = Vec::new();
    for np in [2, 8] {
        let mut case = Case::new();
        case.conf(&format!(
            "module {}\n",
            target_dir().join("libtracer.so").display()
        ));
        let trace = case.dir().join("trace");
        case.env("PNMPI_TRACE_DIR", &trace.display().to_string());
        case.mpirun(np, &program("stencil", Link::Pnmpi), &["64", "200", "10"])
            .assert_ok();
        let m = machine(case.dir(), np as u32);
        let plain = replay(case.dir(), &trace, &m, &[]);
        let noisy = replay(
            case.dir(),
            &trace,
            &m,
            &["--noise", &noise.display().to_string(), "--noise-seed", "3"],
        );
        slowdown.push(noisy / plain - 1.0);
        eprintln!("{np} ranks: {plain} s without noise, {noisy} s with");
    }
    assert!(
        slowdown[0] > 0.0 && slowdown[1] > slowdown[0],
        "2 ranks, 8 ranks: {slowdown:?}"
    );
}
