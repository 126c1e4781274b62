//! `pnmpi run`: exec the program with libpnmpi in `LD_PRELOAD`, and the
//! configuration and module path set from the command line.

use anyhow::{bail, Context, Result};
use clap::Args;
use std::convert::Infallible;
use std::ffi::{OsStr, OsString};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

/// Exit status when the program cannot be started at all.
pub const EXIT_LAUNCH_FAILED: u8 = 127;

/// Options of `pnmpi run`.
#[derive(Args)]
pub struct RunArgs {
    /// Configuration file (sets PNMPI_CONF).
    #[arg(long, value_name = "FILE")]
    conf: Option<PathBuf>,
    /// Folder to search for modules before PNMPI_LIB_PATH; repeatable.
    #[arg(long = "lib-path", value_name = "DIR")]
    lib_path: Vec<PathBuf>,
    /// libpnmpi.so to preload (default: the one installed with this command).
    #[arg(long, value_name = "PATH", env = "PNMPI_LIBRARY")]
    library: Option<PathBuf>,
    /// Run the program as N virtual ranks per process on vtime's clock
    /// (sets PNMPI_VRANKS and preloads libvranks.so instead of libpnmpi).
    #[arg(long, value_name = "N")]
    vranks: Option<String>,
    /// Stack of each virtual rank (`8M`, `256K`; sets PNMPI_VRANK_STACK).
    #[arg(long = "vrank-stack", value_name = "SIZE", requires = "vranks")]
    vrank_stack: Option<String>,
    /// Print the loaded stack on rank 0 (sets PNMPI_VERBOSE=1).
    #[arg(short, long)]
    verbose: bool,
    /// The program and its arguments.
    #[arg(last = true, required = true, value_name = "PROGRAM")]
    program: Vec<OsString>,
}

/// Launchers that must run outside `pnmpi run`: preloading libpnmpi into
/// them would load MPI into the launcher itself.
const LAUNCHERS: &[&str] = &["mpirun", "mpiexec", "orterun", "srun", "prun", "mpiexec.hydra"];

fn is_launcher(program: &OsStr) -> bool {
    let base = Path::new(program)
        .file_name()
        .and_then(OsStr::to_str)
        .unwrap_or("");
    LAUNCHERS
        .iter()
        .any(|l| base == *l || base.starts_with(&format!("{l}.")))
}

/// The library `name` (libpnmpi.so, libvranks.so) beside this executable
/// (a cargo target folder), or in `../lib` (an install prefix).
fn default_library(name: &str) -> Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot locate the pnmpi executable")?;
    let bin = exe.parent().context("the pnmpi executable has no folder")?;
    let candidates = [bin.join(name), bin.join("../lib").join(name)];
    candidates.iter().find(|p| p.is_file()).cloned().with_context(|| {
        format!("{name} not found at {candidates:?}; pass --library PATH or set PNMPI_LIBRARY")
    })
}

fn prepend(var: &str, first: impl IntoIterator<Item = PathBuf>, sep: &str) -> Option<OsString> {
    let mut parts: Vec<OsString> = first.into_iter().map(PathBuf::into_os_string).collect();
    if let Some(old) = std::env::var_os(var).filter(|v| !v.is_empty()) {
        parts.push(old);
    }
    (!parts.is_empty()).then(|| parts.join(OsStr::new(sep)))
}

fn absolute(p: &Path) -> Result<PathBuf> {
    std::path::absolute(p).with_context(|| format!("cannot make {} absolute", p.display()))
}

/// Replaces this process with the program; returns only on error.
pub fn run(args: RunArgs) -> Result<Infallible> {
    let (program, rest) = args.program.split_first().context("no program given")?;
    if is_launcher(program) {
        bail!(
            "`{}` is an MPI launcher; put pnmpi run after it: mpirun -np 4 pnmpi run -- ./app",
            program.to_string_lossy()
        );
    }
    // Virtual ranks: libvranks.so (beside libpnmpi.so) takes its place.
    let library = absolute(&match (args.library, &args.vranks) {
        (Some(l), Some(_)) => {
            let v = l.with_file_name("libvranks.so");
            if !v.is_file() {
                bail!(
                    "--vranks: {} not found (build it with cargo build --release -p pnmpi-vranks)",
                    v.display()
                );
            }
            v
        }
        (Some(l), None) if l.is_file() => l,
        (Some(l), None) => bail!("--library {}: no such file", l.display()),
        (None, Some(_)) => default_library("libvranks.so")?,
        (None, None) => default_library("libpnmpi.so")?,
    })?;
    let mut command = std::process::Command::new(program);
    command.args(rest);
    if let Some(preload) = prepend("LD_PRELOAD", [library], ":") {
        command.env("LD_PRELOAD", preload);
    }
    if let Some(conf) = args.conf {
        if !conf.is_file() {
            bail!("--conf {}: no such file", conf.display());
        }
        command.env("PNMPI_CONF", absolute(&conf)?);
    }
    let dirs = args
        .lib_path
        .iter()
        .map(|d| absolute(d))
        .collect::<Result<Vec<_>>>()?;
    if let Some(lib_path) = prepend("PNMPI_LIB_PATH", dirs, ":") {
        command.env("PNMPI_LIB_PATH", lib_path);
    }
    if args.verbose {
        command.env("PNMPI_VERBOSE", "1");
    }
    if let Some(n) = &args.vranks {
        command.env("PNMPI_VRANKS", n);
    }
    if let Some(size) = &args.vrank_stack {
        command.env("PNMPI_VRANK_STACK", size);
    }
    let err = command.exec();
    Err(err).with_context(|| format!("cannot run {}", program.to_string_lossy()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_launchers_by_base_name() {
        assert!(is_launcher(OsStr::new("/usr/bin/mpirun")));
        assert!(is_launcher(OsStr::new("mpiexec.mpich")));
        assert!(is_launcher(OsStr::new("mpirun.openmpi")));
        assert!(!is_launcher(OsStr::new("./mpirun_test_app")));
        assert!(!is_launcher(OsStr::new("./app")));
    }
}
