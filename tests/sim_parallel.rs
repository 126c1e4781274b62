//! `mpirun -np K pnmpi sim replay`: the parallel replay under the real
//! launcher gives the serial replay's JSON, bit for bit (but for its own
//! wall time, speed, memory and the per-process peak of unmatched
//! messages), on synthetic motifs, on traces of real programs traced
//! under mpirun, and on random programs; and refuses what it cannot do
//! exactly, with the way out.

use crate::common;
use common::*;
use std::path::Path;
use std::process::Output;

/// The report without what depends on how it ran.
fn report(dir: &Path, json: &str) -> serde_json::Value {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(json)).unwrap()).unwrap();
    let o = v.as_object_mut().unwrap();
    for k in [
        "sim_wall_s",
        "events_per_s",
        "peak_in_flight",
        "peak_memory_bytes",
        "processes",
    ] {
        assert!(o.remove(k).is_some(), "{k} missing from {json}");
    }
    // Only a parallel replay has a protocol, with windows.
    if let Some(p) = o.remove("protocol") {
        assert!(p["windows"].as_u64().unwrap() > 0, "{p}");
    }
    v
}

fn parallel(np: usize, args: &[&str], dir: &Path) -> Output {
    parallel_within(np, 180, args, dir)
}

/// [`parallel`] stopped after `seconds` (for a run that must not hang).
fn parallel_within(np: usize, seconds: u32, args: &[&str], dir: &Path) -> Output {
    launcher_within(np, seconds)
        .arg(target_dir().join("pnmpi"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("mpirun runs")
}

/// Serial, then 2 and 4 processes, of `trace` on `m.toml` under `model`.
fn agree(dir: &Path, trace: &str, model: &str) {
    agree_at(dir, trace, model, &[2, 4]);
}

/// Serial, then each of `procs` processes.
fn agree_at(dir: &Path, trace: &str, model: &str, procs: &[usize]) {
    succeeded(pnmpi_cli(
        &[
            "sim",
            "replay",
            trace,
            "-m",
            "m.toml",
            "--model",
            model,
            "--json",
            "serial.json",
        ],
        dir,
    ));
    let serial = report(dir, "serial.json");
    assert!(serial["runtime_s"].as_f64().unwrap() > 0.0);
    for &np in procs {
        let json = format!("np{np}.json");
        let text = succeeded(parallel(
            np,
            &[
                "sim", "replay", trace, "-m", "m.toml", "--model", model, "--json", &json,
            ],
            dir,
        ));
        // One report, from process 0.
        assert_eq!(text.matches("predicted runtime:").count(), 1, "{text}");
        assert!(text.contains(&format!("on {np} processes")), "{text}");
        assert_eq!(report(dir, &json), serial, "{trace}, {model}, {np} processes");
    }
}

const MACHINE: &str = "[machine]\nnodes = 8\ncores_per_node = 2\n[network]\neager_threshold = \"4KiB\"\n\
    [network.intra]\nlatency = \"0.5us\"\nbandwidth = \"20GB/s\"\n\
    [network.inter]\nlatency = \"2us\"\nbandwidth = \"4GB/s\"\n\
    [model.loggp]\nL = \"2us\"\no = \"0.4us\"\ng = \"0.6us\"\nG = \"0.25ns\"\n";

#[test]
fn motifs_replay_in_parallel_bit_for_bit() {
    let case = Case::new();
    let dir = case.dir();
    case.write("m.toml", MACHINE);
    for motif in ["halo3d", "sweep3d", "random", "alltoall"] {
        let pnt = format!("{motif}.pnt");
        synth(
            dir,
            motif,
            13,
            10,
            &["--bytes", "6KiB", "--allreduce-every", "3"],
            &pnt,
        );
        agree(dir, &pnt, "simple");
    }
    // A tracer folder: each process reads its own ranks' files.
    synth(dir, "halo2d", 12, 8, &["--folder"], "folder");
    agree(dir, "folder", "loggp");
}

/// Real programs' traces, merged (a `.pnt` numbers communicators once
/// for all processes): wildcards, split-communicator and nonblocking
/// collectives, random sizes on both sides of the threshold.
#[test]
fn traces_of_real_and_random_programs_replay_in_parallel_bit_for_bit() {
    // randmix's MPI_Test loops make tens of thousands of windows, each one
    // agreement: at 4 processes on this 2-core machine MPICH's busy
    // polling turns each agreement into a scheduler time slice (5 ms), so
    // the random programs are checked at 2 processes, tracecheck and
    // rma_halo at 2 and 4.
    for (program, np, args, model, procs) in [
        ("tracecheck", 4, &[][..], "simple", &[2, 4][..]),
        // One-sided: fences, a lock epoch, a PSCW ring, a shared window.
        ("rma_halo", 4, &[][..], "simple", &[2, 4][..]),
        ("randmix", 4, &["5", "40", "all"][..], "loggp", &[2][..]),
        ("randmix", 3, &["8", "40", "p2p"][..], "simple", &[2][..]),
    ] {
        let (case, trace) = traced(program, np, args);
        case.write("m.toml", MACHINE);
        succeeded(pnmpi_cli(
            &["trace", "merge", &trace.display().to_string(), "-o", "t.pnt"],
            case.dir(),
        ));
        agree_at(case.dir(), "t.pnt", model, procs);
    }
}

/// A tracer folder whose split communicator spans processes is refused
/// with the merge to run first; world-only folders replay (above).
#[test]
fn a_folder_whose_communicators_span_processes_asks_for_a_merge() {
    let (case, trace) = traced("tracecheck", 4, &[]);
    case.write("m.toml", MACHINE);
    let out = parallel(
        2,
        &["sim", "replay", &trace.display().to_string(), "-m", "m.toml"],
        case.dir(),
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("spans processes") && err.contains("pnmpi trace merge"),
        "{err}"
    );
}

#[test]
fn a_model_without_windows_replays_in_one_engine_and_what_cannot_run_is_refused() {
    let case = Case::new();
    let dir = case.dir();
    case.write("m.toml", MACHINE);
    synth(dir, "halo2d", 4, 2, &[], "h.pnt");
    // A model whose state spans ranks cannot be cut into windows: process
    // 0 replays every rank, and the answer is the serial one.
    let out = parallel(
        2,
        &[
            "sim", "replay", "h.pnt", "-m", "m.toml", "--model", "bus", "--json", "p.json",
        ],
        dir,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("model bus cannot spread the ranks over 2 processes")
            && err.contains("process 0 replays every rank"),
        "{err}"
    );
    succeeded(pnmpi_cli(
        &[
            "sim", "replay", "h.pnt", "-m", "m.toml", "--model", "bus", "--json", "s.json",
        ],
        dir,
    ));
    let json = |f: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join(f)).expect("JSON")).expect("JSON")
    };
    assert_eq!(json("p.json")["ranks"], json("s.json")["ranks"]);
    let out = parallel(
        2,
        &["sim", "replay", "h.pnt", "-m", "m.toml", "--timeline", "t.json"],
        dir,
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--timeline is not available in a parallel replay"),
        "{err}"
    );
    assert!(!dir.join("t.json").exists());
}

/// An error met by one process only (a damaged chunk of its own ranks,
/// a deadlock that process 0 finds in the gathered figures) ends the
/// whole job with the error's exit code, where the other processes used
/// to wait for it in their next collective until killed.
#[test]
fn an_error_of_one_process_ends_the_job_with_its_exit_code() {
    let case = Case::new();
    let dir = case.dir();
    case.write("m.toml", MACHINE);
    // Two ranks, one on each process, that each wait for the other first.
    case.write("r0.txt", "0 init\n0 recv 1 0 8\n0 send 1 0 8\n0 finalize\n");
    case.write("r1.txt", "1 init\n1 recv 0 0 8\n1 send 0 0 8\n1 finalize\n");
    case.write("index.txt", "r0.txt\nr1.txt\n");
    let run = |trace: &str| parallel_within(2, 60, &["sim", "replay", trace, "-m", "m.toml"], dir);
    let out = run("index.txt");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("deadlock") && err.contains("rank 0 (thread 0)") && err.contains("rank 1 (thread 0)"),
        "{err}"
    );
    // A flipped byte in the last chunk, which only one process reads.
    synth(dir, "halo2d", 4, 50, &[], "h.pnt");
    let mut data = std::fs::read(dir.join("h.pnt")).unwrap();
    let n = stream_chunks_end(&data);
    data[n - 5] ^= 0x55;
    std::fs::write(dir.join("bad.pnt"), &data).unwrap();
    let out = run("bad.pnt");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("of 2): error: bad.pnt: byte ") && err.contains("CRC mismatch"),
        "{err}"
    );
}

/// Each process keeps its own ranks' state only, so that a parallel
/// replay fits where the serial one does not: at 131,072
/// ranks the largest process of 2 peaks at most 0.65 of the serial
/// replay's memory (each kept about 512 bytes for every rank of the
/// world: 0.74 here), 4 processes less again, and every report is the
/// serial one.
#[test]
fn memory_per_process_follows_its_own_ranks() {
    let case = Case::new();
    let dir = case.dir();
    case.write(
        "m.toml",
        "[machine]\nnodes = 8192\ncores_per_node = 16\n[network]\nlatency = \"1us\"\nbandwidth = \"10GB/s\"\n",
    );
    synth(dir, "halo3d", 131_072, 2, &["--allreduce-every", "10"], "h.pnt");
    agree(dir, "h.pnt", "simple");
    let peak = |json: &str| {
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(json)).unwrap()).unwrap();
        v["peak_memory_bytes"].as_f64().unwrap()
    };
    let (serial, np2, np4) = (peak("serial.json"), peak("np2.json"), peak("np4.json"));
    assert!(serial > 100e6, "serial peak {serial}");
    assert!(
        np2 <= 0.65 * serial,
        "np 2 peaks at {np2} bytes a process, serial at {serial}"
    );
    assert!(
        np4 < 0.8 * np2,
        "np 4 peaks at {np4} bytes a process, np 2 at {np2}"
    );
}
