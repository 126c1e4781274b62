//! `pnmpi jitter` end to end: a real collection on this machine feeds the
//! simulator; the paper's worked example through the command line; JSON
//! and SVG outputs; bad traces and parameters are clear errors.

use crate::common;
use common::*;
use std::path::Path;
use std::process::{Command, Output};

fn jitter(args: &[&str], dir: &Path) -> Output {
    Command::new(target_dir().join("pnmpi"))
        .arg("jitter")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("pnmpi runs")
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_collected_trace_feeds_the_simulator() {
    let dir = tempfile::tempdir().unwrap();
    ok(&jitter(
        &["collect", "--seconds", "0.3", "--cores", "0", "-o", "noise"],
        dir.path(),
    ));
    let summary = std::fs::read_to_string(dir.path().join("noise/summary.txt")).unwrap();
    assert!(summary.contains("noise %"), "{summary}");
    assert!(std::fs::read_to_string(dir.path().join("noise/summary.svg"))
        .unwrap()
        .contains("<svg"));
    let text = std::fs::read_to_string(dir.path().join("noise/core-0.txt")).unwrap();
    assert!(text.starts_with("# pnmpi jitter trace v1\n# tsc_hz "), "{text}");
    // Both forms, the folder collect wrote, and the simulator's JSON: one
    // entry per mode and count.
    let mut by_input = Vec::new();
    for trace in ["noise/core-0.txt", "noise/core-0.pnj", "noise"] {
        ok(&jitter(
            &[
                "sim",
                trace,
                "--quantum",
                "10us",
                "--phases",
                "20",
                "--tasks",
                "1,64",
                "--mode",
                "unsync,sync",
                "--json",
                "r.json",
                "--svg",
                "r.svg",
            ],
            dir.path(),
        ));
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("r.json")).unwrap()).unwrap();
        let results = json["results"].as_array().unwrap();
        assert_eq!(results.len(), 4, "{json}");
        for r in results {
            assert!(r["slowdown_pct"].as_f64().unwrap() >= 0.0, "{r}");
        }
        assert_eq!(results[1]["mode"], "unsync");
        assert_eq!(results[1]["tasks"], 64);
        by_input.push(json["results"].clone());
    }
    // The folder stands for its one core's binary trace.
    assert_eq!(by_input[2], by_input[1]);
    // What a shell glob adds besides the traces is refused, naming the folder.
    let out = jitter(
        &["sim", "noise/summary.svg", "--quantum", "10us", "--tasks", "4"],
        dir.path(),
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("summary") && err.contains("name the folder (noise)"),
        "{err}"
    );
}

/// The paper's figure 2 trace, at 1 GHz so that cycles are ns.
const FIG2: &str = "# pnmpi jitter trace v1\n# tsc_hz 1000000000\n\
                    10 50\n5 30\n25 20\n5 10\n15 100\n20 300\n10 20\n60 60\n5 20\n10 70\n";

#[test]
fn figure_3_through_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("fig2.txt"), FIG2).unwrap();
    // Node 1 from row 1 (130 cycles), node 2 from row 7 (165): 65 % slower.
    let out = ok(&jitter(
        &[
            "sim",
            "fig2.txt",
            "--quantum",
            "100ns",
            "--phases",
            "1",
            "--tasks",
            "2",
            "--start",
            "1,7",
        ],
        dir.path(),
    ));
    assert!(out.contains("65.000%"), "{out}");
}

#[test]
fn bad_traces_and_parameters_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let err = |args: &[&str]| {
        let out = jitter(args, dir.path());
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    std::fs::write(dir.path().join("empty.txt"), "").unwrap();
    let e = err(&["sim", "empty.txt", "--quantum", "1us"]);
    assert!(e.contains("empty.txt: byte 0: no noise rows"), "{e}");
    std::fs::write(dir.path().join("bad.txt"), "100 5\n200 x\n").unwrap();
    let e = err(&["sim", "bad.txt", "--quantum", "1us"]);
    assert!(e.contains("bad.txt: line 2: `200 x`"), "{e}");
    std::fs::write(dir.path().join("fig2.txt"), FIG2).unwrap();
    let e = err(&["sim", "fig2.txt", "--quantum", "1ms"]);
    assert!(
        e.contains("fig2.txt: the trace covers 845 ns, less than one quantum"),
        "{e}"
    );
    let e = err(&["sim", "fig2.txt", "--quantum", "10ns", "--mode", "cosched"]);
    assert!(e.contains("--window"), "{e}");
    let e = err(&["sim", "missing.txt", "--quantum", "10ns"]);
    assert!(e.contains("missing.txt"), "{e}");
}
