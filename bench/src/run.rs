//! Building the C benchmark program and running it in each configuration.

use crate::install::{Flavor, Install};
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The timed `MPI_Comm_rank` loop. Embedded so that the executable builds
/// exactly the program it was compiled with, wherever it runs from.
const COMM_RANK_C: &str = include_str!("../c/comm_rank.c");

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
}

impl Setup {
    /// The name of the build (CSV `setup` column).
    pub fn name(self) -> &'static str {
        match self {
            Setup::Native => "native",
            Setup::Pnmpi { .. } => "pnmpi",
            Setup::SendOnly => "pnmpi-send-only",
        }
    }

    /// The number of modules loaded, `None` without libpnmpi.
    pub fn layers(self) -> Option<usize> {
        match self {
            Setup::Native => None,
            Setup::Pnmpi { layers } => Some(layers),
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
        }
    }

    /// The configuration file of this setup in `dir`.
    fn conf(self, dir: &Path) -> Option<PathBuf> {
        match self {
            Setup::Native => None,
            Setup::Pnmpi { layers } => Some(dir.join(format!("layers-{layers}.conf"))),
            Setup::SendOnly => Some(dir.join("send-only.conf")),
        }
    }
}

/// The built programs and configuration files, in a temporary folder that
/// goes away with it.
pub struct Bench {
    workdir: tempfile::TempDir,
    native: PathBuf,
    linked: PathBuf,
    flavor: Flavor,
    launch: Launch,
    calls: u64,
}

impl Bench {
    /// Builds the program twice with `mpicc` (native, and linked with
    /// `-lpnmpi` as users link it) and writes one configuration per layer
    /// count, each listing the empty module that many times.
    pub fn prepare(
        install: &Install,
        mpicc: &str,
        launch: Launch,
        calls: u64,
        layers: &[usize],
    ) -> Result<Bench> {
        let module = install.libempty.to_string_lossy();
        if module.chars().any(char::is_whitespace) {
            bail!("{module}: a `module` line takes one word; build in a folder whose path has no spaces");
        }
        let workdir = tempfile::Builder::new()
            .prefix("pnmpi-bench")
            .tempdir()
            .context("cannot create a temporary folder")?;
        let source = workdir.path().join("comm_rank.c");
        std::fs::write(&source, COMM_RANK_C).context("cannot write the C source")?;
        let native = workdir.path().join("comm_rank-native");
        compile(mpicc, &source, &native, &[])?;
        let lib_dir = install.dir.to_string_lossy();
        let linked = workdir.path().join("comm_rank-pnmpi");
        let pnmpi_flags = [
            format!("-L{lib_dir}"),
            "-Wl,--no-as-needed".into(),
            "-lpnmpi".into(),
            format!("-Wl,-rpath,{lib_dir}"),
        ];
        compile(mpicc, &source, &linked, &pnmpi_flags)?;
        let confs = layers
            .iter()
            .map(|&n| (Setup::Pnmpi { layers: n }, format!("module {module}\n").repeat(n)))
            .chain([(Setup::SendOnly, format!("module {module}\nroutines MPI_Send\n"))]);
        for (setup, text) in confs {
            let path = setup
                .conf(workdir.path())
                .expect("libpnmpi setups have a configuration");
            std::fs::write(path, text).context("cannot write a configuration")?;
        }
        Ok(Bench {
            workdir,
            native,
            linked,
            flavor: install.flavor,
            launch,
            calls,
        })
    }

    /// Runs the program once in `setup` and returns its ns per call. A
    /// libpnmpi run is checked to have loaded exactly its layer count, so a
    /// configuration that was not read cannot pass for a fast one.
    pub fn measure(&self, setup: Setup) -> Result<f64> {
        let exe = match setup {
            Setup::Native => &self.native,
            Setup::Pnmpi { .. } | Setup::SendOnly => &self.linked,
        };
        let mut cmd = match self.launch {
            Launch::Mpirun => {
                let mut cmd = self.flavor.mpirun(1);
                cmd.arg(exe);
                cmd
            }
            Launch::Singleton => Command::new(exe),
        };
        cmd.arg(self.calls.to_string()).current_dir(self.workdir.path());
        match setup.conf(self.workdir.path()) {
            None => cmd.env_remove("PNMPI_CONF"),
            Some(conf) => cmd.env("PNMPI_CONF", conf).env("PNMPI_VERBOSE", "1"),
        };
        let out = cmd
            .output()
            .with_context(|| format!("cannot start {:?}", cmd.get_program()))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let failed = |what: &str| {
            anyhow::anyhow!(
                "{} run {what} ({})\nstdout:\n{stdout}\nstderr:\n{stderr}",
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
        ns_per_call(&stdout).ok_or_else(|| failed("printed no `ns_per_call` line"))
    }
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

/// The value of the program's `ns_per_call X` line.
fn ns_per_call(stdout: &str) -> Option<f64> {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("ns_per_call "))
        .and_then(|v| v.trim().parse().ok())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_program_output() {
        assert_eq!(ns_per_call("ns_per_call 4.213\n"), Some(4.213));
        assert_eq!(ns_per_call("noise\nns_per_call 70\n"), Some(70.0));
        assert_eq!(ns_per_call("ns_per_call x\n"), None);
        assert_eq!(ns_per_call(""), None);
    }

    #[test]
    fn counts_the_modules_libpnmpi_reports() {
        let two = "pnmpi: configuration /tmp/x.conf\npnmpi: stack default: 2 module(s)\n\
                   pnmpi:   1. libempty /t/libempty.so (405 routines)\n\
                   pnmpi:   2. libempty /t/libempty.so (405 routines, private copy)\n";
        assert_eq!(loaded_layers(two), Some(2));
        assert_eq!(loaded_layers("pnmpi: configuration /tmp/empty.conf\n"), Some(0));
        assert_eq!(loaded_layers("some MPI warning\n"), None);
    }

    #[test]
    fn labels_name_the_layer_count() {
        assert_eq!(Setup::Native.label(), "native");
        assert_eq!(Setup::Pnmpi { layers: 1 }.label(), "pnmpi, 1 module");
        assert_eq!(Setup::Pnmpi { layers: 10 }.layers(), Some(10));
    }
}
