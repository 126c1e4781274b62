//! The `compute` service: makes a timing module above `replay` (vtime)
//! repeat its virtual times. Such a module charges the CPU time it
//! measures between MPI calls, which differs from run to run even when
//! replay makes the messages repeat. Through this service it hands each
//! measured interval to `replay`: recording stores it in
//! `D/rank-R.cpu`, replaying returns the recorded one instead, so the
//! replayed run is charged exactly what the recorded run was.
//!
//! Service `compute`, signature `"p"`: `int compute(uint64_t *ns)`, called
//! once per MPI call with the interval before it; returns 0 (`PNMPI_SUCCESS`).
//! Outside record and replay it leaves `*ns` alone.
//!
//! The intervals are one sequence per process: the timing module that
//! asks (vtime) grants no `MPI_THREAD_MULTIPLE`.

use crate::abort;
use crate::config::Config;
use crate::cpu_format;
use crate::file::{self, Stream};
use parking_lot::Mutex;
use pnmpi_sdk::services;
use std::ffi::c_int;
use std::path::PathBuf;

/// Buffered bytes that trigger a write to the file.
const FLUSH_AT: usize = 16 << 10;

enum Compute {
    /// Recording; the file is created at the first value, so that a run
    /// with no timing module above leaves none.
    Record {
        out: Stream,
        /// Intervals recorded.
        values: u64,
    },
    /// Replaying the values of `path`, the next one at `at`.
    Replay {
        values: Vec<u64>,
        at: usize,
        path: PathBuf,
        cut: bool,
    },
    /// Replaying a record made without compute values: measured charges
    /// pass through; said once.
    Missing { said: bool, path: PathBuf },
}

static COMPUTE: Mutex<Option<Compute>> = Mutex::new(None);

/// The registration point: offers the `compute` service to the modules
/// above.
pub fn offer() {
    // SAFETY: a function pointer cast to the services' common type; the
    // signature "p" tells callers its real one, `int (*)(uint64_t *)`.
    let f = unsafe {
        std::mem::transmute::<unsafe extern "C" fn(*mut u64) -> c_int, services::ServiceFn>(service)
    };
    let offered =
        services::ServiceDescriptor::new("compute", "p", f).and_then(|d| services::register_service(&d));
    if let Err(e) = offered {
        pnmpi_sdk::say::warn("replay", format_args!("cannot offer the compute service: {e}"));
    }
}

/// The file names of `rank`'s compute record: (final, while written).
fn paths(cfg: &Config, rank: i32) -> (PathBuf, PathBuf) {
    (
        cfg.dir.join(format!("rank-{rank}.cpu")),
        cfg.dir.join(format!("rank-{rank}.cpu.part")),
    )
}

/// Starts recording or replaying compute at `MPI_Init`, beside the
/// main record. Recording removes an older run's file first: a stale one
/// would be replayed with a record it does not belong to.
pub fn start(cfg: &Config, rank: i32) {
    let (done, part) = paths(cfg, rank);
    let c = if cfg.record {
        let _ = std::fs::remove_file(&done);
        let _ = std::fs::remove_file(&part);
        Compute::Record {
            out: Stream::new(part, done, cfg.compress, cpu_format::header(rank.max(0) as u32)),
            values: 0,
        }
    } else {
        let path = if done.is_file() { done } else { part };
        match std::fs::read(&path) {
            Err(_) => Compute::Missing { said: false, path },
            Ok(data) => match file::decompress(data)
                .map_err(|e| e.to_string())
                .and_then(|(d, zcut)| cpu_format::decode(&d).map(|(r, v, cut)| (r, v, cut || zcut)))
            {
                Ok((r, values, cut)) if r == rank.max(0) as u32 => Compute::Replay {
                    values,
                    at: 0,
                    cut: cut || path.extension().is_some_and(|e| e == "part"),
                    path,
                },
                Ok((r, ..)) => fail(&format!(
                    "the compute record {} is rank {r}'s (replay with the record's ranks)",
                    path.display()
                )),
                Err(e) => fail(&format!("cannot read the compute record {}: {e}", path.display())),
            },
        }
    };
    *COMPUTE.lock() = Some(c);
}

/// Stops the job with `what`, as a divergence does.
fn fail(what: &str) -> ! {
    abort::fail(3, what)
}

/// Writes the buffer once it holds `at` bytes (0: whatever it holds); a
/// file that cannot be created stops the job, a failed write is said.
fn flush(out: &mut Stream, at: usize) {
    if out.buf.len() < at.max(1) {
        return;
    }
    if let Err(e) = out.create() {
        fail(&format!("cannot create {}: {e}", out.part.display()));
    }
    if let Err(e) = out.flush_at(at) {
        pnmpi_sdk::say::warn("replay", format_args!("cannot write {}: {e}", out.part.display()));
    }
}

/// Ends the compute record at `MPI_Finalize` (`complete`: renamed to its
/// final name) or at an exit without it (the prefix stays `.part`).
/// Replaying, values left over mean the program made fewer MPI calls than
/// the recorded run: a divergence.
pub fn finish(complete: bool) {
    // try_lock: at an exit that a failed write's abort started, the lock
    // may be held.
    let Some(c) = COMPUTE.try_lock().and_then(|mut g| g.take()) else {
        return;
    };
    match c {
        Compute::Record { mut out, values } => {
            if values == 0 {
                return; // no timing module asked: no file
            }
            flush(&mut out, 0);
            if let Err(e) = out.finish(complete) {
                pnmpi_sdk::say::warn("replay", format_args!("cannot finish {}: {e}", out.part.display()));
            }
        }
        Compute::Replay { values, at, path, .. } if complete && at > 0 && at < values.len() => fail(&format!(
            "at MPI_Finalize: the compute record {} has {} more interval(s) (the program made fewer MPI calls \
             than the recorded run)",
            path.display(),
            values.len() - at
        )),
        Compute::Replay { .. } | Compute::Missing { .. } => {}
    }
}

/// The service: records `*ns`, or replaces it by the recorded value.
///
/// # Safety
/// `ns` points to a valid, writable `u64` (the caller's interval).
pub unsafe extern "C" fn service(ns: *mut u64) -> c_int {
    if ns.is_null() {
        return 0;
    }
    let mut guard = COMPUTE.lock();
    match guard.as_mut() {
        None => {}
        Some(Compute::Record { out, values }) => {
            // SAFETY: the caller's valid `u64` (the function's contract).
            cpu_format::put(&mut out.buf, unsafe { *ns });
            *values += 1;
            flush(out, FLUSH_AT);
        }
        Some(Compute::Replay {
            values,
            at,
            path,
            cut,
        }) => {
            let Some(&v) = values.get(*at) else {
                let why = if *cut {
                    "it is the prefix of a run that did not finish"
                } else {
                    "the recorded run made fewer MPI calls"
                };
                let (n, p) = (*at, path.display().to_string());
                drop(guard);
                fail(&format!(
                    "MPI call #{n} after the first: the compute record {p} ends here ({why})"
                ));
            };
            *at += 1;
            // SAFETY: the caller's valid, writable `u64` (the contract).
            unsafe { *ns = v };
        }
        Some(Compute::Missing { said, path }) => {
            if !*said && abort::rank() == 0 {
                // Rank 0 says it for the job.
                pnmpi_sdk::say::unranked(
                    "replay",
                    pnmpi_sdk::say::Level::Note,
                    format_args!(
                        "no compute record {} (recorded without vtime above replay): \
                         vtime charges the CPU time measured in this run",
                        path.display()
                    ),
                );
            }
            *said = true;
        }
    }
    0
}
