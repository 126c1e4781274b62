//! Building the C benchmark program and running it in each configuration.

use crate::install::{mpirun, Flavor, Install};
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The C programs the bench builds, embedded so that the executable builds
/// exactly the programs it was compiled with, wherever it runs from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Program {
    /// The timed `MPI_Comm_rank` loop: ns per call.
    CommRank,
    /// A ping-pong between 2 ranks: latency and bandwidth.
    PingPong,
    /// The time of `MPI_Init` and the memory held after it.
    InitMem,
}

impl Program {
    const ALL: [Program; 3] = [Program::CommRank, Program::PingPong, Program::InitMem];

    fn stem(self) -> &'static str {
        match self {
            Program::CommRank => "comm_rank",
            Program::PingPong => "pingpong",
            Program::InitMem => "init_mem",
        }
    }

    fn source(self) -> &'static str {
        match self {
            Program::CommRank => include_str!("../c/comm_rank.c"),
            Program::PingPong => include_str!("../c/pingpong.c"),
            Program::InitMem => include_str!("../c/init_mem.c"),
        }
    }
}

/// The paper's delay layer (section 5.4, 100 µs per `MPI_Send`): the very
/// module the integration tests load, so that both check the same code.
const DELAY_C: &str = include_str!("../../c-tests/modules/delay.c");

/// The Pcontrol phase the memory setups' modules are restricted to; the
/// program enters it after `MPI_Init` (see `c/init_mem.c`).
pub const MEMORY_PHASE: u32 = 2;

/// How the benchmark program is started.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Launch {
    /// Under the MPI's own launcher with one rank, as applications run.
    Mpirun,
    /// Directly, as an MPI singleton: no launcher process shares the CPU.
    Singleton,
}

impl Launch {
    /// The option value, for the report.
    pub fn name(self) -> &'static str {
        match self {
            Launch::Mpirun => "mpirun",
            Launch::Singleton => "singleton",
        }
    }
}

/// One configuration that every round measures once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setup {
    /// Linked against MPI only: the baseline.
    Native,
    /// Linked with libpnmpi, with `layers` copies of the empty module.
    Pnmpi { layers: usize },
    /// Linked with libpnmpi, with one empty module restricted to `MPI_Send`
    /// (`routines MPI_Send`): what a deselected module costs elsewhere.
    SendOnly,
    /// Linked with libpnmpi, with `layers` copies of the delay module.
    Delay { layers: usize },
    /// Linked with libpnmpi, with `layers` different files, each a copy of
    /// the empty module made before the runs: what loading distinct tools
    /// costs, without the private copies libpnmpi makes of a file listed
    /// more than once.
    Distinct { layers: usize },
    /// Linked with libpnmpi, with `layers` copies of the empty module that
    /// apply only in phase [`MEMORY_PHASE`], so that their link-stack table
    /// is built when the program enters it and can be measured alone.
    Phased { layers: usize },
}

impl Setup {
    /// The name of the build (CSV `setup` column).
    pub fn name(self) -> &'static str {
        match self {
            Setup::Native => "native",
            Setup::Pnmpi { .. } => "pnmpi",
            Setup::SendOnly => "pnmpi-send-only",
            Setup::Delay { .. } => "pnmpi-delay",
            Setup::Distinct { .. } => "pnmpi-distinct",
            Setup::Phased { .. } => "pnmpi-phased",
        }
    }

    /// The number of modules loaded, `None` without libpnmpi.
    pub fn layers(self) -> Option<usize> {
        match self {
            Setup::Native => None,
            Setup::Pnmpi { layers }
            | Setup::Delay { layers }
            | Setup::Distinct { layers }
            | Setup::Phased { layers } => Some(layers),
            Setup::SendOnly => Some(1),
        }
    }

    /// A short human label for progress lines and the table.
    pub fn label(self) -> String {
        match self {
            Setup::Native => "native".into(),
            Setup::Pnmpi { layers: 1 } => "pnmpi, 1 module".into(),
            Setup::Pnmpi { layers } => format!("pnmpi, {layers} modules"),
            Setup::SendOnly => "pnmpi, 1 module, routines MPI_Send".into(),
            Setup::Delay { layers } => format!("pnmpi, {layers} delay"),
            Setup::Distinct { layers } => format!("pnmpi, {layers} distinct"),
            Setup::Phased { layers } => format!("pnmpi, {layers} phased"),
        }
    }

    /// The configuration file of this setup in `dir`.
    fn conf(self, dir: &Path) -> Option<PathBuf> {
        match self {
            Setup::Native => None,
            Setup::Pnmpi { layers } => Some(dir.join(format!("layers-{layers}.conf"))),
            Setup::SendOnly => Some(dir.join("send-only.conf")),
            Setup::Delay { layers } => Some(dir.join(format!("delay-{layers}.conf"))),
            Setup::Distinct { layers } => Some(dir.join(format!("distinct-{layers}.conf"))),
            Setup::Phased { layers } => Some(dir.join(format!("phased-{layers}.conf"))),
        }
    }

    /// The text of this setup's configuration file, given the empty and
    /// the delay module; distinct copies of the empty module are
    /// `<empty>.<i>` for i = 1, 2, ...
    fn conf_text(self, empty: &str, delay: &str) -> Option<String> {
        match self {
            Setup::Distinct { layers } => {
                Some((1..=layers).map(|i| format!("module {empty}.{i}\n")).collect())
            }
            Setup::Native => None,
            Setup::Pnmpi { layers } => Some(format!("module {empty}\n").repeat(layers)),
            Setup::SendOnly => Some(format!("module {empty}\nroutines MPI_Send\n")),
            Setup::Delay { layers } => Some(format!("module {delay}\n").repeat(layers)),
            // `pcontrol on`: every module, not only the first, wraps
            // MPI_Pcontrol, so that each wraps every routine and the table
            // is the plain modules x routines of the memory model.
            Setup::Phased { layers } => {
                Some(format!("module {empty}\nphases {MEMORY_PHASE}\npcontrol on\n").repeat(layers))
            }
        }
    }
}

/// What one run of a program printed: its `key value` lines.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Values(Vec<(String, f64)>);

impl Values {
    /// Reads every line of the form `key number`; other lines are ignored.
    pub fn parse(stdout: &str) -> Values {
        Values(
            stdout
                .lines()
                .filter_map(|l| {
                    let (key, value) = l.split_once(' ')?;
                    Some((key.to_string(), value.trim().parse().ok()?))
                })
                .collect(),
        )
    }

    /// The value printed for `key`.
    pub fn get(&self, key: &str) -> Option<f64> {
        self.0.iter().find(|(k, _)| k == key).map(|&(_, v)| v)
    }
}

/// Reads every module file `conf` lists, so that each run finds them in
/// the page cache, as it finds the MPI's own libraries, which every run
/// uses. Machines that page out files left unread for a while (DAMON
/// reclaim here: a minute) would otherwise time the disk, and only for the
/// setups with modules.
fn warm_modules(conf: &Path) -> Result<()> {
    let text = std::fs::read_to_string(conf).with_context(|| format!("cannot read {}", conf.display()))?;
    let files: std::collections::BTreeSet<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("module "))
        .map(str::trim)
        .collect();
    for file in files {
        std::fs::read(file).with_context(|| format!("cannot read module {file}"))?;
    }
    Ok(())
}

/// The built programs and configuration files, in a temporary folder that
/// goes away with it.
pub struct Bench {
    workdir: tempfile::TempDir,
    /// `(program, native build, build linked with libpnmpi)`.
    builds: Vec<(Program, PathBuf, PathBuf)>,
    flavor: Flavor,
    launch: Launch,
    calls: u64,
}

impl Bench {
    /// Builds `programs` twice each with `mpicc` (native, and linked with
    /// `-lpnmpi` as users link it), the delay module if a setup needs it,
    /// and writes each setup's configuration, which lists `module` (the
    /// empty module) or the delay module once per layer.
    pub fn prepare(
        install: &Install,
        mpicc: &str,
        launch: Launch,
        calls: u64,
        module: &Path,
        programs: &[Program],
        setups: &[Setup],
    ) -> Result<Bench> {
        let workdir = tempfile::Builder::new()
            .prefix("pnmpi-bench")
            .tempdir()
            .context("cannot create a temporary folder")?;
        let lib_dir = install.dir.to_string_lossy();
        let pnmpi_flags = [
            format!("-L{lib_dir}"),
            "-Wl,--no-as-needed".into(),
            "-lpnmpi".into(),
            format!("-Wl,-rpath,{lib_dir}"),
        ];
        let mut builds = Vec::new();
        for &program in Program::ALL.iter().filter(|p| programs.contains(p)) {
            let source = workdir.path().join(format!("{}.c", program.stem()));
            std::fs::write(&source, program.source()).context("cannot write a C source")?;
            let native = workdir.path().join(format!("{}-native", program.stem()));
            compile(mpicc, &source, &native, &[])?;
            let linked = workdir.path().join(format!("{}-pnmpi", program.stem()));
            compile(mpicc, &source, &linked, &pnmpi_flags)?;
            builds.push((program, native, linked));
        }
        let delay = workdir.path().join("libdelay.so");
        if setups.iter().any(|s| matches!(s, Setup::Delay { .. })) {
            let source = workdir.path().join("delay.c");
            std::fs::write(&source, DELAY_C).context("cannot write the delay module's source")?;
            let flags = [
                "-shared".into(),
                "-fPIC".into(),
                format!("-I{}", install.dir.join("include").display()),
            ];
            compile(mpicc, &source, &delay, &flags)?;
        }
        let copies = setups
            .iter()
            .filter_map(|s| match s {
                Setup::Distinct { layers } => Some(*layers),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        let distinct = workdir.path().join("distinct");
        if copies > 0 {
            std::fs::create_dir(&distinct).context("cannot create the folder of module copies")?;
        }
        let file_name = module.file_name().context("the module path names no file")?;
        for i in 1..=copies {
            let mut copy = file_name.to_os_string();
            copy.push(format!(".{i}"));
            std::fs::copy(module, distinct.join(copy))
                .with_context(|| format!("cannot copy {}", module.display()))?;
        }
        let empty_of = |setup: &Setup| match setup {
            Setup::Distinct { .. } => one_word(&distinct.join(file_name)),
            _ => one_word(module),
        };
        let delay = one_word(&delay)?;
        for setup in setups {
            let empty = empty_of(setup)?;
            if let (Some(path), Some(text)) = (setup.conf(workdir.path()), setup.conf_text(&empty, &delay)) {
                std::fs::write(path, text).context("cannot write a configuration")?;
            }
        }
        Ok(Bench {
            workdir,
            builds,
            flavor: install.flavor,
            launch,
            calls,
        })
    }

    /// Runs the `MPI_Comm_rank` loop once in `setup` and returns its ns per
    /// call.
    pub fn measure(&self, setup: Setup) -> Result<f64> {
        let calls = self.calls.to_string();
        let values = self.run(Program::CommRank, setup, 1, &[&calls], &[])?;
        values
            .get("ns_per_call")
            .with_context(|| format!("{} run printed no `ns_per_call` line", setup.label()))
    }

    /// Runs `program` once in `setup` on `ranks` ranks (more than one always
    /// under mpirun), with `env` added to its environment, and returns what
    /// it printed. A libpnmpi run is checked to have loaded exactly its
    /// layer count, so a configuration that was not read cannot pass for a
    /// fast one.
    pub fn run(
        &self,
        program: Program,
        setup: Setup,
        ranks: usize,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Result<Values> {
        let (_, native, linked) = self
            .builds
            .iter()
            .find(|(p, ..)| *p == program)
            .with_context(|| format!("{} was not built", program.stem()))?;
        let exe = match setup {
            Setup::Native => native,
            _ => linked,
        };
        let mut cmd = match (self.launch, ranks) {
            (Launch::Singleton, 1) => Command::new(exe),
            _ => {
                let mut cmd = mpirun(self.flavor, ranks);
                cmd.arg(exe);
                cmd
            }
        };
        cmd.args(args)
            .envs(env.iter().copied())
            .current_dir(self.workdir.path());
        match setup.conf(self.workdir.path()) {
            None => cmd.env_remove("PNMPI_CONF"),
            Some(conf) => {
                warm_modules(&conf)?;
                cmd.env("PNMPI_CONF", conf).env("PNMPI_VERBOSE", "1")
            }
        };
        let out = cmd
            .output()
            .with_context(|| format!("cannot start {:?}", cmd.get_program()))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let failed = |what: &str| {
            anyhow::anyhow!(
                "{} {} run {what} ({})\nstdout:\n{stdout}\nstderr:\n{stderr}",
                program.stem(),
                setup.label(),
                out.status
            )
        };
        if !out.status.success() {
            return Err(failed("failed"));
        }
        if let Some(n) = setup.layers() {
            if loaded_layers(&stderr) != Some(n) {
                return Err(failed(&format!("did not report {n} loaded module(s)")));
            }
        }
        let mut values = Values::parse(&stdout);
        if let Some(routines) = first_module_routines(&stderr) {
            values.0.push(("wrapped_routines".into(), routines as f64));
        }
        if let Some(ms) = setup_ms(&stderr) {
            values.0.push(("setup_ms".into(), ms));
        }
        Ok(values)
    }
}

/// `path` as the one word a `module` line takes.
fn one_word(path: &Path) -> Result<String> {
    let text = path.to_string_lossy();
    if text.chars().any(char::is_whitespace) {
        bail!("{text}: a `module` line takes one word; build in a folder whose path has no spaces");
    }
    Ok(text.into_owned())
}

fn compile(mpicc: &str, source: &Path, out: &Path, flags: &[String]) -> Result<()> {
    let mut cmd = Command::new(mpicc);
    cmd.arg("-O2").arg("-o").arg(out).arg(source).args(flags);
    let result = cmd
        .output()
        .with_context(|| format!("cannot run {mpicc} (set MPICC to the MPI compiler wrapper)"))?;
    if !result.status.success() {
        bail!(
            "building {} failed: {cmd:?}\n{}",
            out.display(),
            String::from_utf8_lossy(&result.stderr)
        );
    }
    Ok(())
}

/// How many modules libpnmpi's `PNMPI_VERBOSE` report lists, or `None`
/// when libpnmpi printed no report (it was not linked, or read no file).
fn loaded_layers(stderr: &str) -> Option<usize> {
    let mut lines = stderr.lines();
    lines.find(|l| l.starts_with("pnmpi: configuration "))?;
    let listed = |l: &&str| {
        l.strip_prefix("pnmpi:   ")
            .and_then(|rest| rest.split_once(". "))
            .is_some_and(|(n, _)| n.parse::<usize>().is_ok())
    };
    Some(lines.filter(listed).count())
}

/// How many routines the first module of libpnmpi's `PNMPI_VERBOSE`
/// report wraps (`pnmpi:   1. name path (405 routines...)`).
fn first_module_routines(stderr: &str) -> Option<usize> {
    let line = stderr.lines().find(|l| l.starts_with("pnmpi:   1. "))?;
    let (_, count) = line.rsplit_once(" (")?;
    count.split_whitespace().next()?.parse().ok()
}

/// How long libpnmpi took to set up its chain inside `MPI_Init`, from its
/// `PNMPI_VERBOSE` report (`pnmpi: set up 100 modules in 12.3 ms`): its own
/// share of the `MPI_Init` time, without the MPI's run-to-run noise.
fn setup_ms(stderr: &str) -> Option<f64> {
    let line = stderr.lines().find(|l| l.starts_with("pnmpi: set up "))?;
    let (_, time) = line.rsplit_once(" in ")?;
    time.strip_suffix(" ms")?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_program_output() {
        let values = Values::parse("ns_per_call 4.213\nnoise line\nheap_bytes 70\nbad x\n");
        assert_eq!(values.get("ns_per_call"), Some(4.213));
        assert_eq!(values.get("heap_bytes"), Some(70.0));
        assert_eq!(values.get("bad"), None);
        assert_eq!(values.0.len(), 2);
        assert_eq!(Values::parse("").get("ns_per_call"), None);
    }

    #[test]
    fn reads_the_setup_time_libpnmpi_reports() {
        let err = "pnmpi: binding: direct (10 XMPI_ slots bound)\npnmpi: set up 100 modules in 12.5 ms\n";
        assert_eq!(setup_ms(err), Some(12.5));
        assert_eq!(setup_ms("pnmpi: set up 3 modules in soon\n"), None);
        assert_eq!(setup_ms(""), None);
    }

    #[test]
    fn counts_the_modules_libpnmpi_reports() {
        let two = "pnmpi: configuration /tmp/x.conf\npnmpi: stack default: 2 module(s)\n\
                   pnmpi:   1. libempty /t/libempty.so (405 routines)\n\
                   pnmpi:   2. libempty /t/libempty.so (405 routines, private copy)\n";
        assert_eq!(loaded_layers(two), Some(2));
        assert_eq!(loaded_layers("pnmpi: configuration /tmp/empty.conf\n"), Some(0));
        assert_eq!(loaded_layers("some MPI warning\n"), None);
        assert_eq!(first_module_routines(two), Some(405));
        assert_eq!(
            first_module_routines("pnmpi: configuration /tmp/empty.conf\n"),
            None
        );
    }

    #[test]
    fn labels_name_the_layer_count() {
        assert_eq!(Setup::Native.label(), "native");
        assert_eq!(Setup::Pnmpi { layers: 1 }.label(), "pnmpi, 1 module");
        assert_eq!(Setup::Pnmpi { layers: 10 }.layers(), Some(10));
        assert_eq!(Setup::Delay { layers: 3 }.label(), "pnmpi, 3 delay");
    }

    #[test]
    fn configurations_list_each_layer() {
        let text = |s: Setup| s.conf_text("/e.so", "/d.so").unwrap();
        assert_eq!(text(Setup::Pnmpi { layers: 2 }), "module /e.so\nmodule /e.so\n");
        assert_eq!(text(Setup::Pnmpi { layers: 0 }), "");
        assert_eq!(text(Setup::Delay { layers: 1 }), "module /d.so\n");
        assert_eq!(
            text(Setup::Phased { layers: 1 }),
            "module /e.so\nphases 2\npcontrol on\n"
        );
        assert_eq!(Setup::Native.conf_text("/e.so", "/d.so"), None);
        assert_eq!(
            text(Setup::Distinct { layers: 2 }),
            "module /e.so.1\nmodule /e.so.2\n"
        );
    }
}
