//! OTF2 in and out (docs/trace-format.md, "OTF2"): real programs traced
//! under real mpirun, exported with `pnmpi trace export --format otf2`,
//! read back by the reference tools (`otf2-print`, python3-otf2); archives
//! written by python3-otf2 alone, replayed by `pnmpi sim replay` to the
//! nanosecond; and damaged archives refused with libotf2's word.

use crate::common;
use common::calls::{dump, nth};
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Debian's python, which sees python3-otf2 (a python3 first on PATH may
/// be another installation's).
const PYTHON: &str = "/usr/bin/python3";

fn pnmpi(args: &[&str], paths: &[&Path]) -> Output {
    Command::new(target_dir().join("pnmpi"))
        .args(args)
        .args(paths)
        .output()
        .expect("pnmpi runs")
}

fn ok(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn script(name: &str) -> PathBuf {
    repo().join("tests/otf2").join(name)
}

/// Traces `np` ranks of a c-tests program, merges the trace, and exports
/// it to OTF2: the case, the `.pnt` and the anchor file.
fn exported(program_name: &str, np: usize, args: &[&str]) -> (Case, PathBuf, PathBuf) {
    let (case, trace) = traced(program_name, np, args);
    let pnt = case.dir().join("trace.pnt");
    ok(&pnmpi(&["trace", "merge", "-o"], &[&pnt, &trace]), "merge");
    let dir = case.dir().join("otf2");
    let out = ok(
        &pnmpi(&["trace", "export", "--format", "otf2", "-o"], &[&dir, &pnt]),
        "export",
    );
    let anchor = dir.join("traces.otf2");
    assert!(out.contains("traces.otf2"), "{out}");
    assert!(anchor.is_file() && !case.dir().join("otf2.part").exists());
    (case, pnt, anchor)
}

/// `(routine, calls)` of the routine table of `pnmpi trace stats`, and its
/// point-to-point message count.
fn stats(trace: &Path) -> (Vec<(String, u64)>, u64) {
    let text = ok(&pnmpi(&["trace", "stats"], &[trace]), "stats");
    let messages = text
        .lines()
        .find_map(|l| l.strip_prefix("point-to-point messages "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no message count in:\n{text}"));
    let calls = text
        .lines()
        .filter(|l| l.starts_with("MPI_"))
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            Some((f.next()?.to_owned(), f.next()?.parse().ok()?))
        })
        .collect();
    (calls, messages)
}

/// Records of each kind that `otf2-print` lists.
fn printed(anchor: &Path) -> std::collections::HashMap<String, u64> {
    let out = Command::new("otf2-print")
        .arg(anchor)
        .output()
        .expect("otf2-print runs");
    let text = ok(&out, "otf2-print");
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut counts = std::collections::HashMap::new();
    for l in text.lines() {
        if let Some(record) = l.split_whitespace().next() {
            *counts.entry(record.to_owned()).or_insert(0) += 1;
        }
    }
    counts
}

fn is_collective(name: &str) -> bool {
    let base = name
        .trim_start_matches("MPI_")
        .trim_start_matches('I')
        .to_ascii_lowercase();
    [
        "barrier",
        "bcast",
        "reduce",
        "allreduce",
        "gather",
        "scatter",
        "allgather",
        "alltoall",
        "scan",
    ]
    .iter()
    .any(|c| base == *c)
}

#[test]
fn bulk_synchronous_program_reaches_otf2_print_and_python() {
    // Nonblocking ring halos, wildcard receives, allreduce, bcast and
    // barrier on a split communicator, an Iallreduce.
    let (_case, pnt, anchor) = exported("tracecheck", 4, &[]);
    let (calls, messages) = stats(&pnt);
    let n = printed(&anchor);
    let get = |k: &str| n.get(k).copied().unwrap_or(0);
    assert!(messages > 0);
    assert_eq!(get("MPI_SEND") + get("MPI_ISEND"), messages, "sends: {n:?}");
    assert_eq!(get("MPI_RECV") + get("MPI_IRECV"), messages, "receives: {n:?}");
    assert_eq!(get("MPI_ISEND"), get("MPI_ISEND_COMPLETE"));
    assert_eq!(get("MPI_IRECV"), get("MPI_IRECV_REQUEST"));
    let collectives: u64 = calls
        .iter()
        .filter(|(r, _)| is_collective(r))
        .map(|(_, c)| c)
        .sum();
    let nonblocking: u64 = calls
        .iter()
        .filter(|(r, _)| is_collective(r) && r.starts_with("MPI_I"))
        .map(|(_, c)| c)
        .sum();
    assert!(nonblocking > 0 && collectives > nonblocking, "{calls:?}");
    assert_eq!(get("MPI_COLLECTIVE_END"), collectives - nonblocking, "{n:?}");
    assert_eq!(get("MPI_COLLECTIVE_BEGIN"), collectives - nonblocking, "{n:?}");
    assert_eq!(get("NON_BLOCKING_COLLECTIVE_COMPLETE"), nonblocking, "{n:?}");
    let total: u64 = calls.iter().map(|(_, c)| c).sum();
    assert_eq!(get("ENTER"), total);
    assert_eq!(get("LEAVE"), total);
    // The reference Python bindings pair every send with its receive.
    let out = Command::new(PYTHON)
        .arg(script("check_messages.py"))
        .arg(&anchor)
        .output()
        .expect("python runs");
    let text = ok(&out, "check_messages.py");
    assert_eq!(text.trim(), format!("ok: {messages} messages matched"));
    // And our own reader gives the same statistics back.
    let (again, messages_again) = stats(&anchor);
    assert_eq!(messages_again, messages);
    let mut a = calls.clone();
    let mut b = again;
    a.sort();
    b.sort();
    assert_eq!(a, b);
}

/// Runtime (s) of `pnmpi sim replay` of `trace` on `machine`.
fn replay(trace: &Path, machine: &Path, model: &str) -> f64 {
    let json = trace.with_extension(format!("{model}.json"));
    let out = Command::new(target_dir().join("pnmpi"))
        .args(["sim", "replay"])
        .arg(trace)
        .arg("-m")
        .arg(machine)
        .args(["--model", model, "--json"])
        .arg(&json)
        .output()
        .expect("pnmpi runs");
    ok(&out, "sim replay");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    v["runtime_s"].as_f64().expect("runtime_s")
}

fn same_replay(program_name: &str, args: &[&str]) {
    let (case, pnt, anchor) = exported(program_name, 4, args);
    let example = std::fs::read_to_string(repo().join("sim/machine.example.toml")).unwrap();
    let machine = case.write("machine.toml", &format!("{example}\n[model.pmac]\n"));
    for model in ["simple", "pmac"] {
        let (ours, theirs) = (replay(&pnt, &machine, model), replay(&anchor, &machine, model));
        eprintln!("{program_name} {model}: .pnt {ours} s, OTF2 {theirs} s");
        assert!(ours > 0.0);
        assert!(
            ((ours - theirs) / ours).abs() <= 1e-9,
            "{program_name} {model}: .pnt {ours} s, OTF2 {theirs} s"
        );
    }
}

#[test]
fn replay_of_the_otf2_export_equals_the_replay_of_the_pnt() {
    same_replay("stencil", &["64", "50", "10"]);
    same_replay("tracecheck", &[]);
}

#[test]
fn archives_written_by_python_otf2_replay_to_the_nanosecond() {
    let case = Case::new();
    let out = Command::new(PYTHON)
        .arg(script("write_archives.py"))
        .arg(case.dir())
        .output()
        .expect("python runs");
    ok(&out, "write_archives.py");
    // 1 us and 1 byte/ns between the two nodes; collectives cost one
    // message time after the last member enters.
    let machine = case.write(
        "m.toml",
        "[machine]\nname = \"2 single-core nodes\"\nnodes = 2\ncores_per_node = 1\n\n\
         [network]\neager_threshold = \"64KiB\"\nlatency = \"1us\"\nbandwidth = \"1GB/s\"\n\n\
         [collectives]\nmode = \"analytic\"\nscaling = \"constant\"\n",
    );
    // Blocking (the clock starts at the end of MPI_Init): rank 0 computes
    // 1000 ns and sends 1000 B, which arrive at 1000 + 1000 + 1000 = 3000;
    // rank 1 receives them at max(2000, 3000), computes 300 ns, and sends
    // 2000 B back: they arrive at 3300 + 1000 + 2000 = 6300, when rank 0,
    // which computed 500 ns in a non-MPI region and waited since 1500,
    // finishes.
    let blocking = case.dir().join("blocking/traces.otf2");
    assert_eq!((replay(&blocking, &machine, "simple") * 1e9).round(), 6300.0);
    // Nonblocking: both post at 0; rank 1's 3000 B arrive at 4000, rank
    // 0's 4000 B at 5000. Rank 0 waits after 5000 ns of compute (done at
    // 5000), rank 1 after 1000 ns (done at 5000, when rank 0's arrive).
    // Both enter the 8-byte allreduce at 5000 and leave at
    // 5000 + 1000 + 8 = 6008; rank 0 computes 500 ns more: 6508.
    let nonblocking = case.dir().join("nonblocking/traces.otf2");
    let out = Command::new(target_dir().join("pnmpi"))
        .args(["sim", "replay"])
        .arg(&nonblocking)
        .arg("-m")
        .arg(&machine)
        .output()
        .unwrap();
    let text = ok(&out, "replay");
    assert!(text.contains("predicted runtime: 6.508 us"), "{text}");
    // The OpenMP record inside rank 0's compute is reported, not dropped.
    assert!(
        text.contains("warning: 1 OpenMP records not replayed (OmpFork 1)"),
        "{text}"
    );
    assert_eq!((replay(&nonblocking, &machine, "simple") * 1e9).round(), 6508.0);
    // One-sided, as Score-P records it: every gap between calls is 100 ns
    // of compute but rank 0's two 90 ns ones, and the window's creation,
    // fences and free are barriers (1000 ns after the last enters). From
    // the end of MPI_Init: the creation ends at 1100, the first fence at
    // 2200; rank 0's put of 1000 B at 2300 is done at 2300 + 2000 + 1000
    // (its acknowledgement) = 5300; its Rput of 500 B at 2390 is at the
    // target at 3890, when its MPI_Wait (entered at 2480) returns; the
    // closing fence waits for the put, 5300, and ends at 6300; the free
    // at 6400 ends at 7400; MPI_Finalize starts 100 ns later.
    let rma = case.dir().join("rma/traces.otf2");
    assert_eq!((replay(&rma, &machine, "simple") * 1e9).round(), 7500.0);
    // The Rput's request, completed by RmaOpCompleteNonBlocking in the
    // MPI_Wait: the wait lasts from 2480 to 3890.
    let out = Command::new(target_dir().join("pnmpi"))
        .args(["sim", "replay"])
        .arg(&rma)
        .arg("-m")
        .arg(&machine)
        .output()
        .unwrap();
    let text = ok(&out, "replay");
    let wait = text
        .lines()
        .find(|l| l.starts_with("MPI_Wait "))
        .unwrap_or_default();
    assert!(wait.contains(" 1.410 us"), "{text}");
}

#[test]
fn damaged_archives_are_refused_with_libotf2s_word() {
    let (case, pnt, anchor) = exported("tracecheck", 4, &[]);
    let check = |anchor: &Path, what: &str| {
        for args in [
            &["trace", "stats"][..],
            &["trace", "export", "--format", "chrome", "-o", "/dev/null"],
        ] {
            let out = pnmpi(args, &[anchor]);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{what}: {err}");
            assert!(
                err.contains(&anchor.display().to_string()) && err.contains("libotf2"),
                "{what}: {err}"
            );
            assert!(!err.contains("panicked"), "{what}: {err}");
        }
    };
    // An event file cut in the middle.
    let events = anchor.with_extension("").join("0.evt");
    let bytes = std::fs::read(&events).unwrap();
    std::fs::write(&events, &bytes[..bytes.len() / 2]).unwrap();
    check(&anchor, "truncated event file");
    // An anchor file that is not one.
    std::fs::write(&anchor, b"not an anchor file\n").unwrap();
    check(&anchor, "damaged anchor file");
    // A failed export leaves nothing: a folder that is not an archive is
    // refused and kept, and a folder that cannot be created leaves no `.part`.
    let keep = case.dir().join("keep");
    std::fs::create_dir(&keep).unwrap();
    std::fs::write(keep.join("notes.txt"), "mine").unwrap();
    let out = pnmpi(&["trace", "export", "--format", "otf2", "-o"], &[&keep, &pnt]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(keep.join("notes.txt")).unwrap(), "mine");
    let blocked = case.dir().join("file/otf2");
    std::fs::write(case.dir().join("file"), "a file, not a folder").unwrap();
    let out = pnmpi(&["trace", "export", "--format", "otf2", "-o"], &[&blocked, &pnt]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!blocked.exists() && !case.dir().join("file/otf2.part").exists());
}

#[test]
fn the_system_tree_names_the_hosts_the_rank_files_recorded() {
    // A tracer folder exported as it is: its rank headers name the host.
    let (case, trace) = traced("stencil", 4, &["64", "20", "10"]);
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").expect("the host name");
    let host = host.trim();
    let dir = case.dir().join("otf2");
    let text = global_definitions(&trace, &dir);
    let nodes: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("SYSTEM_TREE_NODE "))
        .collect();
    // The machine, and one node: this host, with every rank under it.
    assert_eq!(nodes.len(), 2, "{text}");
    assert!(
        nodes[1].contains(&format!("Name: \"{host}\"")) && nodes[1].contains("Class: \"node\""),
        "{text}"
    );
    assert!(!text.contains("not recorded"), "{text}");
    let ranks: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("LOCATION_GROUP "))
        .collect();
    assert_eq!(ranks.len(), 4, "{text}");
    let parent = format!("Parent: \"node::{host}\" <1>");
    assert!(ranks.iter().all(|l| l.contains(&parent)), "{text}");
    // A merged trace keeps no host names: its ranks go under one node
    // that says so.
    let pnt = case.dir().join("trace.pnt");
    ok(&pnmpi(&["trace", "merge", "-o"], &[&pnt, &trace]), "merge");
    let text = global_definitions(&pnt, &case.dir().join("otf2-merged"));
    assert!(!text.contains(&format!("\"{host}\"")), "{text}");
    let parent = "Parent: \"node::host (not recorded)\" <1>";
    let ranks = text.lines().filter(|l| l.starts_with("LOCATION_GROUP "));
    assert_eq!(ranks.filter(|l| l.contains(parent)).count(), 4, "{text}");
}

/// Exports `trace` to the OTF2 archive `dir` and returns what
/// `otf2-print -G` lists of its global definitions.
fn global_definitions(trace: &Path, dir: &Path) -> String {
    ok(
        &pnmpi(&["trace", "export", "--format", "otf2", "-o"], &[dir, trace]),
        "export",
    );
    let out = Command::new("otf2-print")
        .arg("-G")
        .arg(dir.join("traces.otf2"))
        .output()
        .expect("otf2-print runs");
    ok(&out, "otf2-print -G")
}

/// `pnmpi trace analyze --json` of `trace`.
fn analysis(trace: &Path, dir: &Path) -> serde_json::Value {
    let json = dir.join("analysis.json");
    ok(
        &pnmpi(&["trace", "analyze", "--json"], &[&json, trace]),
        "analyze",
    );
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
}

#[test]
fn wait_states_and_the_critical_path_become_metrics() {
    // Rank 0 sends 2 ms late (c-tests/programs/waits.c): rank 1 waits as
    // Late Sender, and most of the path is rank 0's spin.
    let (case, trace) = traced("waits", 2, &["sender", "2"]);
    let dir = case.dir().join("otf2");
    let args = ["trace", "export", "--format", "otf2", "--wait-states", "-o"];
    ok(&pnmpi(&args, &[&dir, &trace]), "export");
    let anchor = dir.join("traces.otf2");
    let n = printed(&anchor);
    assert!(n.get("METRIC").copied().unwrap_or(0) > 0, "{n:?}");
    let out = Command::new(PYTHON)
        .arg(script("metric_totals.py"))
        .arg(&anchor)
        .output()
        .expect("python runs");
    let totals: serde_json::Value = serde_json::from_str(&ok(&out, "metric_totals.py")).unwrap();
    // Each rank's totals are the analysis's, to the ns of each call's
    // rounding.
    let report = analysis(&trace, case.dir());
    let patterns = report["waits"]["patterns"].as_array().unwrap();
    let close = |metric: Option<f64>, seconds: f64, what: &str| {
        let got = metric.unwrap_or(0.0);
        assert!(
            (got - seconds * 1e9).abs() <= 4.0,
            "{what}: metric {got} ns, analysis {seconds} s"
        );
    };
    for r in report["waits"]["by_rank"].as_array().unwrap() {
        let rank = r["rank"].to_string();
        for (p, t) in patterns.iter().zip(r["time_s"].as_array().unwrap()) {
            let metric = totals[&rank][p.as_str().unwrap()].as_f64();
            close(metric, t.as_f64().unwrap(), &format!("rank {rank} {p}"));
        }
    }
    // Rank 1 waited from its receive's entry to rank 0's send's: the 2 ms
    // spin give or take when each rank left its "ready" exchange, as the
    // trace's own timestamps say.
    let calls = dump(&trace, case.dir());
    let send = nth(&calls[0], "MPI_Send", 0).start;
    let expected = send - nth(&calls[1], "MPI_Recv", 0).start;
    assert!(expected > 0.0, "rank 1 entered its receive after the late send");
    let late = totals["1"]["Late Sender"].as_f64().unwrap();
    assert!(
        (late - expected).abs() <= 0.01 * 2e6,
        "rank 1's Late Sender: {late} ns, the trace's {expected} ns"
    );
    for r in report["path"]["by_rank"].as_array().unwrap() {
        let rank = r["rank"].to_string();
        let on = r["compute_s"].as_f64().unwrap() + r["mpi_s"].as_f64().unwrap();
        close(
            totals[&rank]["critical path"].as_f64(),
            on,
            &format!("rank {rank} on the path"),
        );
    }
    // Metrics change nothing else: the archive analyses as the trace
    // (call sites aside: the OTF2 reader does not read them back).
    let again = analysis(&anchor, case.dir());
    for key in ["by_pattern", "by_rank", "by_routine", "total_s"] {
        assert_eq!(again["waits"][key], report["waits"][key], "{key}");
    }
    // And other formats refuse the option with the reason.
    let out = pnmpi(
        &["trace", "export", "--format", "simgrid", "--wait-states", "-o"],
        &[&case.dir().join("sg"), &trace],
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--wait-states"));
}
