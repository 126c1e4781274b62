//! The libpnmpi build under test and the MPI it belongs to.
//!
//! The bench measures the libpnmpi.so of its own cargo target folder (next
//! to its executable), so that `CARGO_TARGET_DIR=target/mpich cargo run -p
//! pnmpi-bench` measures the MPICH build and never mixes one MPI's libpnmpi
//! with the other's programs. Its layers are the compact empty module of
//! the same target folder, which it builds itself (`--profile compact`).

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The MPI implementations libpnmpi supports: stubgen's, the one the build
/// report names.
pub use stubgen::Flavor;

/// The flavor in the `MPI:` line of `pnmpi-build-report.txt`.
pub fn flavor_from_report(report: &str) -> Option<Flavor> {
    let line = report.lines().find_map(|l| l.strip_prefix("MPI:"))?;
    match line.split_whitespace().next()? {
        "openmpi" => Some(Flavor::OpenMpi),
        "mpich" => Some(Flavor::Mpich),
        _ => None,
    }
}

/// The flavor an `mpicc -show` command line links (`-lmpich` or `-lmpi`).
pub fn flavor_from_wrapper_flags(flags: &str) -> Option<Flavor> {
    let libs: Vec<&str> = flags.split_whitespace().collect();
    if libs.contains(&"-lmpich") {
        Some(Flavor::Mpich)
    } else if libs.contains(&"-lmpi") {
        Some(Flavor::OpenMpi)
    } else {
        None
    }
}

/// The launcher of `flavor`, with the options a root container on an
/// oversubscribed machine needs; `np` ranks.
pub fn mpirun(flavor: Flavor, np: usize) -> Command {
    let mut cmd = match flavor {
        Flavor::OpenMpi => {
            let mut cmd = Command::new("mpirun.openmpi");
            cmd.arg("--oversubscribe")
                .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
                .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
            cmd
        }
        Flavor::Mpich => Command::new("mpirun.mpich"),
    };
    cmd.arg("-np").arg(np.to_string());
    cmd
}

/// The artifacts of one `cargo build --release --workspace`.
#[derive(Debug)]
pub struct Install {
    /// The folder holding libpnmpi.so; programs link and find it here.
    pub dir: PathBuf,
    /// The compact empty module (no std), which a configuration lists once
    /// per layer: a layer as small as the paper's C layer.
    pub libempty: PathBuf,
    /// The MPI libpnmpi was generated for.
    pub flavor: Flavor,
    /// How many routines libpnmpi has stubs for: the size of its
    /// per-routine arrays, a term of the memory model.
    pub routines: usize,
}

impl Install {
    /// The build next to the running executable.
    pub fn next_to_exe() -> Result<Install> {
        let exe = std::env::current_exe().context("cannot find the pnmpi-bench executable")?;
        let dir = exe.parent().context("the executable has no folder")?;
        Install::in_dir(dir)
    }

    fn in_dir(dir: &Path) -> Result<Install> {
        if !dir.join("libpnmpi.so").is_file() {
            bail!(
                "{} missing: build the workspace first (`cargo build --release --workspace`, \
                 with the same MPICC and CARGO_TARGET_DIR)",
                dir.join("libpnmpi.so").display()
            );
        }
        let report_path = dir.join("pnmpi-build-report.txt");
        let report = std::fs::read_to_string(&report_path)
            .with_context(|| format!("cannot read {}", report_path.display()))?;
        let flavor = flavor_from_report(&report)
            .with_context(|| format!("{} names no known MPI", report_path.display()))?;
        let routines = generated_routines(&report)
            .with_context(|| format!("{} has no `generated: N routines` line", report_path.display()))?;
        Ok(Install {
            dir: dir.to_path_buf(),
            libempty: build_compact_empty(dir)?,
            flavor,
            routines,
        })
    }

    /// Fails unless `mpicc` links the MPI this libpnmpi was built for: a
    /// program of one MPI with the other's libpnmpi does not even start.
    pub fn check_compiler(&self, mpicc: &str) -> Result<()> {
        let out = Command::new(mpicc)
            .arg("-show")
            .output()
            .with_context(|| format!("cannot run `{mpicc} -show`"))?;
        let flags = String::from_utf8_lossy(&out.stdout);
        let found = flavor_from_wrapper_flags(&flags)
            .with_context(|| format!("`{mpicc} -show` links neither -lmpi nor -lmpich: {flags}"))?;
        if found != self.flavor {
            bail!(
                "{} was built for {} but MPICC={mpicc} is {}; use the target folder built with this \
                 MPICC (e.g. MPICC=mpicc.mpich CARGO_TARGET_DIR=target/mpich)",
                self.dir.join("libpnmpi.so").display(),
                self.flavor.name(),
                found.name()
            );
        }
        Ok(())
    }
}

/// Builds the compact empty module into the target folder that holds
/// `dir` (cargo only relinks it when a source changed) and returns its path.
/// A std-linked module maps 380 KiB per layer, so deep chains would measure
/// page walks; `--module` still layers any other module.
fn build_compact_empty(dir: &Path) -> Result<PathBuf> {
    let target = dir.parent().context("the target folder has no parent")?;
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    eprintln!("pnmpi-bench: building the compact empty module (cargo build --profile compact)");
    let status = Command::new(&cargo)
        .args([
            "build",
            "--quiet",
            "--profile",
            "compact",
            "-p",
            "pnmpi-module-empty",
        ])
        .arg("--manifest-path")
        .arg(workspace.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(target)
        .status()
        .with_context(|| format!("cannot run {}", Path::new(&cargo).display()))?;
    if !status.success() {
        bail!("`cargo build --profile compact -p pnmpi-module-empty` failed ({status})");
    }
    Ok(target.join("compact").join("libempty.so"))
}

/// N in the build report's `generated: N routines` line.
fn generated_routines(report: &str) -> Option<usize> {
    let line = report.lines().find_map(|l| l.strip_prefix("generated:"))?;
    line.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_flavor_of_a_build_report_and_of_mpicc() {
        let report = "pnmpi build report\nMPI:        mpich (found via mpicc.mpich -show)\nheader: x\n";
        assert_eq!(flavor_from_report(report), Some(Flavor::Mpich));
        assert_eq!(flavor_from_report("MPI: openmpi\n"), Some(Flavor::OpenMpi));
        assert_eq!(flavor_from_report("no such line\n"), None);
        assert_eq!(generated_routines(report), None);
        assert_eq!(
            generated_routines("generated:  405 routines (MPI_ stub + XMPI_ entry each)\n"),
            Some(405)
        );
        let ompi =
            "gcc -I/usr/lib/x86_64-linux-gnu/openmpi/include -L/usr/lib/x86_64-linux-gnu/openmpi/lib -lmpi";
        assert_eq!(flavor_from_wrapper_flags(ompi), Some(Flavor::OpenMpi));
        let mpich =
            "gcc -Wl,-z,relro -I/usr/include/x86_64-linux-gnu/mpich -L/usr/lib/x86_64-linux-gnu -lmpich";
        assert_eq!(flavor_from_wrapper_flags(mpich), Some(Flavor::Mpich));
        assert_eq!(flavor_from_wrapper_flags("gcc -lm"), None);
    }
}
