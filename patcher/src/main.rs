//! `pnmpi-patch`: patch or check a PMPI tool binary. See `pnmpi-patch --help` and README.md.

mod cli;

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use pnmpi_patch::elf::DynImage;
use pnmpi_patch::error::{exit, PatchError};
use pnmpi_patch::inventory::EntryPoints;
use pnmpi_patch::report::CheckReport;
use pnmpi_patch::{naming, patch, write, Patched};

use cli::Cli;

/// An error together with the file it is about, printed as one line the user can act on.
struct Failure {
    file: PathBuf,
    error: PatchError,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pnmpi-patch: error: {}: {}", self.file.display(), self.error)?;
        if let Some(offset) = self.error.offset() {
            write!(f, " (offset 0x{offset:x})")?;
        }
        write!(f, " — {}", self.error.hint())
    }
}

/// Attaches the file name to errors from the library.
trait About<T> {
    fn about(self, file: &Path) -> Result<T, Failure>;
}

impl<T> About<T> for Result<T, PatchError> {
    fn about(self, file: &Path) -> Result<T, Failure> {
        self.map_err(|error| Failure {
            file: file.to_path_buf(),
            error,
        })
    }
}

fn read(path: &Path) -> Result<Vec<u8>, Failure> {
    fs::read(path).map_err(PatchError::Read).about(path)
}

fn read_image(path: &Path) -> Result<DynImage, Failure> {
    DynImage::parse(&read(path)?).about(path)
}

fn entry_points(against: Option<&Path>) -> Result<Option<EntryPoints>, Failure> {
    against
        .map(|path| {
            let image = read_image(path)?;
            Ok(EntryPoints::of(path.display().to_string(), &image))
        })
        .transpose()
}

fn check(cli: &Cli, library: Option<&EntryPoints>) -> Result<u8, Failure> {
    let image = read_image(&cli.input)?;
    let report = CheckReport::new(cli.input.display().to_string(), &image, library);
    if cli.json {
        println!("{}", report.to_json());
    } else {
        print!("{report}");
    }
    Ok(report.exit_code())
}

fn output_path(cli: &Cli) -> Result<PathBuf, Failure> {
    if cli.in_place {
        fs::canonicalize(&cli.input)
            .map_err(PatchError::Read)
            .about(&cli.input)
    } else {
        Ok(cli
            .output
            .clone()
            .unwrap_or_else(|| naming::default_output(&cli.input)))
    }
}

/// Tells what the patch did, and what PnMPI needs to load the result.
fn describe(patched: &Patched, input: &Path, output: &Path) {
    let plan = &patched.plan;
    let dropped = plan
        .renames
        .iter()
        .filter(|r| r.dropped_version.is_some())
        .count();
    print!(
        "{} -> {}: renamed {} PMPI import(s) to XMPI_",
        input.display(),
        output.display(),
        plan.renames.len()
    );
    if dropped > 0 {
        print!(" ({dropped} version requirement(s) set to global)");
    }
    println!();
    match naming::module_name(output) {
        Some(module) => {
            println!("load it with `module {module}` in .pnmpi-conf, with its folder on PNMPI_LIB_PATH")
        }
        None => eprintln!(
            "pnmpi-patch: note: {} does not end in .so, so PnMPI cannot load it by module name",
            output.display()
        ),
    }
}

/// Fortran imports are optional in libpnmpi, so how they were handled is worth a word.
fn warn_about_fortran(patched: &Patched) {
    let plan = &patched.plan;
    if plan.fortran_unchecked {
        eprintln!(
            "pnmpi-patch: note: renamed Fortran pmpi_ imports to xmpi_ without --against; \
             libpnmpi must define them"
        );
    }
    if !plan.fortran_kept.is_empty() {
        eprintln!(
            "pnmpi-patch: warning: kept Fortran imports with no entry point in libpnmpi \
             (they call MPI directly, bypassing lower modules): {}",
            plan.fortran_kept.join(" ")
        );
    }
}

fn run(cli: &Cli) -> Result<u8, Failure> {
    let library = entry_points(cli.against.as_deref())?;
    if cli.check {
        return check(cli, library.as_ref());
    }
    let bytes = read(&cli.input)?;
    let patched = patch(&bytes, library.as_ref()).about(&cli.input)?;
    let permissions = write::permissions_of(&cli.input).about(&cli.input)?;
    let output = output_path(cli)?;
    if output.is_dir() {
        return Err(PatchError::OutputIsDirectory).about(&output);
    }
    warn_about_fortran(&patched);
    if !patched.plan.is_noop() {
        write::write_atomically(&output, &patched.output, permissions).about(&output)?;
        describe(&patched, &cli.input, &output);
    } else {
        println!("{}: already patched; nothing to rename", cli.input.display());
        if cli.output.is_some() && !same_file(&cli.input, &output) {
            write::write_atomically(&output, &bytes, permissions).about(&output)?;
            println!("copied it unchanged to {}", output.display());
        }
    }
    Ok(exit::SUCCESS)
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (fs::canonicalize(a), fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(code) => ExitCode::from(code),
        Err(failure) => {
            eprintln!("{failure}");
            ExitCode::from(failure.error.exit_code())
        }
    }
}
