//! Collective mismatches across ranks: before a checked collective, each
//! rank contributes a descriptor of its call (`desc`: routine, root,
//! operation, the type signature of its piece of the data) to one
//! `MPI_Iallreduce` with `MPI_MAX` over the words and their negations, on
//! a duplicate of the communicator of the checker's own. Max and min agree on every
//! word exactly when every rank made the same call; otherwise each rank
//! reports what it did against what the others did, and a blocking
//! collective is not made (it would hang or corrupt memory). A
//! nonblocking collective is compared at its start without waiting there
//! (`pending`).
//!
//! The same check runs before every kind of collective, so ranks in
//! different collectives still meet in it: the blocking ones on one
//! duplicate, the nonblocking ones on another (MPI matches the two kinds
//! apart: a rank's `MPI_Iallreduce` never matches another's
//! `MPI_Allreduce`, which waits for its own, and a rank may start a
//! nonblocking collective before a blocking one that the others make
//! first). Its cost: one
//! allreduce of 16 words per collective, on a communicator of the
//! checker's own.

use crate::args::{refuse, Checked};
use crate::consts::Err;
use crate::desc::{Desc, Extremes, WORDS};
use crate::pending;
use crate::registry;
use crate::report::Class;
use crate::site::Here;
use crate::types;
use crate::wait;
use pnmpi_sdk::constants as mpi;
use pnmpi_sdk::sys::ffi::{self, MPI_Comm, MPI_Datatype};
use std::ffi::c_int;

/// Bytes of a call site's name in the gather of a mismatch.
const SITE_BYTES: usize = 96;

/// Checks that a rank's own two pieces (what it sends and what it
/// receives from each rank) agree, as in `MPI_Gather` at the root. On an
/// intercommunicator they need not: each pairs with the remote group's.
pub fn pieces_agree(comm: MPI_Comm, send: (i32, MPI_Datatype), recv: (i32, MPI_Datatype)) -> Checked {
    if crate::args::is_inter(comm) {
        return Ok(());
    }
    let s = types::signature(send.1).times(send.0.max(0) as u64);
    let r = types::signature(recv.1).times(recv.0.max(0) as u64);
    if s.agrees(r) {
        return Ok(());
    }
    Err(mismatch(
        "signature",
        format!(
            "this rank sends {} elements ({} bytes) but receives {} elements ({} bytes) per rank",
            s.len, s.bytes, r.len, r.bytes
        ),
    ))
}

fn mismatch(check: &'static str, what: String) -> crate::args::Refusal {
    let mut r = refuse(Err::Other, check, what);
    r.class = Class::Collective;
    r
}

/// Checks that every rank of `comm` makes the call `desc` describes.
pub fn agree(here: &Here, comm: MPI_Comm, desc: Desc) -> Checked {
    let Some(shadow) = registry::shadow(comm) else {
        return Ok(());
    };
    agree_on(here, shadow, desc)
}

/// Checks that every rank of the checker's communicator `shadow` makes
/// the call `desc` describes: `agree` on a duplicate the caller holds (a
/// window's, whose fences and free are compared on it).
pub fn agree_on(here: &Here, shadow: MPI_Comm, desc: Desc) -> Checked {
    let both = desc.both();
    let mut out = [0i64; 2 * WORDS];
    let mut req = mpi::REQUEST_NULL();
    // SAFETY: `both` and `out` outlive the request, which the loop below
    // completes before they go out of scope.
    let rc = unsafe { Desc::reduce(&both, &mut out, shadow, &mut req) };
    if rc != mpi::SUCCESS() {
        return Ok(());
    }
    let rc = wait::block_on(here, || crate::p2p::collective_waits(shadow), || test(&mut req));
    if rc != mpi::SUCCESS() {
        return Ok(());
    }
    let ext = Extremes::from_result(&out);
    let Some(check) = ext.mismatch() else {
        return Ok(());
    };
    let what = differences(here, shadow, &desc);
    Err(mismatch(check, what))
}

/// Compares the nonblocking collective `desc` describes, started at
/// `here` on `comm`, across ranks without waiting (`pending`).
pub fn agree_at_start(here: &Here, comm: MPI_Comm, desc: Desc) {
    if let Some(shadow) = registry::started_shadow(comm) {
        pending::start(shadow, desc, here.routine, here.ra());
    }
}

/// Gathers every rank's descriptor and call site (all ranks found the
/// mismatch) and names those that differ from this rank's.
fn differences(here: &Here, shadow: MPI_Comm, desc: &Desc) -> String {
    let size = crate::args::comm_size(shadow).max(1) as usize;
    let mine = desc.words();
    let mut all = vec![0i64; size * WORDS];
    let mut site = [0u8; SITE_BYTES];
    let text = here.site();
    let n = text.len().min(SITE_BYTES - 1);
    site[..n].copy_from_slice(&text.as_bytes()[..n]);
    let mut sites = vec![0u8; size * SITE_BYTES];
    // SAFETY: `all` has room for WORDS words from each of `size` ranks,
    // `sites` for SITE_BYTES bytes from each.
    unsafe {
        ffi::PMPI_Allgather(
            mine.as_ptr().cast(),
            WORDS as c_int,
            mpi::LONG_LONG(),
            all.as_mut_ptr().cast(),
            WORDS as c_int,
            mpi::LONG_LONG(),
            shadow,
        );
        ffi::PMPI_Allgather(
            site.as_ptr().cast(),
            SITE_BYTES as c_int,
            mpi::BYTE(),
            sites.as_mut_ptr().cast(),
            SITE_BYTES as c_int,
            mpi::BYTE(),
            shadow,
        );
    }
    let others: Vec<String> = all
        .chunks(WORDS)
        .zip(sites.chunks(SITE_BYTES))
        .enumerate()
        .map(|(r, (w, s))| (r, Desc::from_words(w), s))
        .filter(|(_, d, _)| d != desc)
        .take(4)
        .map(|(r, d, s)| {
            let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
            format!(
                "rank {r} of the communicator calls {} at {}",
                d.describe(),
                String::from_utf8_lossy(&s[..end])
            )
        })
        .collect();
    format!(
        "ranks disagree on this collective: this rank calls {} at {}, but {}",
        desc.describe(),
        text,
        others.join("; ")
    )
}

/// One `MPI_Test` of a request of the checker's own.
fn test(req: &mut ffi::MPI_Request) -> Result<bool, c_int> {
    // SAFETY: a request of ours; its status is ignored.
    crate::wait::flagged(|flag| unsafe { ffi::PMPI_Test(req, flag, mpi::STATUS_IGNORE()) })
}
