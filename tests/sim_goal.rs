//! `pnmpi sim replay X.goal`: LogGOPSim's GOAL schedules on the LogGOPS
//! model, with LogGOPSim's rules. In CI: schedules whose times can be
//! computed by hand, and bad schedules. Where LogGOPSim is built
//! (`LOGGOPSIM` names the folder holding its `LogGOPSim` and `txt2bin`,
//! docs/sim.md "GOAL and LogGOPS"), the same schedules and random ones
//! run in both, and must finish at the same nanosecond on every rank.

use crate::common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// LogGOPSim's default parameters, as a machine file.
const MACHINE: &str = "[machine]\nname = \"LogGOPSim's defaults\"\nnodes = 1\n\
    [network]\nlatency = \"2500ns\"\nbandwidth = \"1GB/s\"\n\
    [model.loggops]\nL = \"2500ns\"\no = \"1500ns\"\ng = \"1000ns\"\nG = \"6ns\"\nO = \"0ns\"\nS = \"65535B\"\n";
const L: u64 = 2500;
const O: u64 = 1500;
const G: u64 = 6;

/// A dissemination of `bytes` over `p` ranks, as Schedgen2 writes one.
fn dissemination(p: u32, bytes: u64) -> String {
    let mut g = format!("num_ranks {p}\n");
    let mut label = 0;
    for r in 0..p {
        g += &format!("\nrank {r} {{\n");
        let (mut dist, mut prev, mut deps) = (1, None, Vec::new());
        while dist < p {
            let (s, v) = (label + 1, label + 2);
            label += 2;
            g += &format!("l{s}: send {bytes}b to {} tag 42001\n", (r + dist) % p);
            g += &format!("l{v}: recv {bytes}b from {} tag 42001\n", (r + p - dist) % p);
            if let Some(prev) = prev {
                deps.push(format!("l{s} requires l{prev}\n"));
            }
            prev = Some(v);
            dist *= 2;
        }
        g += &deps.concat();
        g += "}\n";
    }
    g
}

/// A random schedule that cannot deadlock: messages in a global order,
/// each rank's ops requiring only ops of earlier messages; sizes on both
/// sides of S; some receives from any source or with any tag where only
/// one message fits; computations between.
fn random_schedule(seed: u64) -> String {
    let mut rng = fastrand::Rng::with_seed(seed);
    let p = rng.u32(2..9);
    let messages = rng.usize(5..40);
    let mut ops: Vec<Vec<String>> = vec![Vec::new(); p as usize];
    let mut deps: Vec<Vec<String>> = vec![Vec::new(); p as usize];
    let mut pairs = std::collections::HashMap::new();
    let plan: Vec<(u32, u32)> = (0..messages)
        .map(|_| {
            let src = rng.u32(0..p);
            let dst = (src + rng.u32(1..p)) % p;
            *pairs.entry((src, dst)).or_insert(0) += 1;
            (src, dst)
        })
        .collect();
    for (m, &(src, dst)) in plan.iter().enumerate() {
        let size = if rng.bool() {
            rng.u64(1..1000)
        } else {
            rng.u64(60_000..300_000)
        };
        let tag = m;
        for (rank, op) in [
            (src, format!("send {size}b to {dst} tag {tag}")),
            (dst, {
                let from = if rng.u8(0..4) == 0 {
                    "-1".to_string()
                } else {
                    src.to_string()
                };
                let any_tag = pairs[&(src, dst)] == 1 && from != "-1" && rng.bool();
                let t = if any_tag {
                    "-1".to_string()
                } else {
                    tag.to_string()
                };
                format!("recv {size}b from {from} tag {t}")
            }),
        ] {
            let mine = &mut ops[rank as usize];
            if rng.u8(0..3) == 0 {
                mine.push(format!("calc {}", rng.u64(0..20_000)));
            }
            mine.push(op);
            let me = mine.len() - 1;
            // Depend on one or two earlier ops of this rank.
            for _ in 0..rng.usize(0..3) {
                if me > 0 {
                    let on = rng.usize(0..me);
                    let how = if rng.u8(0..4) == 0 {
                        "irequires"
                    } else {
                        "requires"
                    };
                    deps[rank as usize].push(format!("o{me} {how} o{on}"));
                }
            }
        }
    }
    let mut g = format!("num_ranks {p}\n");
    for r in 0..p as usize {
        g += &format!("rank {r} {{\n");
        for (i, op) in ops[r].iter().enumerate() {
            g += &format!("o{i}: {op}\n");
        }
        for d in &deps[r] {
            g += &format!("{d}\n");
        }
        g += "}\n";
    }
    g
}

/// `pnmpi sim replay` of `goal` (written in `case` as `name`): every
/// rank's finish, ns, from its JSON report.
fn ours(case: &Case, name: &str, goal: &str) -> Vec<u64> {
    case.write(name, goal);
    case.write("m.toml", MACHINE);
    let out = Command::new(target_dir().join("pnmpi"))
        .args(["sim", "replay", name, "-m", "m.toml", "--json", "r.json"])
        .current_dir(case.dir())
        .output()
        .expect("pnmpi runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(case.dir().join("r.json")).unwrap()).unwrap();
    v["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["end_ns"].as_u64().unwrap())
        .collect()
}

/// LogGOPSim's finish per rank of the schedule `name` in `case`, with its
/// defaults (`txt2bin`, then `LogGOPSim`, which prints every host's time
/// up to 16 hosts).
fn loggopsim(dir: &Path, case: &Case, name: &str) -> Vec<u64> {
    let bin = case.dir().join(format!("{name}.bin"));
    let t = Command::new(dir.join("txt2bin"))
        .arg("-i")
        .arg(case.dir().join(name))
        .arg("-o")
        .arg(&bin)
        .output()
        .expect("txt2bin runs");
    assert!(t.status.success(), "{}", String::from_utf8_lossy(&t.stderr));
    let out = Command::new(dir.join("LogGOPSim"))
        .arg("-f")
        .arg(&bin)
        .args([
            "-L", "2500", "-o", "1500", "-g", "1000", "-G", "6", "-O", "0", "-S", "65535",
        ])
        .output()
        .expect("LogGOPSim runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let hosts: Vec<u64> = text
        .lines()
        .filter_map(|l| l.strip_prefix("Host "))
        .map(|l| {
            l.split(": ")
                .nth(1)
                .and_then(|t| t.trim().parse().ok())
                .expect("a time")
        })
        .collect();
    assert!(!hosts.is_empty(), "LogGOPSim printed no times:\n{text}");
    hosts
}

fn reference() -> Option<PathBuf> {
    std::env::var_os("LOGGOPSIM").map(PathBuf::from)
}

#[test]
fn dissemination_finishes_at_rounds_times_2o_l_7g_on_every_rank() {
    for p in [2u32, 7, 16] {
        let case = Case::new();
        let rounds = u64::from(32 - (p - 1).leading_zeros());
        let want = rounds * (2 * O + L + 7 * G);
        let got = ours(&case, "d.goal", &dissemination(p, 8));
        assert_eq!(got, vec![want; p as usize], "{p} ranks");
    }
}

#[test]
fn a_bad_schedule_names_its_file_and_line() {
    let case = Case::new();
    case.write("m.toml", MACHINE);
    case.write("bad.goal", "num_ranks 2\nrank 0 {\nl1: send 8b to 5 tag 1\n}\n");
    let out = Command::new(target_dir().join("pnmpi"))
        .args(["sim", "replay", "bad.goal", "-m", "m.toml"])
        .current_dir(case.dir())
        .output()
        .expect("pnmpi runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("bad.goal:3: rank 5 of a schedule of 2 ranks"),
        "{err}"
    );
    // Another model is refused with the one to use.
    let out = Command::new(target_dir().join("pnmpi"))
        .args(["sim", "replay", "bad.goal", "-m", "m.toml", "--model", "simple"])
        .current_dir(case.dir())
        .output()
        .expect("pnmpi runs");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--model loggops"));
}

#[test]
fn a_receive_without_its_message_is_reported_not_hung() {
    let case = Case::new();
    case.write("m.toml", MACHINE);
    case.write(
        "stuck.goal",
        "num_ranks 2\nrank 0 {\nsend 100000b to 1 tag 1\n}\nrank 1 {\nrecv 100000b from 0 tag 2\n}\n",
    );
    let out = Command::new(target_dir().join("pnmpi"))
        .args(["sim", "replay", "stuck.goal", "-m", "m.toml"])
        .current_dir(case.dir())
        .output()
        .expect("pnmpi runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("rank 1: a receive from rank 0 (tag 2) that no message matches"),
        "{err}"
    );
}

/// Schedgen2-like collectives and random schedules, beside LogGOPSim.
#[test]
fn loggopsim_gives_the_same_finish_on_every_rank() {
    let Some(dir) = reference() else {
        eprintln!("skipped: set LOGGOPSIM to a LogGOPSim build folder (docs/sim.md) to cross-check");
        return;
    };
    let mut schedules: Vec<(String, String)> = vec![
        ("diss-13-8".into(), dissemination(13, 8)),
        ("diss-16-100000".into(), dissemination(16, 100_000)),
    ];
    let cases: u64 = std::env::var("PNMPI_GOAL_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    for seed in 0..cases {
        schedules.push((format!("random-{seed}"), random_schedule(seed)));
    }
    for (name, text) in schedules {
        let case = Case::new();
        let file = format!("{name}.goal");
        let ours = ours(&case, &file, &text);
        let theirs = loggopsim(&dir, &case, &file);
        assert_eq!(ours, theirs, "{name}:\n{text}");
    }
}

/// `pnmpi trace export --format goal` of traced programs (every request
/// kind, random programs with collectives, a NAS-like kernel): the schedule
/// replays to its end in pnmpi sim, and where LogGOPSim is built, to the
/// same finish on every rank there.
#[test]
fn goal_exports_of_traces_replay_and_agree_with_loggopsim() {
    let kernel = nas_kernel("mg");
    let runs: Vec<(&str, (Case, PathBuf))> = vec![
        ("reqkinds", traced("reqkinds", 4, &["100000"])),
        ("randmix", traced("randmix", 4, &["3", "40", "all"])),
        ("mg", traced_exe(&kernel, 4, &[])),
    ];
    for (name, (case, trace)) in runs {
        let out = Command::new(target_dir().join("pnmpi"))
            .args(["trace", "export", "--format", "goal"])
            .arg(&trace)
            .args(["-o", "t.goal"])
            .current_dir(case.dir())
            .output()
            .expect("pnmpi runs");
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = std::fs::read_to_string(case.dir().join("t.goal")).expect("the schedule");
        assert!(
            text.contains("num_ranks 4\n") && text.contains(" requires "),
            "{name}"
        );
        let finish = ours(&case, "t.goal", &text);
        assert!(finish.iter().all(|&f| f > 0), "{name}: {finish:?}");
        if let Some(dir) = reference() {
            assert_eq!(finish, loggopsim(&dir, &case, "t.goal"), "{name}");
        }
    }
}
