//! Reports: what is wrong, where (rank, call, call site), as a line of
//! text on stderr and a record in this rank's JSON file; and what happens
//! next (`action report|abort`, the exit status).
//!
//! Each rank rewrites `OUTPUT/rank-N.json` (a temporary file, then a
//! rename) at each report, so that a report survives a later abort or
//! crash. A process that reported an error exits with `exit_code`: an
//! `atexit` handler registered at the first report flushes stdio and ends
//! the process with that status, after `MPI_Finalize` returned and the
//! application's own `exit`.

use crate::config::{self, Action};
use parking_lot::Mutex;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering::Relaxed};

/// The most reports a rank writes; later ones are counted only.
const MAX_REPORTS: usize = 200;

/// What kind of error: a corpus program's expected verdict, and a key of
/// the JSON record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// An argument MPI would reject, or a buffer misuse.
    Argument,
    /// Ranks disagree on a collective of one communicator.
    Collective,
    /// A send and its receive disagree: type signature or length.
    P2p,
    /// Every rank is blocked.
    Deadlock,
    /// A request misused, a buffer written during its operation, a call
    /// after `MPI_Finalize`.
    Nonblocking,
    /// An object never freed before `MPI_Finalize`.
    Leak,
    /// A rule on threads broken: a call above the granted thread level,
    /// two threads on one request or in collectives on one communicator
    /// at once, `MPI_Finalize` while another thread is in MPI.
    Thread,
    /// One-sided communication: an access outside an epoch or outside
    /// its target's window, origin and target disagreeing, an origin
    /// buffer written before its operation completed, a window freed or
    /// locked in the middle of an epoch.
    Rma,
}

impl Class {
    /// The name in text reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Class::Argument => "argument",
            Class::Collective => "collective",
            Class::P2p => "p2p",
            Class::Deadlock => "deadlock",
            Class::Nonblocking => "nonblocking",
            Class::Leak => "leak",
            Class::Thread => "thread",
            Class::Rma => "rma",
        }
    }
}

/// Whether a report is an error, or a note on resources the program
/// never released (a leak), which MPI does not count as erroneous: a
/// note neither changes the exit status nor aborts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Severity {
    Error,
    Note,
}

/// One error found.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub class: Class,
    pub severity: Severity,
    /// A short name of the check (`rank`, `tag`, `root`, `request-leak`...).
    pub check: &'static str,
    /// `MPI_COMM_WORLD` rank.
    pub rank: i32,
    /// The thread that reported (0: the one that initialized MPI, see
    /// `threads`).
    pub thread: u32,
    /// The MPI routine called.
    pub call: String,
    /// `file:line (function)`, or `object+offset` without debug information.
    pub site: String,
    /// What is wrong, in a sentence.
    pub what: String,
    /// What to change, in a sentence (`advice`).
    pub fix: &'static str,
    /// Seconds since the epoch, to order reports across ranks.
    pub time: f64,
}

/// This rank's `MPI_COMM_WORLD` rank, once MPI is up (-1 before).
static RANK: AtomicI32 = AtomicI32::new(-1);
static EXIT_SET: AtomicBool = AtomicBool::new(false);
static WRITTEN: Mutex<Vec<Report>> = Mutex::new(Vec::new());

/// Sets the rank reports are made under.
pub fn set_rank(rank: i32) {
    RANK.store(rank, Relaxed);
}

/// This process's `MPI_COMM_WORLD` rank (-1 before `MPI_Init`).
pub fn rank() -> i32 {
    RANK.load(Relaxed)
}

/// Reports an error of `class` in `call` at `site`, then, under
/// `action abort`, aborts the job. `check` names the check.
pub fn report(class: Class, check: &'static str, call: &str, site: &str, what: String) {
    emit(record(class, Severity::Error, check, call, site, what));
    if config::get().action == Action::Abort {
        abort_job();
    }
}

/// Writes a note (`Severity::Note`): reported as errors are, but the
/// process's exit status is left alone and `action abort` does not abort.
pub fn note(class: Class, check: &'static str, call: &str, site: &str, what: String) {
    emit(record(class, Severity::Note, check, call, site, what));
}

/// The record of a report.
fn record(
    class: Class,
    severity: Severity,
    check: &'static str,
    call: &str,
    site: &str,
    what: String,
) -> Report {
    Report {
        class,
        severity,
        check,
        rank: rank(),
        thread: crate::threads::current(),
        call: call.to_string(),
        site: site.to_string(),
        what,
        fix: crate::advice::fix(class.name(), check),
        time: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64()),
    }
}

/// Writes `report` (text and JSON) without acting on it: for a report
/// that the checker follows with its own action (a deadlock aborts).
pub fn emit(report: Report) {
    let report_is_error = report.severity == Severity::Error;
    // One write, so that ranks' lines do not interleave. The thread is
    // named once another thread than the first made a checked call.
    let thread = if crate::threads::several() {
        format!(" thread {}", report.thread)
    } else {
        String::new()
    };
    let note = if report.severity == Severity::Note {
        "note: "
    } else {
        ""
    };
    let line = format!(
        "pnmpi checker: rank {}{thread}: {} at {}: [{}] {note}{}; to fix: {}\n",
        report.rank,
        report.call,
        report.site,
        report.class.name(),
        report.what,
        report.fix
    );
    // Its own form (the thread beside the rank), which scripts read.
    pnmpi_sdk::say::write_line(&line);
    let mut written = WRITTEN.lock();
    if written.len() < MAX_REPORTS {
        written.push(report);
        if let Err(e) = write_json(&written) {
            pnmpi_sdk::say::warn("checker", format_args!("cannot write its JSON report: {e}"));
        }
    }
    drop(written);
    if report_is_error {
        exit_with_error_status();
    }
}

/// Rewrites this rank's JSON file with `reports`.
fn write_json(reports: &[Report]) -> std::io::Result<()> {
    let dir = &config::get().output;
    std::fs::create_dir_all(dir)?;
    let path = dir.join(format!("rank-{}.json", rank().max(0)));
    let tmp = dir.join(format!(".rank-{}.json.tmp", rank().max(0)));
    let text = serde_json::to_string_pretty(reports).map_err(std::io::Error::other)?;
    std::fs::write(&tmp, text + "\n")?;
    std::fs::rename(&tmp, &path)
}

/// The job is being aborted (`MPI_Abort`, the application's or the
/// checker's own): a process that exits then has not finalized, rightly.
static ABORTING: AtomicBool = AtomicBool::new(false);

/// Notes that the job is being aborted.
pub fn set_aborting() {
    ABORTING.store(true, Relaxed);
}

/// Whether the job is being aborted.
pub fn aborting() -> bool {
    ABORTING.load(Relaxed)
}

/// Ends the job now with the exit code: `MPI_Abort` on `MPI_COMM_WORLD`
/// while MPI runs, else `exit` (an error before `MPI_Init` or after
/// `MPI_Finalize`).
pub fn abort_job() -> ! {
    set_aborting();
    pnmpi_sdk::say::stop_with(config::get().exit_code)
}

/// Makes the process exit with the configured status, whatever the
/// application returns: an `atexit` handler that flushes stdio and ends
/// the process with `_exit`.
fn exit_with_error_status() {
    extern "C" fn at_exit() {
        // SAFETY: fflush(NULL) flushes every open output stream; _exit
        // ends the process without running the remaining handlers, which
        // is the point: the status is the checker's.
        unsafe {
            libc::fflush(std::ptr::null_mut());
            libc::_exit(config::get().exit_code);
        }
    }
    if !EXIT_SET.swap(true, Relaxed) {
        // SAFETY: registers a plain extern "C" function with no arguments.
        unsafe { libc::atexit(at_exit) };
    }
}
