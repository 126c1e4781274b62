//! The comparisons of nonblocking collectives across ranks, under way: a
//! nonblocking (or persistent) collective is compared at its start, by an
//! `MPI_Iallreduce` of its descriptor that this rank does not wait for
//! there (the other ranks may start theirs only later, legally). Each
//! blocking call's test loop, each test and `MPI_Finalize` test the
//! comparisons under way; one that finds the ranks disagree is reported,
//! at the collective's start, and the job ends (the collectives started
//! can never complete).

use crate::desc::{Desc, Extremes, WORDS};
use crate::report::{self, Class};
use crate::site;
use parking_lot::Mutex;
use pnmpi_mpi_sys::ROUTINE_NAMES;
use pnmpi_sdk::constants as mpi;
use pnmpi_sdk::sys::ffi::{self, MPI_Comm, MPI_Request};
use pnmpi_sdk::sys::Handle;
use std::ffi::c_int;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// One comparison under way.
struct PendingComparison {
    /// The allreduce's request, as bits (handles are not `Send`).
    req: u64,
    /// The communicator it runs on, the checker's duplicate.
    shadow: u64,
    /// Its buffers, on the heap so that they stay put while it runs.
    both: Box<[i64; 2 * WORDS]>,
    out: Box<[i64; 2 * WORDS]>,
    desc: Desc,
    /// Where the collective was started: its routine and return address.
    routine: usize,
    ra: usize,
}

static PENDING: Mutex<Vec<PendingComparison>> = Mutex::new(Vec::new());
/// How many, read without the lock by every test loop.
static COUNT: AtomicUsize = AtomicUsize::new(0);

/// Starts comparing `desc` (a collective `routine` started at `ra`)
/// across the ranks of `shadow`, the checker's duplicate of its
/// communicator for nonblocking collectives. Returns MPI's code.
pub fn start(shadow: MPI_Comm, desc: Desc, routine: usize, ra: usize) -> c_int {
    let both = Box::new(desc.both());
    let mut out = Box::new([0i64; 2 * WORDS]);
    let mut req = mpi::REQUEST_NULL();
    // SAFETY: both buffers live on the heap in the entry pushed below,
    // which is removed only once the request completed.
    let rc = unsafe { Desc::reduce(&both, &mut out, shadow, &mut req) };
    if rc != mpi::SUCCESS() {
        return rc;
    }
    PENDING.lock().push(PendingComparison {
        req: req.bits(),
        shadow: shadow.bits(),
        both,
        out,
        desc,
        routine,
        ra,
    });
    COUNT.fetch_add(1, Relaxed);
    rc
}

/// Whether no comparison is under way.
#[inline]
pub fn settled() -> bool {
    COUNT.load(Relaxed) == 0
}

/// Whether no comparison is under way on `shadow`, which may then be
/// freed (MPI would otherwise progress an operation on a freed
/// communicator).
pub fn none_on(shadow: u64) -> bool {
    settled() || !PENDING.lock().iter().any(|p| p.shadow == shadow)
}

/// Tests the comparisons under way once; reports a disagreement and ends
/// the job. Returns whether none is left.
pub fn progress() -> bool {
    if settled() {
        return true;
    }
    let done: Vec<PendingComparison> = {
        let mut list = PENDING.lock();
        let mut done = Vec::new();
        let mut i = 0;
        while i < list.len() {
            let mut req = MPI_Request::from_bits(list[i].req);
            let mut flag: c_int = 0;
            // SAFETY: the checker's own request; its status is ignored.
            let rc = unsafe { ffi::PMPI_Test(&mut req, &mut flag, mpi::STATUS_IGNORE()) };
            if rc == mpi::SUCCESS() && flag == 0 {
                i += 1;
                continue;
            }
            // Completed (or failed: then nothing is compared).
            let mut p = list.swap_remove(i);
            if rc != mpi::SUCCESS() {
                p.out.copy_from_slice(&p.both[..]);
            }
            done.push(p);
        }
        COUNT.store(list.len(), Relaxed);
        done
    };
    for p in done {
        judge(&p);
    }
    settled()
}

/// Reports a comparison that found the ranks disagree, then ends the job.
fn judge(p: &PendingComparison) {
    let ext = Extremes::from_result(&p.out);
    let Some(check) = ext.mismatch() else {
        return;
    };
    report::report(
        Class::Collective,
        check,
        ROUTINE_NAMES[p.routine],
        &site::name(p.ra),
        format!(
            "ranks disagree on this collective: this rank starts {}, but at the same position of the communicator's collectives another rank calls {}",
            p.desc.describe(),
            ext.other(&p.desc)
        ),
    );
    report::abort_job();
}
