//! The MPI standard's rules on the objects threads share (MPI 4.1,
//! §11.6), checked on the calls `threads` tracks: two threads waiting on
//! (or testing) one request at once, two threads of a rank in collectives
//! on one communicator at once, and `MPI_Finalize` while another thread
//! is inside MPI. The thread-level rule is checked at each call's entry
//! (`site`).

use crate::report::{self, Class};
use crate::site::{inside, Here};
use crate::threads::{current, hold, others, Object};
use std::ffi::c_int;

/// Before a wait or test of the requests `hs` (their handles; `null`,
/// `MPI_REQUEST_NULL`'s, is skipped): if another thread waits on or
/// tests one of them, reports it and returns the code the call returns
/// instead of being made.
pub fn waiting(here: &Here, hs: &[u64], null: u64) -> Option<c_int> {
    if !here.tracked() {
        return None;
    }
    let objects: Vec<Object> = hs
        .iter()
        .filter(|&&h| h != null)
        .map(|&h| Object::Request(h))
        .collect();
    let other = hold(&objects)?;
    report::report(
        Class::Thread,
        "same-request",
        here.call(),
        &here.site(),
        format!(
            "thread {} waits on a request that {}, waiting on it too: the call is not made",
            current(),
            inside(&other)
        ),
    );
    Some(crate::consts::err(crate::consts::Err::Request))
}

/// Before a collective on the communicator `comm` (its bits): reports
/// another thread of this rank inside a collective on it.
pub fn collective(here: &Here, comm: u64) {
    if !here.tracked() {
        return;
    }
    let Some(other) = hold(&[Object::Comm(comm)]) else {
        return;
    };
    report::report(
        Class::Thread,
        "same-communicator",
        here.call(),
        &here.site(),
        format!(
            "thread {} enters {} on a communicator where {}: MPI cannot match two collectives of one rank on one communicator at once with the other ranks' (this one waits until that one is done)",
            current(),
            here.call(),
            inside(&other)
        ),
    );
    // Made after the other, so that the rank's collectives on the
    // communicator keep one order (a blocked loop: a deadlock if it never
    // completes).
    crate::wait::block_on(
        here,
        || {
            crate::wait::waiting_for(
                Vec::new(),
                false,
                format!("thread {}'s collective on its communicator", other.thread),
            )
        },
        || Ok(hold(&[Object::Comm(comm)]).is_none()),
    );
}

/// At `MPI_Finalize`: reports each other thread inside a checked call;
/// returns whether there was one.
pub fn finalizing(here: &Here) -> bool {
    let thread = current();
    let others = others();
    for &other in &others {
        report::report(
            Class::Thread,
            "finalize-inside",
            here.call(),
            &here.site(),
            format!("thread {thread} calls MPI_Finalize while {}", inside(&other)),
        );
    }
    !others.is_empty()
}
