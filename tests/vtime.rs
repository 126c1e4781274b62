//! The `vtime` module (modules/vtime) under real mpirun: a ping-pong's
//! virtual round trip is exactly twice the modelled message time (simple
//! and LogGP models), every kind of point-to-point and collective call
//! moves the clocks by exactly the model's answer (vtcheck.c), a program
//! that only computes shows its CPU time times the factor, an
//! oversubscribed stencil predicts the same time with and without a
//! background load, bad arguments and bad machine files stop the run
//! before MPI starts, and threads under MPI_THREAD_MULTIPLE run each on
//! its own clock.

use crate::common;
use common::*;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// Held by the tests that load the machine (a background load, many
/// ranks) or that count CPU time, so that they do not run beside each
/// other when the harness runs tests in parallel.
static HEAVY: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn heavy() -> std::sync::MutexGuard<'static, ()> {
    HEAVY.lock().unwrap_or_else(|e| e.into_inner())
}

/// libvtime.so, built with the workspace.
fn vtime() -> PathBuf {
    let lib = target_dir().join("libvtime.so");
    assert!(
        lib.is_file(),
        "{} missing: run `cargo build --release --workspace` first",
        lib.display()
    );
    lib
}

/// A configuration loading vtime with these `argument` lines.
fn conf(args: &[(&str, &str)]) -> String {
    let mut text = format!("module {}\n", vtime().display());
    for (k, v) in args {
        text.push_str(&format!("argument {k} {v}\n"));
    }
    text
}

/// Runs `np` ranks of `c-tests/programs/<name> args` under vtime with
/// `args` lines; returns the run and the JSON report.
fn vt_run(name: &str, np: usize, prog_args: &[&str], args: &[(&str, &str)]) -> (Run, serde_json::Value) {
    let mut case = Case::new();
    case.conf(&conf(args));
    let run = case.mpirun(np, &program(name, Link::Pnmpi), prog_args);
    run.assert_ok();
    let text = std::fs::read_to_string(case.dir().join("vtime-report.json"))
        .unwrap_or_else(|e| panic!("no report ({e}):\n{}", run.stderr));
    (run, serde_json::from_str(&text).expect("the report is JSON"))
}

fn runtime_ns(report: &serde_json::Value, rank: usize) -> f64 {
    report["per_rank"][rank]["runtime_ns"]
        .as_f64()
        .expect("runtime_ns")
}

#[test]
fn a_ping_pong_round_trip_is_twice_latency_plus_size_over_bandwidth() {
    let _heavy = heavy();
    // 5 us + 1000 B at 1 GB/s = 6 us each way, exactly.
    let (run, report) = vt_run(
        "pingpong",
        2,
        &["100", "1000"],
        &[("latency", "5us"), ("bandwidth", "1GB/s"), ("cpu_factor", "0")],
    );
    // The program's own MPI_Wtime timing, to the nanosecond.
    assert_eq!(field(&run, "pingpong:", "us_per_round"), 12.000, "{}", run.stdout);
    // 100 rounds, then an MPI_Barrier of 2 ranks: ceil(log2 2) x 5 us.
    for rank in 0..2 {
        let t = runtime_ns(&report, rank);
        assert!(
            (t - (100.0 * 12_000.0 + 5_000.0)).abs() < 1e-6,
            "rank {rank}: {t} ns"
        );
    }
    assert_eq!(report["per_rank"][0]["messages_sent"], 100);
    assert_eq!(report["per_rank"][1]["messages_received"], 100);

    // With the CPU counted, the same plus a little of the loop's own time.
    let (run, _) = vt_run(
        "pingpong",
        2,
        &["100", "1000"],
        &[("latency", "5us"), ("bandwidth", "1GB/s")],
    );
    let us = field(&run, "pingpong:", "us_per_round");
    // The loop's own CPU time is measured (about 0.12 us a round here,
    // more when other processes evict its caches): it only adds.
    assert!(us > 12.0, "{us} us per round");
}

#[test]
fn a_loggp_ping_pong_adds_the_overheads() {
    let mut case = Case::new();
    case.write(
        "m.toml",
        "[machine]\nnodes = 2\n[network]\nlatency = \"5us\"\nbandwidth = \"1GB/s\"\n\
         [model.loggp]\nL = \"5us\"\no = \"1us\"\ng = \"0ns\"\nG = \"1ns\"\n",
    );
    case.conf(&conf(&[
        ("machine", "m.toml"),
        ("model", "loggp"),
        ("cpu_factor", "0"),
    ]));
    let run = case.mpirun(2, &program("pingpong", Link::Pnmpi), &["50", "1000"]);
    run.assert_ok();
    // 2 (2o + L + (s - 1) G) = 2 (2 + 5 + 0.999) us.
    assert_eq!(field(&run, "pingpong:", "us_per_round"), 15.998, "{}", run.stdout);
}

/// A machine file's topology reaches vtime through the shared model: the
/// two ranks sit on the far corners of a 2 x 2 mesh (2 hops of 250 ns).
#[test]
fn a_topology_adds_its_hops_to_the_ping_pong() {
    for (shape, hops) in [("mesh", 2.0), ("torus", 2.0), ("ring", 1.0), ("star", 2.0)] {
        let dims = if shape == "mesh" || shape == "torus" {
            "dims = [2, 2]\n"
        } else {
            ""
        };
        let mut case = Case::new();
        case.write(
            "m.toml",
            &format!(
                "[machine]\nnodes = 4\ncores_per_node = 1\n[mapping]\nnodes = [0, 3]\n\
                 [network]\nlatency = \"5us\"\nbandwidth = \"1GB/s\"\n\
                 [network.topology]\nshape = \"{shape}\"\n{dims}hop_latency = \"250ns\"\n"
            ),
        );
        case.conf(&conf(&[("machine", "m.toml"), ("cpu_factor", "0")]));
        let run = case.mpirun(2, &program("pingpong", Link::Pnmpi), &["50", "1000"]);
        run.assert_ok();
        // 2 (5 us + 1 us + hops x 0.25 us).
        let want = 2.0 * (6.0 + hops * 0.25);
        assert_eq!(
            field(&run, "pingpong:", "us_per_round"),
            want,
            "{shape}: {}",
            run.stdout
        );
    }
}

#[test]
fn every_kind_of_call_moves_the_clocks_exactly_by_the_model() {
    for (latency, bandwidth, b_per_ns) in [("5us", "1GB/s", "1"), ("1.5us", "300MB/s", "0.3")] {
        let (run, report) = vt_run(
            "vtcheck",
            4,
            &[&format!("{}", pnmpi_sim_ns(latency)), b_per_ns],
            &[
                ("latency", latency),
                ("bandwidth", bandwidth),
                ("cpu_factor", "0"),
            ],
        );
        assert_eq!(
            run.lines("vtcheck:"),
            ["vtcheck: ok"],
            "{}\n{}",
            run.stdout,
            run.stderr
        );
        // The clocks agree after the last phase's collectives.
        let t0 = runtime_ns(&report, 0);
        for rank in 1..4 {
            assert_eq!(runtime_ns(&report, rank), t0);
        }
    }
}

/// `5us` -> 5000.
fn pnmpi_sim_ns(t: &str) -> f64 {
    let (n, scale) = if let Some(n) = t.strip_suffix("us") {
        (n, 1e3)
    } else {
        (t.strip_suffix("ns").unwrap(), 1.0)
    };
    n.parse::<f64>().unwrap() * scale
}

#[test]
fn a_program_that_only_computes_shows_its_cpu_time_times_the_factor() {
    let _heavy = heavy();
    for factor in [1.0, 2.0, 0.5] {
        let (run, report) = vt_run(
            "compute",
            2,
            &["30000000"],
            &[
                ("latency", "1us"),
                ("bandwidth", "1GB/s"),
                ("cpu_factor", &factor.to_string()),
            ],
        );
        for line in run.lines("compute:") {
            let w: Vec<&str> = line.split_whitespace().collect();
            let (wtime, cpu): (f64, f64) = (w[4].parse().unwrap(), w[6].parse().unwrap());
            // The loop's CPU time, scaled, and the few clock reads and the
            // returns around it (microseconds).
            let want = cpu * factor;
            assert!(
                (wtime - want).abs() < 1e-3 * want + 20e-6,
                "factor {factor}: virtual {wtime} s, cpu {cpu} s: {line}"
            );
        }
        let compute = report["per_rank"][0]["compute_ns"].as_f64().unwrap();
        assert!(compute > 0.0 && compute <= runtime_ns(&report, 0));
    }
}

/// Processes that keep the machine's cores busy until dropped.
struct Burners(Vec<Child>);

impl Burners {
    fn start(n: usize) -> Burners {
        Burners(
            (0..n)
                .map(|_| {
                    // Spins, and every 100,000 turns checks that this
                    // test process still lives, so that a killed test run
                    // leaves no burner behind.
                    Command::new("sh")
                        .args([
                            "-c",
                            "while kill -0 $0 2>/dev/null; do i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; done",
                            &std::process::id().to_string(),
                        ])
                        .stdout(Stdio::null())
                        .spawn()
                        .expect("sh runs")
                })
                .collect(),
        )
    }
}

impl Drop for Burners {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// One arm of [`quiet_and_loaded`]: virtual seconds of its fastest and
/// its median run, and the median wall seconds.
struct Arm {
    fastest: f64,
    median: f64,
    wall: f64,
}

/// Runs `name args` at 4 ranks on the 2 cores, then again with 2
/// processes burning both cores, `times` times in turn. (The machine may
/// be shared: taking turns keeps others' load out of the comparison.)
fn quiet_and_loaded(name: &str, prog: &[&str], args: &[(&str, &str)], times: usize) -> [Arm; 2] {
    let one = |r: serde_json::Value| {
        (
            r["virtual_runtime_s"].as_f64().unwrap(),
            r["wall_s"].as_f64().unwrap(),
        )
    };
    let (mut quiet, mut loaded) = (Vec::new(), Vec::new());
    for _ in 0..times {
        quiet.push(one(vt_run(name, 4, prog, args).1));
        let _burners = Burners::start(2);
        loaded.push(one(vt_run(name, 4, prog, args).1));
    }
    eprintln!("{name}: quiet {quiet:?}, loaded {loaded:?} (virtual s, wall s)");
    [quiet, loaded].map(|runs| {
        let (mut virt, mut wall): (Vec<f64>, Vec<f64>) = runs.into_iter().unzip();
        Arm {
            fastest: virt.iter().copied().fold(f64::INFINITY, f64::min),
            median: median(&mut virt),
            wall: median(&mut wall),
        }
    })
}

#[test]
fn time_a_rank_sleeps_is_not_compute() {
    // ring.c sleeps 2 ms between two MPI_Wtime calls: a sleeping thread
    // uses almost no CPU, however loaded the machine, so vtime's clock
    // moves by a few microseconds there, not by the 2 ms of wall time
    // (ring's own check, elapsed >= 1.9 ms, says 0). Wall time leaking
    // into the model would show here at once.
    let (run, report) = vt_run("ring", 2, &[], &[("latency", "1us"), ("bandwidth", "1GB/s")]);
    assert_eq!(
        run.lines("ring:"),
        ["ring: size 2 token 2 sum 1 wtime_ok 0"],
        "{}",
        run.stderr
    );
    for rank in 0..2 {
        let compute = report["per_rank"][rank]["compute_ns"].as_f64().unwrap();
        assert!(compute < 1e6, "rank {rank} computed {compute} ns: {report:#}");
    }
}

/// The benchmark behind docs/vtime.md's Accuracy: a prediction under
/// oversubscription and a background load, against the quiet machine's.
/// It measures CPU time against CPU time, so it is a benchmark, not a
/// test: a loaded machine moves its figures.
#[test]
#[ignore = "benchmark: CPU-time accuracy under load; run with --ignored --nocapture"]
fn oversubscription_and_a_background_load_do_not_change_the_prediction() {
    let _heavy = heavy();
    let args = [("latency", "2us"), ("bandwidth", "5GB/s")];
    // Compute-bound ranks (a dependent chain of floating-point steps, no
    // memory traffic), imbalanced and meeting in MPI_Allreduce. This VM
    // slows a whole run now and then (single quiet runs at 1.05 and 2.0
    // times the others: docs/vtime.md, Accuracy), which only ever adds
    // CPU time, so each arm's fastest run is the machine undisturbed.
    // Measured: fastest runs 0.13 to 0.76 % apart on Open MPI, 0.28 and
    // 0.31 % on MPICH, while the medians moved by up to 4.5 %; once 2.07 %
    // (Open MPI, the quiet arm's fastest run 1.3 % below its next), so
    // the bar is 3 %, where the loaded runs take 8 times the wall time.
    let [q, l] = quiet_and_loaded("imbalance", &["200", "100000", "0.5"], &args, 5);
    eprintln!(
        "imbalance, 4 ranks on 2 cores: virtual fastest {:.6} s / {:.6} s, median {:.6} s / {:.6} s; wall {:.3} s / {:.3} s (quiet / loaded)",
        q.fastest, l.fastest, q.median, l.median, q.wall, l.wall
    );
    assert!(
        (q.fastest - l.fastest).abs() < 0.03 * q.fastest,
        "imbalance: fastest virtual {} s quiet, {} s loaded",
        q.fastest,
        l.fastest
    );
    // The memory-bound stencil. Alone on the machine, Open MPI (whose
    // waiting ranks yield) measured 0.01-2.9 % apart and MPICH (busy-
    // polling) 7.6 %; with the other tests of this binary running beside
    // it, single quiet runs spread by 18 % and the medians by up to 15 %;
    // on the CI machine every loaded run took 45 % more CPU time than the
    // quiet ones (0.042 s against 0.029 s, Open MPI): with 6 runnable
    // processes on 2 cores, each compute interval after a switch first
    // refills its caches and TLB, and that counts as CPU time. The same
    // sweep of its grid, alone on a pinned core, runs 2.6 % to 80 %
    // slower from one run to the next here (bench/c/cpuspeed.c), so the
    // a 1 % bar cannot be held on such machines (docs/vtime.md,
    // Accuracy). What the test guards against is wall-clock time leaking
    // into the model, which would show the wall times' 3 to 50x: it
    // allows the loaded median up to 2.5 times the quiet one.
    let [q, l] = quiet_and_loaded("stencil", &["256", "400", "10"], &args, 3);
    eprintln!(
        "stencil, 4 ranks on 2 cores: virtual median {:.6} s / {:.6} s; wall {:.3} s / {:.3} s (quiet / loaded)",
        q.median, l.median, q.wall, l.wall
    );
    assert!(
        l.median < 2.5 * q.median && q.median < 2.5 * l.median,
        "stencil: virtual {} s quiet, {} s loaded",
        q.median,
        l.median
    );
}

#[test]
fn bad_arguments_and_machine_files_stop_the_run_before_mpi_starts() {
    let cases: [(&[(&str, &str)], &str); 6] = [
        (
            &[("latency", "5 parsecs"), ("bandwidth", "1GB/s")],
            "argument latency: unknown time unit `parsecs`",
        ),
        (&[("latency", "5us")], "argument latency without bandwidth"),
        (&[], "no target machine"),
        (
            &[("latency", "5us"), ("bandwidth", "1GB/s"), ("cpu_factor", "fast")],
            "argument cpu_factor: `fast`",
        ),
        (
            &[("latency", "5us"), ("bandwidth", "1GB/s"), ("model", "bus")],
            "argument model: `bus` needs a global view",
        ),
        (
            &[("machine", "m.toml")],
            "machine m.toml:5: latency: unknown time unit `parsecs`",
        ),
    ];
    for (args, want) in cases {
        let mut case = Case::new();
        case.write(
            "m.toml",
            "[machine]\nnodes = 2\n\n[network]\nlatency = \"5 parsecs\"\nbandwidth = \"1GB/s\"\n",
        );
        case.conf(&conf(args));
        let stderr = case.stopped("pingpong", &["pingpong:"]);
        assert!(stderr.contains(want), "{args:?}: want `{want}` in:\n{stderr}");
        assert!(stderr.contains("pnmpi vtime"), "{stderr}");
    }
    // A machine too small for the run.
    let mut case = Case::new();
    case.write(
        "small.toml",
        "[machine]\nnodes = 1\n[network]\nlatency = \"5us\"\nbandwidth = \"1GB/s\"\n",
    );
    case.conf(&conf(&[("machine", "small.toml")]));
    let stderr = case.stopped("pingpong", &["pingpong:"]);
    assert!(
        stderr.contains("the run has 2 tasks but the machine has 1 cores"),
        "{stderr}"
    );
}

/// 5 us and 1 GB/s, compute not counted: the threads' tests' virtual
/// times are the network's closed forms.
const NETWORK_ONLY: [(&str, &str); 3] = [("latency", "5us"), ("bandwidth", "1GB/s"), ("cpu_factor", "0")];

/// `threadrace.c` under `MPI_THREAD_MULTIPLE`: 4 ranks, 4 threads each
/// making 50 `MPI_Sendrecv` around a ring on their own communicators at
/// once, then two threads of rank 0 racing for 60 wildcard
/// `MPI_Ssend`s (rendezvous, each acknowledged). Every message pairs with
/// its own timestamp, or the values and counts would not come out right
/// (a swapped pair still delivers, but waits for an acknowledgement that
/// names another send); the report has each thread's end.
#[test]
fn threads_racing_under_thread_multiple_run_each_on_its_clock() {
    let (run, report) = vt_run("threadrace", 4, &[], &NETWORK_ONLY);
    let provided = run.lines("threadrace: provided");
    assert!(
        provided.len() == 4
            && provided.iter().all(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                w.len() == 5 && w[2] == w[4]
            }),
        "MPI_THREAD_MULTIPLE granted on every rank: {}",
        run.stdout
    );
    assert_eq!(run.lines("threadrace: rank").len(), 4, "ring: {}", run.stdout);
    let got: Vec<usize> = run
        .lines("threadrace: thread")
        .iter()
        .filter_map(|l| l.split_whitespace().nth(4)?.parse().ok())
        .collect();
    assert_eq!((got.len(), got.iter().sum::<usize>()), (2, 60), "{}", run.stdout);
    let sent: u64 = (0..4)
        .map(|r| {
            report["per_rank"][r]["messages_sent"]
                .as_u64()
                .expect("messages_sent")
        })
        .sum();
    // 4 x 4 x 50 ring messages, 60 raced, 2 stops.
    assert_eq!(sent, 800 + 60 + 2, "{report}");
    let threads = report["per_thread"].as_array().expect("per-thread ends");
    // Every rank's main thread and 4 ring threads; rank 0's 2 racers too.
    for rank in 0..4u64 {
        let ends: Vec<f64> = threads
            .iter()
            .filter(|t| t["rank"] == rank)
            .map(|t| t["end_ns"].as_f64().expect("end_ns"))
            .collect();
        assert_eq!(
            ends.len(),
            if rank == 0 { 7 } else { 5 },
            "rank {rank}: {threads:?}"
        );
        let latest = ends.iter().copied().fold(0.0, f64::max);
        assert_eq!(runtime_ns(&report, rank as usize), latest, "rank {rank}");
    }
}

/// `threadrendezvous.c`: each rank's send of 1 MiB waits 0.8 s for the
/// receive another of its threads posts, longer than the deadlock probes'
/// delay: no deadlock is told (a thread of the rank might yet post it, and
/// does), and with `cpu_factor 0` (the sleep is no compute) both threads
/// of each rank end at 5 us + 1 MiB at 1 GB/s.
#[test]
fn a_long_wait_for_another_threads_receive_is_no_deadlock() {
    let (run, report) = vt_run("threadrendezvous", 2, &[], &NETWORK_ONLY);
    assert_eq!(run.lines("threadrendezvous: rank").len(), 2, "{}", run.stdout);
    assert!(!run.stderr.contains("deadlock"), "{}", run.stderr);
    let ends: Vec<(u64, u64, f64)> = report["per_thread"]
        .as_array()
        .expect("per-thread ends")
        .iter()
        .map(|t| {
            (
                t["rank"].as_u64().unwrap(),
                t["thread"].as_u64().unwrap(),
                t["end_ns"].as_f64().unwrap(),
            )
        })
        .collect();
    let done = 5_000.0 + 1_048_576.0;
    for rank in 0..2 {
        let mine: Vec<f64> = ends.iter().filter(|e| e.0 == rank).map(|e| e.2).collect();
        assert_eq!(mine, [done, done, done], "rank {rank}: main, sender, receiver");
    }
}

/// The ends `threadpingpong.c` prints, by (rank, thread), in ns, and the
/// report's per-thread ends, which must be the same.
fn thread_ends(run: &Run, report: &serde_json::Value) -> std::collections::BTreeMap<(u64, u64), f64> {
    let mut ends = std::collections::BTreeMap::new();
    for line in run.lines("threadpingpong: rank") {
        let w: Vec<&str> = line.split_whitespace().collect();
        let (rank, thread): (u64, u64) = (w[2].parse().expect("rank"), w[4].parse().expect("thread"));
        ends.insert((rank, thread + 1), w[6].parse::<f64>().expect("end_us") * 1e3);
    }
    for t in report["per_thread"].as_array().expect("per-thread ends") {
        let key = (
            t["rank"].as_u64().expect("rank"),
            t["thread"].as_u64().expect("thread"),
        );
        if key.1 == 0 {
            continue;
        }
        let printed = ends.get(&key).copied().unwrap_or(f64::NAN);
        assert!(
            (printed - t["end_ns"].as_f64().expect("end_ns")).abs() < 1.0,
            "{key:?}: {t} vs {printed}"
        );
    }
    ends
}

/// Threads of two ranks ping-pong with `cpu_factor 0`: 4 pairs at once
/// on 4 communicators each take the closed form of one pair alone (20
/// rounds of 2 x (5 us + 1000 B at 1 GB/s), or with rendezvous sends of
/// 100 kB), as they would on the target machine, not 4 times it; the same 4 threads one after the other on one
/// communicator, each joined by the main thread before it creates the
/// next, take the sum.
#[test]
fn threads_that_ping_pong_at_once_do_not_serialize_their_virtual_time() {
    let args = NETWORK_ONLY;
    let msg = 6_000.0;
    let (run, report) = vt_run("threadpingpong", 2, &["together", "4", "20", "1000"], &args);
    let ends = thread_ends(&run, &report);
    assert_eq!(ends.len(), 8, "{}", run.stdout);
    for t in 1..=4 {
        // Rank 0's last receive, rank 1's last (eager) send.
        assert_eq!(ends[&(0, t)], 40.0 * msg, "rank 0 thread {t}");
        assert_eq!(ends[&(1, t)], 39.0 * msg, "rank 1 thread {t}");
    }
    assert_eq!(runtime_ns(&report, 0), 40.0 * msg);
    assert_eq!(report["per_rank"][0]["messages_sent"], 80);

    // Above the eager threshold every send is a rendezvous, acknowledged
    // by its receiver: each thread's last send completes as its data
    // arrives, 40 x (5 us + 100 kB at 1 GB/s) on both ranks.
    let (run, report) = vt_run("threadpingpong", 2, &["together", "4", "20", "100000"], &args);
    let ends = thread_ends(&run, &report);
    for t in 1..=4 {
        for rank in 0..2 {
            assert_eq!(ends[&(rank, t)], 40.0 * 105_000.0, "rank {rank} thread {t}");
        }
    }
    assert_eq!(report["per_rank"][1]["acks_sent"], 80);

    // In turn: the main thread joins each thread (its MPI_Wtime after the
    // join is the thread's end), and the next starts from there.
    let (run, report) = vt_run("threadpingpong", 2, &["inturn", "4", "20", "1000"], &args);
    let ends = thread_ends(&run, &report);
    for t in 1..=4u64 {
        let k = t as f64;
        assert_eq!(ends[&(0, t)], k * 40.0 * msg, "rank 0 thread {t}");
        assert_eq!(ends[&(1, t)], (k * 40.0 - 1.0) * msg, "rank 1 thread {t}");
        for rank in 0..2 {
            let joined = run
                .lines(&format!("threadpingpong: joined rank {rank} thread {} ", t - 1))
                .first()
                .and_then(|l| l.split_whitespace().nth(7)?.parse::<f64>().ok())
                .unwrap_or_else(|| panic!("no join of rank {rank} thread {t}: {}", run.stdout));
            assert_eq!(joined * 1e3, ends[&(rank, t)], "rank {rank} joins thread {t}");
        }
    }
    assert_eq!(runtime_ns(&report, 0), 160.0 * msg);
}

#[test]
fn vtime_and_the_replay_of_a_trace_predict_the_same_stencil() {
    let _heavy = heavy();
    // Targets whose CPUs are so fast that only the network counts: the
    // trace's gaps are wall time of an oversubscribed run, vtime's are
    // CPU time, but neither matters then. What is left is the network and
    // collective models, which both take from pnmpi_sim: one level and
    // analytic collectives; then 4 nodes of 4 cores (two levels), halos
    // above the eager threshold (rendezvous), and every collective
    // expanded into its algorithm's messages.
    let loggp = "[model.loggp]\nL = \"1.5us\"\no = \"0.5us\"\ng = \"0.2us\"\nG = \"0.2ns\"\n";
    let analytic = format!(
        "[machine]\nnodes = 16\ncpu_ratio = 1e12\n[network]\nlatency = \"2us\"\nbandwidth = \"5GB/s\"\n{loggp}"
    );
    let algorithmic = format!(
        "[machine]\nnodes = 4\ncores_per_node = 4\ncpu_ratio = 1e12\n[network]\neager_threshold = \"256B\"\n\
         [network.intra]\nlatency = \"0.5us\"\nbandwidth = \"8GB/s\"\n\
         [network.inter]\nlatency = \"2us\"\nbandwidth = \"5GB/s\"\n\
         [collectives]\nmode = \"algorithmic\"\n{loggp}"
    );
    let prog = ["64", "100", "10"];
    let (case, _) = traced("stencil", 16, &prog);
    for (kind, machine) in [("analytic", &analytic), ("algorithmic", &algorithmic)] {
        case.write("m.toml", machine);
        for model in ["simple", "loggp"] {
            let predicted = replay_runtime(&case, "trace", model);
            let mut run = Case::new();
            run.write("m.toml", machine);
            run.conf(&conf(&[("machine", "m.toml"), ("model", model)]));
            run.mpirun(16, &program("stencil", Link::Pnmpi), &prog)
                .assert_ok();
            let text = std::fs::read_to_string(run.dir().join("vtime-report.json")).expect("report");
            let report: serde_json::Value = serde_json::from_str(&text).expect("JSON");
            let vtime = report["virtual_runtime_s"].as_f64().unwrap();
            eprintln!("stencil, 16 ranks, {kind}, {model}: replay {predicted:.9} s, vtime {vtime:.9} s");
            assert!(
                (vtime - predicted).abs() < 1e-6 * predicted,
                "{kind} {model}: replay {predicted} s, vtime {vtime} s"
            );
            if (kind, model) == ("analytic", "simple") {
                // Closed form: 100 halo exchanges of 64 doubles (all four
                // arrive together), 10 allreduces of a double over 16 ranks
                // (ceil(log2 16) = 4 messages each).
                let cost = |bytes: f64| 2000.0 + bytes / 5.0;
                let want = (100.0 * cost(512.0) + 10.0 * 4.0 * cost(8.0)) * 1e-9;
                assert!(
                    (vtime - want).abs() < 1e-6 * want,
                    "closed form {want} s, vtime {vtime} s"
                );
            }
        }
    }
}

/// The tracer above vtime with `PNMPI_TRACE_CLOCK=vtime` records the run on
/// vtime's virtual clock: its compute intervals are vtime's scaled CPU
/// time. Replayed by `pnmpi sim` on the same machine, compute now counted,
/// the trace predicts the virtual time vtime reported for that very run
/// (to rounding: both sides time the same compute with the same
/// code), and replays to its own
/// timeline.
#[test]
fn a_trace_taken_on_vtimes_clock_replays_to_vtimes_prediction() {
    let _heavy = heavy();
    let machine = "[machine]\nnodes = 4\ncores_per_node = 4\n[network]\neager_threshold = \"4KiB\"\n\
                   [network.intra]\nlatency = \"0.5us\"\nbandwidth = \"8GB/s\"\n\
                   [network.inter]\nlatency = \"2us\"\nbandwidth = \"5GB/s\"\n";
    let prog = ["128", "200", "10"];
    for model in ["simple", "loggp"] {
        let mut case = Case::new();
        case.write(
            "m.toml",
            &format!("{machine}[model.loggp]\nL = \"1.5us\"\no = \"0.5us\"\ng = \"0.2us\"\nG = \"0.2ns\"\n"),
        );
        case.conf(&format!(
            "module {}\nargument outdir trace\n{}",
            target_dir().join("libtracer.so").display(),
            conf(&[("machine", "m.toml"), ("model", model)])
        ));
        case.env("PNMPI_TRACE_CLOCK", "vtime");
        case.mpirun(16, &program("stencil", Link::Pnmpi), &prog)
            .assert_ok();
        let text = std::fs::read_to_string(case.dir().join("vtime-report.json")).expect("report");
        let report: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        let vtime = report["virtual_runtime_s"].as_f64().unwrap();
        // The rank that computed most, not rank 0: on a busy machine one
        // rank's CPU time may be the least of a run that others' set.
        let compute = report["per_rank"]
            .as_array()
            .expect("per_rank")
            .iter()
            .map(|r| r["compute_ns"].as_f64().expect("compute_ns") * 1e-9)
            .fold(0.0, f64::max);
        assert!(
            compute > 0.3 * vtime,
            "the stencil must compute enough for the check to count: {compute} s of {vtime} s"
        );
        let out = Command::new(target_dir().join("pnmpi"))
            .args([
                "sim",
                "replay",
                "trace",
                "-m",
                "m.toml",
                "--model",
                model,
                "--compare",
                "--json",
                "r.json",
            ])
            .current_dir(case.dir())
            .output()
            .expect("pnmpi runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(case.dir().join("r.json")).expect("JSON"))
                .expect("JSON");
        let predicted = v["runtime_s"].as_f64().expect("runtime_s");
        let timeline = v["measured_runtime_s"].as_f64().expect("measured_runtime_s");
        // A replay counts from the end of MPI_Init. The tracer's set-up
        // inside MPI_Init (its folder, its file, a broadcast straight to
        // MPI) makes no call vtime times, so on the virtual clock MPI_Init
        // ends at 0 and vtime charges that set-up's CPU time to the
        // compute before the program's next call, as the trace shows it.
        let dump = Command::new(target_dir().join("pnmpi"))
            .args(["trace", "dump", "trace"])
            .current_dir(case.dir())
            .output()
            .expect("pnmpi runs");
        assert!(dump.status.success(), "{}", String::from_utf8_lossy(&dump.stderr));
        let init_end = String::from_utf8_lossy(&dump.stdout)
            .lines()
            .filter(|l| l.split_whitespace().nth(3) == Some("MPI_Init"))
            .map(|l| {
                let w: Vec<f64> = l
                    .split_whitespace()
                    .skip(1)
                    .take(2)
                    .map(|x| x.parse().expect("ns"))
                    .collect();
                (w[0] + w[1]) * 1e-9
            })
            .fold(0.0, f64::max);
        eprintln!(
            "stencil, 16 ranks, {model}: vtime {vtime:.9} s (a rank computes at most {compute:.6} s), the tracer's MPI_Init until {init_end:.9} s, \
             then the replay of its trace {predicted:.9} s (the trace's own timeline {timeline:.9} s)"
        );
        assert!(
            (0.0..0.1 * vtime).contains(&init_end),
            "MPI_Init ends at {init_end} s"
        );
        // Both sides time the same compute and model the network with
        // the same code, so they agree to the ns but for rounding.
        assert!(
            (init_end + predicted - vtime).abs() < 1e-5 * vtime,
            "{model}: replay {predicted} s after MPI_Init's {init_end} s, vtime {vtime} s"
        );
        assert!(
            (predicted - timeline).abs() < 1e-6 * timeline,
            "{model}: the replay {predicted} s of a trace on the model's own clock, which ran {timeline} s"
        );
    }
}

/// `PNMPI_TRACE_CLOCK=vtime` without vtime below the tracer says why and
/// traces on the default clock.
#[test]
fn the_vtime_trace_clock_needs_vtime_below_the_tracer() {
    let tracer = target_dir().join("libtracer.so");
    let vt = conf(&[("latency", "5us"), ("bandwidth", "1GB/s")]);
    for (chain, want) in [
        (
            format!("module {}\nargument outdir trace\n", tracer.display()),
            "no vtime module in the chain",
        ),
        (
            format!("{vt}module {}\nargument outdir trace\n", tracer.display()),
            "vtime must come after the tracer in the configuration (below it in the chain)",
        ),
    ] {
        let mut case = Case::new();
        case.conf(&chain);
        case.env("PNMPI_TRACE_CLOCK", "vtime");
        let run = case.mpirun(2, &program("pingpong", Link::Pnmpi), &["10", "8"]);
        run.assert_ok();
        assert!(
            run.stderr.contains(&format!(
                "warning: PNMPI_TRACE_CLOCK=vtime: {want}; using the default clock"
            )),
            "{}",
            run.stderr
        );
        assert!(run.stderr.contains("trace written to"), "{}", run.stderr);
    }
}

#[test]
fn a_debian_benchmark_times_the_model_with_its_own_mpi_wtime() {
    let _heavy = heavy();
    // HPC Challenge from Debian's `hpcc` package (scripts/deps.sh installs
    // it), as a user runs it: its latency-bandwidth section times
    // ping-pongs with MPI_Wtime, which reads the virtual clock.
    if FLAVOR != "openmpi" {
        eprintln!("skipped: Debian's hpcc is built for Open MPI, libpnmpi here for {FLAVOR}");
        return;
    }
    let hpcc = PathBuf::from("/usr/bin/hpcc");
    assert!(
        hpcc.is_file(),
        "{} missing: run scripts/deps.sh (Debian package hpcc)",
        hpcc.display()
    );
    let mut case = Case::new();
    let example =
        std::fs::read_to_string("/usr/share/doc/hpcc/examples/_hpccinf.txt").expect("hpcc's example input");
    // The example input, with a small HPL problem.
    let input: String = example
        .lines()
        .map(|l| {
            if l.ends_with(" Ns") {
                "200          Ns".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    case.write("hpccinf.txt", &(input + "\n"));
    case.conf(&conf(&[("latency", "5us"), ("bandwidth", "1GB/s")]));
    let mut cmd = launcher(4);
    cmd.arg(target_dir().join("pnmpi")).args(["run", "--"]).arg(&hpcc);
    let run = case.finish(cmd);
    run.assert_ok();
    let out = std::fs::read_to_string(case.dir().join("hpccoutf.txt")).expect("hpcc's output");
    let value = |key: &str| -> f64 {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("{key}=")))
            .unwrap_or_else(|| panic!("no {key} in hpccoutf.txt"));
        line[key.len() + 1..].trim().parse().unwrap()
    };
    // 8 B: 5 us + 8 ns, plus the benchmark's own loop between calls.
    let latency = value("MinPingPongLatency_usec");
    assert!((5.008..5.5).contains(&latency), "ping-pong latency {latency} us");
    // 2,000,000 B: 5 us + 2 ms, i.e. 0.997506 GB/s at most.
    let bandwidth = value("MaxPingPongBandwidth_GBytes");
    assert!(
        (0.99..=0.997506).contains(&bandwidth),
        "ping-pong bandwidth {bandwidth} GB/s"
    );
    eprintln!("hpcc under vtime (5 us, 1 GB/s): ping-pong latency {latency} us, bandwidth {bandwidth} GB/s");
}

// ---------------------------------------------------------------------------
// Benchmark (docs/performance.md, "## vtime"):
//   cargo test --release --test suite -- --ignored --nocapture vtime::vtime_overhead_bench
// ---------------------------------------------------------------------------

/// Real seconds of the run's loop: the program's own figure (`key`, its
/// `MPI_Wtime` time, virtual under vtime) without vtime, the report's
/// wall time with it.
fn real_loop_s(run: &Run, case: &Case, prefix: &str, key: &str, scale: f64) -> f64 {
    match std::fs::read_to_string(case.dir().join("vtime-report.json")) {
        Ok(text) => {
            let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
            v["wall_s"].as_f64().expect("wall_s")
        }
        Err(_) => field(run, prefix, key) * scale,
    }
}

#[test]
#[ignore = "benchmark: run with --ignored --nocapture"]
fn vtime_overhead_bench() {
    let rounds = bench_rounds("VTIME_BENCH_ROUNDS", 5);
    let setups = [
        ("no module", String::new()),
        ("empty", format!("module {}\n", empty_module().display())),
        ("vtime", conf(&[("latency", "1us"), ("bandwidth", "10GB/s")])),
    ];
    let comm_rank = bench_program("bench/c/comm_rank.c", "comm_rank");
    let (rounds_pp, iters_ar) = (20000.0, 20000.0);
    // ns per MPI_Comm_rank; us per ping-pong round; us per MPI_Allreduce.
    let mut res: Vec<[Vec<f64>; 3]> = (0..setups.len()).map(|_| Default::default()).collect();
    for i in interleaved(rounds, setups.len()) {
        let mut case = Case::new();
        case.conf(&setups[i].1);
        let run = case.mpirun(1, &comm_rank, &["2000000"]);
        run.assert_ok();
        res[i][0].push(field(&run, "ns_per_call", "ns_per_call"));

        let mut case = Case::new();
        case.conf(&setups[i].1);
        let run = case.mpirun(2, &program("pingpong", Link::Pnmpi), &["20000", "8"]);
        run.assert_ok();
        let s = real_loop_s(&run, &case, "pingpong:", "us_per_round", rounds_pp * 1e-6);
        res[i][1].push(s / rounds_pp * 1e6);

        let mut case = Case::new();
        case.conf(&setups[i].1);
        let run = case.mpirun(2, &program("imbalance", Link::Pnmpi), &["20000", "0", "0"]);
        run.assert_ok();
        let s = real_loop_s(&run, &case, "imbalance:", "time", 1.0);
        res[i][2].push(s / iters_ar * 1e6);
    }
    println!("vtime overhead, median of {rounds} interleaved runs ({FLAVOR}):");
    println!(
        "  {:<10} {:>16} {:>18} {:>18}",
        "", "Comm_rank ns", "ping-pong us/round", "Allreduce us/call"
    );
    for (i, (name, _)) in setups.iter().enumerate() {
        let m: Vec<f64> = res[i].iter_mut().map(|v| median(v)).collect();
        println!(
            "  {name:<10} {:>16.1} {:>18.2} {:>18.2}   runs: {:?}",
            m[0], m[1], m[2], res[i]
        );
    }
}

/// The stencil at `np` ranks (64 doubles a side, 100 iterations, an
/// allreduce every 10) with compute ignored: the closed form, exactly.
fn stencil_closed_form(np: usize) {
    let (_, report) = vt_run(
        "stencil",
        np,
        &["64", "100", "10"],
        &[("latency", "2us"), ("bandwidth", "5GB/s"), ("cpu_factor", "0")],
    );
    let cost = |bytes: f64| 2000.0 + bytes / 5.0;
    let steps = f64::from((np as u32).next_power_of_two().trailing_zeros());
    let want = 100.0 * cost(512.0) + 10.0 * steps * cost(8.0);
    let got = report["virtual_runtime_s"].as_f64().unwrap() * 1e9;
    let wall = report["wall_s"].as_f64().unwrap();
    eprintln!("stencil at {np} ranks on 2 cores: virtual {got} ns (closed form {want}), wall {wall:.2} s");
    assert!(
        (got - want).abs() < 1e-6 * want,
        "{np} ranks: {got} ns, closed form {want} ns"
    );
}

#[test]
fn a_stencil_at_64_ranks_on_2_cores_gives_the_closed_form() {
    let _heavy = heavy();
    stencil_closed_form(64);
}

#[test]
#[ignore = "slow: about 60 s with the start of 256 processes on 2 cores"]
fn a_stencil_at_256_ranks_on_2_cores_gives_the_closed_form() {
    let _heavy = heavy();
    stencil_closed_form(256);
}
