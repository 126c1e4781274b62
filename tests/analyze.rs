//! `pnmpi trace analyze` on real programs under mpirun: injected waits
//! are found with their causes, critical paths equal hand computations
//! from the trace's own timestamps (`pnmpi trace dump`), and a what-if
//! predicts a rerun of the changed program.

use crate::common;
use common::calls::{dump, nth, Call};
use common::*;
use serde_json::Value;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

/// Held by each test while it runs programs: the what-if tests give each
/// rank a core of the 2-core test machine, which the other tests' ranks
/// would take.
fn cores() -> MutexGuard<'static, ()> {
    static CORES: Mutex<()> = Mutex::new(());
    CORES.lock().unwrap_or_else(|e| e.into_inner())
}

/// `pnmpi trace analyze TRACE MORE... --json` in the case folder: the report.
fn analyze(case: &Case, trace: &Path, more: &[&str]) -> Value {
    let json = case.dir().join("report.json");
    let t = trace.display().to_string();
    let j = json.display().to_string();
    let args = [
        &[
            "trace",
            "analyze",
            t.as_str(),
            "--worst",
            "100",
            "--json",
            j.as_str(),
        ][..],
        more,
    ]
    .concat();
    let text = succeeded(pnmpi_cli(&args, case.dir()));
    assert!(text.contains("critical path:"), "{text}");
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
}

/// The reported wait of `call`, if any: (pattern, seconds, cause rank,
/// cause routine).
fn wait_of(report: &Value, call: &Call) -> Option<(String, f64, u64, String)> {
    report["waits"]["worst"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["call"]["rank"] == call.rank && w["call"]["call"] == call.index)
        .map(|w| {
            (
                w["pattern"].as_str().unwrap().to_owned(),
                w["wait_s"].as_f64().unwrap(),
                w["cause"]["rank"].as_u64().unwrap(),
                w["cause"]["routine"].as_str().unwrap().to_owned(),
            )
        })
}

/// Asserts that `call` waited under `pattern` for `expected` ns (within
/// 1 % of `injected`), caused by `cause`'s (rank, routine); or, where
/// the rank itself came after the late one (`expected` <= 0: a loaded
/// machine delayed it more than the injection), that it did not wait.
fn assert_wait(report: &Value, call: &Call, pattern: &str, expected: f64, injected: f64, cause: (u64, &str)) {
    let rank = call.rank;
    let found = wait_of(report, call);
    if expected <= 0.0 {
        assert!(found.is_none(), "rank {rank} came last, yet waited: {found:?}");
        return;
    }
    let (p, s, cr, cn) = found.unwrap_or_else(|| panic!("no wait of rank {rank} in {call:?}: {report:#}"));
    assert_eq!(p, pattern, "rank {rank}'s wait in {}", call.routine);
    assert!(
        (s * 1e9 - expected).abs() <= 0.01 * injected,
        "{p} of rank {rank}: reported {s} s, expected {expected} ns (injected {injected} ns)"
    );
    assert_eq!((cr, cn.as_str()), cause, "the cause of {p} of rank {rank}");
}

/// The late rank's spin as the trace measured it: from the end of the
/// call before it (the last other rank's "ready" message) to the start of
/// its call. It must be at least the injected delay (busy-waited on the
/// clock; a loaded machine may stretch it, and the waits are checked
/// against the trace's times).
fn assert_spin(calls: &[Call], routine: &str, k: usize, injected: f64) -> f64 {
    let call = nth(calls, routine, k);
    let spin = call.start - calls[call.index - 1].end;
    assert!(
        spin >= injected,
        "rank {} spun {spin} ns for {injected} ns",
        calls[0].rank
    );
    spin
}

#[test]
fn injected_waits_are_found_with_their_causes() {
    let _cores = cores();
    // A sender 2 ms late: rank 1's MPI_Recv waits from its entry until
    // rank 0 enters MPI_Send: the 2 ms rank 0 spun after rank 1 told it
    // it was about to receive, plus the time that message took.
    let (case, trace) = traced("waits", 2, &["sender", "2"]);
    let calls = dump(&trace, case.dir());
    assert_spin(&calls[0], "MPI_Send", 0, 2e6);
    let expected = nth(&calls[0], "MPI_Send", 0).start - nth(&calls[1], "MPI_Recv", 0).start;
    let report = analyze(&case, &trace, &[]);
    let recv = nth(&calls[1], "MPI_Recv", 0);
    assert!(expected > 0.0, "rank 1 entered its receive after the late send");
    assert_wait(&report, recv, "Late Sender", expected, 2e6, (0, "MPI_Send"));

    // The same wait on the Perfetto export's "wait states" track of rank 1.
    let json = case.dir().join("waits.json");
    let args = ["trace", "export", "--format", "chrome", "--wait-states"];
    let (t, j) = (trace.display().to_string(), json.display().to_string());
    succeeded(pnmpi_cli(
        &[&args[..], &[t.as_str(), "-o", j.as_str()]].concat(),
        case.dir(),
    ));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let late = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "Late Sender" && e["pid"] == 1)
        .unwrap_or_else(|| panic!("no Late Sender slice of rank 1 in {}", json.display()));
    assert!(
        (late["dur"].as_f64().unwrap() * 1e3 - expected).abs() <= 0.01 * 2e6,
        "{late}"
    );
    assert!(
        late["args"]["detail"]
            .as_str()
            .unwrap()
            .contains("for rank 0 MPI_Send"),
        "{late}"
    );

    // A barrier the last rank reaches 3 ms late: each other rank waits
    // from its entry until the late rank's.
    collective_waits("barrier", 3e6, "MPI_Barrier", 1, 2, "Wait at Barrier", false);
    // A broadcast whose root (rank 1) comes 2 ms late.
    collective_waits("bcast", 2e6, "MPI_Bcast", 0, 1, "Late Broadcast", true);
}

/// Runs `waits MODE` on 3 ranks, rank `late` injecting `injected` ns
/// before its `k`-th call of `routine`: every other rank waits in that
/// call from its entry until the last rank's (the root's if `rooted`),
/// under `pattern`.
fn collective_waits(
    mode: &str,
    injected: f64,
    routine: &str,
    k: usize,
    late: usize,
    pattern: &str,
    rooted: bool,
) {
    let ms = (injected / 1e6).to_string();
    let (case, trace) = traced("waits", 3, &[mode, &ms]);
    let calls = dump(&trace, case.dir());
    assert_spin(&calls[late], routine, k, injected);
    let report = analyze(&case, &trace, &[]);
    // The last rank in is the injected one, unless the machine's load
    // delayed another even more: then that one is the cause (but a
    // broadcast waits for its root only).
    let last = (0..3)
        .filter(|&r| !rooted || r == late)
        .max_by(|&a, &b| {
            nth(&calls[a], routine, k)
                .start
                .total_cmp(&nth(&calls[b], routine, k).start)
        })
        .unwrap();
    let entry = nth(&calls[last], routine, k).start;
    for r in (0..3).filter(|&r| r != last) {
        let call = nth(&calls[r], routine, k);
        let expected = entry - call.start;
        assert_wait(&report, call, pattern, expected, injected, (last as u64, routine));
    }
}

/// The path's compute on each rank, and its length, ns.
fn path_of(report: &Value) -> (Vec<(u64, f64)>, f64) {
    let ranks = report["path"]["by_rank"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["rank"].as_u64().unwrap(),
                r["compute_s"].as_f64().unwrap() * 1e9,
            )
        })
        .collect();
    (ranks, report["path"]["length_s"].as_f64().unwrap() * 1e9)
}

/// Asserts the path's compute per rank and length, to 2 us (the JSON's
/// seconds are rounded; the timestamps are ns).
fn assert_path(report: &Value, expected: &[(u64, f64)], length: f64) {
    let (ranks, len) = path_of(report);
    let near = |a: f64, b: f64| (a - b).abs() < 2e3;
    assert!(
        near(len, length),
        "path length {len} ns, hand {length} ns: {report:#}"
    );
    assert_eq!(
        ranks.len(),
        expected.len(),
        "ranks on the path: {ranks:?}, hand {expected:?}"
    );
    for ((r, c), (er, ec)) in ranks.iter().zip(expected) {
        assert!(
            r == er && near(*c, *ec),
            "rank {r}: compute {c} ns on the path, hand {er}: {ec} ns"
        );
    }
}

#[test]
fn critical_paths_equal_hand_computations() {
    let _cores = cores();
    // A pipeline: rank r receives from r-1, computes, sends to r+1; the
    // last rank finalizes last. Back from there, the path takes each
    // rank's compute since its receive; a receive that waited (entered
    // before its send) hands the path to the sender at its send, else the
    // path takes the rank's compute since its MPI_Init and starts there.
    let (case, trace) = traced("paths", 4, &["pipeline"]);
    let c = dump(&trace, case.dir());
    let init_end = |r: usize| nth(&c[r], "MPI_Init", 0).end;
    let fin3 = nth(&c[3], "MPI_Finalize", 0).start;
    let (mut hand, mut r, mut until) = (Vec::new(), 3, fin3);
    let start = loop {
        if r == 0 {
            hand.push((0, until - init_end(0)));
            break init_end(0);
        }
        let recv = nth(&c[r], "MPI_Recv", 0);
        let send = nth(&c[r - 1], "MPI_Send", 0);
        if recv.start >= send.start {
            hand.push((r as u64, until - recv.end + recv.start - init_end(r)));
            break init_end(r);
        }
        hand.push((r as u64, until - recv.end));
        // (Where the ranks' clocks disagree by more than the message took,
        // the send starts after the receive ended: the path goes on from
        // the receive's end.)
        (r, until) = (r - 1, send.start.min(recv.end));
    };
    hand.reverse();
    let svg = case.dir().join("path.svg");
    let report = analyze(&case, &trace, &["--svg", &svg.display().to_string()]);
    assert_path(&report, &hand, fin3 - start);
    // The SVG draws the path (a rectangle per stretch) and the matrix.
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("critical path") && svg.contains("Late Sender"));
    assert!(svg.matches("<rect").count() >= report["path"]["by_rank"].as_array().unwrap().len());

    // Master-worker: the master sends a task to each worker, receives
    // the results in rank order, combines them and finalizes last. Back
    // from there, the path takes the master's receives until one that
    // waited for its worker; then that worker's compute, and back on the
    // master (if the worker waited for its task) or to the worker's
    // MPI_Init.
    let (case, trace) = traced("paths", 4, &["master"]);
    let c = dump(&trace, case.dir());
    let init_end = |r: usize| nth(&c[r], "MPI_Init", 0).end;
    let fin0 = nth(&c[0], "MPI_Finalize", 0).start;
    let sends_before = |k: usize| -> f64 {
        (0..k)
            .map(|j| nth(&c[0], "MPI_Send", j))
            .map(|s| s.end - s.start)
            .sum()
    };
    let (mut master, mut until) = (0.0, fin0);
    let mut hand = None;
    for k in (0..3).rev() {
        let recv = nth(&c[0], "MPI_Recv", k);
        master += until - recv.end;
        let w = k + 1;
        let (wrecv, wsend) = (nth(&c[w], "MPI_Recv", 0), nth(&c[w], "MPI_Send", 0));
        if recv.start < wsend.start {
            let task = nth(&c[0], "MPI_Send", k);
            let mut worker = wsend.start.min(recv.end) - wrecv.end;
            let start = if wrecv.start < task.start {
                master += task.start.min(wrecv.end) - init_end(0) - sends_before(k);
                init_end(0)
            } else {
                worker += wrecv.start - init_end(w);
                init_end(w)
            };
            hand = Some((vec![(0, master), (w as u64, worker)], start));
            break;
        }
        until = recv.start;
    }
    let (hand, start) = hand.unwrap_or_else(|| {
        master += until - init_end(0) - sends_before(3);
        (vec![(0, master)], init_end(0))
    });
    let report = analyze(&case, &trace, &[]);
    assert_path(&report, &hand, fin0 - start);

    // The same trace merged, and exported to OTF2, analyses the same.
    let dir = case.dir().display().to_string();
    let t = trace.display().to_string();
    let (pnt, otf2) = (format!("{dir}/m.pnt"), format!("{dir}/m-otf2"));
    succeeded(pnmpi_cli(&["trace", "merge", &t, "-o", &pnt], case.dir()));
    succeeded(pnmpi_cli(
        &["trace", "export", "--format", "otf2", &t, "-o", &otf2],
        case.dir(),
    ));
    for other in [pnt, format!("{otf2}/traces.otf2")] {
        let again = analyze(&case, Path::new(&other), &[]);
        // The OTF2 export carries no call sites (docs/trace-format.md).
        let sites = !other.ends_with(".otf2");
        for key in ["runtime_s", "waits", "path"] {
            assert_eq!(
                without_sites(&again[key], sites),
                without_sites(&report[key], sites),
                "{key} of {other}"
            );
        }
    }
}

/// `v` without its call sites (`site`, `by_site`, `sites_recorded`, at
/// any depth) unless `keep`.
fn without_sites(v: &Value, keep: bool) -> Value {
    match v {
        Value::Object(m) if !keep => Value::Object(
            m.iter()
                .filter(|(k, _)| !matches!(k.as_str(), "site" | "by_site" | "sites_recorded"))
                .map(|(k, x)| (k.clone(), without_sites(x, keep)))
                .collect(),
        ),
        Value::Array(a) if !keep => Value::Array(a.iter().map(|x| without_sites(x, keep)).collect()),
        _ => v.clone(),
    }
}

/// The stencil's iterations.
const ITERATIONS: &str = "20";

/// How far a what-if's prediction may lie from the rerun's traced span,
/// relative; no allowance for the machine's load is added. The programs'
/// compute phases are busy waits of exact wall time, with a core per rank
/// (2 ranks), so that a rerun repeats the run but for the change.
const RERUN_TOLERANCE: f64 = 0.02;

/// Traced runs of each program, and as many of its rerun, alternating.
const RUNS: usize = 5;

/// One version of a program: its arguments and environment.
type Version<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)]);

/// The least disturbed run of a program: its case, trace and report.
struct Best {
    case: Case,
    trace: std::path::PathBuf,
    report: Value,
}

/// Traces `exe` once on 2 ranks as `base` and analyses it with `what_if`
/// and `more`; asserts that the what-if, which shortens compute on the
/// path, gains: the replay with the change ends before the baseline
/// replay, and the prediction before the traced span (relations of the
/// trace's own figures; how close the prediction lies to a rerun is a
/// wall-clock figure, measured by `what_ifs_agree_with_reruns_bench`).
fn what_if_gains(exe: &Path, base: Version, what_if: &str, more: &[&str]) -> Best {
    let (case, trace) = traced_with(exe, 2, base.0, base.1);
    let args = [&["--what-if", what_if][..], more].concat();
    let report = analyze(&case, &trace, &args);
    let r = &report["replays"];
    let p = &r["what_if"][0];
    assert_eq!(p["change"], what_if, "{report:#}");
    let (baseline, replay) = (r["baseline_s"].as_f64().unwrap(), p["replay_s"].as_f64().unwrap());
    let gain = p["gain_s"].as_f64().unwrap();
    assert!(0.0 < replay && replay < baseline, "{r:#}");
    assert!((gain - (baseline - replay)).abs() < 1e-9, "{r:#}");
    let (span, predicted) = (
        report["runtime_s"].as_f64().unwrap(),
        p["runtime_s"].as_f64().unwrap(),
    );
    assert!((predicted - (span - gain)).abs() < 1e-9, "{report:#}");
    Best { case, trace, report }
}

/// Runs `exe` on 2 ranks as `base` and as `changed` (the program's source
/// changed as `what_if` says), RUNS times each, alternating, and asserts
/// that the prediction of `what_if` from the base run's trace lies within
/// RERUN_TOLERANCE of the rerun's span (end of the first MPI_Init to the
/// start of the last MPI_Finalize, as `runtime_s` reports it). A loaded
/// machine only ever adds time to a run (a rank that waits for a core),
/// so each side is its shortest run: the base run with the shortest span
/// (analysed with `--what-if` and `more`) against the shortest rerun.
fn assert_rerun_agrees(
    name: &str,
    exe: &Path,
    base: Version,
    changed: Version,
    what_if: &str,
    more: &[&str],
) {
    let (mut best, mut rerun, mut spans): (Option<Best>, f64, Vec<(f64, f64)>) =
        (None, f64::INFINITY, Vec::new());
    let args = [&["--what-if", what_if][..], more].concat();
    for _ in 0..RUNS {
        let (case, trace) = traced_with(exe, 2, base.0, base.1);
        let report = analyze(&case, &trace, &args);
        let (case2, trace2) = traced_with(exe, 2, changed.0, changed.1);
        let again = analyze(&case2, &trace2, &[])["runtime_s"].as_f64().unwrap();
        let span = report["runtime_s"].as_f64().unwrap();
        spans.push((span, again));
        rerun = rerun.min(again);
        if best
            .as_ref()
            .is_none_or(|b| span < b.report["runtime_s"].as_f64().unwrap())
        {
            best = Some(Best { case, trace, report });
        }
    }
    let best = best.unwrap();
    let p = &best.report["replays"]["what_if"][0];
    assert_eq!(p["change"], what_if, "{:#}", best.report);
    let predicted = p["runtime_s"].as_f64().unwrap();
    let error = (predicted - rerun) / rerun;
    println!(
        "{name}, {what_if}: traced {:.4} s, predicted {predicted:.4} s, rerun {rerun:.4} s: {:+.2} % \
         (spans of the runs and reruns, s: {spans:?})",
        best.report["runtime_s"].as_f64().unwrap(),
        100.0 * error
    );
    assert!(
        error.abs() <= RERUN_TOLERANCE,
        "{name}: predicted {predicted} s for {what_if}, the rerun took {rerun} s ({:+.2} %, allowed {} %); \
         spans of the runs and reruns: {spans:?}",
        100.0 * error,
        100.0 * RERUN_TOLERANCE
    );
}

/// A stencil of 2 ranks (one core each on the test machine) whose rank 1
/// computes twice as long: rank 1 carries the path; with its compute
/// scaled to 0.8 and rerun, the run takes what the what-if predicted
/// from the first trace.
#[test]
fn stencil_path_and_what_if() {
    let _cores = cores();
    let Best { case, trace, report } = what_if_gains(
        &program("paths", Link::Pnmpi),
        (&["stencil", "1.0", ITERATIONS], &[]),
        "compute rank 1 x0.8",
        &["--opportunities", "2"],
    );
    let c = dump(&trace, case.dir());
    // Contiguous: the path is as long as from its start to its end, the
    // last MPI_Finalize, and compute plus MPI make it up.
    let p = &report["path"];
    let fin = (0..2)
        .map(|r| nth(&c[r], "MPI_Finalize", 0).start)
        .fold(0.0, f64::max);
    let origin = (0..2)
        .map(|r| nth(&c[r], "MPI_Init", 0).end)
        .fold(f64::INFINITY, f64::min);
    let (ranks, len) = path_of(&report);
    let (from, to) = (p["from"][1].as_f64().unwrap(), p["to"][1].as_f64().unwrap());
    assert!((to * 1e9 - (fin - origin)).abs() < 2e3, "{p:#}");
    assert!((len - (to - from) * 1e9).abs() < 2e3, "{p:#}");
    let sum = p["compute_s"].as_f64().unwrap() + p["mpi_s"].as_f64().unwrap();
    assert!((sum * 1e9 - len).abs() < 2e3, "{p:#}");
    // The rank that computes most, and the one whose compute makes most
    // of the path, by the trace's own times: rank 1 spins twice as long,
    // but on a busy machine a rank that lost its core computes longer in
    // the trace than it spun. Each iteration's path runs through the
    // longer of the two computes before its first MPI_Irecv.
    let gaps = |r: usize| -> Vec<f64> {
        let calls = &c[r];
        (1..calls.len())
            .map(|i| calls[i].start - calls[i - 1].end)
            .collect()
    };
    let total: Vec<f64> = (0..2).map(|r| gaps(r).iter().sum()).collect();
    let iteration = |r: usize, k: usize| {
        let i = nth(&c[r], "MPI_Irecv", 2 * k).index;
        c[r][i].start - c[r][i - 1].end
    };
    let mut on_path = [0.0f64; 2];
    for k in 0..ITERATIONS.parse().unwrap() {
        let g = [iteration(0, k), iteration(1, k)];
        let w = usize::from(g[1] >= g[0]);
        on_path[w] += g[w];
    }
    // Which of two figures is larger, when by more than 10 % (else the
    // two ranks are too close for the trace to name one).
    let larger = |v: &[f64]| (v[0].max(v[1]) > 1.1 * v[0].min(v[1])).then(|| u64::from(v[1] > v[0]));
    let most = ranks.iter().max_by(|a, b| a.1.total_cmp(&b.1)).map(|r| r.0);
    if let Some(expect) = larger(&on_path) {
        assert_eq!(
            most,
            Some(expect),
            "compute on the path per rank: {ranks:?}, the trace's {on_path:?}"
        );
    }
    if let Some(expect) = larger(&total) {
        assert_eq!(
            p["imbalance"]["max_rank"], expect,
            "{p:#}; the trace's compute {total:?}"
        );
    }
    let best = &report["replays"]["opportunities"][0];
    assert!(
        best["change"] == "compute rank 1 x0.8" || best["change"] == "compute x0.8",
        "{best:#}"
    );
}

/// NAS-like kernels whose compute phases last a fixed time (c-tests/nas's
/// NAS_PHASE_MS: the real work, then a busy wait), rank 1's 1.5 times as
/// long: `compute rank 1 x0.8` gains. CG meets in collectives
/// (MPI_Allgather, MPI_Allreduce), LU in a wavefront of MPI_Send and
/// MPI_Recv and MPI_Sendrecv face exchanges.
#[test]
fn nas_what_ifs_gain() {
    let _cores = cores();
    for (kernel, args, ms) in NAS_WHAT_IFS {
        let base: Version = (args, &[("NAS_PHASE_MS", ms), ("NAS_SLOW", "1 1.5")]);
        what_if_gains(&nas_kernel(kernel), base, "compute rank 1 x0.8", &[]);
    }
}

/// The NAS-like kernels of the what-if tests: name, arguments, phase ms.
const NAS_WHAT_IFS: [(&str, &[&str], &str); 2] = [("cg", &["12"], "3"), ("lu", &[], "1")];

/// The benchmark of the what-ifs' accuracy: each prediction against a
/// rerun of the program changed as the what-if says (the stencil with
/// rank 1's compute at 0.8; CG and LU with rank 1's phases 1.2 times as
/// long instead of 1.5), within RERUN_TOLERANCE, the shortest of RUNS
/// runs of each side (docs/analyze.md). Wall-clock figures: run it on a
/// quiet machine, `cargo test --release --test suite -- --ignored analyze::
/// --nocapture`.
#[test]
#[ignore = "benchmark: predictions against wall-clock reruns; run with --ignored --nocapture"]
fn what_ifs_agree_with_reruns_bench() {
    let _cores = cores();
    assert_rerun_agrees(
        "stencil",
        &program("paths", Link::Pnmpi),
        (&["stencil", "1.0", ITERATIONS], &[]),
        (&["stencil", "0.8", ITERATIONS], &[]),
        "compute rank 1 x0.8",
        &[],
    );
    for (kernel, args, ms) in NAS_WHAT_IFS {
        assert_rerun_agrees(
            kernel,
            &nas_kernel(kernel),
            (args, &[("NAS_PHASE_MS", ms), ("NAS_SLOW", "1 1.5")]),
            (args, &[("NAS_PHASE_MS", ms), ("NAS_SLOW", "1 1.2")]),
            "compute rank 1 x0.8",
            &[],
        );
    }
}

#[test]
fn bad_what_ifs_are_refused_with_the_reason() {
    let _cores = cores();
    let (case, trace) = traced("waits", 2, &["sender", "0.1"]);
    let t = trace.display().to_string();
    for (spec, why) in [
        ("compute site cg.f:512 x0.5", "no call site of the trace"),
        ("compute rank 7 x0.5", "ranks 0 to 1"),
        ("network x2", "not a change"),
    ] {
        let out = pnmpi_cli(&["trace", "analyze", &t, "--what-if", spec], case.dir());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{spec}: {err}");
        assert!(err.contains(why), "{spec}: {err}");
    }
}

#[test]
fn wait_states_are_named_by_call_site() {
    // A sender 20 ms late (more than a loaded machine's hiccups): the wait
    // is at the receive's line, its cause at the send's, and the path's
    // compute at the send's site.
    let _cores = cores();
    let (case, trace) = traced("waits", 2, &["sender", "20"]);
    let calls = dump(&trace, case.dir());
    // Rank 0's compute before its send: the path holds it, however late
    // a loaded machine let rank 0 leave the receive before it.
    let spin = assert_spin(&calls[0], "MPI_Send", 0, 20e6);
    let expected = nth(&calls[0], "MPI_Send", 0).start - nth(&calls[1], "MPI_Recv", 0).start;
    let src = repo().join("c-tests/programs/waits.c").display().to_string();
    let at = |tag: &str| format!("{src}:{}", marked_line("c-tests/programs/waits.c", tag));
    let (recv, send) = (at("// SITE_RECV"), at("// SITE_SEND"));
    let report = analyze(&case, &trace, &[]);
    let waits = &report["waits"];
    assert_eq!(waits["sites_recorded"], true, "{waits}");
    // Found by what they are, not by rank in the lists: on a loaded
    // machine a process descheduled on its way to the last barrier adds a
    // barrier wait that can outweigh the 20 ms one.
    let late_sender = |v: &serde_json::Value| v["pattern"].as_str() == Some("Late Sender");
    let sites = waits["by_site"].as_array().unwrap();
    let first = sites
        .iter()
        .find(|s| late_sender(s))
        .unwrap_or_else(|| panic!("{waits}"));
    assert_eq!(first["name"].as_str(), Some(recv.as_str()), "{waits}");
    let waited = first["time_s"].as_f64().unwrap() * 1e9;
    assert!((waited - expected).abs() <= 0.01 * 20e6, "{expected} ns: {waits}");
    let worst = waits["worst"].as_array().unwrap();
    let worst = worst
        .iter()
        .find(|w| late_sender(w))
        .unwrap_or_else(|| panic!("{waits}"));
    assert_eq!(worst["call"]["site"].as_str(), Some(recv.as_str()), "{worst}");
    assert_eq!(worst["cause"]["site"].as_str(), Some(send.as_str()), "{worst}");
    // The sender's 20 ms burst is on the critical path, at the send's site.
    let on_path = report["path"]["by_site"].as_array().unwrap();
    let path = on_path
        .iter()
        .find(|p| p["name"].as_str() == Some(send.as_str()))
        .unwrap_or_else(|| panic!("{}", report["path"]));
    let burst = path["time_s"].as_f64().unwrap();
    assert!(
        burst * 1e9 >= 0.95 * spin,
        "{spin} ns of compute: {}",
        report["path"]
    );
    // The site's compute, halved, gains half the burst before it (all of
    // it on the path); the opportunities try it.
    let spec = format!(
        "compute site waits.c:{} x0.5",
        marked_line("c-tests/programs/waits.c", "// SITE_SEND")
    );
    let report = analyze(&case, &trace, &["--what-if", &spec, "--opportunities", "4"]);
    let p = &report["replays"]["what_if"][0];
    let gain = p["gain_s"].as_f64().unwrap();
    assert!((gain - burst / 2.0).abs() < 0.1 * burst, "burst {burst}: {p}");
    let opportunities = report["replays"]["opportunities"].as_array().unwrap();
    assert!(
        opportunities
            .iter()
            .any(|o| o["change"].as_str() == Some(&format!("compute site {send} x0.8"))),
        "{opportunities:?}"
    );
}

/// The calls of `routine` in `pnmpi trace stats`'s table.
fn calls_of(stats: &str, routine: &str) -> u64 {
    stats
        .lines()
        .find_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some(routine)).then(|| w.next().and_then(|n| n.parse().ok()))?
        })
        .unwrap_or(0)
}

/// Polling programs: master-worker polls `MPI_Testsome` and spins on
/// `MPI_Wtime`, randmix polls `MPI_Test` among every pattern (wildcard
/// and persistent receives, cancels, probes, collectives). Their report,
/// what-ifs and opportunities included, is the same, JSON for JSON, with
/// the calls that communicate nothing folded (the default) as with each
/// kept (`--no-fold`).
#[test]
fn folded_polls_leave_the_report_as_it_was() {
    let _cores = cores();
    for (name, args, poll) in [
        ("masterworker", &["600", "5"][..], "MPI_Testsome"),
        ("randmix", &["7", "200", "all"][..], "MPI_Test"),
    ] {
        let (case, trace) = traced(name, 4, args);
        let t = trace.display().to_string();
        let stats = succeeded(pnmpi_cli(&["trace", "stats", &t], case.dir()));
        let polls = calls_of(&stats, poll);
        // How often a program polls depends on the machine and its load
        // (70 to several hundred here); every poll loop makes one at least.
        assert!(polls > 0, "{name}: {polls} calls of {poll}:\n{stats}");
        let more = ["--what-if", "compute rank 1 x0.8", "--opportunities", "2"];
        let folded = analyze(&case, &trace, &more);
        let kept = analyze(&case, &trace, &[&more[..], &["--no-fold"]].concat());
        assert_eq!(folded, kept, "{name}");
        assert!(folded["calls"].as_u64().unwrap() > polls, "{name}: {folded:#}");
        assert!(
            folded["waits"]["total_s"].as_f64().unwrap() > 0.0,
            "{name}: {folded:#}"
        );
        assert!(
            folded["path"]["length_s"].as_f64().unwrap() > 0.0,
            "{name}: {folded:#}"
        );
    }
}
