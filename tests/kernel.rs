//! One set of timing rules (`pnmpi_sim::kernel`: point to
//! point, collectives, CPU) in the three simulators. A program runs three ways with `cpu_factor 0`:
//! processes under vtime, `--vranks` in 1 and in 2 processes (the latter
//! traced on the virtual clock), and `pnmpi sim replay` of that trace;
//! every rank's end (its `MPI_Wtime` after its last call; the replay's
//! `end_s`) must be the same to the nanosecond in all of them, under
//! `simple` and `loggp`. `rdv.c` is the program that told the modes apart:
//! a standard send above the eager threshold is a rendezvous in all three
//! now, and a program that only runs if MPI buffers such sends deadlocks
//! in every mode, each naming the ranks in the same words.

use crate::common;
use common::*;

/// 3 nodes at 10 us and 1 GB/s, eager up to 64 KiB, and LogGP parameters.
const MACHINE: &str = "[machine]\nnodes = 3\n[network]\nlatency = \"10us\"\nbandwidth = \"1GB/s\"\n\
    eager_threshold = \"65536B\"\n\
    [model.loggp]\nL = \"10us\"\no = \"1us\"\ng = \"1us\"\nG = \"1ns\"\n";

/// 4 nodes of 4 cores, two levels, eager up to 256 B, with analytic or
/// algorithmic collectives.
fn two_levels(algorithmic: bool) -> String {
    format!(
        "[machine]\nnodes = 4\ncores_per_node = 4\n[network]\neager_threshold = \"256B\"\n\
         [network.intra]\nlatency = \"0.5us\"\nbandwidth = \"8GB/s\"\n\
         [network.inter]\nlatency = \"2us\"\nbandwidth = \"5GB/s\"\n\
         [collectives]\nmode = \"{}\"\n\
         [model.loggp]\nL = \"1.5us\"\no = \"0.5us\"\ng = \"0.2us\"\nG = \"0.2ns\"\n",
        if algorithmic { "algorithmic" } else { "analytic" }
    )
}

/// vtime's arguments: the machine above, `model`, compute ignored.
fn vtime_args(model: &str) -> String {
    format!("argument machine m.toml\nargument model {model}\nargument cpu_factor 0\n")
}

/// Each rank's end, s, from the `<prog>: rank R end_s T` lines.
fn ends(run: &Run, prog: &str, n: usize) -> Vec<f64> {
    let mut ends = vec![f64::NAN; n];
    for line in run.lines(&format!("{prog}: rank ")) {
        let w: Vec<&str> = line.split_whitespace().collect();
        let r: usize = w[2].parse().expect("a rank");
        ends[r] = w[4].parse().expect("an end");
    }
    assert!(
        ends.iter().all(|e| e.is_finite()),
        "not every rank printed its end:\n{}\n{}",
        run.stdout,
        run.stderr
    );
    ends
}

/// `n` processes of `c-tests/programs/<prog> args` under vtime with `model`.
fn under_vtime(machine: &str, model: &str, n: usize, prog: &str, args: &[&str]) -> (Case, Run) {
    under_vtime_exe(machine, model, n, &program(prog, Link::Pnmpi), args)
}

/// `n` processes of `exe args` (linked with libpnmpi) under vtime.
fn under_vtime_exe(
    machine: &str,
    model: &str,
    n: usize,
    exe: &std::path::Path,
    args: &[&str],
) -> (Case, Run) {
    let mut case = Case::new();
    case.write("m.toml", machine);
    case.conf(&format!(
        "module {}\n{}",
        target_dir().join("libvtime.so").display(),
        vtime_args(model)
    ));
    let run = case.mpirun(n, exe, args);
    (case, run)
}

/// `--vranks n` of `c-tests/programs/<prog> args` in `procs` processes
/// with `model`, traced into `tr` on the virtual clock when `trace`.
fn under_vranks(
    machine: &str,
    model: &str,
    procs: usize,
    n: usize,
    prog: &str,
    args: &[&str],
    trace: bool,
) -> (Case, Run) {
    under_vranks_exe(
        machine,
        model,
        procs,
        n,
        &program(prog, Link::Native),
        args,
        trace,
    )
}

/// [`under_vranks`] of `exe`.
fn under_vranks_exe(
    machine: &str,
    model: &str,
    procs: usize,
    n: usize,
    exe: &std::path::Path,
    args: &[&str],
    trace: bool,
) -> (Case, Run) {
    let mut case = Case::new();
    case.write("m.toml", machine);
    let tracer = if trace {
        "module tracer\nargument outdir tr\n"
    } else {
        ""
    };
    case.write("v.conf", &format!("{tracer}module vtime\n{}", vtime_args(model)));
    case.env("PNMPI_LIB_PATH", "");
    let mut cmd = launcher(procs);
    cmd.arg(target_dir().join("pnmpi"))
        .args(["run", &format!("--vranks={n}"), "--conf", "v.conf", "--"])
        .arg(exe)
        .args(args);
    let run = case.finish(cmd);
    (case, run)
}

/// `pnmpi sim replay tr` in `case` with `model` and `extra` arguments:
/// its JSON report.
fn replayed(case: &Case, model: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "sim", "replay", "tr", "-m", "m.toml", "--model", model, "--json", "r.json",
    ];
    args.extend(extra);
    succeeded(pnmpi_cli(&args, case.dir()));
    let text = std::fs::read_to_string(case.dir().join("r.json")).expect("replay JSON");
    serde_json::from_str(&text).expect("JSON")
}

/// `pnmpi sim replay tr` in `case` with `model`: each rank's end, s.
fn replayed_ends(case: &Case, model: &str) -> Vec<f64> {
    let v = replayed(case, model, &[]);
    let ranks = v["ranks"].as_array().expect("ranks");
    let mut ends = vec![f64::NAN; ranks.len()];
    for r in ranks {
        ends[r["rank"].as_u64().expect("rank") as usize] = r["end_s"].as_f64().expect("end_s");
    }
    ends
}

/// Runs `prog args` at `n` ranks the three ways under `model`; asserts
/// every rank's end is the same within 1 ns; returns them.
fn three_ways(model: &str, n: usize, prog: &str, args: &[&str]) -> Vec<f64> {
    let (_, vtime) = under_vtime(MACHINE, model, n, prog, args);
    vtime.assert_ok();
    let (_, one) = under_vranks(MACHINE, model, 1, n, prog, args, false);
    one.assert_ok();
    let (case, two) = under_vranks(MACHINE, model, 2, n, prog, args, true);
    two.assert_ok();
    let ways = [
        ("vtime", ends(&vtime, prog, n)),
        ("vranks in 1 process", ends(&one, prog, n)),
        ("vranks in 2 processes", ends(&two, prog, n)),
        ("replay of the trace", replayed_ends(&case, model)),
    ];
    agree(prog, model, &ways);
    ways[3].1.clone()
}

/// Each rank's run time (to its `MPI_Finalize`), s, from the report
/// vtime or virtual ranks wrote in `case`.
fn reported_ends(case: &Case, run: &Run) -> Vec<f64> {
    let text = std::fs::read_to_string(case.dir().join("vtime-report.json"))
        .unwrap_or_else(|e| panic!("no report ({e}):\n{}", run.stderr));
    let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let ranks = v["per_rank"].as_array().expect("per_rank");
    let mut ends = vec![f64::NAN; ranks.len()];
    for r in ranks {
        ends[r["rank"].as_u64().expect("rank") as usize] =
            r["runtime_ns"].as_f64().expect("runtime_ns") * 1e-9;
    }
    ends
}

/// [`three_ways`] on `machine` with the ends the reports give (the
/// programs that print no end of their own).
fn three_ways_reported(machine: &str, model: &str, n: usize, prog: &str, args: &[&str]) {
    let exes = (program(prog, Link::Pnmpi), program(prog, Link::Native));
    three_ways_of(machine, model, n, prog, &exes, args);
}

/// [`three_ways_reported`] of executables (linked with libpnmpi, for
/// vtime; and for virtual ranks).
fn three_ways_of(
    machine: &str,
    model: &str,
    n: usize,
    prog: &str,
    exes: &(std::path::PathBuf, std::path::PathBuf),
    args: &[&str],
) {
    let (c0, vtime) = under_vtime_exe(machine, model, n, &exes.0, args);
    vtime.assert_ok();
    let (c1, one) = under_vranks_exe(machine, model, 1, n, &exes.1, args, false);
    one.assert_ok();
    let (case, two) = under_vranks_exe(machine, model, 2, n, &exes.1, args, true);
    two.assert_ok();
    let ways = [
        ("vtime", reported_ends(&c0, &vtime)),
        ("vranks in 1 process", reported_ends(&c1, &one)),
        ("vranks in 2 processes", reported_ends(&case, &two)),
        ("replay of the trace", replayed_ends(&case, model)),
    ];
    agree(prog, model, &ways);
}

/// Every way's ends within 1 ns of the replay's (the last).
fn agree(prog: &str, model: &str, ways: &[(&str, Vec<f64>)]) {
    for (way, e) in ways {
        eprintln!("{prog} {model} {way}: {e:?}");
    }
    let want = &ways[3].1;
    for (way, e) in &ways[..3] {
        assert_eq!(e.len(), want.len(), "{way}");
        for (r, (a, b)) in e.iter().zip(want).enumerate() {
            assert!(
                (a - b).abs() <= 1e-9,
                "{prog} {model}: rank {r} ends at {a} s under {way}, at {b} s in the replay"
            );
        }
    }
}

/// One-sided epochs (`rma_epochs.c`: fences of puts and gets,
/// `MPI_Fetch_and_op` under exclusive locks, a post/start/complete/wait
/// ring, an accumulate, a get, an `MPI_Rput` and a compare-and-swap
/// under `MPI_Win_lock_all` with flushes) end every rank
/// alike under vtime and in the replay of the trace taken above vtime:
/// both time them by the kernel's one-sided rule (virtual ranks: the
/// tests below).
#[test]
fn one_sided_epochs_end_alike_under_vtime_and_in_the_replay() {
    let exe = program("rma_epochs", Link::Pnmpi);
    for model in ["simple", "loggp"] {
        let mut case = Case::new();
        case.write("m.toml", &MACHINE.replace("nodes = 3", "nodes = 4"));
        case.conf(&format!(
            "module {}\nargument outdir tr\nmodule {}\n{}",
            target_dir().join("libtracer.so").display(),
            target_dir().join("libvtime.so").display(),
            vtime_args(model)
        ));
        case.env("PNMPI_TRACE_CLOCK", "vtime");
        let run = case.mpirun(4, &exe, &[]);
        let vtime = epochs_end_as_replayed(&case, &run, model, "under vtime");
        exclusive_holders_come_one_after_another(&case, model);
        // The last rank's puts alone: 3 epochs of 64 KiB at 1 GB/s.
        let puts = 3.0 * 65536.0e-9;
        assert!(
            vtime.iter().all(|&e| e > puts),
            "{model}: the epochs took no time: {vtime:?}"
        );
    }
}

/// One node of 4 cores (a shared-memory window spans it under vtime's
/// real node and the target's alike), with the machine above's network
/// and LogGP parameters.
fn one_node() -> String {
    MACHINE.replace("nodes = 3\n", "nodes = 1\ncores_per_node = 4\n")
}

/// `rma_modes.c`'s lines (each part's clock, the end and its checks) by
/// rank and name, as times.
fn parts(run: &Run) -> std::collections::BTreeMap<(String, String), f64> {
    let lines = run.lines("rma_modes: rank ");
    assert!(
        lines.iter().any(|l| l.contains("end_s")),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    lines
        .iter()
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            assert!(!l.ends_with(" ok 0"), "a check failed: {l}");
            let (name, t) = if w[3] == "part" {
                (w[4], w[6])
            } else {
                ("end", w[4])
            };
            ((w[2].to_string(), name.to_string()), t.parse().expect("a time"))
        })
        .collect()
}

/// Virtual ranks run one-sided programs, all window kinds and epoch
/// kinds (`rma_modes.c`: a fence halo of puts into `MPI_Win_allocate`d
/// memory, a post/start/complete/wait ring over a static buffer, an
/// exclusive-lock counter of `MPI_Fetch_and_op` on a static long, a
/// shared-memory window's loads and gets, and puts and an accumulate at
/// the addresses of a dynamic window's attached memory), and every part
/// ends alike, on
/// every rank, under vtime, as virtual ranks in one process and in the
/// replay of both traces. Spread over two processes, the shared-memory
/// window of the one node's ranks, which then lie in both, is refused
/// with the reason; on a target of 4 nodes, vtime says that the real
/// node's shared-memory communicator spans them, and splits it.
#[test]
fn one_sided_programs_end_alike_under_vtime_virtual_ranks_and_the_replay() {
    let machine = one_node();
    for model in ["simple", "loggp"] {
        let mut vt = Case::new();
        vt.write("m.toml", &machine);
        vt.conf(&format!(
            "module {}\nargument outdir tr\nmodule {}\n{}",
            target_dir().join("libtracer.so").display(),
            target_dir().join("libvtime.so").display(),
            vtime_args(model)
        ));
        vt.env("PNMPI_TRACE_CLOCK", "vtime");
        let vtime = vt.mpirun(4, &program("rma_modes", Link::Pnmpi), &[]);
        vtime.assert_ok();
        assert!(
            !vtime.stderr.contains("MPI_Comm_split_type gave"),
            "{}",
            vtime.stderr
        );
        let (vr, one) = under_vranks(&machine, model, 1, 4, "rma_modes", &[], true);
        one.assert_ok();
        let (a, b) = (parts(&vtime), parts(&one));
        assert_eq!(a.len(), 4 * 6, "{}", vtime.stdout);
        for (key, t) in &a {
            let u = b
                .get(key)
                .unwrap_or_else(|| panic!("{model}: virtual ranks printed no {key:?}"));
            assert!(
                (t - u).abs() <= 1e-9,
                "{model}: {key:?} at {t} s under vtime, {u} s as virtual ranks"
            );
        }
        let ends: Vec<f64> = (0..4).map(|r| a[&(r.to_string(), "end".to_string())]).collect();
        for (way, case) in [("vtime's", &vt), ("virtual ranks'", &vr)] {
            let replay = replayed_ends(case, model);
            for (r, (x, y)) in ends.iter().zip(&replay).enumerate() {
                assert!(
                    (x - y).abs() <= 1e-9,
                    "{model}: rank {r} ends at {x} s, at {y} s in the replay of {way} trace"
                );
            }
        }
        // The halo's 10 puts of 64 KiB a rank took their time.
        assert!(a[&("3".into(), "halo".into())] > 10.0 * 65536e-9, "{a:?}");
    }
    // On 4 nodes of one core, the real node's shared-memory communicator
    // spans 4 target nodes: vtime says so, and splits it by them.
    let spread = MACHINE.replace("nodes = 3", "nodes = 4");
    let (_, vtime) = under_vtime(&spread, "simple", 4, "rma_modes", &[]);
    vtime.assert_ok();
    let said = "MPI_Comm_split_type gave the real node's 4 ranks, which the target machine places on 4 nodes";
    assert_eq!(vtime.stderr.matches(said).count(), 1, "{}", vtime.stderr);
    let (_, two) = under_vranks(&machine, "simple", 2, 4, "rma_modes", &[], false);
    assert!(
        !two.success(),
        "a shared window across processes ran:\n{}",
        two.stdout
    );
    assert!(
        two.stderr.contains("MPI_Win_allocate_shared") && two.stderr.contains("several processes"),
        "{}",
        two.stderr
    );
}

/// 2 nodes of 2 cores: spread over two processes, each process's block
/// of virtual ranks holds one whole node.
fn two_nodes() -> String {
    MACHINE.replace("nodes = 3\n", "nodes = 2\ncores_per_node = 2\n")
}

/// One-sided programs as virtual ranks spread over two processes, their
/// windows over ranks of both: every operation to the other process's
/// ranks crosses as a record (a fetch's data comes back), the locks of
/// both processes' ranks are granted in one order, and every part of
/// `rma_modes.c` (the shared-memory window within each node) and every
/// end of `rma_epochs.c` (whose every rank locks the counter) comes at
/// the same nanosecond as in one process, the data as sent; the replay of
/// the spread run's trace ends every rank there too, and so does vtime
/// every part of `rma_modes.c` (its node communicator split by the
/// target's nodes, as virtual ranks split theirs).
#[test]
fn one_sided_programs_spread_over_two_processes_end_as_in_one() {
    let machine = two_nodes();
    for model in ["simple", "loggp"] {
        let (_, one) = under_vranks(&machine, model, 1, 4, "rma_modes", &[], false);
        let (case, two) = under_vranks(&machine, model, 2, 4, "rma_modes", &[], true);
        let (_, vtime) = under_vtime(&machine, model, 4, "rma_modes", &[]);
        one.assert_ok();
        two.assert_ok();
        vtime.assert_ok();
        let split = "which the target machine places on 2 nodes: each rank gets its target node's ranks";
        assert_eq!(vtime.stderr.matches(split).count(), 1, "{}", vtime.stderr);
        let a = parts(&one);
        assert_eq!(a.len(), 4 * 6, "{}", one.stdout);
        for (way, run) in [("two processes", &two), ("vtime", &vtime)] {
            let b = parts(run);
            for (key, t) in &a {
                let u = b
                    .get(key)
                    .unwrap_or_else(|| panic!("{model}: {way} printed no {key:?}:\n{}", run.stdout));
                assert!(
                    (t - u).abs() <= 1e-9,
                    "{model}: {key:?} at {t} s in one process, {u} s under {way}"
                );
            }
        }
        let last: Vec<f64> = (0..4).map(|r| a[&(r.to_string(), "end".to_string())]).collect();
        for (r, (x, y)) in last.iter().zip(&replayed_ends(&case, model)).enumerate() {
            assert!(
                (x - y).abs() <= 1e-9,
                "{model}: rank {r} ends at {x} s, at {y} s in the replay of two processes' trace"
            );
        }
        let (_, one) = under_vranks(&machine, model, 1, 4, "rma_epochs", &[], false);
        let (case, two) = under_vranks(&machine, model, 2, 4, "rma_epochs", &[], true);
        let spread = epochs_end_as_replayed(&case, &two, model, "spread over two processes");
        one.assert_ok();
        assert_eq!(
            ends(&one, "rma_epochs", 4),
            spread,
            "{model}: rma_epochs in one process and in two"
        );
    }
}

/// `rma_epochs.c` (its counter's locks taken by every rank, the target
/// too, so that the order the run grants them in moves the ends) as
/// virtual ranks: the data arrives as sent, and the replay of their trace
/// ends every rank where they did.
#[test]
fn one_sided_epochs_as_virtual_ranks_end_where_the_replay_of_their_trace_does() {
    for model in ["simple", "loggp"] {
        let machine = MACHINE.replace("nodes = 3", "nodes = 4");
        let (case, run) = under_vranks(&machine, model, 1, 4, "rma_epochs", &[], true);
        epochs_end_as_replayed(&case, &run, model, "as virtual ranks");
        exclusive_holders_come_one_after_another(&case, model);
    }
}

/// `rma_epochs.c`'s run in `case` (`way`: vtime or virtual ranks, traced
/// into `tr` on the virtual clock): every rank's data arrived as sent,
/// and the replay of its trace under `model` ends every rank where the
/// run did; returns the ends.
fn epochs_end_as_replayed(case: &Case, run: &Run, model: &str, way: &str) -> Vec<f64> {
    run.assert_ok();
    let checked = run.lines("rma_epochs: rank ");
    assert!(
        checked.len() == 4 && checked.iter().all(|l| l.ends_with(" ok 1")),
        "{}",
        run.stdout
    );
    let ran = ends(run, "rma_epochs", 4);
    let replay = replayed_ends(case, model);
    eprintln!("rma_epochs {model}: {way} {ran:?}, replay {replay:?}");
    for (r, (a, b)) in ran.iter().zip(&replay).enumerate() {
        assert!(
            (a - b).abs() <= 1e-9,
            "{model}: rank {r} ends at {a} s {way}, at {b} s in the replay"
        );
    }
    ran
}

/// The counter's exclusive epochs in the trace taken on vtime's clock
/// (each from its `MPI_Win_lock`'s return to its `MPI_Win_unlock`'s): one
/// after another, each granted at least the network's 10 us after the
/// last released (the replay ends every rank where vtime does, so it
/// hands them over alike).
fn exclusive_holders_come_one_after_another(case: &Case, model: &str) {
    let dump = succeeded(pnmpi_cli(&["trace", "dump", "tr"], case.dir()));
    let mut open: std::collections::HashMap<String, u64> = Default::default();
    let mut epochs = Vec::new();
    for l in dump.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        let (Some(who), Some(start), Some(dur)) = (f.first(), f.get(1), f.get(2)) else {
            continue;
        };
        let (Ok(start), Ok(dur)) = (start.parse::<u64>(), dur.parse::<u64>()) else {
            continue;
        };
        match f.get(3) {
            Some(&"MPI_Win_lock") if l.contains("lock=exclusive") => {
                open.insert(who.to_string(), start + dur);
            }
            Some(&"MPI_Win_unlock") => {
                if let Some(granted) = open.remove(*who) {
                    epochs.push((granted, start + dur));
                }
            }
            _ => {}
        }
    }
    assert_eq!(epochs.len(), 4 * 5, "{model}: 5 exclusive epochs a rank\n{dump}");
    epochs.sort();
    for w in epochs.windows(2) {
        assert!(
            w[1].0 >= w[0].1 + 10_000,
            "{model}: an exclusive epoch granted at {} ns, 10 us after the one before released it at {} ns: {epochs:?}",
            w[1].0,
            w[0].1
        );
    }
}

#[test]
fn rendezvous_senders_end_alike_in_every_mode() {
    // Rank 1 receives rank 2's 4 MiB first, then rank 0's 1 MiB: rank 0's
    // send is held until that receive is posted (at 4204.304 us).
    let e = three_ways("simple", 3, "rdv", &[]);
    let us = |s: f64| (s * 1e9).round() / 1e3;
    assert_eq!(
        [us(e[0]), us(e[1]), us(e[2])],
        [5262.880, 5262.880, 4204.304],
        "simple: 10 us + 4 MiB at 1 GB/s, then 10 us + 1 MiB"
    );
    let e = three_ways("loggp", 3, "rdv", &[]);
    assert!(
        e[0] > 5262.880e-6 && e[2] > 4204.304e-6,
        "loggp adds overheads: {e:?}"
    );
}

#[test]
fn a_program_that_needs_buffering_deadlocks_and_the_report_says_so() {
    // `rdv exchange`: ranks 0 and 1 both send 1 MiB first. Virtual ranks,
    // in 1 process and in 2 (one rank each side), stop with a deadlock
    // naming both sends and saying the program depends on buffering; so
    // do processes under vtime, whose probes find the cycle of waits.
    let (_, run) = under_vtime(MACHINE, "simple", 3, "rdv", &["exchange"]);
    assert!(!run.success(), "vtime: it ran:\n{}", run.stderr);
    for said in [
        "deadlock: rank(s) ",
        "wait in sends above the eager threshold for receives never posted",
        "rank 0 to rank 1 (1048576 bytes)",
        "rank 1 to rank 0 (1048576 bytes)",
        "the program depends on MPI buffering sends above the eager threshold",
    ] {
        assert!(run.stderr.contains(said), "vtime: no `{said}`:\n{}", run.stderr);
    }
    for procs in [1, 2] {
        let (_, run) = under_vranks(MACHINE, "simple", procs, 3, "rdv", &["exchange"], false);
        assert!(!run.success(), "{procs} process(es): it ran:\n{}", run.stderr);
        assert!(run.stderr.contains("deadlock"), "{}", run.stderr);
        for send in [
            "rank 0 to rank 1 (1048576 bytes)",
            "rank 1 to rank 0 (1048576 bytes)",
        ] {
            assert!(
                run.stderr.contains(send) || procs == 2,
                "{procs} process(es): no `{send}`:\n{}",
                run.stderr
            );
        }
        assert!(
            run.stderr
                .contains("the program depends on MPI buffering sends above the eager threshold"),
            "{procs} process(es):\n{}",
            run.stderr
        );
    }
}

#[test]
fn the_replay_of_a_trace_that_needs_buffering_says_so_too() {
    // The exchange as a SimGrid action trace (a traced run of it would
    // hang in real MPI): both ranks send 1 MiB first.
    let case = Case::new();
    case.write("m.toml", MACHINE);
    case.write("index.txt", "rank-0.txt\nrank-1.txt\n");
    for (me, peer) in [(0, 1), (1, 0)] {
        case.write(
            &format!("rank-{me}.txt"),
            &format!("{me} init\n{me} send {peer} 0 1048576\n{me} recv {peer} 0 1048576\n{me} finalize\n"),
        );
    }
    let out = pnmpi_cli(&["sim", "replay", "index.txt", "-m", "m.toml"], case.dir());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "it replayed:\n{said}");
    assert!(
        said.contains("rank(s) 0, 1 wait in sends above the eager threshold")
            && said.contains("the program depends on MPI buffering sends above the eager threshold"),
        "{said}"
    );
}

#[test]
fn stencils_and_halos_end_alike_in_every_mode() {
    // Halos above the eager threshold (rendezvous) on two levels, with
    // analytic collectives and with every collective expanded into its
    // algorithm's messages, under simple and loggp.
    for algorithmic in [false, true] {
        let machine = two_levels(algorithmic);
        for model in ["simple", "loggp"] {
            three_ways_reported(&machine, model, 16, "stencil", &["64", "20", "5"]);
            three_ways_reported(&machine, model, 8, "halo", &["4096", "20", "0", "1"]);
        }
    }
}

#[test]
fn nas_like_kernels_end_alike_in_every_mode() {
    // The C NAS-like kernels at 16 ranks on two levels (their messages
    // on both sides of the eager threshold). Each kernel runs under both
    // models, one with analytic and one with algorithmic collectives; the
    // pairing alternates from kernel to kernel, so that each of the four
    // (model, collectives) pairs meets three kernels. IS's MPI_Alltoallv
    // is charged its largest block in every mode, and expanded with its
    // per-peer bytes when algorithmic (the kernel's collective rule).
    let diagonals = [
        [("simple", false), ("loggp", true)],
        [("simple", true), ("loggp", false)],
    ];
    for (i, name) in ["cg", "ep", "ft", "is", "lu", "mg"].into_iter().enumerate() {
        let exe = nas_kernel(name);
        let exes = (exe.clone(), exe);
        for (model, algorithmic) in diagonals[i % 2] {
            three_ways_of(&two_levels(algorithmic), model, 16, name, &exes, &[]);
        }
    }
}

#[test]
fn v_collectives_and_random_mixes_end_alike_in_every_mode() {
    // vfeatures (every `v` collective, reduce-scatter, nonblocking
    // collectives, every send mode) and randmix with every collective (in
    // its mode for the simulators, without compute: with cpu_factor 0 its
    // bursts would never end), under simple and loggp, analytic and
    // algorithmic collectives.
    for algorithmic in [false, true] {
        let machine = two_levels(algorithmic);
        for model in ["simple", "loggp"] {
            three_ways_reported(&machine, model, 12, "vfeatures", &[]);
            three_ways_reported(&machine, model, 4, "randmix", &["3", "30", "sim", "0"]);
        }
    }
}

/// [`two_levels`] (analytic collectives) with one of each limited
/// resource (one global bus, one link into and out of each node), the
/// nodes in a ring (a message pays 100 ns a hop), BCS-MPI's strobe every
/// 20 us and PMaC with no fitted curves (its collectives: the simple
/// model's).
fn contended() -> String {
    two_levels(false).replace("[network]\n", "[network]\nbuses = 1\n")
        + "[network.topology]\nshape = \"ring\"\nhop_latency = \"100ns\"\n\
           [model.bcs]\ntime_slice = \"20us\"\n[model.pmac]\n"
}

/// The contention models: their state spans ranks (vtime refuses them),
/// and one engine that sees every message evaluates them.
const CONTENTION: [&str; 5] = ["bus", "inlink", "outlink", "pmac", "bcs"];

/// [`three_ways_of`] without vtime (which refuses a model whose state
/// spans ranks): `--vranks` in 1 and in 2 processes and the replay of
/// the trace agree to the nanosecond. Returns the latest end, and the
/// latest end the replay of the same trace gives under `simple`.
fn engine_ways(machine: &str, model: &str, n: usize, prog: &str, args: &[&str]) -> (f64, f64) {
    let exe = program(prog, Link::Native);
    let (c1, one) = under_vranks_exe(machine, model, 1, n, &exe, args, false);
    one.assert_ok();
    let (case, two) = under_vranks_exe(machine, model, 2, n, &exe, args, true);
    two.assert_ok();
    assert!(
        two.stderr.contains("process 0 runs all")
            && two.stderr.contains("one engine that sees every message"),
        "{model}: no note that one engine runs the ranks:\n{}",
        two.stderr
    );
    let one = reported_ends(&c1, &one);
    let ways = [
        ("vranks in 1 process", one.clone()),
        ("vranks in 2 processes", reported_ends(&case, &two)),
        ("vranks in 1 process, again", one),
        ("replay of the trace", replayed_ends(&case, model)),
    ];
    agree(prog, model, &ways);
    let latest = |e: &[f64]| e.iter().copied().fold(0.0, f64::max);
    (latest(&ways[3].1), latest(&replayed_ends(&case, "simple")))
}

#[test]
fn contention_models_run_under_virtual_ranks_as_in_the_replay() {
    // In 2 processes, process 0 runs every rank: one engine sees every
    // message (the windows of a spread run need a model whose state is
    // per rank). The rank counts put ranks on several nodes, where the
    // resources are limited, so that the model moves the ends.
    let machine = contended();
    for model in CONTENTION {
        let mut moved = Vec::new();
        for (n, prog, args) in [
            (3, "rdv", &[][..]),
            (16, "stencil", &["64", "20", "5"][..]),
            (8, "halo", &["4096", "20", "0", "1"][..]),
        ] {
            let (end, simple) = engine_ways(&machine, model, n, prog, args);
            eprintln!("{model} {prog}: ends at {end} s, {simple} s under simple");
            moved.push(end != simple);
        }
        assert!(
            moved.contains(&true),
            "{model} changed no program's end: {moved:?}"
        );
    }
}

/// The tapered fat tree of the SimGrid cross-check (16 hosts, 2 levels,
/// 4 hosts a leaf and 2 uplinks a leaf: 2:1; links of 10 GB/s and 2.5
/// us, split-duplex) under `cm02`: messages are flows sharing its links.
const TAPERED: &str = "[machine]\nnodes = 16\ncores_per_node = 1\n\
    [network]\nlatency = \"0us\"\nbandwidth = \"10GB/s\"\neager_threshold = \"65535B\"\nenvelope = \"16B\"\n\
    [network.intra]\nlatency = \"0us\"\nbandwidth = \"20GB/s\"\n\
    [network.topology]\nshape = \"fat_tree\"\ntopology = \"2;4,4;1,2;1,1\"\n\
    bandwidth = \"10GB/s\"\nlatency = \"2.5us\"\nsharing = \"splitduplex\"\n\
    [collectives]\nmode = \"algorithmic\"\n";

/// `mpirun -np 2 pnmpi sim replay tr` in `case` with `model`: each
/// rank's end, s, and what the command wrote to stderr.
fn parallel_replayed_ends(case: &Case, model: &str) -> (Vec<f64>, String) {
    let out = launcher(2)
        .arg(target_dir().join("pnmpi"))
        .args([
            "sim", "replay", "tr", "-m", "m.toml", "--model", model, "--json", "p.json",
        ])
        .current_dir(case.dir())
        .output()
        .expect("mpirun runs");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    let text = std::fs::read_to_string(case.dir().join("p.json")).expect("replay JSON");
    let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let ranks = v["ranks"].as_array().expect("ranks");
    let mut ends = vec![f64::NAN; ranks.len()];
    for r in ranks {
        ends[r["rank"].as_u64().expect("rank") as usize] = r["end_s"].as_f64().expect("end_s");
    }
    (ends, err)
}

#[test]
fn shared_links_give_one_answer_as_virtual_ranks_and_in_every_replay() {
    // All-to-all traffic and a stencil on a tapered fat tree, its links
    // shared by the flows in flight: virtual ranks in 1 and 2 processes
    // (one engine, process 0, runs them: a flow started anywhere changes
    // every rate at once), the serial replay of their trace and the
    // replay under `mpirun -np 2` (one engine too) end every rank at the
    // same nanosecond; and sharing the links moves the ends.
    // One-sided programs too: their operations' legs move as flows.
    for (n, prog, args) in [
        (16, "a2a", &["2"][..]),
        (16, "stencil", &["64", "20", "5"][..]),
        (4, "rma_modes", &[][..]),
        (4, "rma_share", &[][..]),
    ] {
        let (end, simple) = engine_ways(TAPERED, "cm02", n, prog, args);
        assert!(
            end > simple,
            "{prog}: sharing the links did not slow it ({end} s, {simple} s under simple)"
        );
        let (case, run) = under_vranks(TAPERED, "cm02", 1, n, prog, args, true);
        run.assert_ok();
        let (parallel, err) = parallel_replayed_ends(&case, "cm02");
        assert!(
            err.contains("process 0 replays every rank"),
            "no note that one engine replays the ranks:\n{err}"
        );
        let ways = [
            ("vranks in 1 process", reported_ends(&case, &run)),
            ("the replay under mpirun -np 2", parallel),
            ("vranks in 1 process, again", reported_ends(&case, &run)),
            ("replay of the trace", replayed_ends(&case, "cm02")),
        ];
        agree(prog, "cm02", &ways);
    }
    // A rank that waited in a communicator constructor (which needs every
    // member, its clock kept where it entered) posts behind the flows'
    // present: said, since its data cannot start in the past.
    let (_, run) = under_vranks(TAPERED, "cm02", 1, 12, "vfeatures", &[], false);
    run.assert_ok();
    assert!(
        run.stderr.contains("after the shared links' flows moved on to")
            && run.stderr.contains("may end later than the replay of its trace"),
        "{}",
        run.stderr
    );
}

#[test]
fn algorithmic_collectives_share_the_network_with_messages_in_flight() {
    // The even ranks' allreduce (algorithmic) runs while the odd ranks
    // swap 1 MiB: under virtual ranks its messages go through the model
    // every rank's messages go through, as in the replay, so the ends
    // agree to the nanosecond; and the shared resources move them.
    let machine = two_levels(true).replace("[network]\n", "[network]\nbuses = 1\n");
    let mut moved = Vec::new();
    for model in ["bus", "inlink", "outlink"] {
        let (end, simple) = engine_ways(&machine, model, 8, "collshare", &["4"]);
        eprintln!("{model} collshare: ends at {end} s, {simple} s under simple");
        moved.push(end != simple);
    }
    assert!(!moved.contains(&false), "a model changed no end: {moved:?}");
}

#[test]
fn vtime_refuses_a_model_whose_state_spans_ranks_and_says_why() {
    let (_, run) = under_vtime(MACHINE, "bus", 2, "rdv", &[]);
    assert!(!run.success(), "vtime ran the bus model:\n{}", run.stderr);
    assert!(
        run.stderr
            .contains("needs a global view of the messages in flight")
            && run.stderr.contains("--vranks"),
        "{}",
        run.stderr
    );
}

/// The sizes of `overtake.c`'s five receives, in posting order.
const OVERTAKE: [u64; 5] = [2 << 20, 8, 8, 8, 64 << 10];

/// Rank 1's receives of `overtake.c` as they completed: index in posting
/// order and time, us rounded to the ns, from its `overtake: recv I at_s
/// T` lines.
fn overtaken(run: &Run) -> Vec<(usize, f64)> {
    run.lines("overtake: recv ")
        .iter()
        .map(|line| {
            let w: Vec<&str> = line.split_whitespace().collect();
            let t: f64 = w[4].parse().expect("a time");
            (w[2].parse().expect("an index"), (t * 1e9).round() / 1e3)
        })
        .collect()
}

#[test]
fn small_messages_overtake_a_rendezvous_alike_in_every_mode() {
    // 2 MiB (a rendezvous), three 8 B of its tag, 64 KiB of another, at
    // 10 us and 1 GB/s: the small ones complete one latency after the
    // start, the 64 KiB after its own transfer, neither waits for the
    // 2 MiB's data.
    let want = [(1, 10.008), (2, 10.008), (3, 10.008), (4, 75.536), (0, 2107.152)];
    let (_, vtime) = under_vtime(MACHINE, "simple", 2, "overtake", &[]);
    vtime.assert_ok();
    let (_, one) = under_vranks(MACHINE, "simple", 1, 2, "overtake", &[], false);
    one.assert_ok();
    let (case, two) = under_vranks(MACHINE, "simple", 2, 2, "overtake", &[], true);
    two.assert_ok();
    for (way, run) in [
        ("vtime", &vtime),
        ("vranks in 1 process", &one),
        ("vranks in 2 processes", &two),
    ] {
        assert_eq!(overtaken(run), want, "{way}:\n{}\n{}", run.stdout, run.stderr);
    }
    let ways = [
        ("vtime", ends(&vtime, "overtake", 2)),
        ("vranks in 1 process", ends(&one, "overtake", 2)),
        ("vranks in 2 processes", ends(&two, "overtake", 2)),
        ("replay of the trace", replayed_ends(&case, "simple")),
    ];
    agree("overtake", "simple", &ways);
    // The replay's receives at rank 1, by completion: the same sizes at
    // the same times.
    let v = replayed(&case, "simple", &["--receives"]);
    let got: Vec<(u64, f64)> = v["receives"]
        .as_array()
        .expect("receives")
        .iter()
        .filter(|r| r["dst"] == 1)
        .map(|r| {
            let t = r["received_s"].as_f64().expect("received_s");
            (r["bytes"].as_u64().expect("bytes"), (t * 1e9).round() / 1e3)
        })
        .collect();
    let sized: Vec<(u64, f64)> = want.iter().map(|&(i, t)| (OVERTAKE[i], t)).collect();
    assert_eq!(got, sized, "{v}");
}

/// `rma_types.c` (a put and a request-form get through a strided target
/// datatype, a fetching accumulate, `MPI_MAXLOC` of `MPI_DOUBLE_INT`
/// pairs) finds its data as the native MPI delivers it, run natively, as
/// virtual ranks in one process and spread over two, where its target
/// datatypes cross as byte runs and its basic types as indexes, and
/// under vtime; all three end every rank at the same nanosecond, and the
/// replay of the spread run's trace there too.
#[test]
fn one_sided_datatypes_cross_processes_as_the_native_mpi_delivers_them() {
    let checked = |run: &Run, way: &str| {
        run.assert_ok();
        let lines = run.lines("rma_types: rank ");
        assert!(
            lines.len() == 4 && lines.iter().all(|l| l.ends_with(" ok 1")),
            "{way}:\n{}\n{}",
            run.stdout,
            run.stderr
        );
    };
    let native = Case::new().mpirun(4, &program("rma_types", Link::Native), &[]);
    checked(&native, "natively");
    let machine = two_nodes();
    for model in ["simple", "loggp"] {
        let (_, one) = under_vranks(&machine, model, 1, 4, "rma_types", &[], false);
        let (case, two) = under_vranks(&machine, model, 2, 4, "rma_types", &[], true);
        checked(&one, "in one process");
        checked(&two, "spread over two processes");
        let (_, vtime) = under_vtime(&machine, model, 4, "rma_types", &[]);
        checked(&vtime, "under vtime");
        let spread = ends(&two, "rma_types", 4);
        assert_eq!(ends(&one, "rma_types", 4), spread, "{model}: one process and two");
        assert_eq!(
            ends(&vtime, "rma_types", 4),
            spread,
            "{model}: vtime and two processes"
        );
        for (r, (x, y)) in spread.iter().zip(&replayed_ends(&case, model)).enumerate() {
            assert!(
                (x - y).abs() <= 1e-9,
                "{model}: rank {r} ends at {x} s spread, at {y} s in the replay"
            );
        }
    }
}
