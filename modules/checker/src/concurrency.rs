//! Local concurrency: two operations of one rank on overlapping buffers
//! while the first is still active, one of them writing (an `MPI_Irecv`
//! and a send from the same bytes before its wait, two receives into one
//! buffer). MPI may read or write a pending operation's buffer at any
//! time until it completes, so the run may only have been lucky: a
//! potential data race, reported at the second call. Only buffers that
//! overlap in part are reported: the very same bytes used again (the
//! same buffer, count and datatype) are the idiom of a scratch buffer
//! whose contents the program never reads (benchmarks, MPICH's own
//! tests), while a part overlapping is a mistake of offsets.

use crate::args;
use crate::registry;
use crate::report::{self, Class};
use crate::site::{self, Here};
use pnmpi_sdk::sys::ffi::MPI_Datatype;
use std::ffi::{c_int, c_void};

/// Before an operation on `count` elements of `dt` at `buf` (one that
/// writes them if `writes`): reports an active request whose buffer it
/// overlaps when either of the two writes, a race that the run may have
/// avoided by luck (MPI may read or write a pending operation's buffer at
/// any time until it completes).
pub fn check(here: &Here, buf: *const c_void, count: c_int, dt: MPI_Datatype, writes: bool) {
    // Most calls find no request active and no window: no span computed
    // for them.
    let windows = !crate::windows::lock().is_empty();
    if !windows && registry::lock().requests.is_empty() {
        return;
    }
    let Some((start, end)) = args::span(buf, count, dt) else {
        return;
    };
    if windows {
        crate::rma_race::buffer(here, (start, end), writes);
    }
    let reg = registry::lock();
    let other = reg.requests.values().find(|o| {
        o.active
            && (writes || o.recv)
            && o.span
                .is_some_and(|(s, e)| s < end && start < e && (s, e) != (start, end))
    });
    let Some(other) = other.copied() else {
        return;
    };
    drop(reg);
    let (mine, theirs) = (
        if writes { "writes" } else { "reads" },
        if other.recv { "writes" } else { "reads" },
    );
    report::report(
        Class::Nonblocking,
        "buffer-reused",
        here.call(),
        &here.site(),
        format!(
            "potential data race: this call {mine} a buffer that the {} at {}, still active, {theirs}",
            pnmpi_mpi_sys::ROUTINE_NAMES[other.origin.routine],
            site::name(other.origin.ra)
        ),
    );
}
