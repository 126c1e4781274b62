//! `pnmpi sim replay` on a real trace: a merged `.pnt` (streamed a chunk
//! at a time) predicts exactly what its tracer folder does; a corrupt
//! trace, a bad machine file and a deadlocking trace are clear errors
//! with their exit codes.

use crate::common;
use common::*;
use std::path::{Path, PathBuf};

fn json(dir: &Path, name: &str) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join(name)).unwrap()).unwrap()
}

const MACHINE: &str = "[machine]\nnodes = 4\n[network]\nlatency = \"3us\"\nbandwidth = \"5GB/s\"\n";

fn tracecheck_case() -> (Case, PathBuf) {
    let (case, trace) = traced("tracecheck", 4, &[]);
    case.write("m.toml", MACHINE);
    (case, trace)
}

#[test]
fn a_streamed_pnt_predicts_exactly_what_its_folder_does() {
    let (case, _) = tracecheck_case();
    let dir = case.dir();
    let merged = pnmpi_cli(&["trace", "merge", "trace", "-o", "t.pnt"], dir);
    assert!(
        merged.status.success(),
        "{}",
        String::from_utf8_lossy(&merged.stderr)
    );
    for (input, out) in [("trace", "folder.json"), ("t.pnt", "pnt.json")] {
        let r = pnmpi_cli(
            &["sim", "replay", input, "-m", "m.toml", "--compare", "--json", out],
            dir,
        );
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    }
    let (mut a, mut b) = (json(dir, "folder.json"), json(dir, "pnt.json"));
    for v in [&mut a, &mut b] {
        let o = v.as_object_mut().unwrap();
        for k in ["trace", "sim_wall_s", "events_per_s", "peak_memory_bytes"] {
            o.remove(k);
        }
    }
    assert!(a["runtime_s"].as_f64().unwrap() > 0.0);
    // m.toml does not say it describes the traced machine: the traced
    // figures beside the prediction are a difference, not an error.
    assert_eq!(a["comparison"], "difference");
    assert_eq!(a, b);
    let text = pnmpi_cli(&["sim", "replay", "t.pnt", "-m", "m.toml", "--compare"], dir);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("   difference: "), "{text}");
    assert!(!text.contains("error: ") && !text.contains("   error"), "{text}");
}

#[test]
fn corrupt_traces_bad_machines_and_deadlocks_are_clear_errors() {
    let (case, _) = tracecheck_case();
    let dir = case.dir();
    assert!(pnmpi_cli(&["trace", "merge", "trace", "-o", "t.pnt"], dir)
        .status
        .success());
    // A flipped byte in the last chunk: the CRC names the file and offset.
    let mut data = std::fs::read(dir.join("t.pnt")).unwrap();
    let n = stream_chunks_end(&data);
    data[n - 5] ^= 0x55;
    std::fs::write(dir.join("bad.pnt"), &data).unwrap();
    let r = pnmpi_cli(&["sim", "replay", "bad.pnt", "-m", "m.toml"], dir);
    let e = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{e}");
    assert!(e.contains("bad.pnt: byte ") && e.contains("CRC mismatch"), "{e}");
    // A machine file with a bad value: file, line and key.
    case.write(
        "bad.toml",
        "[machine]\nnodes = 4\n[network]\nlatency = \"fast\"\nbandwidth = \"5GB/s\"\n",
    );
    let r = pnmpi_cli(&["sim", "replay", "t.pnt", "-m", "bad.toml"], dir);
    let e = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{e}");
    assert!(e.contains("bad.toml:4") && e.contains("latency"), "{e}");
    // Two ranks that each wait for the other first: exit 3, naming both.
    std::fs::write(
        dir.join("r0.txt"),
        "0 init\n0 recv 1 0 8\n0 send 1 0 8\n0 finalize\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("r1.txt"),
        "1 init\n1 recv 0 0 8\n1 send 0 0 8\n1 finalize\n",
    )
    .unwrap();
    std::fs::write(dir.join("index.txt"), "r0.txt\nr1.txt\n").unwrap();
    let r = pnmpi_cli(&["sim", "replay", "index.txt", "-m", "m.toml"], dir);
    let e = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(3), "{e}");
    assert!(
        e.contains("deadlock") && e.contains("rank 0") && e.contains("rank 1"),
        "{e}"
    );
}
