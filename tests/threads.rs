//! Four threads under MPI_THREAD_MULTIPLE call wrapped routines at once;
//! every call must pass through the whole chain, in order. Threads that
//! call MPI at once and race (`threadrace.c`) are counted exactly, per
//! thread, by the tracer (its trace, OTF2 and Chrome exports: a stream or
//! track per thread) and by the profiler (a table per thread).

use crate::common;
use common::*;
use std::collections::BTreeMap;

#[test]
fn each_threads_chain_stays_intact() {
    for m in ["A", "B", "C"] {
        seq(m, &[]);
    }
    let mut case = Case::new();
    case.conf("module seqA\nmodule seqB\nmodule seqC\n");
    let run = case.mpirun(2, &program("threads", Link::Pnmpi), &[]);
    run.assert_ok();
    assert_eq!(
        run.lines("reference"),
        [
            "reference Comm_rank: A>Comm_rank B>Comm_rank C>Comm_rank C<Comm_rank B<Comm_rank A<Comm_rank",
            "reference Send: A>Send B>Send C>Send C<Send B<Send A<Send"
        ]
    );
    // 4 threads x 2000 rounds x (Comm_rank + Send or Recv).
    let mut summary = run.lines("threads:");
    summary.sort();
    assert_eq!(
        summary,
        [
            "threads: rank 0 checked 16000 calls, 0 mismatches",
            "threads: rank 1 checked 16000 calls, 0 mismatches"
        ],
        "{}",
        run.stderr
    );
}

/// `pnmpi trace dump` of `input` (a trace folder or an OTF2 archive):
/// per (rank, thread) stream, each routine's calls.
fn calls_per_stream(
    input: &std::path::Path,
    dir: &std::path::Path,
) -> BTreeMap<(u32, u32), BTreeMap<String, usize>> {
    let out = succeeded(pnmpi_cli(&["trace", "dump", &input.display().to_string()], dir));
    let mut streams: BTreeMap<(u32, u32), BTreeMap<String, usize>> = BTreeMap::new();
    for line in out.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        let Some((rank, thread)) = w.first().and_then(|s| s.split_once('.')) else {
            continue;
        };
        let (Ok(rank), Ok(thread), Some(routine)) = (rank.parse(), thread.parse(), w.get(3)) else {
            continue;
        };
        *streams
            .entry((rank, thread))
            .or_default()
            .entry(routine.to_string())
            .or_default() += 1;
    }
    streams
}

/// Per rank, the sorted counts of `routine` over the rank's threads that
/// called it.
fn per_thread(
    streams: &BTreeMap<(u32, u32), BTreeMap<String, usize>>,
    routine: &str,
) -> BTreeMap<u32, Vec<usize>> {
    let mut out: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (&(rank, _), calls) in streams {
        if let Some(&n) = calls.get(routine) {
            out.entry(rank).or_default().push(n);
        }
    }
    for v in out.values_mut() {
        v.sort_unstable();
    }
    out
}

/// threadrace.c: 4 ring threads of 50 `MPI_Sendrecv` on each of 4 ranks,
/// then rank 0's two racing threads share 60 messages and a stop each.
fn assert_threadrace_streams(streams: &BTreeMap<(u32, u32), BTreeMap<String, usize>>, what: &str) {
    let ring = per_thread(streams, "MPI_Sendrecv");
    let want: BTreeMap<u32, Vec<usize>> = (0..4).map(|r| (r, vec![50; 4])).collect();
    assert_eq!(ring, want, "{what}: a stream per ring thread, 800 MPI_Sendrecv");
    let racers = &per_thread(streams, "MPI_Recv")[&0];
    assert_eq!(racers.len(), 2, "{what}: rank 0's racing threads {racers:?}");
    assert_eq!(racers.iter().sum::<usize>(), 62, "{what}: {racers:?}");
}

#[test]
fn racing_threads_are_traced_and_exported_one_track_per_thread() {
    let (case, trace) = traced("threadrace", 4, &[]);
    assert_threadrace_streams(&calls_per_stream(&trace, case.dir()), "trace");
    // OTF2: a location per thread, read back by the same dump.
    let otf2 = case.dir().join("otf2");
    succeeded(pnmpi_cli(
        &[
            "trace",
            "export",
            "--format",
            "otf2",
            &trace.display().to_string(),
            "-o",
            &otf2.display().to_string(),
        ],
        case.dir(),
    ));
    assert_threadrace_streams(&calls_per_stream(&otf2.join("traces.otf2"), case.dir()), "OTF2");
    // Chrome: a track (pid = rank, tid = thread) per thread.
    let json = case.dir().join("trace.json");
    succeeded(pnmpi_cli(
        &[
            "trace",
            "export",
            "--format",
            "chrome",
            &trace.display().to_string(),
            "-o",
            &json.display().to_string(),
        ],
        case.dir(),
    ));
    let events: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("trace.json")).expect("JSON");
    let events = events
        .get("traceEvents")
        .unwrap_or(&events)
        .as_array()
        .expect("an array of events")
        .clone();
    let mut tracks: BTreeMap<(u32, u32), BTreeMap<String, usize>> = BTreeMap::new();
    for e in events.iter().filter(|e| e["ph"] == "X" && e["cat"] == "mpi") {
        let (Some(pid), Some(tid), Some(name)) = (e["pid"].as_u64(), e["tid"].as_u64(), e["name"].as_str())
        else {
            continue;
        };
        let routine = if name.starts_with("MPI_") {
            name.to_string()
        } else {
            format!("MPI_{name}")
        };
        *tracks
            .entry((pid as u32, tid as u32))
            .or_default()
            .entry(routine)
            .or_default() += 1;
    }
    assert_threadrace_streams(&tracks, "Chrome");
}

#[test]
fn racing_threads_are_profiled_exactly_per_thread() {
    let mut case = Case::new();
    case.conf(&format!(
        "module {}\nargument output profile.txt\n",
        target_dir().join("libprofiler.so").display()
    ));
    let run = case.mpirun(4, &program("threadrace", Link::Pnmpi), &[]);
    run.assert_ok();
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(case.dir().join("profile.json")).expect("profile.json"),
    )
    .expect("JSON");
    let mut total = 0;
    for rank in json["per_rank"].as_array().expect("per_rank") {
        let r = rank["rank"].as_u64().expect("rank");
        let threads = rank["per_thread"].as_array().expect("per_thread");
        // The main thread, 4 ring threads and, on rank 0, 2 racing ones.
        assert_eq!(threads.len(), if r == 0 { 7 } else { 5 }, "rank {r}");
        assert_eq!(rank["threads"].as_u64(), Some(threads.len() as u64), "rank {r}");
        let count = |t: &serde_json::Value, routine: &str| -> u64 {
            t["routines"]
                .as_array()
                .expect("routines")
                .iter()
                .find(|x| x["name"] == routine)
                .and_then(|x| x["count"].as_u64())
                .unwrap_or(0)
        };
        let mut ring: Vec<u64> = threads
            .iter()
            .map(|t| count(t, "MPI_Sendrecv"))
            .filter(|&n| n > 0)
            .collect();
        ring.sort_unstable();
        assert_eq!(ring, [50; 4], "rank {r}: {threads:?}");
        total += ring.iter().sum::<u64>();
        let recv: Vec<u64> = threads
            .iter()
            .map(|t| count(t, "MPI_Recv"))
            .filter(|&n| n > 0)
            .collect();
        if r == 0 {
            assert_eq!(
                (recv.len(), recv.iter().sum::<u64>()),
                (2, 62),
                "rank 0: {recv:?}"
            );
        }
    }
    assert_eq!(total, 800);
    // The report has a table per thread of a multi-threaded rank.
    let text = std::fs::read_to_string(case.dir().join("profile.txt")).expect("profile.txt");
    for r in 0..4 {
        let threads = if r == 0 { 7 } else { 5 };
        for t in 0..threads {
            let title = format!("@--- Per-thread primitive statistics: rank {r} thread {t} ");
            assert!(text.contains(&title), "no `{title}`:\n{text}");
        }
    }
}
