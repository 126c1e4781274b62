//! One-sided communication through the tracer and the trace tools:
//! `c-tests/programs/rma_halo.c` (a fence halo exchange with `MPI_Put`,
//! an exclusive-lock counter with `MPI_Fetch_and_op`, a PSCW ring and a
//! shared-memory window) traced on 4 ranks, merged, dumped, summarised
//! and exported to OTF2, each checked against what the program did.

use crate::common;
use common::*;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

const RANKS: i64 = 4;
const HALF: i64 = 128 * 1024;

/// One call of `pnmpi trace dump`: its routine and fields.
struct Call {
    routine: String,
    fields: HashMap<String, String>,
}

impl Call {
    fn get(&self, key: &str) -> Option<&str> {
        self.fields.get(key).map(String::as_str)
    }

    fn int(&self, key: &str) -> i64 {
        self.get(key)
            .unwrap_or_else(|| panic!("{} without {key}", self.routine))
            .parse()
            .unwrap()
    }
}

/// The traced run, merged: (case, merged trace).
fn run() -> (Case, PathBuf) {
    let (case, trace) = traced("rma_halo", RANKS as usize, &[]);
    let pnt = case.dir().join("trace.pnt");
    succeeded(pnmpi_cli(
        &[
            "trace",
            "merge",
            &trace.display().to_string(),
            "-o",
            &pnt.display().to_string(),
        ],
        case.dir(),
    ));
    (case, pnt)
}

/// The dump's window table lines and each rank's calls.
fn dump(trace: &Path, dir: &Path) -> (Vec<String>, BTreeMap<i64, Vec<Call>>) {
    let text = succeeded(pnmpi_cli(&["trace", "dump", &trace.display().to_string()], dir));
    let wins = text
        .lines()
        .filter(|l| l.starts_with("win "))
        .map(str::to_owned)
        .collect();
    let mut calls: BTreeMap<i64, Vec<Call>> = BTreeMap::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("comm") && !l.starts_with("win "))
    {
        let w: Vec<&str> = line.split_whitespace().collect();
        let rank = w[0].split('.').next().unwrap().parse().unwrap();
        let fields = w[4..]
            .iter()
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        calls.entry(rank).or_default().push(Call {
            routine: w[3].to_owned(),
            fields,
        });
    }
    (wins, calls)
}

fn of<'a>(calls: &'a [Call], routine: &str) -> Vec<&'a Call> {
    calls.iter().filter(|c| c.routine == routine).collect()
}

#[test]
fn one_sided_calls_are_traced_with_their_windows_targets_bytes_and_epochs() {
    let (case, pnt) = run();
    let (wins, calls) = dump(&pnt, case.dir());
    // Windows in creation order, as every rank created them.
    assert_eq!(wins.len(), 4, "{wins:?}");
    assert_eq!(wins[0], "win 0 allocate comm=0 members=0,1,2,3");
    assert_eq!(wins[1], "win 1 create comm=0 members=0,1,2,3");
    assert_eq!(wins[2], "win 2 create comm=0 members=0,1,2,3");
    assert!(
        wins[3].starts_with("win 3 allocate_shared comm=2 members="),
        "{wins:?}"
    );
    // The folder reads as the merged trace does.
    let folder = case.dir().join("trace");
    let (folder_wins, folder_calls) = dump(&folder, case.dir());
    assert_eq!(folder_wins, wins);
    assert_eq!(folder_calls.len(), calls.len());
    for (&rank, calls) in &calls {
        let (left, right) = ((rank + RANKS - 1) % RANKS, (rank + 1) % RANKS);
        let create = of(calls, "MPI_Win_allocate");
        assert_eq!(create.len(), 1);
        assert_eq!(
            (
                create[0].int("newwin"),
                create[0].int("bytes"),
                create[0].int("disp_unit")
            ),
            (0, 2 * HALF, 1)
        );
        // The halo: 5 epochs of a put to each neighbour, each between fences.
        let puts: Vec<&Call> = of(calls, "MPI_Put")
            .into_iter()
            .filter(|c| c.int("win") == 0)
            .collect();
        assert_eq!(puts.len(), 10, "rank {rank}");
        for (i, p) in puts.iter().enumerate() {
            assert_eq!(p.int("bytes"), HALF);
            assert_eq!(
                p.int("peer"),
                if i % 2 == 0 { right } else { left },
                "rank {rank} put {i}"
            );
        }
        let fences = of(calls, "MPI_Win_fence");
        assert_eq!(fences.len(), 10);
        let asserts: Vec<&str> = fences.iter().map(|f| f.get("assert").unwrap()).collect();
        assert_eq!(
            asserts,
            ["noprecede", "0", "0", "0", "0", "0", "0", "0", "0", "nosucceed"]
        );
        assert!(fences.iter().all(|f| f.int("win") == 0));
        // The counter: 10 exclusive locks of rank 0, each with one
        // fetch-and-add of a long.
        let locks = of(calls, "MPI_Win_lock");
        assert_eq!(locks.len(), 10);
        assert!(locks
            .iter()
            .all(|l| l.get("lock") == Some("exclusive") && l.int("peer") == 0 && l.int("win") == 1));
        assert_eq!(
            of(calls, "MPI_Win_unlock")
                .iter()
                .filter(|u| u.int("peer") == 0)
                .count(),
            10
        );
        let fops = of(calls, "MPI_Fetch_and_op");
        assert_eq!(fops.len(), 10);
        for f in &fops {
            assert_eq!(
                (f.int("peer"), f.int("bytes"), f.int("rbytes"), f.int("win")),
                (0, 8, 8, 1)
            );
            assert_eq!(f.get("op"), Some("MPI_SUM"));
        }
        // The PSCW ring: exposed to the left, accessing the right.
        let posts = of(calls, "MPI_Win_post");
        let starts = of(calls, "MPI_Win_start");
        assert_eq!((posts.len(), starts.len()), (3, 3));
        assert!(posts
            .iter()
            .all(|p| p.get("group") == Some(&left.to_string()[..]) && p.int("win") == 2));
        assert!(starts
            .iter()
            .all(|s| s.get("group") == Some(&right.to_string()[..])));
        assert_eq!(of(calls, "MPI_Win_complete").len(), 3);
        assert_eq!(of(calls, "MPI_Win_wait").len(), 3);
        let ring: Vec<&Call> = of(calls, "MPI_Put")
            .into_iter()
            .filter(|c| c.int("win") == 2)
            .collect();
        assert_eq!(ring.len(), 3);
        assert!(ring
            .iter()
            .all(|p| p.int("bytes") == 4096 && p.int("peer") == right));
        // The shared window: its segment, and each kind of operation.
        let shared = of(calls, "MPI_Win_allocate_shared");
        assert_eq!(
            (
                shared[0].int("newwin"),
                shared[0].int("bytes"),
                shared[0].int("disp_unit")
            ),
            (3, 512, 8)
        );
        let get = of(calls, "MPI_Get");
        assert_eq!(
            (get[0].int("peer"), get[0].int("bytes"), get[0].int("win")),
            (right, 512, 3)
        );
        let acc = of(calls, "MPI_Accumulate");
        assert_eq!((acc[0].int("bytes"), acc[0].get("op")), (8, Some("MPI_SUM")));
        let rput = of(calls, "MPI_Rput");
        assert_eq!((rput[0].int("peer"), rput[0].int("bytes")), (right, 8));
        assert!(rput[0].get("reqs").is_some());
        let cas = of(calls, "MPI_Compare_and_swap");
        assert_eq!((cas[0].int("bytes"), cas[0].int("rbytes")), (16, 8));
        assert_eq!(of(calls, "MPI_Win_lock_all")[0].get("assert"), Some("0"));
        assert_eq!(of(calls, "MPI_Win_flush")[0].int("peer"), right);
        assert_eq!(of(calls, "MPI_Win_free").len(), 4);
    }
}

/// `pnmpi sim replay` of the trace on a machine of 4 nodes whose links
/// move `bandwidth`: the JSON report's runtime, s, and the warnings.
fn replayed(case: &Case, pnt: &Path, bandwidth: &str) -> (f64, String) {
    case.write(
        "m.toml",
        &format!("[machine]\nnodes = 4\n[network]\nlatency = \"2us\"\nbandwidth = \"{bandwidth}\"\n"),
    );
    let out = pnmpi_cli(
        &[
            "sim",
            "replay",
            &pnt.display().to_string(),
            "-m",
            "m.toml",
            "--json",
            "r.json",
        ],
        case.dir(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    succeeded(out);
    let text = std::fs::read_to_string(case.dir().join("r.json")).expect("replay JSON");
    let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    (v["runtime_s"].as_f64().expect("runtime_s"), stderr)
}

/// The replay times the one-sided calls (none is left as local work),
/// and a network 10 times slower lengthens the run by at least what the
/// halo's puts take longer: each of its 5 fence epochs waits for a put of
/// 128 KiB at each rank's side, 1.18 ms longer at 0.1 GB/s than at 1.
#[test]
fn the_replay_times_one_sided_calls_on_the_network() {
    let (case, pnt) = run();
    let (fast, warnings) = replayed(&case, &pnt, "1GB/s");
    assert!(!warnings.contains("local work"), "{warnings}");
    let (slow, _) = replayed(&case, &pnt, "100MB/s");
    let put = |gbs: f64| HALF as f64 / (gbs * 1e9);
    let longer = 5.0 * (put(0.1) - put(1.0));
    assert!(
        slow - fast >= longer,
        "{fast} s, then {slow} s on a 10 times slower network (at least {longer} s more)"
    );
}

/// `pnmpi trace stats --json` of the trace.
fn stats_json(trace: &Path, dir: &Path) -> serde_json::Value {
    let text = succeeded(pnmpi_cli(
        &["trace", "stats", "--json", &trace.display().to_string()],
        dir,
    ));
    serde_json::from_str(&text).unwrap()
}

#[test]
fn stats_count_one_sided_bytes_per_rank_and_pair() {
    let (case, pnt) = run();
    let s = stats_json(&pnt, case.dir());
    let rma = &s["rma"];
    assert_eq!(rma["windows_created"], 16);
    // Sent: 10 halo puts, 3 ring puts, 10 fetch-and-adds, an accumulate,
    // an Rput and a compare-and-swap (origin and compare values); fetched:
    // the fetch-and-adds' results, a get of 64 longs, the swap's result.
    let sent = 10 * HALF + 3 * 4096 + 10 * 8 + 8 + 8 + 16;
    let fetched = 10 * 8 + 512 + 8;
    for r in rma["per_rank"].as_array().unwrap() {
        assert_eq!(
            (r["sent"].as_i64(), r["fetched"].as_i64()),
            (Some(sent), Some(fetched)),
            "{r}"
        );
        assert_eq!(r["calls"], 10 + 3 + 10 + 4);
    }
    let pair = |o: i64, t: i64| {
        rma["pairs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["origin"] == o && p["target"] == t)
            .unwrap_or_else(|| panic!("pair {o}->{t} in {rma}"))
            .clone()
    };
    let right = pair(0, 1);
    assert_eq!(right["calls"], 5 + 3 + 4);
    assert_eq!(right["sent"].as_i64(), Some(5 * HALF + 3 * 4096 + 8 + 8 + 16));
    assert_eq!(right["fetched"].as_i64(), Some(512 + 8));
    assert_eq!(pair(0, 3)["sent"].as_i64(), Some(5 * HALF));
    // Rank 0's own counter, and rank 1's to its left, rank 0.
    assert_eq!(pair(0, 0)["calls"], 10);
    assert_eq!(pair(1, 0)["calls"], 10 + 5);
    // The text report has the same table.
    let text = succeeded(pnmpi_cli(
        &["trace", "stats", &pnt.display().to_string()],
        case.dir(),
    ));
    assert!(
        text.contains(&format!("bytes sent {}  fetched {}", 4 * sent, 4 * fetched)),
        "{text}"
    );
    // The Chrome export names the fields.
    let json = case.dir().join("t.json");
    succeeded(pnmpi_cli(
        &[
            "trace",
            "export",
            "--format",
            "chrome",
            &pnt.display().to_string(),
            "-o",
            &json.display().to_string(),
        ],
        case.dir(),
    ));
    let chrome = std::fs::read_to_string(&json).unwrap();
    assert!(
        chrome.contains("\"op\":\"MPI_SUM\""),
        "no op in the Chrome export"
    );
    assert!(chrome.contains("\"lock\":\"exclusive\""));
    assert!(chrome.contains("\"assert\":\"noprecede\""));
}

/// Records of each kind that `otf2-print` lists.
fn printed(anchor: &Path) -> HashMap<String, u64> {
    let out = Command::new("otf2-print")
        .arg(anchor)
        .output()
        .expect("otf2-print runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut counts = HashMap::new();
    for l in text.lines() {
        if let Some(record) = l.split_whitespace().next() {
            *counts.entry(record.to_owned()).or_insert(0) += 1;
        }
    }
    counts
}

#[test]
fn the_otf2_export_writes_one_sided_records_as_score_p_does() {
    let (case, pnt) = run();
    let dir = case.dir().join("otf2");
    succeeded(pnmpi_cli(
        &[
            "trace",
            "export",
            "--format",
            "otf2",
            &pnt.display().to_string(),
            "-o",
            &dir.display().to_string(),
        ],
        case.dir(),
    ));
    let anchor = dir.join("traces.otf2");
    let n = printed(&anchor);
    let count = |k: &str| n.get(k).copied().unwrap_or(0);
    let ranks = RANKS as u64;
    // Per rank: 10 + 3 puts and an Rput; a get; 10 fetch-and-adds, an
    // accumulate and a compare-and-swap.
    assert_eq!(count("RMA_PUT"), ranks * 14, "{n:?}");
    assert_eq!(count("RMA_GET"), ranks);
    assert_eq!(count("RMA_ATOMIC"), ranks * 12);
    // Each completes at its epoch's closing call.
    assert_eq!(count("RMA_OP_COMPLETE_BLOCKING"), ranks * 27);
    // The Rput's request, completed by its MPI_Wait.
    assert_eq!(count("RMA_OP_COMPLETE_NON_BLOCKING"), ranks);
    assert_eq!(
        (count("RMA_WIN_CREATE"), count("RMA_WIN_DESTROY")),
        (ranks * 4, ranks * 4)
    );
    // Collective: 10 fences, 4 creations, 4 frees.
    assert_eq!(count("RMA_COLLECTIVE_BEGIN"), ranks * 18);
    assert_eq!(count("RMA_COLLECTIVE_END"), ranks * 18);
    // Post, start, complete and wait, 3 times.
    assert_eq!(count("RMA_GROUP_SYNC"), ranks * 12);
    // 10 locks of rank 0, and a lock of every rank by MPI_Win_lock_all.
    assert_eq!(count("RMA_REQUEST_LOCK"), ranks * (10 + ranks));
    assert_eq!(count("RMA_RELEASE_LOCK"), ranks * (10 + ranks));
    // The definitions: a window per trace window, over its communicator.
    let defs = Command::new("otf2-print")
        .args(["-G"])
        .arg(&anchor)
        .output()
        .unwrap();
    let defs = String::from_utf8_lossy(&defs.stdout);
    assert_eq!(
        defs.lines().filter(|l| l.starts_with("RMA_WIN ")).count(),
        4,
        "{defs}"
    );
    // Read back, the archive gives the trace's one-sided figures: every
    // rank's and pair's calls, bytes sent and fetched, and syncs.
    let back = stats_json(&dir, case.dir());
    assert_eq!(
        back["rma"],
        stats_json(&pnt, case.dir())["rma"],
        "read back from {}",
        dir.display()
    );
    // and its windows, their kinds and members.
    let windows = |path: &Path| -> Vec<String> {
        let text = succeeded(pnmpi_cli(
            &["trace", "dump", &path.display().to_string()],
            case.dir(),
        ));
        text.lines()
            .filter(|l| l.starts_with("win "))
            .map(str::to_owned)
            .collect()
    };
    let wins = windows(&pnt);
    assert_eq!(wins.len(), 4, "{wins:?}");
    assert_eq!(windows(&dir), wins);
}

/// The profiler's report section `title`, its rows below the header.
fn section<'a>(text: &'a str, title: &str) -> Vec<&'a str> {
    let mut lines = text.lines();
    let head = format!("@--- {title}");
    lines
        .by_ref()
        .find(|l| l.starts_with(&head))
        .unwrap_or_else(|| panic!("no section `{title}` in:\n{text}"));
    lines.next();
    lines.skip(1).take_while(|l| !l.starts_with("-----")).collect()
}

#[test]
fn the_profiler_counts_one_sided_origin_bytes_as_mpip_does() {
    let mut case = Case::new();
    case.conf(&format!(
        "module {}\nargument output profile.txt\n",
        target_dir().join("libprofiler.so").display()
    ));
    case.mpirun(RANKS as usize, &program("rma_halo", Link::Pnmpi), &[])
        .assert_ok();
    let text = std::fs::read_to_string(case.dir().join("profile.txt")).unwrap();
    // (routine, count, total) of each call site, all ranks.
    let rows: Vec<(String, u64, u64)> = section(&text, "Aggregate RMA Origin Size")
        .iter()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[0].to_owned(), f[2].parse().unwrap(), f[3].parse().unwrap())
        })
        .collect();
    let ranks = RANKS as u64;
    let half = HALF as u64;
    // The halo's two put sites come first, then the ring's.
    assert_eq!(rows[0], ("Put".into(), 5 * ranks, 5 * ranks * half), "{rows:?}");
    assert_eq!(rows[1], ("Put".into(), 5 * ranks, 5 * ranks * half));
    assert_eq!(rows[2], ("Put".into(), 3 * ranks, 3 * ranks * 4096));
    let get = rows.iter().find(|r| r.0 == "Get").unwrap();
    assert_eq!((get.1, get.2), (ranks, ranks * 512));
    let fop = rows.iter().find(|r| r.0 == "Fetch_and_op").unwrap();
    assert_eq!((fop.1, fop.2), (10 * ranks, 10 * ranks * 8));
    // One-sided bytes are not sent messages.
    let sent = section(&text, "Aggregate Sent Message Size");
    assert!(
        sent.iter()
            .all(|l| !l.starts_with("Put") && !l.starts_with("Get")),
        "{sent:?}"
    );
}

/// Each rank's end in the JSON report of `pnmpi sim replay input` on a
/// machine of 4 nodes whose links move 1 GB/s.
fn replayed_ends(case: &Case, input: &Path) -> Vec<f64> {
    replayed(case, input, "1GB/s");
    let text = std::fs::read_to_string(case.dir().join("r.json")).expect("replay JSON");
    let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let mut ends: Vec<(u64, f64)> = v["ranks"]
        .as_array()
        .expect("ranks")
        .iter()
        .map(|r| (r["rank"].as_u64().unwrap(), r["end_s"].as_f64().unwrap()))
        .collect();
    ends.sort_by_key(|&(r, _)| r);
    ends.into_iter().map(|(_, e)| e).collect()
}

/// An OTF2 archive of a one-sided program (`rma_modes.c`: fences, PSCW,
/// exclusive locks, a shared-memory window with flushes, a dynamic
/// window; `rma_halo.c`, also an `MPI_Rput` waited for), exported and
/// read back as Score-P's records, replays as its trace does: every
/// rank's end to the nanosecond, the windows, epochs, locks, flushes and
/// request forms' requests all found in the archive.
#[test]
fn an_otf2_archive_of_one_sided_calls_replays_as_its_trace() {
    for prog in ["rma_modes", "rma_halo"] {
        archive_replays_as_its_trace(prog);
    }
}

/// [`an_otf2_archive_of_one_sided_calls_replays_as_its_trace`] of `prog`.
fn archive_replays_as_its_trace(prog: &str) {
    let (case, trace) = traced(prog, RANKS as usize, &[]);
    let pnt = case.dir().join("trace.pnt");
    let (t, p) = (trace.display().to_string(), pnt.display().to_string());
    succeeded(pnmpi_cli(&["trace", "merge", &t, "-o", &p], case.dir()));
    let dir = case.dir().join("otf2");
    let d = dir.display().to_string();
    let out = pnmpi_cli(&["trace", "export", "--format", "otf2", &p, "-o", &d], case.dir());
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    succeeded(out);
    assert!(!said.contains("not in OTF2"), "{prog}: {said}");
    let from_trace = replayed_ends(&case, &pnt);
    let (_, warnings) = replayed(&case, &dir.join("traces.otf2"), "1GB/s");
    assert!(!warnings.contains("local work"), "{prog}: {warnings}");
    let from_otf2 = replayed_ends(&case, &dir.join("traces.otf2"));
    assert_eq!(from_trace.len(), RANKS as usize);
    for (r, (a, b)) in from_trace.iter().zip(&from_otf2).enumerate() {
        assert!(
            (a - b).abs() <= 1e-9,
            "{prog} rank {r}: {a} s from the trace, {b} s from its OTF2 archive"
        );
    }
}

/// Rank 0's fence ends, s, in the replay of `trace` on `machine` under
/// `model` (its `--timeline`: one process a rank).
fn fence_ends(case: &Case, trace: &Path, model: &str) -> Vec<f64> {
    let t = trace.display().to_string();
    let args = [
        "sim",
        "replay",
        &t,
        "-m",
        "ft.toml",
        "--model",
        model,
        "--timeline",
        "t.json",
    ];
    succeeded(pnmpi_cli(&args, case.dir()));
    let text = std::fs::read_to_string(case.dir().join("t.json")).expect("timeline");
    let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let events = v["traceEvents"].as_array().expect("events");
    events
        .iter()
        .filter(|e| e["name"] == "MPI_Win_fence" && e["ph"] == "X" && e["pid"] == 0)
        .map(|e| (e["ts"].as_f64().unwrap() + e["dur"].as_f64().unwrap()) * 1e-6)
        .collect()
}

/// One-sided data shares the links it crosses as messages do, under
/// `cm02` (`rma_share.c` on a 2-level fat tree of 1 GB/s links, its
/// traced computation made negligible, so that the load beside the trace
/// cannot stagger its puts): three
/// puts of 1 MiB into rank 0 at once share its link, so their fence epoch
/// lasts about 2 MiB of link time longer than under `simple` (private
/// links), while one put alone lasts as long under both.
#[test]
fn one_sided_data_shares_links_under_cm02() {
    let (case, trace) = traced("rma_share", RANKS as usize, &[]);
    case.write(
        "ft.toml",
        // The traced computation made a million times faster: the wall
        // clock's gaps between the ranks' puts (a busy machine's) shrink
        // to nothing, so that the three puts start together.
        "[machine]\nnodes = 4\ncores_per_node = 1\ncpu_ratio = 1000000\n[network]\nlatency = \"0us\"\nbandwidth = \"1GB/s\"\n\
         [network.topology]\nshape = \"fat_tree\"\ntopology = \"2;2,2;1,1;1,1\"\nbandwidth = \"1GB/s\"\n\
         latency = \"1us\"\nsharing = \"splitduplex\"\n[collectives]\nmode = \"algorithmic\"\n",
    );
    let (shared, private) = (
        fence_ends(&case, &trace, "cm02"),
        fence_ends(&case, &trace, "simple"),
    );
    assert_eq!((shared.len(), private.len()), (4, 4), "{shared:?} {private:?}");
    let epoch = |f: &[f64], i: usize| f[i] - f[i - 1];
    let link = 1048576e-9; // 1 MiB at 1 GB/s
    let (a_shared, a_private) = (epoch(&shared, 1), epoch(&private, 1));
    let (b_shared, b_private) = (epoch(&shared, 3), epoch(&private, 3));
    assert!(
        a_shared - a_private >= 1.5 * link,
        "three puts sharing rank 0's link: {a_shared} s under cm02, {a_private} s under simple"
    );
    assert!(
        (b_shared - b_private).abs() <= 0.02 * b_private,
        "one put alone: {b_shared} s under cm02, {b_private} s under simple"
    );
}
