//! `MPI_Init` and `MPI_Finalize`: the checker's communicators, the leak
//! checks at `MPI_Finalize`, which closes the gate (`gate`) to any
//! checked call made after it.

use crate::args;
use crate::gate::gate;
use crate::registry::{self, key, CommInfo};
use crate::report::{self, Class};
use crate::site::{self, Here};
use crate::wait::{self, block_on};
use crate::{objects, watchdog};
use pnmpi_mpi_sys::ROUTINE_NAMES;
use pnmpi_sdk::constants as mpi;
use pnmpi_sdk::raw::routine;
use pnmpi_sdk::sys::ffi;
use pnmpi_sdk::sys::Handle;
use std::ffi::c_int;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// After MPI's initialization: the rank, the tag bound, the watchdog and
/// the duplicates of `MPI_COMM_WORLD` and `MPI_COMM_SELF` (two each: for
/// blocking and for nonblocking collectives).
fn started() {
    let world = mpi::COMM_WORLD();
    report::set_rank(pnmpi_sdk::native::comm_rank(world).unwrap_or(-1));
    args::read_tag_ub();
    for comm in [world, mpi::COMM_SELF()] {
        let (shadow, started) = (objects::shadow_of(comm), objects::shadow_of(comm));
        registry::lock().comms.insert(
            key(comm),
            CommInfo {
                shadow,
                started,
                origin: None,
            },
        );
        if registry::is_world(comm) {
            registry::set_world(shadow, started, pnmpi_sdk::native::comm_size(world).unwrap_or(0));
        }
    }
    match pnmpi_sdk::native::comm_dup(world) {
        Ok(watch) => watchdog::start(watch, pnmpi_sdk::native::comm_size(world).unwrap_or(1)),
        Err(e) => pnmpi_sdk::say::warn(
            "checker",
            format_args!("cannot duplicate MPI_COMM_WORLD ({e}): no deadlock detection"),
        ),
    }
}

/// The call site of `MPI_Init` (or `MPI_Init_thread`): the routine and
/// its return address, named by a process that never finalizes.
static INIT: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];

/// At MPI's initialization, from `here`: an exit without `MPI_Finalize`
/// is reported, by an `atexit` handler.
fn watch_exit(here: &Here) {
    INIT[0].store(here.routine, Relaxed);
    INIT[1].store(here.ra(), Relaxed);
    extern "C" fn at_exit() {
        if crate::gate::finalized() || report::aborting() {
            return;
        }
        let (routine, ra) = (INIT[0].load(Relaxed), INIT[1].load(Relaxed));
        report::report(
            Class::Nonblocking,
            "no-finalize",
            ROUTINE_NAMES[routine],
            &site::name(ra),
            "the process exits without calling MPI_Finalize".into(),
        );
    }
    // SAFETY: registers a plain extern "C" function with no arguments.
    unsafe { libc::atexit(at_exit) };
}

/// Reports what the application never freed, and the requests it never
/// completed.
fn leaks(here: &Here) {
    let reg = registry::lock();
    let mut found: Vec<(Class, &'static str, String)> = Vec::new();
    for info in reg.comms.values() {
        if let Some(o) = info.origin {
            found.push((
                Class::Leak,
                "comm",
                format!("the communicator created by {} is never freed", site::named(o)),
            ));
        }
    }
    for o in reg.groups.values() {
        found.push((
            Class::Leak,
            "group",
            format!("the group created by {} is never freed", site::named(*o)),
        ));
    }
    for t in reg.types.values().filter(|t| t.origin.routine != 0) {
        found.push((
            Class::Leak,
            "datatype",
            format!("the datatype created by {} is never freed", site::named(t.origin)),
        ));
    }
    for o in reg.ops.values() {
        found.push((
            Class::Leak,
            "op",
            format!(
                "the operation created by {} is never freed",
                site::named(o.origin)
            ),
        ));
    }
    for r in reg.requests.values() {
        let by = site::named(r.origin);
        if r.active {
            found.push((
                Class::Nonblocking,
                "request-not-completed",
                format!("the request of {by} is never completed (no wait or successful test)"),
            ));
        } else if r.persistent {
            found.push((
                Class::Leak,
                "request",
                format!("the persistent request of {by} is never freed"),
            ));
        }
    }
    drop(reg);
    // A window whose ranks went out of step was reported then, and is
    // left unfreed on purpose.
    for w in crate::windows::lock().values().filter(|w| !w.broken) {
        let by = site::named(w.origin);
        let open = w.open_epochs(crate::site::name);
        if !open.is_empty() {
            found.push((
                Class::Rma,
                "epoch-open",
                format!(
                    "the run ends with {} of the window created by {by} still open",
                    open.join(" and ")
                ),
            ));
        }
        found.push((
            Class::Leak,
            "window",
            format!("the window created by {by} is never freed"),
        ));
    }
    found.sort_by(|a, b| a.2.cmp(&b.2));
    for (class, check, what) in found {
        if class == Class::Leak {
            report::note(class, check, here.call(), &here.site(), what);
        } else {
            report::report(class, check, here.call(), &here.site(), what);
        }
    }
}

/// Once every rank is in `MPI_Finalize` (every message sent): reports
/// each message to this rank that no receive matched, on the
/// communicators still alive, and receives it (so that MPI finalizes).
fn unreceived(here: &Here) {
    let comms: Vec<u64> = registry::lock().comms.keys().copied().collect();
    for c in comms {
        let comm = ffi::MPI_Comm::from_bits(c);
        // A message sent just before its sender's MPI_Finalize may still
        // be on its way: three probes, a millisecond apart (each message found
        // takes one).
        for attempt in 0..3 {
            let mut flag: c_int = 0;
            let mut msg = crate::consts::message_null();
            // SAFETY: MPI_Status is plain integers; all zeroes is valid.
            let mut status: ffi::MPI_Status = unsafe { std::mem::zeroed() };
            // SAFETY: local out-parameters on a communicator still alive.
            let rc = unsafe {
                ffi::PMPI_Improbe(
                    mpi::ANY_SOURCE(),
                    mpi::ANY_TAG(),
                    comm,
                    &mut flag,
                    &mut msg,
                    &mut status,
                )
            };
            if rc != mpi::SUCCESS() || flag == 0 {
                if attempt < 2 {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                continue;
            }
            let mut bytes: c_int = 0;
            // SAFETY: the status MPI just filled; a local out-parameter.
            unsafe { ffi::PMPI_Get_count(&status, mpi::BYTE(), &mut bytes) };
            let mut sink = vec![0u8; bytes.max(0) as usize];
            // SAFETY: `sink` has room for the whole message, received as bytes.
            unsafe {
                ffi::PMPI_Mrecv(
                    sink.as_mut_ptr().cast(),
                    bytes,
                    mpi::BYTE(),
                    &mut msg,
                    mpi::STATUS_IGNORE(),
                )
            };
            report::report(
                Class::P2p,
                "unreceived",
                here.call(),
                &here.site(),
                format!(
                    "the message from rank {} (tag {}, {bytes} bytes) is never received",
                    crate::p2p::to_world(comm, status.MPI_SOURCE),
                    status.MPI_TAG
                ),
            );
        }
    }
}

/// Frees the checker's duplicates (before MPI's finalization).
fn free_shadows() {
    let shadows: Vec<u64> = registry::lock()
        .comms
        .values()
        .flat_map(|c| [c.shadow, c.started])
        .filter(|&s| s != 0)
        .collect();
    for s in shadows {
        let _ = pnmpi_sdk::native::comm_free(ffi::MPI_Comm::from_bits(s));
    }
    registry::lock().comms.clear();
    registry::set_world(0, 0, 0);
}

pnmpi_sdk::wrap! {
    /// Notes that the job is being aborted (no report of the exit
    /// without `MPI_Finalize` follows).
    fn MPI_Abort(_comm, _errorcode) {
        report::set_aborting();
        next!()
    }

    /// Sets the checker up after MPI's initialization, at the thread
    /// level MPI granted.
    fn MPI_Init(_argc, _argv) {
        let rc = next!();
        if rc == mpi::SUCCESS() {
            let mut provided: c_int = 0;
            // SAFETY: a local out-parameter; MPI is initialized.
            unsafe { ffi::PMPI_Query_thread(&mut provided) };
            crate::threads::init(provided);
            started();
            // Once the thread is known (a site is found as for any call).
            watch_exit(&Here::new(routine::MPI_Init));
        }
        rc
    }

    /// Sets the checker up after MPI's initialization, at the thread
    /// level MPI granted: the checker supports every level, so it grants
    /// what MPI does (`MPI_THREAD_MULTIPLE` included).
    fn MPI_Init_thread(_argc, _argv, _required, provided) {
        let rc = next!();
        if rc == mpi::SUCCESS() {
            // SAFETY: the application's out-parameter, which MPI just set.
            crate::threads::init(if provided.is_null() { 0 } else { unsafe { *provided } });
            started();
            // Once the thread is known (a site is found as for any call).
            watch_exit(&Here::new(routine::MPI_Init_thread));
        }
        rc
    }

    /// Reports leaks, waits for every rank (a blocked loop, so that a
    /// rank that never arrives is a deadlock, not a hang), then finalizes.
    fn MPI_Finalize() {
        let here = Here::new(routine::MPI_Finalize);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        // MPI would finalize under the other threads' calls: they are
        // waited for (a blocked loop: one that never leaves is a deadlock).
        if crate::thread_rules::finalizing(&here) {
            block_on(&here, || {
                wait::waiting_for(Vec::new(), false, "the other threads of its rank to leave MPI".into())
            }, || Ok(!crate::threads::others_inside()));
        }
        leaks(&here);
        // Every rank settles the comparisons of its nonblocking
        // collectives: one the others never started is a deadlock.
        if !crate::pending::settled() {
            block_on(&here, || {
                wait::waiting_for(Vec::new(), false, "the other ranks to start the nonblocking collectives it started".into())
            }, || Ok(crate::pending::progress()));
        }
        if let Some(watch) = watchdog::comm() {
            let mut req = mpi::REQUEST_NULL();
            // SAFETY: a barrier on the checker's own communicator; the loop completes it.
            unsafe { ffi::PMPI_Ibarrier(watch, &mut req) };
            block_on(&here, || {
                wait::waiting_for(Vec::new(), false, "the other ranks to call MPI_Finalize".into())
            }, || {
                let mut flag: c_int = 0;
                // SAFETY: our own request.
                unsafe { ffi::PMPI_Test(&mut req, &mut flag, mpi::STATUS_IGNORE()) };
                Ok(flag != 0)
            });
            unreceived(&here);
        }
        watchdog::stop();
        crate::p2psig::stop();
        free_shadows();
        crate::gate::close();
        next!()
    }
}
