//! Virtual ranks (modules/vranks, `pnmpi run --vranks N`) under real
//! mpirun, in one process and spread over two or more: a program whose
//! ranks keep different values in their globals prints what a normal run
//! of as many processes prints; a ping-pong's round trip is the model's
//! to the nanosecond, across processes; a stencil times exactly as one
//! process per rank, in 1, 2 and 3 processes (a bulk-synchronous program
//! with compute counted: `vranks_timing.rs`); a wildcard receive takes the message that arrives first in virtual
//! time, not the one sent first in real time; a hello world runs at
//! 16,384 ranks; and a bad rank count, a too-small stack, a stack
//! overflow, an unsupported routine, more processes than ranks and a
//! network without latency each stop the run naming what is wrong. The
//! programs of `c-tests/vranks/` check what virtual ranks once got wrong: an `atexit`
//! handler's `MPI_Finalized`, a deadlock in `MPI_Probe`, thread levels
//! and a rank's own thread calling MPI, the nonblocking `v` collectives
//! and scans against the blocking ones, and an overflow report that
//! does not allocate.

use crate::common;
use common::*;

/// Runs `c-tests/programs/<name> args` as `n` virtual ranks in one
/// process, with `conf` as the configuration (vtime's arguments).
fn vranks(n: &str, extra: &[&str], name: &str, args: &[&str], conf: Option<&str>) -> Run {
    vranks_in(1, n, extra, name, args, conf)
}

/// The lines of `run`'s output that start with `prefix`, sorted (the
/// ranks of a normal run print in any order).
fn sorted_lines(run: &Run, prefix: &str) -> Vec<String> {
    let mut l: Vec<String> = run.lines(prefix).iter().map(|l| l.to_string()).collect();
    l.sort();
    l
}

/// Runs the program `exe` as `n` virtual ranks in `procs` processes.
fn vranks_exe(case: &Case, procs: usize, n: u32, exe: &std::path::Path) -> Run {
    let mut cmd = launcher(procs);
    cmd.arg(target_dir().join("pnmpi"))
        .arg("run")
        .arg(format!("--vranks={n}"))
        .arg("--")
        .arg(exe);
    case.finish(cmd)
}

#[test]
fn per_rank_globals_print_what_64_processes_print() {
    let native = Case::new().mpirun(64, &program("vglobals", Link::Native), &[]);
    native.assert_ok();
    let virt = vranks_in(2, "64", &[], "vglobals", &[], None);
    virt.assert_ok();
    let (a, b) = (native.lines("vglobals:"), virt.lines("vglobals:"));
    assert_eq!(a.len(), 64, "{}", native.stdout);
    assert_eq!(a, b, "virtual ranks differ from processes:\n{}", virt.stderr);
    // The program really keeps different values per rank.
    assert!(
        b[5].contains("counter 12 ") && b[63].contains("counter 128 "),
        "{}",
        virt.stdout
    );
    assert!(
        virt.stderr.contains("64 virtual ranks in 2 processes"),
        "{}",
        virt.stderr
    );
    // The two processes' ranks exchanged messages and collectives.
    assert!(
        virt.stderr.contains("records between processes"),
        "{}",
        virt.stderr
    );
}

#[test]
fn a_1mb_ping_pong_round_trip_is_2020_us() {
    // 2 x (10 us + 1,000,000 B / 1 GB/s) = 2020 us.
    let exact = "module vtime\nargument latency 10us\nargument bandwidth 1GB/s\nargument cpu_factor 0\n";
    for procs in [1, 2] {
        let run = vranks_in(procs, "2", &[], "pingpong", &["20", "1000000"], Some(exact));
        run.assert_ok();
        assert_eq!(field(&run, "pingpong:", "us_per_round"), 2020.0, "{}", run.stderr);
    }
    // With the measured compute counted (cpu_factor 1): the program
    // computes nothing between its calls, so what is counted is the CPU
    // time of the thread-CPU clock reads beyond the one calibrated at
    // start, never less than nothing (an over-subtracted bias would show
    // below 2020). The reads' cost is measured CPU time, 0.04 to 0.07 %
    // on a quiet machine and 0.7 % beside two CPU hogs (their caches):
    // 10 % would be compute counted that is not the program's.
    let counted = "module vtime\nargument latency 10us\nargument bandwidth 1GB/s\n";
    let run = vranks("2", &[], "pingpong", &["20", "1000000"], Some(counted));
    run.assert_ok();
    let us = field(&run, "pingpong:", "us_per_round");
    assert!((2020.0..2020.0 * 1.1).contains(&us), "{us} us");
}

#[test]
fn a_wildcard_receive_takes_the_first_arrival_in_virtual_time() {
    // Rank 1 sends 1 MB at once (eager: 1010 us on the wire), rank 2
    // computes (about 0.1 to 1 ms here) and then sends 8 B (10 us).
    let conf = "module vtime\nargument latency 10us\nargument bandwidth 1GB/s\nargument eager 4MiB\n";
    let run = vranks("3", &[], "vwildcard", &["1000000", "100000"], Some(conf));
    run.assert_ok();
    let line = run.lines("vwildcard:").join("\n");
    assert_eq!(field(&run, "vwildcard:", "first_posted_real"), 1.0, "{line}");
    let t = field(&run, "vwildcard:", "t_us");
    if t < 1010.0 {
        assert_eq!(field(&run, "vwildcard:", "first_matched"), 2.0, "{line}");
    } else {
        panic!("rank 2 computed longer than the large message's transfer ({t} us); lower the spin: {line}");
    }
}

#[test]
fn a_hello_world_runs_at_16384_ranks() {
    let run = vranks("16384", &[], "vhello", &[], None);
    run.assert_ok();
    assert_eq!(
        run.lines("vhello:"),
        ["vhello: ranks 16384 sum 134209536 ok"],
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("min") && run.stderr.contains("max"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_bad_rank_count_is_refused_naming_it() {
    for bad in ["abc", "0", "-3", "99999999999"] {
        let run = vranks(bad, &[], "vhello", &[], None);
        assert!(!run.success(), "{bad}: {}", run.stdout);
        assert!(
            run.stderr.contains(&format!("--vranks) `{bad}`")),
            "{bad}: {}",
            run.stderr
        );
        assert!(run.lines("vhello:").is_empty());
    }
}

#[test]
fn a_too_small_stack_is_refused_and_an_overflow_names_the_rank() {
    let run = vranks("4", &["--vrank-stack", "4K"], "voverflow", &[], None);
    assert!(!run.success());
    assert!(
        run.stderr.contains("`4K`: a stack of 4096 bytes is too small"),
        "{}",
        run.stderr
    );
    let run = vranks("4", &["--vrank-stack", "1M"], "voverflow", &["100"], None);
    assert!(!run.success(), "{}", run.stdout);
    assert!(
        run.stderr
            .contains("virtual rank 3 overflowed its stack of 1024 KiB"),
        "{}",
        run.stderr
    );
    // The same depth fits in the default 8 MiB.
    let run = vranks("4", &[], "voverflow", &["100"], None);
    run.assert_ok();
    assert_eq!(run.lines("voverflow:").len(), 1, "{}", run.stderr);
}

#[test]
fn an_unsupported_routine_stops_the_run_naming_it() {
    let run = vranks("4", &[], "vunsupported", &[], None);
    assert!(!run.success(), "{}", run.stdout);
    assert!(
        run.stderr
            .contains("MPI_File_open: not supported with virtual ranks"),
        "{}",
        run.stderr
    );
    assert!(run.lines("vunsupported: after").is_empty(), "{}", run.stdout);
}

#[test]
fn pnmpi_vranks_reruns_a_program_linked_with_lpnmpi_as_virtual_ranks() {
    let mut case = Case::new();
    case.env("PNMPI_VRANKS", "8");
    let run = case.mpirun(1, &program("vglobals", Link::Pnmpi), &[]);
    run.assert_ok();
    let lines = run.lines("vglobals:");
    assert_eq!(lines.len(), 8, "{}\n{}", run.stdout, run.stderr);
    assert!(
        lines[7].starts_with("vglobals: rank 7 counter 16 "),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr.contains("8 virtual ranks in 1 process"),
        "{}",
        run.stderr
    );
}

/// Each rank's line of the report's table (up to 16 ranks): its virtual
/// time is its compute, communication and wait, to the nanosecond.
fn assert_columns_add_up(run: &Run) {
    let rows: Vec<Vec<f64>> = run
        .stderr
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w.len() == 7 && w[0].parse::<u32>().is_ok())
        .map(|w| w[2..6].iter().map(|x| x.parse().unwrap()).collect())
        .collect();
    assert!(!rows.is_empty(), "no table:\n{}", run.stderr);
    for r in rows {
        assert!(
            (r[0] - (r[1] + r[2] + r[3])).abs() <= 2e-9,
            "virtual {} s is not compute {} + comm {} + wait {}:\n{}",
            r[0],
            r[1],
            r[2],
            r[3],
            run.stderr
        );
    }
}

#[test]
fn a_stencil_times_the_same_as_one_process_per_rank() {
    // Compute ignored (cpu_factor 0): the network and collective models
    // alone, which both modes evaluate alike.
    let args = "argument latency 5us\nargument bandwidth 1GB/s\nargument cpu_factor 0\n";
    let mut case = Case::new();
    let lib = target_dir().join("libvtime.so");
    case.conf(&format!("module {}\n{args}", lib.display()));
    let processes = case.mpirun(16, &program("stencil", Link::Pnmpi), &["64", "100", "10"]);
    processes.assert_ok();
    let p = virtual_run_time(&processes);
    assert!(p > 0.0, "{}", processes.stderr);
    for procs in [1, 2, 3] {
        let virt = vranks_in(
            procs,
            "16",
            &[],
            "stencil",
            &["64", "100", "10"],
            Some(&format!("module vtime\n{args}")),
        );
        virt.assert_ok();
        assert_columns_add_up(&virt);
        let v = virtual_run_time(&virt);
        assert!(
            (p - v).abs() <= 1e-9,
            "processes {p} s, virtual ranks in {procs} processes {v} s"
        );
        assert_eq!(processes.lines("stencil:"), virt.lines("stencil:"));
    }
}

#[test]
fn a_tour_of_the_provided_mpi_prints_what_processes_print() {
    // Nonblocking collectives, persistent requests, Waitany/some, Testany,
    // probes, a vector datatype, a Cartesian grid, groups, MAXLOC, a
    // non-commutative user operation on a derived type, the v collectives.
    let native = Case::new().mpirun(12, &program("vfeatures", Link::Native), &[]);
    native.assert_ok();
    assert_eq!(native.lines("vfeatures:").len(), 12, "{}", native.stdout);
    // In one process, and in 3 (blocks of 4 ranks: every communicator
    // the tour builds crosses processes).
    for procs in [1, 3] {
        let virt = vranks_in(procs, "12", &[], "vfeatures", &[], None);
        virt.assert_ok();
        assert_eq!(
            native.lines("vfeatures:"),
            virt.lines("vfeatures:"),
            "{procs} processes: {}",
            virt.stderr
        );
    }
}

#[test]
fn a_fortran_common_block_is_private_to_each_rank() {
    let case = Case::new();
    let exe = case.dir().join("vcommon");
    let out = std::process::Command::new(mpif90())
        .args(["-O2", "-o"])
        .arg(&exe)
        .arg(repo().join("c-tests/fortran/vcommon.f90"))
        .output()
        .expect("mpif90 runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let virt = vranks_exe(&case, 2, 64, &exe);
    virt.assert_ok();
    let native = case.mpirun(64, &exe, &[]);
    native.assert_ok();
    assert_eq!(native.lines("vcommon:").len(), 64, "{}", native.stdout);
    assert_eq!(
        native.lines("vcommon:"),
        virt.lines("vcommon:"),
        "{}",
        virt.stderr
    );
}

#[test]
fn every_fortran_binding_runs_as_virtual_ranks() {
    // calls.F90 under mpif.h, use mpi and use mpi_f08: point-to-point,
    // nonblocking requests, a split communicator and a C library's calls,
    // as 2 virtual ranks in 2 processes, print what 2 processes print.
    for binding in ["mpif.h", "use mpi", "use mpi_f08"] {
        let exe = fortran_calls(binding);
        let case = Case::new();
        let native = case.mpirun(2, &exe, &[]);
        native.assert_ok();
        let virt = vranks_exe(&case, 2, 2, &exe);
        virt.assert_ok();
        let (a, b) = (
            sorted_lines(&native, "calls result"),
            sorted_lines(&virt, "calls result"),
        );
        assert_eq!(a.len(), 2, "{binding}: {}", native.stdout);
        assert_eq!(a, b, "{binding}: {}", virt.stderr);
        if FLAVOR == "openmpi" {
            // Open MPI's bindings call PMPI_ routines: bound to the ranks.
            assert!(
                virt.stderr.contains("PMPI_ routines bound to the virtual ranks"),
                "{binding}: {}",
                virt.stderr
            );
        }
    }
}

#[test]
fn more_processes_than_ranks_are_refused_and_a_network_without_latency_runs_in_one_engine() {
    let run = vranks_in(3, "2", &[], "vhello", &[], None);
    assert!(!run.success(), "{}", run.stdout);
    assert!(
        run.stderr.contains("3 processes for 2 virtual ranks"),
        "{}",
        run.stderr
    );
    // No latency, no time window: process 0 runs the 4 ranks, and says so.
    let conf = "module vtime\nargument latency 0us\nargument bandwidth 1GB/s\n";
    let run = vranks_in(2, "4", &[], "vhello", &[], Some(conf));
    run.assert_ok();
    assert!(
        run.stderr
            .contains("model simple cannot spread the ranks over 2 processes")
            && run.stderr.contains("process 0 runs all 4 ranks"),
        "{}",
        run.stderr
    );
    assert_eq!(
        run.lines("vhello:"),
        ["vhello: ranks 4 sum 6 ok"],
        "{}",
        run.stdout
    );
}

#[test]
fn a_shared_library_of_the_application_and_thread_locals_are_private_to_each_rank() {
    // ownlib_main.c keeps per-rank state in libownlib.so (a static) and
    // in thread-local variables of both; 2 ranks per process share them
    // unless they are privatized.
    let case = Case::new();
    let dir = case.dir();
    let lib = dir.join("libownlib.so");
    let exe = dir.join("ownlib_main");
    let cc = |args: &[&std::ffi::OsStr]| {
        let out = std::process::Command::new(mpicc())
            .args(args)
            .output()
            .expect("mpicc runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    let src = |f: &str| repo().join("c-tests/vranks").join(f);
    cc(&[
        "-shared".as_ref(),
        "-fPIC".as_ref(),
        "-O2".as_ref(),
        "-o".as_ref(),
        lib.as_os_str(),
        src("ownlib.c").as_os_str(),
    ]);
    let rpath = format!("-Wl,-rpath,{}", dir.display());
    let libdir = format!("-L{}", dir.display());
    cc(&[
        "-O2".as_ref(),
        "-o".as_ref(),
        exe.as_os_str(),
        src("ownlib_main.c").as_os_str(),
        libdir.as_ref(),
        "-lownlib".as_ref(),
        rpath.as_ref(),
    ]);
    let native = case.mpirun(4, &exe, &[]);
    native.assert_ok();
    let virt = vranks_exe(&case, 2, 4, &exe);
    virt.assert_ok();
    let (a, b) = (sorted_lines(&native, "ownlib:"), sorted_lines(&virt, "ownlib:"));
    assert_eq!(a.len(), 4, "{}", native.stdout);
    assert_eq!(a, b, "{}", virt.stderr);
    // Rank 1 bumped twice by 2 (4 in all; thread-local 8).
    assert!(
        virt.stdout.contains("ownlib: rank 1 value 4008 tls 7"),
        "{}",
        virt.stdout
    );
    assert!(virt.stderr.contains("libownlib.so"), "{}", virt.stderr);
}

#[test]
fn a_rank_polling_for_a_message_from_another_process_lets_time_pass() {
    // The last rank loops on MPI_Iprobe for rank 0's message, which
    // another process sends after computing: the poller must yield to
    // the windows, or the run would spin forever.
    for procs in [1, 2] {
        let run = vranks_in(procs, "2", &[], "vpoll", &["2000000"], None);
        run.assert_ok();
        assert_eq!(
            run.lines("vpoll:"),
            ["vpoll: rank 1 got 44 after some polls"],
            "{procs} processes: {}",
            run.stderr
        );
    }
}

#[test]
fn algorithmic_collectives_time_as_under_vtime() {
    // A machine file that expands every collective into its algorithm's
    // messages (two levels, rendezvous halos): the stencil's allreduces
    // are replayed by pnmpi sim's engine in both modes, from each
    // member's own entry, so 16 virtual ranks in 2 processes time the run
    // as 16 processes under vtime, with either model.
    let machine = "[machine]\nnodes = 4\ncores_per_node = 4\n[network]\neager_threshold = \"256B\"\n\
         [network.intra]\nlatency = \"0.5us\"\nbandwidth = \"8GB/s\"\n\
         [network.inter]\nlatency = \"2us\"\nbandwidth = \"5GB/s\"\n\
         [collectives]\nmode = \"algorithmic\"\n\
         [model.loggp]\nL = \"1.5us\"\no = \"0.5us\"\ng = \"0.2us\"\nG = \"0.2ns\"\n";
    let prog = ["64", "100", "10"];
    for model in ["simple", "loggp"] {
        let args = format!("argument machine m.toml\nargument model {model}\nargument cpu_factor 0\n");
        let mut case = Case::new();
        case.write("m.toml", machine);
        let lib = target_dir().join("libvtime.so");
        case.conf(&format!("module {}\n{args}", lib.display()));
        let processes = case.mpirun(16, &program("stencil", Link::Pnmpi), &prog);
        processes.assert_ok();
        let mut case = Case::new();
        case.write("m.toml", machine);
        case.write("vtime.conf", &format!("module vtime\n{args}"));
        case.env("PNMPI_LIB_PATH", "");
        let mut cmd = launcher(2);
        cmd.arg(target_dir().join("pnmpi"))
            .args(["run", "--vranks=16", "--conf", "vtime.conf", "--"])
            .arg(program("stencil", Link::Native))
            .args(prog);
        let virt = case.finish(cmd);
        virt.assert_ok();
        let (p, v) = (virtual_run_time(&processes), virtual_run_time(&virt));
        assert!(
            p > 0.0 && (p - v).abs() <= 1e-9,
            "{model}: processes {p} s, virtual ranks {v} s\n{}",
            virt.stderr
        );
    }
}

/// The rank files a traced run left in `case`'s folder `dir`: their names,
/// sorted.
fn rank_files(case: &Case, dir: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(case.dir().join(dir))
        .expect("the trace folder")
        .map(|e| e.expect("an entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// `pnmpi trace merge tr -o t.pnt` in `case`'s folder.
fn merge_traced(case: &Case) -> std::process::Output {
    std::process::Command::new(target_dir().join("pnmpi"))
        .args(["trace", "merge", "tr", "-o", "t.pnt"])
        .current_dir(case.dir())
        .output()
        .expect("pnmpi runs")
}

/// Runs `name args` as `n` virtual ranks in 2 processes with the tracer
/// (into `tr`) above vtime on `machine` (written as `m.toml`), with
/// vtime's further `args` lines.
fn traced_vranks(machine: &str, vtime: &str, n: u32, name: &str, args: &[&str]) -> (Case, Run) {
    let mut case = Case::new();
    case.write("m.toml", machine);
    case.write(
        "traced.conf",
        &format!("module tracer\nargument outdir tr\nmodule vtime\nargument machine m.toml\n{vtime}"),
    );
    case.env("PNMPI_LIB_PATH", "");
    let mut cmd = launcher(2);
    cmd.arg(target_dir().join("pnmpi"))
        .args(["run", &format!("--vranks={n}"), "--conf", "traced.conf", "--"])
        .arg(program(name, Link::Native))
        .args(args);
    let run = case.finish(cmd);
    run.assert_ok();
    (case, run)
}

#[test]
fn the_tracer_above_virtual_ranks_writes_a_rank_file_each_that_replays_to_their_time() {
    // The stencil at 16 virtual ranks in 2 processes, traced on the
    // virtual clock, compute ignored: `pnmpi sim replay` of the folder
    // predicts the run time the virtual ranks reported, to the ns, with
    // analytic collectives and with every collective expanded into its
    // algorithm's messages, under simple and loggp.
    let loggp = "[model.loggp]\nL = \"1.5us\"\no = \"0.5us\"\ng = \"0.2us\"\nG = \"0.2ns\"\n";
    let analytic =
        format!("[machine]\nnodes = 16\n[network]\nlatency = \"2us\"\nbandwidth = \"5GB/s\"\n{loggp}");
    let algorithmic = format!(
        "[machine]\nnodes = 4\ncores_per_node = 4\n[network]\neager_threshold = \"256B\"\n\
         [network.intra]\nlatency = \"0.5us\"\nbandwidth = \"8GB/s\"\n\
         [network.inter]\nlatency = \"2us\"\nbandwidth = \"5GB/s\"\n\
         [collectives]\nmode = \"algorithmic\"\n{loggp}"
    );
    let prog = ["64", "100", "10"];
    for machine in [&analytic, &algorithmic] {
        for model in ["simple", "loggp"] {
            let cpu0 = format!("argument model {model}\nargument cpu_factor 0\n");
            let (case, virt) = traced_vranks(machine, &cpu0, 16, "stencil", &prog);
            let expected: Vec<String> = (0..16).map(|r| format!("rank-{r:05}.pnr")).collect();
            assert_eq!(rank_files(&case, "tr"), expected, "{}", virt.stderr);
            let v = virtual_run_time(&virt);
            let replayed = replay_runtime(&case, "tr", model);
            assert!(
                v > 0.0 && (v - replayed).abs() <= 1e-9,
                "{model}: virtual ranks {v} s, the replay of their trace {replayed} s\n{}",
                virt.stderr
            );
        }
    }
}

#[test]
fn a_traced_run_with_compute_and_many_routines_merges_and_replays() {
    // The ring halo with compute counted: the trace's gaps are the compute
    // the virtual ranks charged, so its replay predicts their time (to the
    // ns a call, the trace's unit). vfeatures' nonblocking and persistent
    // requests, Test loops, wildcards, v collectives and communicators
    // merge into a trace of 12 ranks that replays.
    let machine = "[machine]\nnodes = 16\n[network]\nlatency = \"5us\"\nbandwidth = \"1GB/s\"\n";
    let (case, virt) = traced_vranks(machine, "", 16, "halo", &["8192", "50", "200", "1"]);
    let v = virtual_run_time(&virt);
    let replayed = replay_runtime(&case, "tr", "simple");
    assert!(
        v > 0.01 && (v - replayed).abs() <= 1e-6 * v,
        "virtual ranks {v} s, the replay of their trace {replayed} s\n{}",
        virt.stderr
    );

    let (case, virt) = traced_vranks(machine, "argument cpu_factor 0\n", 12, "vfeatures", &[]);
    assert_eq!(rank_files(&case, "tr").len(), 12, "{}", virt.stderr);
    let merged = merge_traced(&case);
    let said = String::from_utf8_lossy(&merged.stderr);
    assert!(merged.status.success() && !said.contains("warning"), "{said}");
    let replayed = replay_runtime(&case, "t.pnt", "simple");
    let v = virtual_run_time(&virt);
    assert!(
        (v - replayed).abs() <= 0.01 * v,
        "virtual ranks {v} s, the replay of their trace {replayed} s"
    );
}

#[test]
fn a_traced_run_that_stops_leaves_partial_rank_files_that_merge() {
    // vunsupported stops at MPI_File_open after a barrier: what each rank
    // recorded is written to its .part file, which the merge reads as
    // unfinished. In one process: across processes, the first to stop
    // aborts the others, which may be killed before they write (MPICH
    // kills at once).
    let mut case = Case::new();
    case.write("traced.conf", "module tracer\nargument outdir tr\n");
    case.env("PNMPI_LIB_PATH", "");
    let mut cmd = launcher(1);
    cmd.arg(target_dir().join("pnmpi"))
        .args(["run", "--vranks=4", "--conf", "traced.conf", "--"])
        .arg(program("vunsupported", Link::Native));
    let run = case.finish(cmd);
    assert!(!run.success(), "{}", run.stderr);
    let parts: Vec<String> = (0..4).map(|r| format!("rank-{r:05}.pnr.part")).collect();
    assert_eq!(rank_files(&case, "tr"), parts, "{}", run.stderr);
    let merged = merge_traced(&case);
    let said = String::from_utf8_lossy(&merged.stderr);
    assert!(merged.status.success(), "{said}");
    assert_eq!(said.matches("did not reach MPI_Finalize").count(), 4, "{said}");
    // Every rank's MPI_Init, and the barrier of each rank that left it
    // before the first rank stopped the run.
    let out = String::from_utf8_lossy(&merged.stdout);
    let events: u32 = out
        .split("4 ranks, ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{out}"));
    assert!((5..=8).contains(&events), "{out}");
}

/// Builds `c-tests/vranks/<name>.c` (natively linked) into `case`'s
/// folder.
fn vranks_program(case: &Case, name: &str) -> std::path::PathBuf {
    let exe = case.dir().join(name);
    let out = std::process::Command::new(mpicc())
        .args(["-O2", "-g", "-o"])
        .arg(&exe)
        .arg(repo().join("c-tests/vranks").join(format!("{name}.c")))
        .output()
        .expect("mpicc runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    exe
}

/// Runs `c-tests/vranks/<name> args` as `n` virtual ranks in `procs`
/// processes, stopped after `seconds`.
fn vranks_c(procs: usize, n: u32, name: &str, args: &[&str], seconds: u32) -> Run {
    let mut case = Case::new();
    case.env("PNMPI_LIB_PATH", "");
    let exe = vranks_program(&case, name);
    let mut cmd = launcher_within(procs, seconds);
    cmd.arg(target_dir().join("pnmpi"))
        .args(["run", &format!("--vranks={n}"), "--"])
        .arg(exe)
        .args(args);
    case.finish(cmd)
}

#[test]
fn an_atexit_handler_after_finalize_is_told_mpi_is_finalized() {
    for procs in [1, 2] {
        let run = vranks_c(procs, 2, "atexit_fin", &[], 60);
        run.assert_ok();
        assert_eq!(
            run.lines("atexit_fin:"),
            ["atexit_fin: finalized=1 initialized=1"],
            "{procs} processes: {}",
            run.stderr
        );
    }
}

#[test]
fn a_deadlock_in_probe_is_reported_naming_the_ranks_and_the_routine() {
    for procs in [1, 2] {
        let started = std::time::Instant::now();
        let run = vranks_c(procs, 3, "probe_deadlock", &[], 60);
        // `timeout` ends a hung run with 124.
        assert!(
            run.code.is_some_and(|c| c != 0 && c != 124),
            "{procs} processes: {:?} after {:?}\n{}",
            run.code,
            started.elapsed(),
            run.stderr
        );
        assert!(run.lines("probe_deadlock:").is_empty(), "{}", run.stdout);
        let said = run
            .stderr
            .lines()
            .filter(|l| l.contains("deadlock"))
            .collect::<Vec<_>>()
            .join("\n");
        for rank in ["0 in MPI_Probe", "1 in MPI_Probe"] {
            assert!(
                said.contains(rank),
                "{procs} processes, no `{rank}`: {}",
                run.stderr
            );
        }
    }
}

#[test]
fn thread_levels_are_granted_only_as_far_as_they_hold() {
    // MPI_THREAD_FUNNELED (1) at most: every rank is one context of the
    // process's main thread, scheduled without locks.
    for (asked, given) in [("0", 0), ("1", 1), ("2", 1), ("3", 1)] {
        let run = vranks_c(1, 2, "thread_level", &[asked], 60);
        run.assert_ok();
        let expected: Vec<String> = (0..2)
            .map(|r| format!("thread_level: rank {r} required {asked} provided {given} query {given}"))
            .collect();
        assert_eq!(sorted_lines(&run, "thread_level:"), expected, "{}", run.stderr);
    }
}

#[test]
fn an_mpi_call_from_another_thread_of_a_rank_is_a_clear_error() {
    // The thread may ask MPI_Initialized (legal in any thread), but not
    // call MPI_Comm_size under MPI_THREAD_FUNNELED: the scheduler's
    // state has no lock.
    let run = vranks_c(1, 2, "thread_level", &["1", "thread"], 60);
    assert!(!run.success(), "{}", run.stdout);
    assert_eq!(
        run.lines("thread_level: thread"),
        ["thread_level: thread initialized 1"],
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(
            "an MPI call from a thread of a virtual rank other than the rank itself: virtual ranks provide MPI_THREAD_FUNNELED at most"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn the_nonblocking_vector_collectives_and_scans_give_what_the_blocking_ones_give() {
    // 5 ranks: uneven blocks; in 2 processes, every collective crosses.
    let case = Case::new();
    let exe = vranks_program(&case, "icoll_v");
    let native = case.mpirun(5, &exe, &[]);
    native.assert_ok();
    let names = [
        "alltoallv",
        "allgatherv",
        "gatherv",
        "scatterv",
        "reduce_scatter",
        "reduce_scatter_block",
        "scan",
        "exscan",
    ];
    let expected = sorted_lines(&native, "icoll_v:");
    assert_eq!(expected.len(), 5 * names.len(), "{}", native.stdout);
    assert!(
        expected.iter().all(|l| l.contains(" same 1 ")),
        "{}",
        native.stdout
    );
    let conf = "module vtime\nargument latency 3us\nargument bandwidth 1GB/s\nargument cpu_factor 0\n";
    for procs in [1, 2] {
        let mut case = Case::new();
        case.env("PNMPI_LIB_PATH", "");
        case.write("vtime.conf", conf);
        let exe = vranks_program(&case, "icoll_v");
        let mut cmd = launcher(procs);
        cmd.arg(target_dir().join("pnmpi"))
            .args(["run", "--vranks=5", "--conf", "vtime.conf", "--"])
            .arg(exe);
        let virt = case.finish(cmd);
        virt.assert_ok();
        assert_eq!(
            sorted_lines(&virt, "icoll_v:"),
            expected,
            "{procs} processes: {}",
            virt.stderr
        );
        // The same collective model times both forms: to the ns, and
        // more than a latency.
        let times = virt.lines("icoll_v_time:");
        assert_eq!(times.len(), 5 * names.len(), "{}", virt.stdout);
        for l in times {
            let w: Vec<&str> = l.split_whitespace().collect();
            let (b, n): (f64, f64) = (w[5].parse().unwrap(), w[7].parse().unwrap());
            assert!(b >= 3000.0 && b == n, "{procs} processes: {l}");
        }
    }
}

#[test]
fn the_stack_overflow_report_does_not_allocate() {
    // Rank 3 overflows its 1 MiB stack into its guard page; the program's
    // allocator stops the run if the handler calls it.
    let mut case = Case::new();
    case.env("PNMPI_LIB_PATH", "");
    let exe = vranks_program(&case, "overflow_nomalloc");
    let mut cmd = launcher_within(1, 60);
    cmd.arg(target_dir().join("pnmpi"))
        .args(["run", "--vranks=4", "--vrank-stack", "1M", "--"])
        .arg(exe);
    let run = case.finish(cmd);
    assert!(!run.success(), "{}", run.stdout);
    assert!(!run.stderr.contains("the allocator was called"), "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "pnmpi vranks: error: virtual rank 3 overflowed its stack of 1024 KiB; give it more with --vrank-stack"
        ),
        "{}",
        run.stderr
    );
}
