//! Noise in `pnmpi sim replay` (`--noise`): none gives exactly the
//! noise-free prediction, a periodic noise of duty cycle d stretches a
//! compute-only trace by d/(1-d), and a stencil loses more to the same
//! noise at more ranks.

use crate::common;
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

/// A 1-D halo-exchange stencil as a SimGrid trace: per iteration 200 us
/// of compute, 8 KiB to each neighbour, an allreduce every 10.
fn stencil(dir: &Path, ranks: u32, iterations: u32) -> PathBuf {
    let mut index = String::new();
    for r in 0..ranks {
        let (left, right) = ((r + ranks - 1) % ranks, (r + 1) % ranks);
        let mut t = format!("{r} init\n");
        for it in 0..iterations {
            t += &format!(
                "{r} compute 200000\n{r} irecv {left} 0 8192\n{r} irecv {right} 1 8192\n\
                 {r} isend {right} 0 8192\n{r} isend {left} 1 8192\n{r} waitall\n"
            );
            if it % 10 == 9 {
                t += &format!("{r} allreduce 8 0\n");
            }
        }
        t += &format!("{r} finalize\n");
        let name = format!("r{r}.txt");
        std::fs::write(dir.join(&name), t).unwrap();
        index += &name;
        index.push('\n');
    }
    let p = dir.join(format!("index{ranks}.txt"));
    std::fs::write(&p, index).unwrap();
    p
}

#[test]
fn a_stencil_loses_more_to_the_same_noise_at_more_ranks() {
    // Rare long noise (100 us every 5 ms): a rank meets it in some
    // iterations; with more ranks, some rank meets it in more of them, and
    // the halo exchange passes the delay to its neighbours. (The same
    // program at every size: a traced stencil oversubscribed on this
    // machine has CPU bursts that grow with the rank count, see
    // docs/performance.md.)
    let lines: String = (0..4000u64)
        .map(|i| format!("{} 100000\n", i * 5_000_000 + 1_000_000))
        .collect();
    let mut slowdown = Vec::new();
    for ranks in [2, 16, 128] {
        let dir = tempfile::tempdir().unwrap();
        let noise = dir.path().join("rare.txt");
        std::fs::write(&noise, &lines).unwrap();
        let trace = stencil(dir.path(), ranks, 100);
        let m = machine(dir.path(), ranks);
        let plain = replay(dir.path(), &trace, &m, &[]);
        let noisy = replay(dir.path(), &trace, &m, &["--noise", &noise.display().to_string()]);
        eprintln!("{ranks} ranks: {plain} s without noise, {noisy} s with");
        slowdown.push(noisy / plain - 1.0);
    }
    assert!(
        slowdown[0] > 0.0 && slowdown[1] > slowdown[0] && slowdown[2] > slowdown[1],
        "2, 16, 128 ranks: {slowdown:?}"
    );
}
