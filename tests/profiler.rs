//! The `profiler` module (modules/profiler) under real mpirun: exact call
//! counts, computation phases in the right bin of the granularity
//! distribution, the BCS-MPI accuracy check on every rank, two call sites
//! of MPI_Send told apart with their file and line, none of the tracer's
//! own calls below it nor any of its own in a module below, and its
//! overhead benchmarks (ignored by
//! default; see docs/performance.md).

use crate::common;
use crate::counting;
use common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// libprofiler.so, built with the workspace.
fn profiler() -> PathBuf {
    built("libprofiler.so")
}

fn built(name: &str) -> PathBuf {
    let lib = target_dir().join(name);
    assert!(
        lib.is_file(),
        "{} missing: run `cargo build --release --workspace` first",
        lib.display()
    );
    lib
}

/// What prof_phases.c does on each rank (see its header).
const APP_CALLS: [(&str, u64); 7] = [
    ("MPI_Init", 1),
    ("MPI_Comm_rank", 1),
    ("MPI_Comm_size", 1),
    ("MPI_Barrier", 5),
    ("MPI_Send", 5),
    ("MPI_Recv", 5),
    ("MPI_Allreduce", 1),
];
/// Its computation phases per rank, and their length in ms.
const PHASES: u64 = 5;
const PHASE_MS: f64 = 20.0;

/// A finished profiled run: its case (kept for its folder) and report.
struct Profiled {
    case: Case,
    text: String,
    run: Run,
}

impl Profiled {
    /// The finished `run` of `case`, with the report it wrote to
    /// profile.txt in the case folder (see [`profiler_lines`]).
    fn read(case: Case, run: Run) -> Profiled {
        let text = std::fs::read_to_string(case.dir().join("profile.txt")).expect("profile.txt");
        Profiled { case, text, run }
    }

    /// The lines of the section whose title starts with `title`.
    fn section(&self, title: &str) -> Vec<&str> {
        let mut lines = self.text.lines();
        let head = format!("@--- {title}");
        lines
            .by_ref()
            .find(|l| l.starts_with(&head))
            .unwrap_or_else(|| panic!("no section `{title}` in the report:\n{}", self.text));
        lines.next(); // the rule under the title
        lines.take_while(|l| !l.starts_with("-----")).collect()
    }

    /// Routine -> count in a BCS-MPI primitive table (the header skipped).
    fn counts(&self, title: &str) -> BTreeMap<String, u64> {
        self.section(title)
            .iter()
            .skip(1)
            .filter(|l| l.starts_with("MPI_"))
            .map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                (f[0].to_string(), f[4].parse().expect("count"))
            })
            .collect()
    }

    /// The fields of a row of a primitive table, e.g. "Comp Granularity".
    fn row(&self, title: &str, name: &str) -> Vec<f64> {
        let line = self
            .section(title)
            .into_iter()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no row {name} in {title}"));
        line[name.len()..]
            .split_whitespace()
            .map(|f| f.parse().expect("number"))
            .collect()
    }

    /// `(low, high) -> count` of a text histogram, bounds in its unit.
    fn histogram(&self, name: &str) -> Vec<(f64, f64, u64)> {
        let dist = self.section("Distributions");
        let start = dist
            .iter()
            .position(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no distribution {name}:\n{}", self.text));
        dist[start + 1..]
            .iter()
            .take_while(|l| l.starts_with("  ["))
            .map(|l| {
                let inner = &l[l.find('[').unwrap() + 1..];
                let (low, rest) = inner.split_once(',').unwrap();
                let (high, rest) = rest.split_once(')').unwrap();
                let count = rest.split_whitespace().nth(1).unwrap();
                let high = high.trim();
                (
                    low.trim().parse().unwrap(),
                    if high == "inf" {
                        f64::INFINITY
                    } else {
                        high.parse().unwrap()
                    },
                    count.parse().unwrap(),
                )
            })
            .collect()
    }

    fn json(&self) -> PathBuf {
        self.case.dir().join("profile.json")
    }
}

/// Runs prof_phases on `np` ranks under `conf` (which names the modules;
/// the profiler's report goes to profile.txt in the case folder).
fn profile(np: usize, conf: &str) -> Profiled {
    let mut case = Case::new();
    case.conf(conf);
    let run = case.mpirun(np, &program("prof_phases", Link::Pnmpi), &[]);
    run.assert_ok();
    assert!(
        run.stdout.contains(&format!("prof_phases: size {np} sum")),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr.contains("pnmpi profiler: rank 0: wrote"),
        "{}",
        run.stderr
    );
    Profiled::read(case, run)
}

fn profiler_lines(extra: &str) -> String {
    format!(
        "module {}\nargument output profile.txt\n{extra}",
        profiler().display()
    )
}

/// Expected counts over `ranks` ranks.
fn app_counts(ranks: u64) -> BTreeMap<String, u64> {
    APP_CALLS
        .iter()
        .map(|&(r, n)| (r.to_string(), n * ranks))
        .collect()
}

#[test]
fn counts_phases_bytes_and_accuracy_are_exact() {
    let p = profile(
        2,
        &profiler_lines("argument resolution 20ms\nargument range 100ms\nargument distributions MPI_Send\n"),
    );
    // Exact counts, all ranks and each rank.
    assert_eq!(
        p.counts("Primitive statistics (BCS-MPI"),
        app_counts(2),
        "{}",
        p.text
    );
    for rank in 0..2 {
        assert_eq!(
            p.counts(&format!("Primitive statistics: rank {rank} ")),
            app_counts(1),
            "{}",
            p.text
        );
    }
    // One computation point before each call after MPI_Init and before
    // MPI_Finalize, one communication point per call.
    let calls: u64 = APP_CALLS.iter().map(|&(_, n)| n).sum::<u64>() * 2;
    let comp = p.row("Primitive statistics (BCS-MPI", "Comp Granularity");
    let comm = p.row("Primitive statistics (BCS-MPI", "Comm Overhead");
    assert_eq!(comp[3] as u64, calls, "{}", p.text);
    assert_eq!(comm[3] as u64, calls, "{}", p.text);
    assert!(comp[1] >= PHASE_MS, "longest phase {} ms", comp[1]);
    // Bins as wide as the phases (20 ms, the resolution): every gap is in
    // one, the 20 ms phases at 20 ms or above, the other gaps below but
    // for a late wake-up on a loaded machine (a process descheduled for
    // 20 ms moves a gap, or a phase, up a bin), so at most two moved.
    let hist = p.histogram("Comp Granularity");
    let total: u64 = hist.iter().map(|h| h.2).sum();
    assert_eq!(total, calls, "{hist:?}\n{}", p.text);
    assert!(
        hist.iter().all(|h| h.0 % PHASE_MS == 0.0),
        "bins not at the resolution: {hist:?}"
    );
    let long: u64 = hist.iter().filter(|h| h.0 >= PHASE_MS).map(|h| h.2).sum();
    assert!(
        (PHASES * 2..=PHASES * 2 + 2).contains(&long),
        "{long} gaps of 20 ms or more, {} phases: {hist:?}\n{}",
        PHASES * 2,
        p.text
    );
    // The accuracy check holds on every rank.
    let accuracy = p.section("Accuracy");
    assert!(
        p.text.contains("@ Accuracy check: 2 of 2 ranks within 0.01%"),
        "{}",
        accuracy.join("\n")
    );
    for line in accuracy.iter().skip(1).filter(|l| !l.starts_with('@')) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (wall, sum, error): (f64, f64, f64) = (
            f[1].parse().unwrap(),
            f[4].parse().unwrap(),
            f[5].parse().unwrap(),
        );
        assert!(error <= 0.01 && f[6] == "yes", "{line}");
        assert!((wall - sum).abs() <= wall * 1e-4, "{line}");
        assert!(wall >= PHASES as f64 * PHASE_MS / 1e3, "{line}");
    }
    // Bytes: 3 x 1024 + 2 x 512 sent per rank; sizes in their bins.
    let bytes = p.section("Bytes moved per routine");
    let send = bytes
        .iter()
        .find(|l| l.starts_with("MPI_Send "))
        .expect("MPI_Send bytes");
    assert_eq!(send.split_whitespace().nth(2), Some("8192"), "{send}");
    let sizes = p.histogram("MPI_Send message size");
    assert_eq!(sizes, vec![(0.0, 1024.0, 4), (1024.0, 2048.0, 6)], "{}", p.text);
    let latency: u64 = p.histogram("MPI_Send latency").iter().map(|h| h.2).sum();
    assert_eq!(latency, 10);
    // The mpiP time section has a row per task and the total.
    let time = p.section("MPI Time (seconds)");
    assert_eq!(time.len(), 4, "{time:?}");
    // The JSON parses and agrees; the SVG draws every distribution.
    let check = Command::new("python3")
        .arg("-c")
        .arg(
            "import json,sys; r=json.load(open(sys.argv[1])); \
             assert r['ranks']==2 and all(a['within'] for a in r['accuracy']); \
             print(sum(p['count'] for p in r['primitives'] if p['name']=='MPI_Barrier'))",
        )
        .arg(p.json())
        .output()
        .expect("python3 runs");
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&check.stdout).trim(), "10");
    let svg = std::fs::read_to_string(p.case.dir().join("profile.svg")).expect("profile.svg");
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    for title in [
        "Comp Granularity",
        "Comm Overhead",
        "MPI_Send latency",
        "MPI_Send message size",
    ] {
        assert!(svg.contains(title), "{title} missing from the SVG");
    }
}

/// The line of prof_phases.c that holds `marker`.
fn phases_line(marker: &str) -> u32 {
    marked_line("c-tests/programs/prof_phases.c", &format!("/* {marker} */"))
}

/// Four threads under MPI_THREAD_MULTIPLE (`binding.c threads 4`): every
/// call is counted once, whichever thread made it. Each worker of rank 0
/// ends on a blocking receive, whose record is still pending in that
/// thread's block when MPI_Finalize collects the profile.
#[test]
fn threads_calls_are_each_counted_once() {
    let (threads, iters) = (4u64, 300u64);
    let mut case = Case::new();
    case.conf(&profiler_lines(""));
    let args = [
        "threads".to_string(),
        threads.to_string(),
        "iters".into(),
        iters.to_string(),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = case.mpirun(2, &program("binding", Link::Pnmpi), &args);
    run.assert_ok();
    let m = threads * iters;
    for rank in 0..2 {
        assert!(
            run.stdout.contains(&format!(
                "binding: rank {rank} size 2 sent {} received {} errors 0",
                1 + m,
                1 + m
            )),
            "{}",
            run.stdout
        );
    }
    let p = Profiled::read(case, run);
    for rank in 0..2 {
        let counts = p.counts(&format!("Primitive statistics: rank {rank} "));
        for (routine, want) in [
            ("MPI_Send", 1 + m),
            ("MPI_Recv", 1 + m),
            ("MPI_Comm_rank", 1 + m),
            ("MPI_Comm_size", 1),
            ("MPI_Barrier", 1),
        ] {
            assert_eq!(
                counts.get(routine),
                Some(&want),
                "rank {rank} {routine}\n{}",
                p.text
            );
        }
    }
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(p.case.dir().join("profile.json")).expect("profile.json"),
    )
    .expect("JSON");
    for rank in json["per_rank"].as_array().expect("per_rank") {
        assert_eq!(rank["threads"].as_u64(), Some(1 + threads), "{rank}");
    }
}

#[test]
fn two_send_call_sites_are_told_apart_with_file_and_line() {
    let p = profile(2, &profiler_lines(""));
    let sites: Vec<Vec<&str>> = p
        .section("Callsites:")
        .iter()
        .skip(1)
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.last() == Some(&"Send"))
        .collect();
    assert_eq!(sites.len(), 2, "{}", p.text);
    let (a, b) = (phases_line("SITE_A"), phases_line("SITE_B"));
    let mut lines: Vec<u32> = sites.iter().map(|f| f[3].parse().unwrap()).collect();
    lines.sort_unstable();
    assert_eq!(lines, vec![a, b], "{}", p.text);
    for f in &sites {
        assert!(f[2].ends_with("prof_phases.c"), "{f:?}");
        assert_eq!(f[4], "main", "{f:?}");
    }
    // Each site's calls and bytes, over both ranks.
    let id_of = |line: u32| sites.iter().find(|f| f[3] == line.to_string()).unwrap()[0];
    let sent = p.section("Aggregate Sent Message Size");
    let row = |id: &str| -> Vec<&str> {
        sent.iter()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .find(|f| f[0] == "Send" && f[1] == id)
            .unwrap_or_else(|| panic!("no Send site {id}:\n{}", p.text))
    };
    assert_eq!(&row(id_of(a))[2..4], ["6", "6144"]);
    assert_eq!(&row(id_of(b))[2..4], ["4", "2048"]);
    let stats = p.section("Callsite Time statistics");
    for (line, count) in [(a, "6"), (b, "4")] {
        let id = id_of(line);
        assert!(
            stats.iter().any(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                f[..4] == ["Send", id, "*", count]
            }),
            "no aggregate row for site {id}:\n{}",
            p.text
        );
    }
}

#[test]
fn a_freed_datatype_s_handle_reused_for_another_type_counts_its_own_size() {
    // The profiler keeps each thread's last datatype size (as the tracer
    // does); `MPI_Type_free` must make it measure again, as the MPI may
    // hand the freed handle to the next type. typesize.c sends 12 bytes,
    // frees the type, then sends 20 bytes of a new one from the same site.
    let mut case = Case::new();
    case.conf(&profiler_lines(""));
    let run = case.mpirun(2, &program("typesize", Link::Pnmpi), &[]);
    run.assert_ok();
    assert!(run.stdout.contains("typesize: reused"), "{}", run.stdout);
    let p = Profiled::read(case, run);
    let sends: Vec<Vec<&str>> = p
        .section("Aggregate Sent Message Size")
        .iter()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.first() == Some(&"Send"))
        .collect();
    assert_eq!(sends.len(), 1, "{}", p.text);
    assert_eq!(&sends[0][2..4], ["2", "32"], "{}", p.text);
}

/// Routines and counts of the profile, from its all-ranks table.
fn routines(p: &Profiled) -> BTreeMap<String, u64> {
    p.counts("Primitive statistics (BCS-MPI")
}

/// What stacked.c calls on each rank (see its header), as the profiler
/// counts them.
const STACKED_CALLS: [(&str, u64); 11] = [
    ("MPI_Init", 1),
    ("MPI_Comm_rank", 2),
    ("MPI_Comm_size", 1),
    ("MPI_Send", 3),
    ("MPI_Recv", 3),
    ("MPI_Barrier", 2),
    ("MPI_Comm_split", 1),
    ("MPI_Comm_dup", 1),
    ("MPI_Comm_free", 2),
    ("MPI_Gatherv", 1),
    ("MPI_Allreduce", 1),
];

#[test]
fn stacked_tools_see_only_the_application_s_calls_none_of_each_other_s() {
    // The tracer above the profiler above a counting C module: the
    // tracer's set-up, clock alignment, datatype sizes and communicator
    // groups, and the profiler's communicator and report gather, all go
    // past the modules below them, straight to MPI.
    const NP: usize = 3;
    let mut case = Case::new();
    case.conf(&format!(
        "module {}\nargument outdir trace\n{}module {}\n",
        built("libtracer.so").display(),
        profiler_lines(""),
        counting::count_module("Low").display()
    ));
    let run = case.mpirun(NP, &program("stacked", Link::Pnmpi), &[]);
    run.assert_ok();
    // Rank r >= 1 ends the ring with token 2 NP + 1 + r, rank 0 with 3 NP;
    // rank r gathers r + 1 copies of r.
    let sum: usize = 3 * NP + (1..NP).map(|r| 2 * NP + 1 + r).sum::<usize>();
    let gathered: usize = (0..NP).map(|r| r * (r + 1)).sum();
    assert_eq!(
        run.lines("stacked:"),
        [format!("stacked: size {NP} sum {sum} gathered {gathered}")],
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("pnmpi tracer"), "{}", run.stderr);
    assert!(
        case.dir().join("trace/rank-00000.pnr").is_file(),
        "the tracer wrote no trace:\n{}",
        run.stderr
    );

    let p = Profiled::read(case, run);

    // The count module, at the bottom: exactly the program's calls.
    assert_eq!(
        counting::seen(&p.run, "Low"),
        counting::everywhere("Low", NP, [3, 3, 2, 2, 1], &[], false),
        "{}",
        p.run.stderr
    );

    // The profiler, in the middle: the program's routines and counts, and
    // every call site in the program.
    let want: BTreeMap<String, u64> = STACKED_CALLS
        .iter()
        .map(|&(r, n)| (r.to_string(), n * NP as u64))
        .collect();
    assert_eq!(routines(&p), want, "{}", p.text);
    let sites: Vec<&str> = p.section("Callsites:").into_iter().skip(1).collect();
    assert!(!sites.is_empty(), "{}", p.text);
    for site in sites {
        let file = site.split_whitespace().nth(2).unwrap_or("");
        assert!(
            file.ends_with("stacked.c"),
            "a call site outside the program: {site}\n{}",
            p.text
        );
    }
}

#[test]
fn a_bad_argument_stops_the_run_naming_it() {
    let mut case = Case::new();
    case.conf(&profiler_lines("argument comp_resolution soon\n"));
    let run = case.mpirun(1, &program("ring", Link::Pnmpi), &[]);
    assert!(!run.success(), "{}", run.stdout);
    assert!(
        run.stderr.contains("pnmpi profiler: ")
            && run
                .stderr
                .contains("error: argument comp_resolution: `soon` is not a duration"),
        "{}",
        run.stderr
    );
}

// ---------------------------------------------------------------------------
// Benchmarks (docs/performance.md, "## Profiler"):
//   cargo test --release --test suite -- --ignored --nocapture profiler::
// ---------------------------------------------------------------------------

/// The value after `key` in `text` (e.g. "ns_per_call 7.5").
fn value_after(text: &str, key: &str) -> f64 {
    let rest = &text[text.find(key).unwrap_or_else(|| panic!("no `{key}` in:\n{text}")) + key.len()..];
    rest.split_whitespace().next().unwrap().parse().unwrap()
}

/// Runs `exe args` on `np` ranks in a case whose configuration is `conf`;
/// returns the run and its launch-to-exit wall time.
fn timed(np: usize, exe: &Path, args: &[&str], conf: &str) -> (Run, f64) {
    timed_with(launcher(np), exe, args, conf)
}

/// [`timed`] under the launcher command `cmd` (with its own options).
fn timed_with(mut cmd: Command, exe: &Path, args: &[&str], conf: &str) -> (Run, f64) {
    let mut case = Case::new();
    case.conf(conf);
    cmd.arg(exe).args(args);
    let start = Instant::now();
    let run = case.finish(cmd);
    let wall = start.elapsed().as_secs_f64();
    run.assert_ok();
    (run, wall)
}

#[test]
#[ignore = "benchmark: run with --ignored --nocapture"]
fn profiler_overhead_bench() {
    let rounds = bench_rounds("PROF_BENCH_ROUNDS", 7);
    let setups = [
        ("no module", String::new()),
        ("empty", format!("module {}\n", empty_module().display())),
        ("profiler", profiler_lines("")),
    ];
    // 1. Added cost per profiled call: MPI_Comm_rank loop, one rank.
    let comm_rank = bench_program("bench/c/comm_rank.c", "comm_rank");
    let mut ns: Vec<Vec<f64>> = vec![Vec::new(); setups.len()];
    for i in interleaved(rounds, setups.len()) {
        // 2 million calls: 20 batches of a few ms, the fastest kept.
        let (run, _) = timed(1, &comm_rank, &["2000000"], &setups[i].1);
        ns[i].push(value_after(&run.stdout, "ns_per_call"));
    }
    let med: Vec<f64> = ns.iter_mut().map(|v| median(v)).collect();
    // median() sorted the runs: the first is the minimum.
    let min: Vec<f64> = ns.iter().map(|v| v[0]).collect();
    println!("MPI_Comm_rank, ns per call, median of {rounds} interleaved runs ({FLAVOR}):");
    for (i, (name, _)) in setups.iter().enumerate() {
        println!("  {name:<10} {:>8.2}   runs: {:?}", med[i], ns[i]);
    }
    println!(
        "  profiler - empty: {:.2} ns per call (medians), {:.2} ns (minima)",
        med[2] - med[1],
        min[2] - min[1]
    );
    // 2. Whole-run overhead: the stencil (c-tests/programs/stencil.c) at 4 ranks.
    let stencil = program("stencil", Link::Pnmpi);
    // MPICH busy-polls without yielding: 4 ranks on 2 cores run ~10x slower.
    let default_iterations = if FLAVOR == "mpich" { "200" } else { "2000" };
    let iterations = std::env::var("PROF_BENCH_ITERATIONS").unwrap_or_else(|_| default_iterations.into());
    let mut app: Vec<Vec<f64>> = vec![Vec::new(); setups.len()];
    let mut wall: Vec<Vec<f64>> = vec![Vec::new(); setups.len()];
    let mut report_ms = Vec::new();
    for i in interleaved(rounds, setups.len()) {
        let (run, w) = timed(4, &stencil, &["256", &iterations], &setups[i].1);
        app[i].push(value_after(&run.stdout, " time"));
        wall[i].push(w);
        if i == 2 {
            report_ms.push(value_after(&run.stderr, "(with .json and .svg) in"));
        }
    }
    let app_med: Vec<f64> = app.iter_mut().map(|v| median(v)).collect();
    let wall_med: Vec<f64> = wall.iter_mut().map(|v| median(v)).collect();
    println!("stencil 256 {iterations}, 4 ranks, median of {rounds} interleaved runs ({FLAVOR}):");
    for (i, (name, _)) in setups.iter().enumerate() {
        println!(
            "  {name:<10} app {:>8.4} s ({:+.2} %)   mpirun {:>8.4} s ({:+.2} %)   app runs: {:?}",
            app_med[i],
            100.0 * (app_med[i] / app_med[0] - 1.0),
            wall_med[i],
            100.0 * (wall_med[i] / wall_med[0] - 1.0),
            app[i]
        );
    }
    println!(
        "  profiler report at MPI_Finalize: {:.1} ms (median)",
        median(&mut report_ms)
    );
    // What the per-call cost alone predicts: stencil.c makes 9 calls per
    // iteration (4 Irecv, 4 Isend, Waitall) and an Allreduce every 10th.
    let calls = iterations.parse::<f64>().unwrap_or(0.0) * 9.1;
    let added_s = calls * (med[2] - med[1]).max(0.0) * 1e-9;
    println!(
        "  predicted from the per-call cost: {calls:.0} calls per rank x {:.2} ns = {:.3} ms, {:.3} % of {:.4} s",
        med[2] - med[1],
        added_s * 1e3,
        100.0 * added_s / app_med[0],
        app_med[0]
    );
}

/// Builds `c-tests/cxx`: `libdeep.so` (the MPI calls) and `deep_app`
/// (linked with libpnmpi), unoptimised so that every frame is real, with
/// the C++ wrapper of the MPI libpnmpi was built for.
fn deep_app(dir: &Path) -> PathBuf {
    deep_app_linked(dir, true)
}

/// The line of `deep_lib.cpp` that holds `// MARKER`.
fn deep_line(marker: &str) -> u32 {
    marked_line("c-tests/cxx/deep_lib.cpp", &format!("// {marker}"))
}

/// The A/B benchmark's premise (`deep_app ab`): the blocks that call
/// `PMPI_` pass every tool by, the blocks that call `MPI_` reach them, and
/// both exchange the token.
#[test]
fn deep_app_ab_blocks_reach_the_tools_only_through_mpi() {
    let mut case = Case::new();
    let app = deep_app(case.dir());
    case.conf(&profiler_lines(""));
    // 2 x 2 + 1 blocks of 100 rounds: 2 through the tools, 3 native.
    let run = case.mpirun(2, &app, &["ab", "2", "100", "5"]);
    run.assert_ok();
    assert!(
        run.stdout
            .contains("deep_app: ab blocks 2 rounds 100 depth 5 token 500"),
        "{}",
        run.stdout
    );
    let pct = value_after(&run.stdout, "ab_tools_over_native_pct");
    assert!(pct.is_finite(), "{}", run.stdout);
    let p = Profiled::read(case, run);
    let counts = p.counts("Primitive statistics (BCS-MPI");
    // 200 rounds through the tools, a send and a receive per rank each.
    assert_eq!(counts.get("MPI_Send"), Some(&400), "{}", p.text);
    assert_eq!(counts.get("MPI_Recv"), Some(&400), "{}", p.text);
}

/// The benchmarks' floor module (c-tests/modules/floor.c, `c-write`)
/// records each call of the tool blocks once, with its peer, and writes
/// every record out.
#[test]
fn the_floor_module_writes_a_record_of_each_call_it_wraps() {
    let mut case = Case::new();
    let app = deep_app(case.dir());
    let floor = module("floor", "floor_write", &["FLOOR_WRITE"]);
    case.conf(&format!("module {}\n", floor.display()));
    let run = case.mpirun(2, &app, &["ab", "2", "100", "5"]);
    run.assert_ok();
    for rank in 0..2i32 {
        let raw = std::fs::read(case.dir().join(format!("floor-{rank}.raw"))).expect("the floor's file");
        // 200 rounds through the tools, a send and a receive each: 24 bytes a call.
        assert_eq!(raw.len(), 400 * 24, "rank {rank}");
        for r in raw.chunks(24) {
            let word = |at: usize| u64::from_le_bytes(r[at..at + 8].try_into().unwrap());
            let peer = i32::from_le_bytes(r[16..20].try_into().unwrap());
            assert!(word(8) >= word(0), "rank {rank}: a call ends before it starts");
            assert_eq!(peer, 1 - rank, "rank {rank}");
        }
    }
}

#[test]
fn call_sites_deep_in_a_cxx_shared_library_name_its_lines_first_and_below_the_tracer() {
    let tracer = built("libtracer.so");
    for tracer_above in [false, true] {
        let mut case = Case::new();
        let app = deep_app(case.dir());
        let mut conf = String::new();
        if tracer_above {
            conf += &format!("module {}\nargument outdir trace\n", tracer.display());
        }
        conf += &profiler_lines("");
        case.conf(&conf);
        // 50 rounds, each MPI call 30 frames of the application's own
        // recursion and 60 of the library's below main.
        let run = case.mpirun(2, &app, &["50", "30"]);
        run.assert_ok();
        assert!(
            run.stdout.contains("deep_app: rounds 50 depth 30 token 50"),
            "{}",
            run.stdout
        );
        let p = Profiled::read(case, run);
        let mut sites: Vec<(String, u32)> = p
            .section("Callsites:")
            .iter()
            .skip(1)
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .filter(|f| matches!(f.last(), Some(&"Send") | Some(&"Recv")))
            .map(|f| (f[2].to_string(), f[3].parse().expect("a line")))
            .collect();
        sites.sort_by_key(|s| s.1);
        let mut want: Vec<u32> = ["DEEP_SEND", "DEEP_RECV", "DEEP_RECV1", "DEEP_SEND1"]
            .iter()
            .map(|m| deep_line(m))
            .collect();
        want.sort_unstable();
        assert_eq!(
            sites.iter().map(|s| s.1).collect::<Vec<_>>(),
            want,
            "tracer above: {tracer_above}\n{}",
            p.text
        );
        for (file, _) in &sites {
            assert!(file.ends_with("deep_lib.cpp"), "{file}\n{}", p.text);
        }
        // Below the tracer too: the tracer's clock alignment goes past it.
        let counts = p.counts("Primitive statistics (BCS-MPI");
        assert_eq!(counts.get("MPI_Send"), Some(&100), "{}", p.text);
        assert_eq!(counts.get("MPI_Recv"), Some(&100), "{}", p.text);
    }
}

/// The profiler's own cost per profiled call, by stack depth and by
/// position in the chain: first, below one module and below two (empty
/// modules), on the shallow `MPI_Comm_rank` loop (bench/c/comm_rank.c) and
/// on the deep C++ application's library (`deep_app bench`). Each figure
/// is the median over interleaved rounds of the profiler's run minus the
/// run with an empty module in its place, so that only the profiler's own
/// work remains.
#[test]
#[ignore = "benchmark: run with --ignored --nocapture"]
fn profiler_call_cost_by_depth_and_position_bench() {
    let rounds = bench_rounds("PROF_BENCH_ROUNDS", 5);
    let dir = tempfile::tempdir().expect("tempdir");
    let programs = [
        (
            "comm_rank.c",
            bench_program("bench/c/comm_rank.c", "comm_rank"),
            false,
        ),
        ("deep_app (C++)", deep_app(dir.path()), true),
    ];
    let empty = format!("module {}\n", empty_module().display());
    println!("profiler cost per call, ns, median of {rounds} interleaved rounds ({FLAVOR}):");
    println!("program          depth  position   profiler     empty   profiler - empty");
    for (name, exe, deep) in &programs {
        for depth in [5, 50] {
            for above in 0..3 {
                let confs = [empty.repeat(above) + &profiler_lines(""), empty.repeat(above + 1)];
                let mut ns: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
                let depth_arg = depth.to_string();
                let args: Vec<&str> = if *deep {
                    vec!["bench", "1000000", &depth_arg]
                } else {
                    vec!["2000000", &depth_arg]
                };
                for i in interleaved(rounds, 2) {
                    let (run, _) = timed(1, exe, &args, &confs[i]);
                    ns[i].push(value_after(&run.stdout, "ns_per_call"));
                }
                let [p, e] = ns.map(|mut v| median(&mut v));
                let position = ["first", "below 1", "below 2"][above];
                println!(
                    "{name:<16} {depth:>5}  {position:<8} {p:>10.2} {e:>9.2} {:>18.2}",
                    p - e
                );
            }
        }
    }
}

/// The setups the deep-application benchmarks compare: no libpnmpi
/// (`None`), then libpnmpi preloaded with each configuration.
///
/// `c-clock`, `c-record` and `c-write` are c-tests/modules/floor.c: the
/// least a tracer must do per call (two clock reads; then a raw record
/// kept; then written out), to tell what the tools cost beyond it.
fn deep_setups() -> [(&'static str, Option<String>); 8] {
    let floor =
        |name: &str, defines: &[&str]| Some(format!("module {}\n", module("floor", name, defines).display()));
    [
        ("native", None),
        ("libpnmpi", Some(String::new())),
        ("empty", Some(format!("module {}\n", empty_module().display()))),
        ("c-clock", floor("floor_clock", &[])),
        ("c-record", floor("floor_record", &["FLOOR_RECORD"])),
        ("c-write", floor("floor_write", &["FLOOR_WRITE"])),
        ("profiler", Some(profiler_lines(""))),
        (
            "tracer",
            Some(format!(
                "module {}\nargument outdir trace\n",
                built("libtracer.so").display()
            )),
        ),
    ]
}

/// Runs the deep application `app args` on 2 ranks, each bound to a core,
/// with libpnmpi preloaded under `conf` (none: natively).
fn deep_run(app: &Path, conf: Option<&str>, args: &[&str]) -> (Run, f64) {
    // Each rank on a core of its own, as for any benchmark: MPICH's
    // launcher does not bind by default, and its two busy-polling ranks
    // then land on one core or two from run to run (0.13 or 0.23 s). Open
    // MPI binds 2 ranks to cores by default.
    let mut cmd = launcher(2);
    if FLAVOR == "mpich" {
        cmd.args(["-bind-to", "core"]);
    }
    if conf.is_some() {
        // What `pnmpi run` sets, without its own exec per rank.
        let preload = target_dir().join("libpnmpi.so");
        if FLAVOR == "mpich" {
            cmd.arg("-genv").arg("LD_PRELOAD").arg(preload);
        } else {
            cmd.arg("-x").arg(format!("LD_PRELOAD={}", preload.display()));
        }
    }
    timed_with(cmd, app, args, conf.unwrap_or_default())
}

/// Whole-run overhead of the profiler and of the tracer on the deep C++
/// application (`deep_app ROUNDS 30`, 2 ranks), against the same binary
/// run alone: `mpirun` launch-to-exit wall time, median of interleaved
/// rounds. libpnmpi is preloaded (`LD_PRELOAD`, as `pnmpi run` sets it),
/// as a user who does not relink would have it; libpnmpi without modules,
/// and with the empty module, show what the chain itself costs.
///
/// Each setup also runs `deep_app 0 30`, start-up and shutdown only, so
/// that the overhead splits into what a run pays once (loading, the
/// tools' set-up, the report or the trace's last write) and what it pays
/// per round: a 0.15 s run pays the first several times over.
#[test]
#[ignore = "benchmark: run with --ignored --nocapture"]
fn deep_app_whole_run_overhead_bench() {
    let rounds = bench_rounds("PROF_BENCH_ROUNDS", 7);
    let app_rounds = std::env::var("DEEP_ROUNDS").unwrap_or_else(|_| "1000000".into());
    let dir = tempfile::tempdir().expect("tempdir");
    // One binary for every setup, libpnmpi preloaded as `pnmpi run` does:
    // a binary linked with libpnmpi has another layout, and at -O0 that
    // alone moved this run by 1 to 2 % either way.
    let app = deep_app_linked(dir.path(), false);
    let setups = deep_setups();
    let run = |i: usize, app_rounds: &str| deep_run(&app, setups[i].1.as_deref(), &[app_rounds, "30"]);
    let mut wall: Vec<Vec<f64>> = vec![Vec::new(); setups.len()];
    let mut fixed: Vec<Vec<f64>> = vec![Vec::new(); setups.len()];
    let mut loop_ns: Vec<Vec<f64>> = vec![Vec::new(); setups.len()];
    for i in interleaved(rounds, setups.len()) {
        fixed[i].push(run(i, "0").1);
        let (done, w) = run(i, &app_rounds);
        wall[i].push(w);
        loop_ns[i].push(value_after(&done.stdout, "loop_ns_per_round"));
    }
    // Each round's runs follow one another within seconds, so they share
    // the machine's state: this VM runs the same binary at one of two
    // speeds for minutes at a time (1.0 or 1.9 us a round here). The
    // median of each round's ratio to native compares runs of the same
    // state; the ratio of the medians is printed too.
    let ratios = |series: &[Vec<f64>], i: usize| -> Vec<f64> {
        (0..rounds).map(|r| series[i][r] / series[0][r]).collect()
    };
    let paired = |series: &[Vec<f64>], i: usize| 100.0 * (median(&mut ratios(series, i)) - 1.0);
    // How sure the paired median is: its 95 % interval, in % over native.
    let ci = |series: &[Vec<f64>], i: usize| {
        let (lo, hi) = median_ci95(&mut ratios(series, i));
        (100.0 * (lo - 1.0), 100.0 * (hi - 1.0))
    };
    let added_ms = |i: usize| {
        let mut d: Vec<f64> = (0..rounds).map(|r| fixed[i][r] - fixed[0][r]).collect();
        1e3 * median(&mut d)
    };
    let wall_paired: Vec<f64> = (0..setups.len()).map(|i| paired(&wall, i)).collect();
    let wall_ci: Vec<(f64, f64)> = (0..setups.len()).map(|i| ci(&wall, i)).collect();
    let loop_paired: Vec<f64> = (0..setups.len()).map(|i| paired(&loop_ns, i)).collect();
    let fixed_ms: Vec<f64> = (0..setups.len()).map(added_ms).collect();
    let loop_med: Vec<f64> = loop_ns.iter_mut().map(|v| median(v)).collect();
    let med: Vec<f64> = wall.iter_mut().map(|v| median(v)).collect();
    let native_fixed = 1e3 * median(&mut fixed[0].clone());
    println!(
        "deep_app {app_rounds} 30, 2 ranks, median of {rounds} interleaved rounds ({FLAVOR}): mpirun wall; \
         rank 0's loop alone; and `deep_app 0 30` (start-up and shutdown, native {native_fixed:.1} ms)"
    );
    println!(
        "  setup        wall  against native: paired [95 % interval], of medians     loop        paired   start+end added"
    );
    for (i, (name, _)) in setups.iter().enumerate() {
        println!(
            "  {name:<9} {:>8.4} s {:+6.2} % [{:+5.2}, {:+5.2}] {:+6.2} %   {:>8.1} ns/round {:+6.2} %   {:+6.2} ms",
            med[i],
            wall_paired[i],
            wall_ci[i].0,
            wall_ci[i].1,
            100.0 * (med[i] / med[0] - 1.0),
            loop_med[i],
            loop_paired[i],
            fixed_ms[i]
        );
    }
}

/// The tools' cost per round of the deep C++ application, A/B within one
/// run (`deep_app ab BLOCKS ROUNDS 30`): blocks of rounds that call
/// `PMPI_` (native) alternate with blocks that call `MPI_` (libpnmpi and
/// the setup's tools), and each tool block is compared with the native
/// blocks either side of it, a few ms away. Separate runs can fall into
/// different machine states (this VM runs the same ping-pong at 1.2 or
/// 2.2 us a round for minutes at a time) and each has its own library
/// layout; blocks of one run share both. Each run gives the median of its
/// blocks' ratios, and the benchmark the median of the runs, interleaved.
/// `native` runs the same binary without libpnmpi, where `MPI_` and
/// `PMPI_` are the same code: an A/A run that shows the method's own bias.
#[test]
#[ignore = "benchmark: run with --ignored --nocapture"]
fn deep_app_ab_overhead_bench() {
    let rounds = bench_rounds("PROF_BENCH_ROUNDS", 7);
    let blocks = std::env::var("AB_BLOCKS").unwrap_or_else(|_| "200".into());
    let block = std::env::var("AB_ROUNDS").unwrap_or_else(|_| "5000".into());
    let dir = tempfile::tempdir().expect("tempdir");
    let app = deep_app_linked(dir.path(), false);
    let setups = deep_setups();
    let (mut pct, mut native_ns, mut tools_ns) = (
        vec![Vec::new(); setups.len()],
        vec![Vec::new(); setups.len()],
        vec![Vec::new(); setups.len()],
    );
    for i in interleaved(rounds, setups.len()) {
        let (run, _) = deep_run(&app, setups[i].1.as_deref(), &["ab", &blocks, &block, "30"]);
        pct[i].push(value_after(&run.stdout, "ab_tools_over_native_pct"));
        native_ns[i].push(value_after(&run.stdout, "ab_native_ns_per_round"));
        tools_ns[i].push(value_after(&run.stdout, "ab_tools_ns_per_round"));
    }
    // This VM runs the ping-pong at about 1.2 or 2.2 us a round, for
    // minutes at a time, and the tools cost more in the fast mode: runs
    // whose native rounds are within 1.5 times the fastest are shown apart.
    let fastest = native_ns.iter().flatten().copied().fold(f64::INFINITY, f64::min);
    println!(
        "deep_app ab {blocks} {block} 30, 2 ranks ({FLAVOR}): tool blocks against the native blocks beside them, \
         median of {rounds} interleaved runs; `fast`: the runs whose native round took under {:.0} ns",
        1.5 * fastest
    );
    println!(
        "  setup      tools over native [95 % interval]   fast (runs)   native ns/round  tools ns/round   each run: %@native ns"
    );
    for (i, (name, _)) in setups.iter().enumerate() {
        let (lo, hi) = median_ci95(&mut pct[i].clone());
        let each: Vec<String> = pct[i]
            .iter()
            .zip(&native_ns[i])
            .map(|(p, n)| format!("{p:+.2}@{n:.0}"))
            .collect();
        let mut fast: Vec<f64> = pct[i]
            .iter()
            .zip(&native_ns[i])
            .filter(|(_, &n)| n < 1.5 * fastest)
            .map(|(&p, _)| p)
            .collect();
        let fast_median = if fast.is_empty() {
            "-".to_string()
        } else {
            format!("{:+.2} %", median(&mut fast))
        };
        println!(
            "  {name:<9} {:+7.2} % [{lo:+5.2}, {hi:+5.2}]   {fast_median:>8} ({:>2})   {:>14.1}  {:>14.1}   {}",
            median(&mut pct[i].clone()),
            fast.len(),
            median(&mut native_ns[i]),
            median(&mut tools_ns[i]),
            each.join(" ")
        );
    }
}
