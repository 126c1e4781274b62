//! `pnmpi sim calibrate`: measures this machine (PSINSBench's role) and
//! writes a machine file for `pnmpi sim replay`. Run under the MPI
//! launcher: every rank starts the `pnmpi-calibrate` MPI program (built
//! with the MPI of this build, beside the `pnmpi` command) as its child,
//! which measures; then rank 0 fits the figures and writes the file.

use crate::output::write_atomic;
use anyhow::{bail, Context, Result};
use clap::Args;
use pnmpi_sim::calibrate::{machine_toml, Raw};
use std::path::{Path, PathBuf};

/// Options of `pnmpi sim calibrate`.
#[derive(Args)]
pub struct CalibrateArgs {
    /// The machine file to write (its raw figures go beside it, in FILE.raw).
    #[arg(long, short, value_name = "FILE")]
    output: PathBuf,
    /// Time budget of the measurements, seconds.
    #[arg(long, default_value_t = 60.0, value_name = "S")]
    seconds: f64,
    /// A few seconds, for a quick look or a test (same as --seconds 3).
    #[arg(long, conflicts_with = "seconds")]
    quick: bool,
}

/// The rank of this process as the launcher set it (Open MPI, MPICH's
/// Hydra, PMIx); 0 outside a launcher.
fn launcher_rank() -> u32 {
    ["OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse().ok())
        .unwrap_or(0)
}

/// UTC now as `YYYY-MM-DDTHH:MMZ`.
fn utc_now() -> String {
    let (y, mo, d, h, mi, _) = pnmpi_trace::civil::utc(pnmpi_trace::civil::now_secs());
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}Z")
}

/// Runs the measurement on this rank; rank 0 then writes the machine file.
pub fn run(a: &CalibrateArgs) -> Result<()> {
    let seconds = if a.quick { 3.0 } else { a.seconds };
    if !(seconds > 0.0 && seconds.is_finite()) {
        bail!("--seconds must be a positive number of seconds");
    }
    let exe = std::env::current_exe().context("cannot locate the pnmpi executable")?;
    let prog = exe.with_file_name("pnmpi-calibrate");
    if !prog.exists() {
        bail!(
            "{} is missing: it is built with libpnmpi (cargo build --release --workspace)",
            prog.display()
        );
    }
    let mut raw_path = a.output.as_os_str().to_owned();
    raw_path.push(".raw");
    let raw_path = PathBuf::from(raw_path);
    let status = std::process::Command::new(&prog)
        .arg(&raw_path)
        .arg(seconds.to_string())
        .status()
        .with_context(|| format!("cannot start {}", prog.display()))?;
    if !status.success() {
        bail!("the measurement failed ({status}); see its messages above");
    }
    if launcher_rank() != 0 {
        return Ok(());
    }
    write_machine(&raw_path, &a.output)?;
    eprintln!(
        "pnmpi sim calibrate: wrote {} (raw figures: {})",
        a.output.display(),
        raw_path.display()
    );
    Ok(())
}

/// Fits `raw_path`'s figures and writes the machine file `out`.
fn write_machine(raw_path: &Path, out: &Path) -> Result<()> {
    let text = std::fs::read_to_string(raw_path)
        .with_context(|| format!("cannot read the measurements in {}", raw_path.display()))?;
    let raw = Raw::parse(&text, raw_path).map_err(anyhow::Error::msg)?;
    let toml = machine_toml(&raw, &utc_now()).map_err(anyhow::Error::msg)?;
    // The file must load as `replay` will load it.
    pnmpi_sim::machine::Machine::parse(&out.display().to_string(), &toml)
        .context("the fitted machine file does not load (a bug: please report it)")?;
    write_atomic(out, toml)
}
