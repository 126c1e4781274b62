//! Reading the arguments that matter out of a call: byte counts, handles
//! as numbers, statuses, and the world ranks of a new communicator. These
//! run after the traced call has returned, so their own MPI calls never
//! count in its duration. They go straight to the MPI library (`PMPI_`),
//! past the modules below, which must not count them as the application's.

use pnmpi_mpi_sys::constants as mpi;
use pnmpi_mpi_sys::ffi::{
    MPI_Comm, MPI_Datatype, MPI_Group, MPI_Status, PMPI_Comm_group, PMPI_Comm_remote_group,
    PMPI_Comm_remote_size, PMPI_Comm_size, PMPI_Comm_test_inter, PMPI_Group_free, PMPI_Group_size,
    PMPI_Group_translate_ranks,
};
use pnmpi_trace::fields::UNKNOWN_RANK;
use pnmpi_trace::rank::RawDone;
use std::os::raw::c_int;

/// A wrapper's reusable space (see `record::borrow`).
#[derive(Default)]
pub struct Scratch {
    /// Request handles, read before a wait or test.
    pub handles: Vec<u64>,
    /// Statuses for calls that were given `MPI_STATUSES_IGNORE`.
    pub statuses: Vec<MPI_Status>,
    /// Completions.
    pub done: Vec<RawDone>,
    /// World ranks of a communicator's group.
    pub members: Vec<i64>,
    /// World ranks of its remote group.
    pub remote: Vec<i64>,
    /// Ranks for `MPI_Group_translate_ranks`.
    pub ranks: Vec<c_int>,
    /// Their translations.
    pub world: Vec<c_int>,
    /// Bytes sent to each peer of a `v` collective.
    pub send: Vec<i64>,
    /// Bytes received from each peer.
    pub recv: Vec<i64>,
}

use pnmpi_mpi_sys::Handle;

/// `count` items of `dt`, in bytes (0 if MPI cannot size `dt`).
pub fn bytes<C: Into<i64>>(count: C, dt: MPI_Datatype) -> i64 {
    let size = pnmpi_sdk::native::type_size(dt).map_or(0, i64::from);
    count.into().saturating_mul(size)
}

/// Fills `out` with the bytes of the `n` counts at `p`, items of `dt`
/// (none if `p` is null); returns their sum. `out` keeps its memory from
/// call to call, so this allocates only when a communicator is larger
/// than any before.
///
/// # Safety
/// `p` is null or points to `n` counts.
pub unsafe fn per_peer<C: Copy + Into<i64>>(
    p: *const C,
    dt: MPI_Datatype,
    n: c_int,
    out: &mut Vec<i64>,
) -> i64 {
    out.clear();
    if p.is_null() || n <= 0 {
        return 0;
    }
    let size = bytes(1, dt);
    // SAFETY: the caller's contract.
    let counts = unsafe { std::slice::from_raw_parts(p, n as usize) };
    out.extend(counts.iter().map(|&c| c.into().saturating_mul(size)));
    out.iter().sum()
}

/// [`per_peer`] with a datatype per peer (`MPI_Alltoallw`), in the same
/// argument order.
///
/// # Safety
/// `p` and `types` are null or point to `n` counts and `n` datatypes.
pub unsafe fn per_peer_typed<C: Copy + Into<i64>>(
    p: *const C,
    types: *const MPI_Datatype,
    n: c_int,
    out: &mut Vec<i64>,
) -> i64 {
    out.clear();
    if p.is_null() || types.is_null() || n <= 0 {
        return 0;
    }
    // SAFETY: the caller's contract.
    let (counts, types) = unsafe {
        (
            std::slice::from_raw_parts(p, n as usize),
            std::slice::from_raw_parts(types, n as usize),
        )
    };
    out.extend(counts.iter().zip(types).map(|(&c, &t)| bytes(c, t)));
    out.iter().sum()
}

/// The number of processes a `v` collective's count arrays cover: the
/// group, or the remote group of an intercommunicator.
pub fn peers(comm: MPI_Comm) -> c_int {
    let mut inter: c_int = 0;
    let mut n: c_int = 0;
    // SAFETY: `comm` is the application's communicator; outputs are local.
    unsafe {
        PMPI_Comm_test_inter(comm, &mut inter);
        if inter != 0 {
            PMPI_Comm_remote_size(comm, &mut n);
        } else {
            PMPI_Comm_size(comm, &mut n);
        }
    }
    n
}

/// Whether a receive was posted with a wildcard.
pub fn wildcard(source: c_int, tag: c_int) -> bool {
    source == mpi::ANY_SOURCE() || tag == mpi::ANY_TAG()
}

/// (source, tag) of a status.
///
/// # Safety
/// `st` points to a status that MPI filled.
pub unsafe fn status(st: *const MPI_Status) -> (i64, i64) {
    // SAFETY: the caller's contract.
    let st = unsafe { &*st };
    (i64::from(st.MPI_SOURCE), i64::from(st.MPI_TAG))
}

/// A zeroed status, for calls given `MPI_STATUS_IGNORE`.
pub fn blank_status() -> MPI_Status {
    // SAFETY: MPI_Status is a C struct of integers, valid when zeroed.
    unsafe { std::mem::zeroed() }
}

/// `statuses`, or, if the application passed `MPI_STATUSES_IGNORE`, `n`
/// statuses of `scratch` (statuses are what tell where a wildcard
/// receive's message came from).
pub fn statuses(statuses: *mut MPI_Status, n: c_int, scratch: &mut Scratch) -> *mut MPI_Status {
    if statuses != mpi::STATUSES_IGNORE() {
        return statuses;
    }
    let n = n.max(1) as usize;
    if scratch.statuses.len() < n {
        scratch.statuses.resize(n, blank_status());
    }
    scratch.statuses.as_mut_ptr()
}

/// Reads `n` request handles into `scratch.handles`.
///
/// # Safety
/// `reqs` points to `n` requests.
pub unsafe fn snapshot<R: Handle>(reqs: *const R, n: c_int, scratch: &mut Scratch) {
    scratch.handles.clear();
    if reqs.is_null() || n <= 0 {
        return;
    }
    // SAFETY: the caller's contract.
    let reqs = unsafe { std::slice::from_raw_parts(reqs, n as usize) };
    scratch.handles.extend(reqs.iter().map(|r| r.bits()));
}

/// Records the completion of the `i`-th snapshot handle with `status`
/// (null: none), unless it was `MPI_REQUEST_NULL`.
///
/// # Safety
/// `status` is null or points to a status MPI filled.
pub unsafe fn complete(scratch: &mut Scratch, i: usize, status: *const MPI_Status) {
    let Some(&handle) = scratch.handles.get(i) else {
        return;
    };
    if handle == mpi::REQUEST_NULL().bits() {
        return;
    }
    // SAFETY: the caller's contract.
    let status = (!status.is_null()).then(|| unsafe { self::status(status) });
    scratch.done.push(RawDone { handle, status });
}

/// Fills `scratch.members` (and `scratch.remote` for an intercommunicator)
/// with the world ranks of `comm`'s groups; returns whether it is an
/// intercommunicator.
pub fn members(comm: MPI_Comm, scratch: &mut Scratch) -> bool {
    let mut inter: c_int = 0;
    // SAFETY: `comm` is a valid communicator (just created, or the parent
    // of one); the group handles are local and freed below.
    unsafe {
        PMPI_Comm_test_inter(comm, &mut inter);
        let mut group: MPI_Group = std::mem::zeroed();
        PMPI_Comm_group(comm, &mut group);
        translate(
            group,
            &mut scratch.members,
            &mut scratch.ranks,
            &mut scratch.world,
        );
        PMPI_Group_free(&mut group);
        scratch.remote.clear();
        if inter != 0 {
            PMPI_Comm_remote_group(comm, &mut group);
            translate(group, &mut scratch.remote, &mut scratch.ranks, &mut scratch.world);
            PMPI_Group_free(&mut group);
        }
    }
    inter != 0
}

/// Fills `scratch.members` with the world ranks of `group`'s members (the
/// group of `MPI_Win_post` or `MPI_Win_start`).
pub fn group_members(group: MPI_Group, scratch: &mut Scratch) {
    // SAFETY: `group` is the application's group, valid during its call.
    unsafe {
        translate(
            group,
            &mut scratch.members,
            &mut scratch.ranks,
            &mut scratch.world,
        )
    };
}

/// World ranks of `group`'s members.
///
/// # Safety
/// `group` is a valid group.
unsafe fn translate(group: MPI_Group, out: &mut Vec<i64>, ranks: &mut Vec<c_int>, world: &mut Vec<c_int>) {
    out.clear();
    let mut n: c_int = 0;
    let mut world_group: MPI_Group;
    // SAFETY: the caller's contract; buffers are sized to the group.
    unsafe {
        PMPI_Group_size(group, &mut n);
        ranks.clear();
        ranks.extend(0..n);
        world.clear();
        world.resize(n.max(0) as usize, 0);
        world_group = std::mem::zeroed();
        PMPI_Comm_group(mpi::COMM_WORLD(), &mut world_group);
        PMPI_Group_translate_ranks(group, n, ranks.as_ptr(), world_group, world.as_mut_ptr());
        PMPI_Group_free(&mut world_group);
    }
    let undefined = mpi::UNDEFINED();
    out.extend(world.iter().map(|&r| {
        if r == undefined {
            UNKNOWN_RANK
        } else {
            i64::from(r)
        }
    }));
}
