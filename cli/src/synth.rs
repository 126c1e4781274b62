//! `pnmpi sim synth`: a synthetic trace of a communication motif, as a
//! `.pnt` or a tracer folder that every command reads.

use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use pnmpi_sim::motif::{self, Motif, Params, MOTIFS};
use pnmpi_sim::units::{parse_bytes, parse_time};
use std::path::PathBuf;

/// Write a synthetic trace of a communication motif.
#[derive(Args)]
#[command(after_help = motif_help())]
pub struct SynthArgs {
    /// The motif (listed below).
    motif: String,
    /// Ranks.
    #[arg(long)]
    ranks: u32,
    /// Iterations.
    #[arg(long, default_value_t = 100)]
    iterations: u64,
    /// Message size (per peer for alltoall, the mean for random), e.g. 8KiB.
    #[arg(long, default_value = "8KiB")]
    bytes: String,
    /// CPU burst per iteration, e.g. 100us.
    #[arg(long, default_value = "100us")]
    compute: String,
    /// halo2d, halo3d: an MPI_Allreduce every K iterations (0: none).
    #[arg(long, default_value_t = 0, value_name = "K")]
    allreduce_every: u64,
    /// Seed of random's draws.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The output: a `.pnt`, or with --folder a tracer folder.
    #[arg(long, short)]
    output: PathBuf,
    /// Write a tracer folder of rank files (rank-NNNNN.pnr) instead of a `.pnt`.
    #[arg(long)]
    folder: bool,
}

fn motif_help() -> String {
    let mut s = String::from("Motifs:\n");
    for (_, name, what) in MOTIFS {
        s.push_str(&format!("  {name:<10} {what}\n"));
    }
    s
}

/// Runs `pnmpi sim synth`.
pub fn run(a: &SynthArgs) -> Result<()> {
    let motif: Motif = a.motif.parse().map_err(anyhow::Error::msg)?;
    if a.ranks == 0 {
        bail!("--ranks must be at least 1");
    }
    let p = Params {
        motif,
        ranks: a.ranks,
        iterations: a.iterations,
        bytes: parse_bytes(&a.bytes)
            .map_err(|e| anyhow::anyhow!("--bytes {}: {e}", a.bytes))?
            .0,
        compute_ns: parse_time(&a.compute)
            .map_err(|e| anyhow::anyhow!("--compute {}: {e}", a.compute))?
            .0 as u64,
        allreduce_every: a.allreduce_every,
        seed: a.seed,
    };
    let bar = ProgressBar::new(u64::from(a.ranks));
    if let Ok(style) =
        ProgressStyle::with_template("{bar:30} {pos}/{len} ranks written [{elapsed}, {eta} left]")
    {
        bar.set_style(style);
    }
    let progress = |r: u32| bar.set_position(u64::from(r));
    let out = &a.output;
    if a.folder {
        motif::folder::write(&p, out, &progress)
            .with_context(|| format!("cannot write {}", out.display()))?;
        bar.finish_and_clear();
        println!(
            "{}: {motif}, {} ranks, {} iterations: a tracer folder of {} rank files",
            out.display(),
            a.ranks,
            a.iterations,
            a.ranks
        );
    } else {
        let mut part = out.as_os_str().to_owned();
        part.push(".part");
        let part = PathBuf::from(part);
        let written = (|| -> std::io::Result<u64> {
            let file = std::fs::File::create(&part)?;
            let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
            let n = motif::pnt::write(&p, &mut w, &progress)?;
            std::io::Write::flush(&mut w)?;
            Ok(n)
        })();
        let written = match written.and_then(|n| std::fs::rename(&part, out).map(|_| n)) {
            Ok(n) => n,
            Err(e) => {
                let _ = std::fs::remove_file(&part);
                return Err(e).with_context(|| format!("cannot write {}", out.display()));
            }
        };
        bar.finish_and_clear();
        println!(
            "{}: {motif}, {} ranks, {} iterations, {written} bytes",
            out.display(),
            a.ranks,
            a.iterations
        );
    }
    Ok(())
}
