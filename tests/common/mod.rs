//! Test harness: builds the C programs and modules of `c-tests/` with the
//! MPI that libpnmpi was built for, and runs them under that MPI's real
//! `mpirun`.

pub mod calls;
pub mod corpus;
pub mod dtypes;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex, OnceLock};

/// The MPI the workspace in [`target_dir`] was built for: "openmpi" or
/// "mpich", as its build report says. Read when the tests run, not when
/// the suite is built, so one build of the suite serves both MPIs.
pub const FLAVOR: Flavor = Flavor;

/// See [`FLAVOR`]: a `str` that reads the build report once.
#[derive(Clone, Copy)]
pub struct Flavor;

impl std::ops::Deref for Flavor {
    type Target = str;
    fn deref(&self) -> &str {
        build_report_field("MPI:")
            .split_whitespace()
            .next()
            .expect("the build report's `MPI:` line names the MPI")
    }
}

/// The build report the workspace in [`target_dir`] wrote
/// (`pnmpi-build-report.txt`), read once.
pub fn build_report() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| {
        let report = target_dir().join("pnmpi-build-report.txt");
        std::fs::read_to_string(&report).unwrap_or_else(|e| {
            panic!(
                "{}: {e}: run `cargo build --release --workspace` first",
                report.display()
            )
        })
    })
}

/// The rest of the build report's line that starts with `key`, trimmed.
pub fn build_report_field(key: &str) -> &'static str {
    build_report()
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .unwrap_or_else(|| panic!("the build report has no `{key}` line:\n{}", build_report()))
        .trim()
}

impl std::fmt::Display for Flavor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self)
    }
}

impl std::fmt::Debug for Flavor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", &**self)
    }
}

impl PartialEq<&str> for Flavor {
    fn eq(&self, other: &&str) -> bool {
        &**self == *other
    }
}

impl PartialEq<Flavor> for &str {
    fn eq(&self, other: &Flavor) -> bool {
        *self == &**other
    }
}

/// The cargo profile folder holding libpnmpi.so, the modules and `pnmpi`.
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/<test>")
        .to_path_buf()
}

pub fn libpnmpi() -> PathBuf {
    let lib = target_dir().join("libpnmpi.so");
    assert!(
        lib.is_file(),
        "{} missing: run `cargo build --workspace` first",
        lib.display()
    );
    lib
}

/// The workspace's root folder (this package is its `tests/`).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace")
        .to_path_buf()
}

pub fn mpicc() -> String {
    std::env::var("MPICC").unwrap_or_else(|_| "mpicc".into())
}

/// Where this run of the suite builds its C programs: a folder named
/// after the process. A static is never dropped, so the folder outlives
/// the run; each run first removes those of runs that ended.
fn build_dir() -> &'static Path {
    const PREFIX: &str = "pnmpi-test-build-";
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let tmp = std::env::temp_dir();
        for entry in std::fs::read_dir(&tmp).into_iter().flatten().flatten() {
            let name = entry.file_name();
            let pid = name
                .to_str()
                .and_then(|n| n.strip_prefix(PREFIX)?.split('-').next()?.parse::<u32>().ok());
            if pid.is_some_and(|p| !Path::new(&format!("/proc/{p}")).exists()) {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
        tempfile::Builder::new()
            .prefix(&format!("{PREFIX}{}-", std::process::id()))
            .tempdir()
            .expect("tempdir")
    })
    .path()
}

/// Folder holding the built test modules (put it on PNMPI_LIB_PATH).
pub fn modules_dir() -> PathBuf {
    let dir = build_dir().join("modules");
    std::fs::create_dir_all(&dir).expect("modules dir");
    dir
}

fn run_compiler(args: &[String], what: &str) {
    run_compiler_of(&mpicc(), args, what)
}

/// The MPI C++ compiler wrapper of the MPI libpnmpi was built for.
fn mpicxx() -> String {
    mpicc().replace("mpicc", "mpicxx")
}

fn run_compiler_of(compiler: &str, args: &[String], what: &str) {
    let out = Command::new(compiler)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{compiler} runs: {e}"));
    assert!(
        out.status.success(),
        "building {what} failed:\n{compiler} {}\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Values made once per test process by key, whichever test asks first
/// (builds, reference runs that several tests compare with). The map lock
/// is only held to find the key's own cell, so that making one value may
/// ask for another (a program needs libchaincheck), and tests asking for
/// different keys do not wait for each other.
pub struct Memo<T>(OnceLock<Mutex<HashMap<String, Arc<OnceLock<T>>>>>);

impl<T: Clone> Memo<T> {
    pub const fn new() -> Memo<T> {
        Memo(OnceLock::new())
    }

    /// The value of `key`, made by `make` if no test made it yet.
    pub fn get(&self, key: String, make: impl FnOnce() -> T) -> T {
        let cell = {
            let mut cells = self
                .0
                .get_or_init(Default::default)
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            cells.entry(key).or_default().clone()
        };
        cell.get_or_init(make).clone()
    }
}

/// Builds each artifact once per test process ([`Memo`]).
fn cached(key: String, build: impl FnOnce() -> PathBuf) -> PathBuf {
    static BUILT: Memo<PathBuf> = Memo::new();
    BUILT.get(key, build)
}

fn c_tests() -> PathBuf {
    repo().join("c-tests")
}

/// libchaincheck.so, the per-thread layer log shared by programs and modules.
pub fn chaincheck() -> PathBuf {
    c_library("modules/chaincheck.c", "libchaincheck.so")
}

/// Builds `c-tests/<src>` once into the shared object `name`.
fn c_library(src: &str, name: &str) -> PathBuf {
    cached(name.into(), || {
        let out = build_dir().join(name);
        run_compiler(
            &[
                "-shared".into(),
                "-fPIC".into(),
                "-O2".into(),
                "-o".into(),
                s(&out),
                s(&c_tests().join(src)),
            ],
            name,
        );
        out
    })
}

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

fn chaincheck_link() -> Vec<String> {
    let lib = chaincheck();
    let dir = s(lib.parent().expect("folder"));
    vec![
        format!("-I{}", s(&c_tests().join("modules"))),
        format!("-L{dir}"),
        "-lchaincheck".into(),
        format!("-Wl,-rpath,{dir}"),
    ]
}

/// How a test program is linked.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Link {
    /// `-lpnmpi` before libmpi, as users link.
    Pnmpi,
    /// Against libmpi only (for `pnmpi run` and native baselines).
    Native,
}

/// Builds `c-tests/programs/<name>.c`.
pub fn program(name: &str, link: Link) -> PathBuf {
    program_with_flags(name, link, "", &[])
}

/// Builds `c-tests/programs/<name>.c` like [`program`], with extra compiler
/// and linker flags (e.g. `-rdynamic`), as `<name>-<link>-<tag>` (no tag:
/// plain [`program`]).
pub fn program_with_flags(name: &str, link: Link, tag: &str, flags: &[&str]) -> PathBuf {
    c_program("programs", name, link, tag, flags)
}

/// Builds the NAS-like kernel `c-tests/nas/<name>.c`, linked with
/// libpnmpi.
pub fn nas_kernel(name: &str) -> PathBuf {
    c_program("nas", name, Link::Pnmpi, "nas", &["-lm"])
}

/// Builds the Fortran NAS-like kernel `c-tests/nas/<name>.f90` (or
/// `.F90`) with the MPI's mpif90, `-O2`, linked natively (libpnmpi comes
/// in by preload, as `pnmpi run` brings it to a Fortran program).
pub fn nas_fortran_kernel(name: &str) -> PathBuf {
    cached(format!("fortran kernel {name}"), || {
        let nas = c_tests().join("nas");
        let src = ["f90", "F90"]
            .map(|ext| nas.join(format!("{name}.{ext}")))
            .into_iter()
            .find(|p| p.is_file())
            .unwrap_or_else(|| panic!("no Fortran source c-tests/nas/{name}.f90"));
        // Its own folder: mpif90 writes nas.f90's module file where it runs.
        let dir = build_dir().join(format!("fortran-{name}"));
        std::fs::create_dir_all(&dir).expect("kernel folder");
        let out = dir.join(format!("{name}-f"));
        let built = Command::new(mpif90())
            .arg(nas.join("nas.f90"))
            .arg(src)
            .args(["-O2", "-o"])
            .arg(&out)
            .current_dir(&dir)
            .output()
            .expect("mpif90 runs");
        assert!(
            built.status.success(),
            "{}",
            String::from_utf8_lossy(&built.stderr)
        );
        out
    })
}

/// Builds the checker corpus program `c-tests/checker/<name>.c`, linked
/// with libpnmpi.
pub fn checker_program(name: &str) -> PathBuf {
    c_program("checker", name, Link::Pnmpi, "", &[])
}

/// Builds `c-tests/cxx/<name>.cpp` once, optimised, with the MPI C++
/// compiler, linked with libpnmpi.
pub fn cxx_program(name: &str) -> PathBuf {
    cached(format!("c++ program {name}"), || {
        let out = build_dir().join(name);
        let target = s(&target_dir());
        libpnmpi();
        let args = vec![
            "-O2".into(),
            "-g".into(),
            "-o".into(),
            s(&out),
            s(&c_tests().join(format!("cxx/{name}.cpp"))),
            format!("-L{target}"),
            "-Wl,--no-as-needed".into(),
            "-lpnmpi".into(),
            format!("-Wl,-rpath,{target}"),
        ];
        run_compiler_of(&mpicxx(), &args, name);
        out
    })
}

/// Builds `c-tests/<folder>/<name>.c` as `<name>-<link>-<tag>` (no tag:
/// `<name>-<link>`), with extra compiler and linker flags.
fn c_program(folder: &str, name: &str, link: Link, tag: &str, flags: &[&str]) -> PathBuf {
    cached(format!("program {folder}/{name} {link:?} {tag}"), || {
        let suffix = if tag.is_empty() {
            String::new()
        } else {
            format!("-{tag}")
        };
        let out = build_dir().join(format!("{name}-{link:?}{suffix}"));
        let mut args: Vec<String> = ["-O2", "-g", "-o"].map(String::from).into();
        args.push(s(&out));
        args.push(s(&c_tests().join(format!("{folder}/{name}.c"))));
        args.extend(flags.iter().map(|f| f.to_string()));
        args.extend(chaincheck_link());
        args.push("-lpthread".into());
        if link == Link::Pnmpi {
            let target = s(&target_dir());
            libpnmpi();
            args.extend([
                format!("-L{target}"),
                "-Wl,--no-as-needed".into(),
                "-lpnmpi".into(),
                format!("-Wl,-rpath,{target}"),
            ]);
        }
        run_compiler(&args, name);
        out
    })
}

/// The 1-based line of the repository file `path` that ends with `tag`
/// (a comment marking a call site, such as `// DEEP_SEND`).
pub fn marked_line(path: &str, tag: &str) -> u32 {
    let src = std::fs::read_to_string(repo().join(path)).expect("source");
    src.lines()
        .position(|l| l.trim_end().ends_with(tag))
        .unwrap_or_else(|| panic!("no `{tag}` in {path}")) as u32
        + 1
}

/// Builds a C file of the repository (a benchmark program), linked with
/// libpnmpi, into the temporary folder.
pub fn bench_program(src: &str, name: &str) -> PathBuf {
    let out = std::env::temp_dir().join(format!("pnmpi-bench-{FLAVOR}-{name}"));
    let target = target_dir().display().to_string();
    let status = Command::new(mpicc())
        .args(["-O2", "-g", "-o"])
        .arg(&out)
        .arg(repo().join(src))
        .arg(format!("-L{target}"))
        .args(["-Wl,--no-as-needed", "-lpnmpi"])
        .arg(format!("-Wl,-rpath,{target}"))
        .status()
        .expect("mpicc runs");
    assert!(status.success(), "building {src} failed");
    out
}

/// A benchmark's number of rounds: the environment variable `var`, else
/// `default`.
pub fn bench_rounds(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The order in which a benchmark runs `setups` setups, `rounds` times:
/// each round starts one setup later than the last, so that no setup
/// always runs first, or right after the same other.
pub fn interleaved(rounds: usize, setups: usize) -> impl Iterator<Item = usize> {
    (0..rounds).flat_map(move |round| (0..setups).map(move |k| (k + round) % setups))
}

/// A distribution-free 95 % confidence interval of the median of
/// `values` (sorted in place), for benchmarks: the order statistics of
/// ranks n/2 - 0.98 sqrt(n) and 1 + n/2 + 0.98 sqrt(n) (the binomial
/// interval, normal approximation). With 41 values, the 14th and 28th.
pub fn median_ci95(values: &mut [f64]) -> (f64, f64) {
    values.sort_by(f64::total_cmp);
    let n = values.len() as f64;
    let half = 0.98 * n.sqrt();
    let rank = |r: f64| (r.round().max(1.0) as usize).min(values.len()) - 1;
    (values[rank(n / 2.0 - half)], values[rank(1.0 + n / 2.0 + half)])
}

/// The median of `values` (sorted in place), for benchmarks.
pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// The Fortran compiler wrapper of the MPI under test (`mpif90.openmpi`
/// beside `mpicc.openmpi`).
pub fn mpif90() -> String {
    mpicc().replace("mpicc", "mpif90")
}

/// Builds `c-tests/fortran/calls.F90` for one Fortran binding (`mpif.h`,
/// `use mpi` or `use mpi_f08`), linked with its C library (`clib.c`, as
/// `libclib.so`), with debug lines, never linked with libpnmpi: the tests
/// run it under `pnmpi run`, as a user would.
pub fn fortran_calls(binding: &str) -> PathBuf {
    let define = match binding {
        "mpif.h" => "-DMPIF_H",
        "use mpi" => "-DUSE_MPI",
        "use mpi_f08" => "-DF08",
        other => panic!("no Fortran binding {other}"),
    };
    cached(format!("fortran calls {binding}"), || {
        let dir = build_dir();
        cached("fortran clib".into(), || {
            let out = dir.join("libclib.so");
            let src = c_tests().join("fortran/clib.c");
            run_compiler(
                &["-shared", "-fPIC", "-g", "-o", &s(&out), &s(&src)].map(String::from),
                "libclib.so",
            );
            out
        });
        let out = dir.join(format!("calls{define}"));
        let args: Vec<String> = vec![
            "-cpp".into(),
            "-O0".into(),
            "-g".into(),
            define.into(),
            "-o".into(),
            s(&out),
            s(&c_tests().join("fortran/calls.F90")),
            format!("-L{}", s(dir)),
            "-lclib".into(),
            format!("-Wl,-rpath,{}", s(dir)),
        ];
        let built = Command::new(mpif90())
            .args(&args)
            .current_dir(dir)
            .output()
            .expect("mpif90 runs");
        assert!(
            built.status.success(),
            "{} {}\n{}",
            mpif90(),
            args.join(" "),
            String::from_utf8_lossy(&built.stderr)
        );
        out
    })
}

/// Builds `c-tests/modules/<src>.c` as `<out_name>.so` in [`modules_dir`],
/// with extra `-D` definitions.
pub fn module(src: &str, out_name: &str, defines: &[&str]) -> PathBuf {
    compile_module(src, out_name, defines, &[])
}

/// Builds a module like [`module`], for modules that use the services:
/// also with `-I include` (for `<pnmpi.h>`, unchanged) and
/// `-Wall -Wextra -Werror`.
pub fn api_module(src: &str, out_name: &str, defines: &[&str]) -> PathBuf {
    let include = format!("-I{}", s(&repo().join("include")));
    compile_module(
        src,
        out_name,
        defines,
        &["-Wall".into(), "-Wextra".into(), "-Werror".into(), include],
    )
}

/// Builds a module like [`module`], with extra compiler and linker flags
/// (`-Wl,-z,now`, `-fno-plt`, `-Wall`, ...).
pub fn module_with_flags(src: &str, out_name: &str, defines: &[&str], flags: &[&str]) -> PathBuf {
    let extra: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
    compile_module(src, out_name, defines, &extra)
}

fn compile_module(src: &str, out_name: &str, defines: &[&str], extra: &[String]) -> PathBuf {
    cached(format!("module {out_name}"), || {
        let out = modules_dir().join(format!("{out_name}.so"));
        let mut args: Vec<String> = ["-shared", "-fPIC", "-O2", "-g", "-o"].map(String::from).into();
        args.push(s(&out));
        // The generated header that declares every XMPI_ entry point.
        args.push(format!("-I{}", s(&target_dir().join("include"))));
        args.extend(extra.iter().cloned());
        args.extend(defines.iter().map(|d| format!("-D{d}")));
        args.push(s(&c_tests().join(format!("modules/{src}.c"))));
        args.extend(chaincheck_link());
        run_compiler(&args, out_name);
        out
    })
}

/// A `seq` module named `name` (see c-tests/modules/seq.c).
pub fn seq(name: &str, options: &[&str]) -> PathBuf {
    let mut defines = vec![format!("NAME={name}")];
    defines.extend(options.iter().map(|o| o.to_string()));
    let refs: Vec<&str> = defines.iter().map(String::as_str).collect();
    let suffix: String = options.iter().map(|o| format!("_{}", o.to_lowercase())).collect();
    module("seq", &format!("seq{name}{suffix}"), &refs)
}

/// The Rust `empty` module, which wraps every routine.
pub fn empty_module() -> PathBuf {
    let lib = target_dir().join("libempty.so");
    assert!(
        lib.is_file(),
        "{} missing: run `cargo build --workspace` first",
        lib.display()
    );
    lib
}

/// A finished run.
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }

    /// Panics with the whole output unless the run succeeded.
    pub fn assert_ok(&self) -> &Self {
        assert!(
            self.success(),
            "run failed ({:?})\nstdout:\n{}\nstderr:\n{}",
            self.code,
            self.stdout,
            self.stderr
        );
        self
    }

    /// Lines of stdout that start with `prefix`.
    pub fn lines(&self, prefix: &str) -> Vec<&str> {
        self.stdout.lines().filter(|l| l.starts_with(prefix)).collect()
    }
}

impl From<Output> for Run {
    fn from(o: Output) -> Run {
        Run {
            code: o.status.code(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

/// A test's own working folder (also its HOME), so that no stray
/// `.pnmpi-conf` is picked up, with the environment of the run.
pub struct Case {
    dir: tempfile::TempDir,
    env: Vec<(String, String)>,
}

impl Default for Case {
    fn default() -> Self {
        Self::new()
    }
}

impl Case {
    pub fn new() -> Case {
        let dir = tempfile::Builder::new()
            .prefix("pnmpi-case")
            .tempdir()
            .expect("tempdir");
        let env = vec![
            ("HOME".into(), s(dir.path())),
            ("PNMPI_LIB_PATH".into(), s(&modules_dir())),
        ];
        Case { dir, env }
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Sets an environment variable for the runs of this case.
    pub fn env(&mut self, key: &str, value: &str) -> &mut Self {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.into(), value.into()));
        self
    }

    /// Writes `./.pnmpi-conf` in the case folder.
    pub fn conf(&mut self, text: &str) -> PathBuf {
        self.write(".pnmpi-conf", text)
    }

    /// Writes a file in the case folder.
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir().join(name);
        std::fs::write(&path, text).expect("write file");
        path
    }

    /// Runs `np` ranks of `exe args` under the MPI's own launcher.
    pub fn mpirun(&self, np: usize, exe: &Path, args: &[&str]) -> Run {
        let mut cmd = launcher(np);
        cmd.arg(exe).args(args);
        self.finish(cmd)
    }

    /// Runs 2 ranks of `c-tests/programs/<name>` and checks that the run
    /// stopped before MPI started: it failed, said so, and printed no line
    /// starting with any of `silent` (the program's or a module's output).
    /// Returns stderr, for the test to check the reason.
    pub fn stopped(&self, name: &str, silent: &[&str]) -> String {
        let run = self.mpirun(2, &program(name, Link::Pnmpi), &[]);
        assert!(
            !run.success(),
            "the run should fail:\n{}\n{}",
            run.stdout,
            run.stderr
        );
        for prefix in silent {
            assert!(
                run.lines(prefix).is_empty(),
                "output `{prefix}` appeared: {}",
                run.stdout
            );
        }
        assert!(
            run.stderr.contains("stopping before MPI starts"),
            "{}",
            run.stderr
        );
        run.stderr
    }

    /// Runs any command (e.g. `mpirun ... pnmpi run -- app`) with this
    /// case's folder and environment.
    pub fn finish(&self, mut cmd: Command) -> Run {
        cmd.current_dir(self.dir())
            .envs(self.env.iter().map(|(k, v)| (k, v)));
        let out = cmd.output().expect("launcher runs");
        out.into()
    }
}

/// A fresh, short folder for one Open MPI job's session files: jobs that
/// share `/tmp/ompi.<host>.<uid>` race when one removes it as another
/// creates it (`mkdir ... File exists`), and tests run two at a time.
/// Short, because PMIx puts its sockets there; in the build folder, so
/// that the empty folders Open MPI leaves stay out of `/tmp` itself.
fn session_base() -> String {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = build_dir().join(format!("ompi{n}"));
    std::fs::create_dir_all(&dir).expect("session folder");
    s(&dir)
}

/// `c-tests/tools/libyield_when_idle.so`, which MPICH's ranks preload so
/// that oversubscribed runs hand the core over while they wait.
fn yield_when_idle() -> PathBuf {
    c_library("tools/yield_when_idle.c", "libyield_when_idle.so")
}

/// This machine's hwloc topology without its I/O devices, as XML, written
/// once by `lstopo-no-graphics` (hwloc-nox, which MPICH's package pulls
/// in), or `None` without it. Every rank of both MPIs otherwise discovers
/// the topology again at `MPI_Init`, reading the configuration space of
/// each PCI device and loading hwloc's OpenCL and GL plugins: a third of
/// the time 16 ranks of an empty program take to start and end (MPICH
/// 1.02 s against 0.72 s, Open MPI 0.80 s against 0.63 s), and the suite
/// launches hundreds of them.
fn hwloc_topology() -> Option<&'static Path> {
    static XML: OnceLock<Option<PathBuf>> = OnceLock::new();
    XML.get_or_init(|| {
        let xml = build_dir().join("topology.xml");
        let written = Command::new("lstopo-no-graphics")
            .args(["--no-io", "--of", "xml", "-f"])
            .arg(&xml)
            .output()
            .is_ok_and(|o| o.status.success());
        written.then_some(xml)
    })
    .as_deref()
}

/// `timeout mpirun -np N` for the selected MPI, with the options a
/// container and an oversubscribed 2-core machine need.
pub fn launcher(np: usize) -> Command {
    launcher_within(np, 180)
}

/// [`launcher`] with a timeout of `seconds` (for hundreds of real
/// processes on the 2-core machine).
pub fn launcher_within(np: usize, seconds: u32) -> Command {
    let mut cmd = Command::new("timeout");
    // `-k`: Open MPI's mpirun has been seen to ignore the SIGTERM at the
    // limit after an `MPI_Abort`, its ranks all gone (once in hundreds
    // of runs): the test then hung for good.
    cmd.args(["-k", "10"]).arg(seconds.to_string());
    if FLAVOR == "openmpi" {
        cmd.args([
            "mpirun.openmpi",
            "--oversubscribe",
            "--mca",
            "btl",
            "self,vader,tcp",
        ])
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .env("OMPI_MCA_orte_tmpdir_base", session_base())
        // Open MPI selects ob1 here anyway, after UCX's PML failed to
        // start (no network device it takes): asking for ob1 skips the
        // attempt, 0.2 s of every launch's 0.45 s (4 ranks natively).
        .env("OMPI_MCA_pml", "ob1");
    } else {
        // MPICH's ranks spin without ever yielding: see the shim's header.
        cmd.arg("mpirun.mpich").env("LD_PRELOAD", yield_when_idle());
    }
    if let Some(xml) = hwloc_topology() {
        cmd.env("HWLOC_XMLFILE", xml).env("HWLOC_THISSYSTEM", "1");
    }
    cmd.arg("-np").arg(np.to_string());
    cmd
}

/// Runs `np` ranks of `c-tests/programs/<name>` under the bundled tracer;
/// returns the case (which owns the folders) and the trace folder.
pub fn traced(name: &str, np: usize, args: &[&str]) -> (Case, PathBuf) {
    traced_exe(&program(name, Link::Pnmpi), np, args)
}

/// Runs `np` ranks of `exe` (linked with libpnmpi) under the bundled
/// tracer; returns the case (which owns the folders) and the trace folder.
pub fn traced_exe(exe: &Path, np: usize, args: &[&str]) -> (Case, PathBuf) {
    traced_with(exe, np, args, &[])
}

/// [`traced_exe`] with environment variables `env` set for the run.
pub fn traced_with(exe: &Path, np: usize, args: &[&str], env: &[(&str, &str)]) -> (Case, PathBuf) {
    let mut case = Case::new();
    for (k, v) in env {
        case.env(k, v);
    }
    case.conf(&format!(
        "module {}\n",
        target_dir().join("libtracer.so").display()
    ));
    let trace = case.dir().join("trace");
    case.env("PNMPI_TRACE_DIR", &trace.display().to_string());
    case.mpirun(np, exe, args).assert_ok();
    (case, trace)
}

/// Builds `c-tests/cxx` in `dir`: `libdeep.so` (the MPI calls) and
/// `deep_app`, linked with libpnmpi, or (as `deep_app_native`) not;
/// unoptimised so that every frame is real, with the C++ wrapper of the MPI
/// libpnmpi was built for (tests/profiler.rs, tests/callgrind.rs).
pub fn deep_app_linked(dir: &Path, pnmpi: bool) -> PathBuf {
    let cxx = mpicxx();
    let src = repo().join("c-tests/cxx");
    let name = if pnmpi { "deep_app" } else { "deep_app_native" };
    let (lib, app, target) = (dir.join("libdeep.so"), dir.join(name), target_dir());
    let build = |args: Vec<String>| run_compiler_of(&cxx, &args, name);
    let s = |p: &Path| p.display().to_string();
    build(vec![
        "-O0".into(),
        "-g".into(),
        "-fPIC".into(),
        "-shared".into(),
        "-o".into(),
        s(&lib),
        s(&src.join("deep_lib.cpp")),
    ]);
    let mut args: Vec<String> = vec![
        "-O0".into(),
        "-g".into(),
        "-o".into(),
        s(&app),
        s(&src.join("deep_app.cpp")),
        format!("-L{}", s(dir)),
        "-ldeep".into(),
        format!("-Wl,-rpath,{}", s(dir)),
    ];
    if pnmpi {
        args.extend([
            format!("-L{}", s(&target)),
            "-Wl,--no-as-needed".into(),
            "-lpnmpi".into(),
            format!("-Wl,-rpath,{}", s(&target)),
        ]);
    }
    build(args);
    app
}

/// The value after `key` on the first stdout line starting with `prefix`.
pub fn field(run: &Run, prefix: &str, key: &str) -> f64 {
    let line = run
        .lines(prefix)
        .first()
        .copied()
        .unwrap_or_else(|| panic!("no `{prefix}` line:\n{}\n{}", run.stdout, run.stderr));
    let mut words = line.split_whitespace();
    words
        .find(|w| *w == key)
        .unwrap_or_else(|| panic!("no `{key}` in `{line}`"));
    words.next().unwrap().parse().unwrap()
}

/// Runs the `pnmpi` command with `args` in `dir`.
pub fn pnmpi_cli(args: &[&str], dir: &Path) -> std::process::Output {
    Command::new(target_dir().join("pnmpi"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("pnmpi runs")
}

/// `pnmpi sim synth MOTIF --ranks N --iterations I [MORE] -o OUT` in
/// `dir`, which must succeed.
pub fn synth(dir: &Path, motif: &str, ranks: u32, iterations: u32, more: &[&str], out: &str) {
    let (n, i) = (ranks.to_string(), iterations.to_string());
    let head = ["sim", "synth", motif, "--ranks", &n, "--iterations", &i];
    succeeded(pnmpi_cli(&[&head[..], more, &["-o", out]].concat(), dir));
}

/// The standard output of a command that must have succeeded.
pub fn succeeded(out: std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `pnmpi sim replay TRACE -m m.toml --model MODEL --json r.json` in
/// `case`'s folder (`trace`: a `.pnt` or a tracer folder there): the
/// predicted run time, s.
pub fn replay_runtime(case: &Case, trace: &str, model: &str) -> f64 {
    let out = Command::new(target_dir().join("pnmpi"))
        .args([
            "sim", "replay", trace, "-m", "m.toml", "--model", model, "--json", "r.json",
        ])
        .current_dir(case.dir())
        .output()
        .expect("pnmpi runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(case.dir().join("r.json")).expect("replay JSON");
    let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    v["runtime_s"].as_f64().expect("runtime_s")
}

/// `pnmpi run --vranks=N` of the test program `name` (linked natively),
/// spread over `procs` processes of the real launcher, with `conf` as its
/// `--conf` file when given.
pub fn vranks_in(
    procs: usize,
    n: &str,
    extra: &[&str],
    name: &str,
    args: &[&str],
    conf: Option<&str>,
) -> Run {
    let mut case = Case::new();
    let mut cmd = launcher(procs);
    cmd.arg(target_dir().join("pnmpi"))
        .args(["run", &format!("--vranks={n}")])
        .args(extra);
    if let Some(text) = conf {
        case.write("vtime.conf", text);
        cmd.args(["--conf", "vtime.conf"]);
    }
    case.env("PNMPI_LIB_PATH", "");
    cmd.arg("--").arg(program(name, Link::Native)).args(args);
    case.finish(cmd)
}

/// The run time on the `virtual run time X s` line of vtime's table.
pub fn virtual_run_time(run: &Run) -> f64 {
    let at = run
        .stderr
        .find("virtual run time ")
        .unwrap_or_else(|| panic!("no table:\n{}", run.stderr));
    let rest = &run.stderr[at + "virtual run time ".len()..];
    rest.split_whitespace().next().unwrap().parse().unwrap()
}

/// Where the stream chunks of merged trace `data` end: its index chunk's
/// offset, which its last 16 bytes give (a byte just before it is in the
/// last stream's last chunk).
pub fn stream_chunks_end(data: &[u8]) -> usize {
    let n = data.len();
    assert_eq!(&data[n - 8..], b"pntindex", "a merged trace ends with its index");
    u64::from_le_bytes(data[n - 16..n - 8].try_into().expect("8 bytes")) as usize
}
