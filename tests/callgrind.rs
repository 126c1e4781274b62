//! What the bundled tools cost in instructions, counted by valgrind's
//! callgrind, which counts exactly where wall time on a shared VM varies by
//! 10 to 20 % between identical runs (docs/performance.md, "The tools on
//! real applications, in instructions"). Each program runs on 2 ranks natively (no libpnmpi)
//! and under the tracer, the profiler and the checker (first in the chain,
//! libpnmpi preloaded as `pnmpi run` does), each at two run lengths.
//!
//! Every process's instructions are split by the object that ran them:
//! the application's own (its executable, the libraries beside it, and
//! its runtime: libstdc++, libgfortran, libm, BLAS), the MPI library's,
//! libc's and the loader's, and the tool's (libpnmpi and the module). A
//! tool's cost is its objects plus what its calls into libc and the
//! loader ran (their inclusive cost). Its cost per MPI call is the difference of the
//! two run lengths over the difference of their MPI calls (the calls from
//! the application's objects into MPI's, counted by callgrind in the
//! native run); what runs once (start-up, `MPI_Finalize`, the report) is
//! the rest. Benchmark, ignored by default:
//!
//! ```sh
//! cargo test --release --test suite -- --ignored --nocapture callgrind::
//! CALLGRIND_APPS=deep cargo test ...   # some of: deep, lammps, fortran, cg, self
//! CALLGRIND_TOOLS=checker cargo test ...   # some of: tracer, tracer-nosites (`argument sites off`), profiler, checker
//! MPIP_LIB=/path/libmpiP.so cargo test ...   # also under LLNL's mpiP
//! CALLGRIND_KEEP=/tmp/cg cargo test ...   # keeps the callgrind files there
//! ```
//!
//! With `MPIP_LIB`, each program also runs under mpiP (preloaded, as its
//! users run it), whose objects (libmpiP, libunwind, libbfd) are split the
//! same way, and each bundled tool's figures are printed as a ratio of
//! mpiP's.

use crate::common;
use common::*;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// Where an object's instructions are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    App,
    Mpi,
    Libc,
    Tool,
    /// valgrind's own preloads and code of no known object.
    Other,
}

/// Libraries the application's own code runs in: its runtime, and
/// LAMMPS's library and the math libraries it calls.
const APP_LIBRARIES: [&str; 10] = [
    "libstdc++",
    "libgfortran",
    "libquadmath",
    "libm.so",
    "libgcc_s",
    "libgomp",
    "libblas",
    "liblapack",
    "libfftw3",
    "liblammps",
];

/// The libraries mpiP runs its stack walk and source lookup in (libiberty
/// is linked into libmpiP itself).
const MPIP_LIBRARIES: [&str; 3] = ["libunwind", "libbfd", "libsframe"];

/// The mpiP library to measure, if `MPIP_LIB` names one.
fn mpip_lib() -> Option<PathBuf> {
    std::env::var_os("MPIP_LIB").map(PathBuf::from)
}

fn class(object: &str, app_dir: &Path) -> Class {
    let name = object.rsplit('/').next().unwrap_or(object);
    let mpip = mpip_lib().is_some_and(|lib| Path::new(object) == lib)
        || MPIP_LIBRARIES.iter().any(|l| name.starts_with(l));
    if object.starts_with(&target_dir().display().to_string()) || mpip {
        Class::Tool
    } else if Path::new(object).parent() == Some(app_dir) || APP_LIBRARIES.iter().any(|r| name.starts_with(r))
    {
        Class::App
    } else if name.starts_with("libc.so") || name.starts_with("ld-linux") {
        Class::Libc
    } else if object == "???" || name.starts_with("vgpreload") {
        Class::Other
    } else {
        Class::Mpi
    }
}

/// One process's instructions by object, its calls from the
/// application's objects into MPI's, and what the tool's calls into libc
/// and the loader ran.
#[derive(Default)]
struct Process {
    objects: BTreeMap<String, u64>,
    mpi_calls: u64,
    tool_in_libc: u64,
    /// Calls from the application's objects into the tool's (a PMPI
    /// library's own `MPI_` wrappers, as mpiP's).
    tool_calls: u64,
}

/// Reads a callgrind output file (`positions: line`, `events: Ir`): each
/// cost line's instructions go to the object of its function (`ob=`),
/// except the line after `calls=`, which is the call's inclusive cost: it
/// counts for the tool when a tool object calls libc or the loader.
fn parse(path: &Path, app_dir: &Path) -> Process {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut names: HashMap<String, String> = HashMap::new();
    // `ob=(3) /lib/x.so` defines id 3, `ob=(3)` refers to it; `cob=` shares
    // the table.
    let mut object_name = |spec: &str| -> String {
        let spec = spec.trim();
        if let Some(rest) = spec.strip_prefix('(') {
            let (id, name) = rest.split_once(')').unwrap_or((rest, ""));
            let name = name.trim();
            if name.is_empty() {
                names.get(id).cloned().unwrap_or_default()
            } else {
                names.insert(id.to_string(), name.to_string());
                name.to_string()
            }
        } else {
            spec.to_string()
        }
    };
    let mut p = Process::default();
    let mut object = String::new();
    let mut callee: Option<String> = None;
    // After `calls=`: whether the call's inclusive cost is the tool's.
    let mut inclusive_next: Option<bool> = None;
    for line in text.lines() {
        if let Some(spec) = line.strip_prefix("ob=") {
            object = object_name(spec);
        } else if let Some(spec) = line.strip_prefix("cob=") {
            callee = Some(object_name(spec));
        } else if let Some(rest) = line.strip_prefix("calls=") {
            let count: u64 = rest
                .split_whitespace()
                .next()
                .and_then(|c| c.parse().ok())
                .unwrap_or(0);
            let to = callee.take().unwrap_or_else(|| object.clone());
            let (from, to) = (class(&object, app_dir), class(&to, app_dir));
            if from == Class::App && to == Class::Mpi {
                p.mpi_calls += count;
            }
            if from == Class::App && to == Class::Tool {
                p.tool_calls += count;
            }
            inclusive_next = Some(from == Class::Tool && to == Class::Libc);
        } else if line.starts_with(|c: char| c.is_ascii_digit() || c == '+' || c == '-' || c == '*') {
            let ir: u64 = line
                .split_whitespace()
                .nth(1)
                .and_then(|c| c.parse().ok())
                .unwrap_or(0);
            match inclusive_next.take() {
                Some(true) => p.tool_in_libc += ir,
                Some(false) => {}
                None => *p.objects.entry(object.clone()).or_default() += ir,
            }
        } else if line.starts_with("fn=") {
            callee = None;
        }
    }
    p
}

/// A process's instructions by class.
fn by_class(p: &Process, app_dir: &Path) -> BTreeMap<Class, u64> {
    let mut out = BTreeMap::new();
    for (object, &ir) in &p.objects {
        *out.entry(class(object, app_dir)).or_default() += ir;
    }
    out
}

/// A program to measure: its executable, and its arguments at the short
/// and the long run length.
struct App {
    name: &'static str,
    exe: PathBuf,
    short: Vec<String>,
    long: Vec<String>,
    /// Files the program reads in its folder, by run length.
    inputs: [Vec<(&'static str, String)>; 2],
}

/// One run under callgrind: per rank, before `MPI_Finalize` (start-up and
/// the run) and from it on (finalize, the report), its instructions by
/// class and the tool's, and its MPI calls.
#[derive(Clone)]
struct Measured {
    ranks: Vec<Rank>,
    tool_objects: BTreeMap<String, u64>,
    /// Calls from the application into the tool, both ranks.
    tool_calls: u64,
}

#[derive(Clone)]
struct Rank {
    classes: BTreeMap<Class, u64>,
    mpi_calls: f64,
    /// The tool's instructions before `MPI_Finalize`, and from it on.
    tool: f64,
    tool_finalize: f64,
}

impl App {
    /// Whether it has one run length only (no per-call split).
    fn fixed(&self) -> bool {
        self.short == self.long && self.inputs[0] == self.inputs[1]
    }
}

/// What a program runs under.
#[derive(Clone, Copy)]
enum Under<'a> {
    Native,
    /// libpnmpi preloaded with this configuration.
    Chain(&'a str),
    /// A PMPI library preloaded on its own (mpiP).
    Preload(&'a Path),
}

/// The short and the long run (one run, twice, for a fixed program).
/// Only a preloaded library's run may fail (mpiP on a program it cannot
/// follow); the error says how.
fn both(app: &App, conf: Under) -> Result<[Measured; 2], String> {
    let short = run(app, conf, false)?;
    let long = if app.fixed() {
        short.clone()
    } else {
        run(app, conf, true)?
    };
    Ok([short, long])
}

fn run(app: &App, conf: Under, long: bool) -> Result<Measured, String> {
    let mut case = Case::new();
    for (name, text) in &app.inputs[usize::from(long)] {
        case.write(name, text);
    }
    let rank_var = if FLAVOR == "openmpi" {
        "OMPI_COMM_WORLD_RANK"
    } else {
        "PMI_RANK"
    };
    let mut cmd = launcher(2);
    match conf {
        Under::Native => {}
        Under::Chain(conf) => {
            let path = case.conf(conf);
            cmd.arg("env")
                .arg(format!("LD_PRELOAD={}", libpnmpi().display()))
                .arg(format!("PNMPI_CONF={}", path.display()));
        }
        Under::Preload(lib) => {
            cmd.arg("env").arg(format!("LD_PRELOAD={}", lib.display()));
        }
    }
    // A dump at the first (P)MPI_Finalize: cg.R.1 holds start-up and the
    // run, the later parts finalize and the report.
    cmd.args([
        "valgrind",
        "--tool=callgrind",
        "--quiet",
        "--dump-before=*MPI_Finalize",
        &format!(
            "--callgrind-out-file={}/cg.%q{{{rank_var}}}",
            case.dir().display()
        ),
    ])
    .arg(&app.exe)
    .args(if long { &app.long } else { &app.short });
    let out = case.finish(cmd);
    if let (Under::Preload(lib), false) = (conf, out.success()) {
        let said: Vec<&str> = out
            .stderr
            .lines()
            .filter(|l| l.contains(" in "))
            .take(4)
            .collect();
        return Err(format!(
            "{} failed under {} (exit {:?}): {}",
            app.name,
            lib.display(),
            out.code,
            said.join(" / ")
        ));
    }
    out.assert_ok();
    let app_dir = app.exe.parent().expect("folder").to_path_buf();
    let mut measured = Measured {
        ranks: Vec::new(),
        tool_objects: BTreeMap::new(),
        tool_calls: 0,
    };
    for rank in 0..2 {
        let prefix = format!("cg.{rank}");
        let mut parts: Vec<PathBuf> = std::fs::read_dir(case.dir())
            .expect("case folder")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                name == prefix || name.starts_with(&format!("{prefix}."))
            })
            .collect();
        parts.sort();
        let before = case.dir().join(format!("{prefix}.1"));
        assert!(parts.contains(&before), "no dump at MPI_Finalize: {parts:?}");
        let mut rank_total = Rank {
            classes: BTreeMap::new(),
            mpi_calls: 0.0,
            tool: 0.0,
            tool_finalize: 0.0,
        };
        for part in &parts {
            let p = parse(part, &app_dir);
            for (object, &ir) in &p.objects {
                if class(object, &app_dir) == Class::Tool {
                    *measured.tool_objects.entry(object.clone()).or_default() += ir;
                }
            }
            let classes = by_class(&p, &app_dir);
            let tool = get(&classes, Class::Tool) + p.tool_in_libc as f64;
            if *part == before {
                rank_total.tool += tool;
            } else {
                rank_total.tool_finalize += tool;
            }
            for (c, ir) in classes {
                *rank_total.classes.entry(c).or_default() += ir;
            }
            rank_total.mpi_calls += p.mpi_calls as f64;
            measured.tool_calls += p.tool_calls;
        }
        measured.ranks.push(rank_total);
    }
    if let Under::Preload(lib) = conf {
        check_mpip_report(case.dir(), lib, measured.tool_calls);
    }
    keep(case.dir(), app, conf, long);
    Ok(measured)
}

/// With `CALLGRIND_KEEP=folder`, copies a run's callgrind files there
/// (`<program>.<tool>.<short|long>.cg.<rank>[.<part>]`), to read them with
/// `callgrind_annotate --inclusive=yes` after the run's folder is gone.
fn keep(dir: &Path, app: &App, conf: Under, long: bool) {
    let Some(to) = std::env::var_os("CALLGRIND_KEEP").map(PathBuf::from) else {
        return;
    };
    std::fs::create_dir_all(&to).expect("CALLGRIND_KEEP folder");
    let under = match conf {
        Under::Native => "native".to_string(),
        Under::Chain(conf) => conf
            .split_whitespace()
            .nth(1)
            .and_then(|m| Path::new(m).file_stem()?.to_str().map(String::from))
            .map(|m| {
                if conf.contains("sites off") {
                    m + "-nosites"
                } else {
                    m
                }
            })
            .unwrap_or_else(|| "chain".into()),
        Under::Preload(_) => "mpip".to_string(),
    };
    let program = app.exe.file_name().and_then(|n| n.to_str()).unwrap_or("app");
    let length = if long { "long" } else { "short" };
    for entry in std::fs::read_dir(dir)
        .expect("case folder")
        .filter_map(Result::ok)
    {
        let name = entry.file_name();
        let name = name.to_str().unwrap_or("");
        if name.starts_with("cg.") {
            let copy = to.join(format!("{program}.{under}.{length}.{name}"));
            std::fs::copy(entry.path(), &copy).unwrap_or_else(|e| panic!("{}: {e}", copy.display()));
        }
    }
}

/// mpiP writes its report (`<app>.2.<pid>.1.mpiP`, call sites with file
/// and line) at `MPI_Finalize` when it saw the program's MPI calls: it
/// must be there and list call sites if the application called into it.
/// (Open MPI's `mpi_f08` bindings call `PMPI_` routines, past mpiP.)
fn check_mpip_report(dir: &Path, lib: &Path, calls_into_mpip: u64) {
    let report = std::fs::read_dir(dir)
        .expect("case folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "mpiP"));
    let Some(report) = report else {
        assert_eq!(
            calls_into_mpip,
            0,
            "the program called {} ({calls_into_mpip} calls) but it wrote no report",
            lib.display()
        );
        println!("    mpiP saw no MPI call of this program (no calls into it, no report)");
        return;
    };
    let text = std::fs::read_to_string(&report).expect("mpiP report");
    let sites = text
        .lines()
        .find_map(|l| l.strip_prefix("@--- Callsites: "))
        .and_then(|l| l.split_whitespace().next()?.parse::<u32>().ok())
        .unwrap_or_else(|| panic!("{}: no call sites:\n{text}", report.display()));
    assert!(
        sites > 0 && calls_into_mpip > 0,
        "{}: {sites} call sites",
        report.display()
    );
    println!("    mpiP report: {sites} call sites, {calls_into_mpip} calls into mpiP (both ranks)");
}

fn get(m: &BTreeMap<Class, u64>, c: Class) -> f64 {
    m.get(&c).copied().unwrap_or(0) as f64
}

fn apps(dir: &Path) -> Vec<App> {
    let wanted = std::env::var("CALLGRIND_APPS").unwrap_or_else(|_| "deep,lammps,fortran".into());
    let mut list = Vec::new();
    for name in wanted.split(',') {
        match name {
            "deep" => list.push(App {
                name: "deep_app (C++, 30 frames deep)",
                exe: deep_app_linked(dir, false),
                short: vec!["1000".into(), "30".into()],
                long: vec!["5000".into(), "30".into()],
                inputs: [vec![], vec![]],
            }),
            "lammps" if FLAVOR == "openmpi" => {
                let input = std::fs::read_to_string(repo().join("bench/callgrind/in.lj")).expect("in.lj");
                list.push(App {
                    name: "LAMMPS (Debian's lmp), Lennard-Jones melt, 2048 atoms",
                    exe: PathBuf::from("/usr/bin/lmp"),
                    short: [
                        "-in", "in.lj", "-var", "steps", "50", "-log", "none", "-screen", "none",
                    ]
                    .map(String::from)
                    .to_vec(),
                    long: [
                        "-in", "in.lj", "-var", "steps", "150", "-log", "none", "-screen", "none",
                    ]
                    .map(String::from)
                    .to_vec(),
                    inputs: [vec![("in.lj", input.clone())], vec![("in.lj", input)]],
                });
            }
            "lammps" => {
                eprintln!("lammps skipped: Debian's lmp is built for Open MPI, this build for {FLAVOR}")
            }
            "fortran" => list.push(App {
                name: "calls.F90 (Fortran, use mpi_f08)",
                exe: fortran_calls("use mpi_f08"),
                short: vec![],
                long: vec![],
                inputs: [vec![], vec![]],
            }),
            // NAS CG in Fortran (mpif.h), n = 4096: the bars on the
            // tools' whole cost are shares of its own instructions.
            "cg" => list.push(App {
                name: "NAS CG (Fortran, mpif.h), n = 4096",
                exe: nas_fortran_kernel("cg"),
                short: vec!["12".into()],
                long: vec!["12".into()],
                inputs: [vec![], vec![]],
            }),
            // Each rank its own peer: no call waits, so the checker's
            // instructions per call do not depend on timing.
            "self" => {
                let exe = self_calls(dir);
                for (name, mode) in [
                    ("selfcalls blocking (MPI_Send + MPI_Recv to itself)", "blocking"),
                    (
                        "selfcalls nonblocking (MPI_Irecv + MPI_Isend + 2 MPI_Wait)",
                        "nonblocking",
                    ),
                    (
                        "selfcalls allreduce (MPI_Allreduce on MPI_COMM_SELF)",
                        "allreduce",
                    ),
                ] {
                    list.push(App {
                        name,
                        exe: exe.clone(),
                        short: vec!["2000".into(), mode.into()],
                        long: vec!["10000".into(), mode.into()],
                        inputs: [vec![], vec![]],
                    });
                }
            }
            other => panic!("CALLGRIND_APPS: no program {other} (deep, lammps, fortran, cg, self)"),
        }
    }
    list
}

/// bench/callgrind/selfcalls.c, built with the MPI's compiler alone (no
/// libpnmpi: the chain is preloaded).
fn self_calls(dir: &Path) -> PathBuf {
    let exe = dir.join("selfcalls");
    let built = std::process::Command::new(mpicc())
        .args(["-O2", "-g", "-o"])
        .arg(&exe)
        .arg(repo().join("bench/callgrind/selfcalls.c"))
        .status()
        .expect("mpicc runs");
    assert!(built.success(), "building bench/callgrind/selfcalls.c failed");
    exe
}

#[test]
#[ignore = "benchmark: run with --ignored --nocapture"]
fn instructions_per_call_under_callgrind_bench() {
    let dir = tempfile::Builder::new()
        .prefix("pnmpi-callgrind")
        .tempdir()
        .expect("tempdir");
    let tools = [
        (
            "tracer",
            format!(
                "module {}\nargument outdir trace\n",
                target_dir().join("libtracer.so").display()
            ),
        ),
        (
            "tracer-nosites",
            format!(
                "module {}\nargument outdir trace\nargument sites off\n",
                target_dir().join("libtracer.so").display()
            ),
        ),
        (
            "profiler",
            format!(
                "module {}\nargument output profile.txt\n",
                target_dir().join("libprofiler.so").display()
            ),
        ),
        (
            "checker",
            format!(
                "module {}\nargument output checker-out\n",
                target_dir().join("libchecker.so").display()
            ),
        ),
    ];
    let wanted = std::env::var("CALLGRIND_TOOLS").unwrap_or_else(|_| "tracer,profiler,checker".into());
    let tools: Vec<_> = tools
        .into_iter()
        .filter(|(tool, _)| wanted.split(',').any(|w| w == *tool))
        .collect();
    println!("instructions under callgrind, 2 ranks, {FLAVOR}; per rank: rank 0 / rank 1");
    for app in apps(dir.path()) {
        eprintln!("callgrind: {} ...", app.name);
        let native = both(&app, Under::Native).expect("native run");
        let calls: Vec<[f64; 2]> = (0..2)
            .map(|r| [native[0].ranks[r].mpi_calls, native[1].ranks[r].mpi_calls])
            .collect();
        println!("\n{}  (args {:?} / {:?})", app.name, app.short, app.long);
        for (r, calls) in calls.iter().enumerate() {
            let own = [
                get(&native[0].ranks[r].classes, Class::App),
                get(&native[1].ranks[r].classes, Class::App),
            ];
            println!(
                "  rank {r} native: application {:.0} / {:.0} instructions, MPI calls {:.0} / {:.0}, MPI library {:.0} / {:.0}",
                own[0],
                own[1],
                calls[0],
                calls[1],
                get(&native[0].ranks[r].classes, Class::Mpi),
                get(&native[1].ranks[r].classes, Class::Mpi)
            );
        }
        let mut measured = Vec::new();
        for (tool, conf) in &tools {
            eprintln!("callgrind: {} under the {tool} ...", app.name);
            let under = both(&app, Under::Chain(conf)).expect("run under a bundled tool");
            measured.push((*tool, print_costs(tool, &under, &native, &calls)));
        }
        let Some(lib) = mpip_lib() else {
            println!("  mpiP not measured (set MPIP_LIB=/path/libmpiP.so to measure it)");
            continue;
        };
        eprintln!("callgrind: {} under mpiP ({}) ...", app.name, lib.display());
        let under = match both(&app, Under::Preload(&lib)) {
            Ok(under) => under,
            Err(failed) => {
                println!("  mpiP not measured: {failed}");
                continue;
            }
        };
        let mpip = print_costs("mpiP", &under, &native, &calls);
        for (tool, ours) in &measured {
            for (r, (ours, mpip)) in ours.iter().zip(&mpip).enumerate() {
                println!(
                    "  rank {r} {tool:<8} / mpiP: per MPI call {:.4}, start-up {:.4}, MPI_Finalize and report {:.4}, long run in all {:.4}",
                    ours.per_call / mpip.per_call,
                    ours.startup / mpip.startup,
                    ours.finalize / mpip.finalize,
                    ours.total / mpip.total
                );
            }
        }
    }
}

/// One rank's instructions of a tool: per MPI call, what runs once
/// (start-up; `MPI_Finalize` and the report), and the long run in all.
struct Cost {
    per_call: f64,
    startup: f64,
    finalize: f64,
    total: f64,
}

/// Splits a tool's instructions per rank into per call and once (the
/// difference of the two run lengths over that of their MPI calls), prints
/// them with the tool's objects, and returns them.
fn print_costs(tool: &str, under: &[Measured; 2], native: &[Measured; 2], calls: &[[f64; 2]]) -> Vec<Cost> {
    let mut costs = Vec::new();
    for (r, calls) in calls.iter().enumerate() {
        let ir = [under[0].ranks[r].tool, under[1].ranks[r].tool];
        let own = get(&native[1].ranks[r].classes, Class::App);
        let dcalls = calls[1] - calls[0];
        let per_call = if dcalls > 0.0 {
            (ir[1] - ir[0]) / dcalls
        } else {
            f64::NAN
        };
        let startup = ir[1] - per_call * calls[1];
        let finalize = under[1].ranks[r].tool_finalize;
        let total = ir[1] + finalize;
        println!(
            "  rank {r} {tool:<8}: per MPI call {per_call:.1}; once: start-up {startup:.0}, MPI_Finalize and report {finalize:.0}; \
             long run {total:.0} in all, {:.3} % of the application's own {own:.0}, of which per call {:.4} %",
            100.0 * total / own,
            100.0 * per_call * calls[1] / own
        );
        costs.push(Cost {
            per_call,
            startup,
            finalize,
            total,
        });
    }
    let objects: Vec<String> = under[1]
        .tool_objects
        .iter()
        .map(|(o, ir)| format!("{} {ir}", o.rsplit('/').next().unwrap_or(o)))
        .collect();
    println!("    {tool} objects, long run, both ranks: {}", objects.join(", "));
    costs
}
