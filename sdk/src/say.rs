//! How a module (and libpnmpi) speaks to the user: one line on standard
//! error, written whole in one write so that the lines of ranks sharing a
//! terminal or a launcher's pipe never interleave mid-line (`eprintln!`
//! writes piece by piece), named after its module and, while MPI runs,
//! after the rank:
//!
//! ```text
//! pnmpi tracer: rank 3: warning: cannot create its trace file: ...; not tracing
//! ```
//!
//! libpnmpi itself speaks as [`LIBPNMPI`], whose lines read `pnmpi: ...`.
//!
//! [`fatal`] then ends the whole job: `MPI_Abort` while MPI runs, once the
//! launcher has read the line ([`pnmpi_mpi_sys::abort::abort_job`]), else
//! `exit(1)`; [`stop_with`] does so with another exit code. A report of
//! several lines, or a line in a form of its own, is written whole by
//! [`write_line`]. LLNL's `pnmpi_print_*` (libpnmpi) prints through
//! [`write_line`], takes the rank from [`mpi_rank`] and stops through
//! [`stop`], in its own format.

use crate::sys::{constants, ffi};
use std::ffi::c_int;
use std::fmt::Display;
use std::io::Write;

/// What a line is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// What happened (a report written, a trace's place).
    Note,
    /// Something went wrong and the module carries on without it.
    Warning,
    /// Something went wrong that ends the run.
    Error,
}

/// This rank and the world's size while MPI runs (initialized, not
/// finalized); `None` before `MPI_Init` and after `MPI_Finalize`.
pub fn mpi_rank() -> Option<(c_int, c_int)> {
    let (mut init, mut fin) = (0, 0);
    // SAFETY: both may be called at any time, before MPI_Init and after
    // MPI_Finalize; they write their int.
    let running = unsafe {
        ffi::PMPI_Initialized(&mut init) == constants::SUCCESS()
            && ffi::PMPI_Finalized(&mut fin) == constants::SUCCESS()
    };
    if !running || init == 0 || fin != 0 {
        return None;
    }
    let (mut rank, mut size) = (0, 0);
    // SAFETY: MPI runs; each writes its int.
    let ok = unsafe {
        ffi::PMPI_Comm_rank(constants::COMM_WORLD(), &mut rank) == constants::SUCCESS()
            && ffi::PMPI_Comm_size(constants::COMM_WORLD(), &mut size) == constants::SUCCESS()
    };
    ok.then_some((rank, size))
}

/// The name libpnmpi itself speaks under: its lines read `pnmpi: TEXT`,
/// as its users (and scripts) have always read them.
pub const LIBPNMPI: &str = "";

/// The line of `module` at `level`, for `rank` (none: MPI does not run).
pub fn line(module: &str, level: Level, rank: Option<c_int>, text: impl Display) -> String {
    let module = if module.is_empty() {
        String::new()
    } else {
        format!(" {module}")
    };
    let rank = rank.map(|r| format!("rank {r}: ")).unwrap_or_default();
    let level = match level {
        Level::Note => "",
        Level::Warning => "warning: ",
        Level::Error => "error: ",
    };
    format!("pnmpi{module}: {rank}{level}{text}\n")
}

/// Writes `text` (one line or several) to standard error in one write,
/// and flushes it: what two ranks write at once never interleaves.
pub fn write_line(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    let _ = err.flush();
}

/// Says `text` as `module` at `level`, with this rank while MPI runs.
pub fn say(module: &str, level: Level, text: impl Display) {
    write_line(&line(module, level, mpi_rank().map(|r| r.0), text));
}

/// Says `text` as `module` at `level` without a rank: for virtual ranks,
/// which are the MPI the application sees, so that the process's rank
/// in the native MPI would name the wrong rank (a virtual rank says its
/// own in the text); and for a line that one rank says for the whole
/// job (totals at `MPI_Finalize`), where a rank would read as that
/// rank's alone.
pub fn unranked(module: &str, level: Level, text: impl Display) {
    write_line(&line(module, level, None, text));
}

/// Says what happened.
pub fn note(module: &str, text: impl Display) {
    say(module, Level::Note, text);
}

/// Says what went wrong, which the module carries on without.
pub fn warn(module: &str, text: impl Display) {
    say(module, Level::Warning, text);
}

/// Says what went wrong, for a caller that reports the failure itself
/// (an error code returned to the application).
pub fn error(module: &str, text: impl Display) {
    say(module, Level::Error, text);
}

/// Says what went wrong, then ends the whole job ([`stop`]).
pub fn fatal(module: &str, text: impl Display) -> ! {
    error(module, text);
    stop()
}

/// Ends the whole job with exit code 1 ([`stop_with`]).
pub fn stop() -> ! {
    stop_with(1)
}

/// Ends the whole job with exit code `code`, for a module whose users
/// read the code (the checker's configured one, the application's own
/// `MPI_Abort`): `MPI_Abort` on `MPI_COMM_WORLD` while MPI runs (once
/// the launcher has read what this process wrote), else `exit(code)`.
pub fn stop_with(code: c_int) -> ! {
    if mpi_rank().is_some() {
        crate::sys::abort::abort_job(code);
    }
    std::process::exit(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_names_the_module_the_rank_and_the_level() {
        assert_eq!(line("tracer", Level::Note, None, "done"), "pnmpi tracer: done\n");
        assert_eq!(
            line("profiler", Level::Warning, Some(3), "no report"),
            "pnmpi profiler: rank 3: warning: no report\n"
        );
        assert_eq!(
            line("comm", Level::Error, Some(0), 7),
            "pnmpi comm: rank 0: error: 7\n"
        );
        assert_eq!(
            line(LIBPNMPI, Level::Warning, None, "no module"),
            "pnmpi: warning: no module\n"
        );
    }
}
