//! Command-line interface of `pnmpi-patch`.

use std::path::PathBuf;

use clap::Parser;

/// Turn a binary PMPI tool into a PnMPI module by renaming its PMPI_ imports to XMPI_.
///
/// Only the first byte of each undefined dynamic PMPI_X symbol name changes (P -> X; Fortran
/// pmpi_x_ -> xmpi_x_), so the tool's own MPI_X wrappers, its code and its string constants
/// stay byte-for-byte the same.
#[derive(Debug, Parser)]
#[command(
    name = "pnmpi-patch",
    version,
    after_help = "Output: without -o or --in-place, TOOL is written next to the input as \
<stem>.pnmpi.so, where <stem> is the file name before .so and any version suffix \
(libfoo.so.40 -> libfoo.pnmpi.so). Load it with `module <stem>.pnmpi` in .pnmpi-conf, \
with its folder on PNMPI_LIB_PATH.\n\n\
Exit codes:\n  0  patched, check clean, or already patched (nothing to do)\n  \
1  bad input: unreadable, not ELF, corrupt, not a PMPI tool, or unsafe to patch\n  \
2  usage error\n  \
3  libpnmpi (--against) lacks XMPI_ entry points the tool needs\n  \
4  the output could not be written"
)]
pub struct Cli {
    /// The PMPI tool: a shared object defining MPI_ wrappers that call PMPI_.
    #[arg(value_name = "TOOL")]
    pub input: PathBuf,

    /// Write the patched tool to OUT.
    #[arg(short, long, value_name = "OUT", conflicts_with_all = ["in_place", "check"])]
    pub output: Option<PathBuf>,

    /// Replace TOOL itself (a symlink is followed and its target replaced).
    #[arg(long, conflicts_with = "check")]
    pub in_place: bool,

    /// Change nothing; report the tool's MPI wrappers, PMPI imports and patch state.
    #[arg(long)]
    pub check: bool,

    /// Print the --check report as JSON.
    #[arg(long, requires = "check")]
    pub json: bool,

    /// The libpnmpi.so the module will run under; refuse (or report, with --check) when it
    /// lacks an XMPI_ entry point for an import. Fortran pmpi_ imports are renamed only when
    /// it defines the matching xmpi_ entry point.
    #[arg(long, value_name = "LIBPNMPI")]
    pub against: Option<PathBuf>,
}
