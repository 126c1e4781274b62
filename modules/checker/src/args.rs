//! Invalid arguments: what MPI would reject, found before the call so
//! that it is reported with its site instead of ending the job in MPI's
//! error handler. A refused call is not made (`action report`): the
//! wrapper returns the MPI error code of the check.

use crate::consts::{self, Err};
use crate::registry::{self, key};
use crate::report::Class;
use crate::site::Here;
use crate::types;
use pnmpi_sdk::constants as mpi;
use pnmpi_sdk::sys::ffi::{self, MPI_Comm, MPI_Datatype, MPI_Op};
use pnmpi_sdk::sys::Handle;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicI32, Ordering::Relaxed};

/// `MPI_TAG_UB`'s value, read at `MPI_Init`.
static TAG_UB: AtomicI32 = AtomicI32::new(32767);

/// A refused call: the error code it returns, the check and the reason.
pub struct Refusal {
    pub class: Class,
    pub code: c_int,
    pub check: &'static str,
    pub what: String,
}

/// Refuses with `err`.
pub fn refuse(err: Err, check: &'static str, what: String) -> Refusal {
    Refusal {
        class: Class::Argument,
        code: consts::err(err),
        check,
        what,
    }
}

impl Refusal {
    /// Reports the refusal at `here`; its code, for the wrapper to return.
    pub fn report(self, here: &Here) -> c_int {
        crate::report::report(self.class, self.check, here.call(), &here.site(), self.what);
        self.code
    }
}

/// The result of a check.
pub type Checked = Result<(), Refusal>;

/// An out-parameter the call writes (a request, a flag) is not NULL.
pub fn out_param<T>(ptr: *mut T, what: &'static str) -> Checked {
    if !ptr.is_null() {
        return Ok(());
    }
    Err(refuse(
        Err::Other,
        "out-parameter",
        format!("the {what} argument is a NULL pointer"),
    ))
}

/// Reads `MPI_TAG_UB` (at `MPI_Init`).
pub fn read_tag_ub() {
    let mut value: *mut c_int = std::ptr::null_mut();
    let mut flag: c_int = 0;
    // SAFETY: MPI stores a pointer to the attribute's int in `value`.
    let rc = unsafe {
        ffi::PMPI_Comm_get_attr(
            mpi::COMM_WORLD(),
            consts::tag_ub_key(),
            (&mut value as *mut *mut c_int).cast::<c_void>(),
            &mut flag,
        )
    };
    if rc == mpi::SUCCESS() && flag != 0 && !value.is_null() {
        // SAFETY: MPI set `value` to its attribute, an int that lives
        // as long as MPI_COMM_WORLD.
        TAG_UB.store(unsafe { *value }, Relaxed);
    }
}

/// A communicator's size (the remote group's for an intercommunicator).
pub fn comm_size(comm: MPI_Comm) -> i32 {
    if let Some(size) = registry::world_size().filter(|_| registry::is_world(comm)) {
        return size;
    }
    let inter = is_inter(comm);
    let mut size: c_int = 0;
    // SAFETY: a local out-parameter; the handle passed the comm check.
    unsafe {
        if inter {
            ffi::PMPI_Comm_remote_size(comm, &mut size);
        } else {
            ffi::PMPI_Comm_size(comm, &mut size);
        }
    }
    size
}

/// The communicator is neither null (`MPI_COMM_NULL`, or a NULL pointer:
/// no MPI's handle is 0) nor freed.
pub fn comm(comm: MPI_Comm) -> Checked {
    if comm.bits() == 0 {
        let what = "the communicator is a NULL pointer, not a communicator".into();
        return Err(refuse(Err::Comm, "comm", what));
    }
    if comm.bits() == mpi::COMM_NULL().bits() {
        return Err(refuse(
            Err::Comm,
            "comm",
            "the communicator is MPI_COMM_NULL".into(),
        ));
    }
    if registry::is_world(comm) {
        return Ok(());
    }
    let reg = registry::lock();
    if reg.freed_comms.contains(&key(comm)) && !reg.comms.contains_key(&key(comm)) {
        return Err(refuse(Err::Comm, "comm", "the communicator was freed".into()));
    }
    Ok(())
}

/// A destination (`recv` false) or source rank of `comm`.
pub fn rank(rank: i32, comm: MPI_Comm, recv: bool) -> Checked {
    if rank == mpi::PROC_NULL() || (recv && rank == mpi::ANY_SOURCE()) {
        return Ok(());
    }
    let size = comm_size(comm);
    if rank < 0 || rank >= size {
        let role = if recv { "source" } else { "destination" };
        return Err(refuse(
            Err::Rank,
            "rank",
            format!("{role} rank {rank} is not a rank of the communicator (size {size})"),
        ));
    }
    Ok(())
}

/// A tag of a send (`recv` false) or receive.
pub fn tag(tag: i32, recv: bool) -> Checked {
    if recv && tag == mpi::ANY_TAG() {
        return Ok(());
    }
    let ub = TAG_UB.load(Relaxed);
    if tag < 0 || tag > ub {
        return Err(refuse(
            Err::Tag,
            "tag",
            format!("tag {tag} is outside 0..={ub} (MPI_TAG_UB)"),
        ));
    }
    Ok(())
}

/// A count.
pub fn count(count: i32) -> Checked {
    if count < 0 {
        return Err(refuse(Err::Count, "count", format!("count {count} is negative")));
    }
    Ok(())
}

/// Whether `comm` is an intercommunicator.
pub fn is_inter(comm: MPI_Comm) -> bool {
    let mut inter: c_int = 0;
    // SAFETY: a local out-parameter; the handle passed the comm check.
    unsafe { ffi::PMPI_Comm_test_inter(comm, &mut inter) };
    inter != 0
}

/// A root of an intracommunicator's collective (an intercommunicator's
/// roots are `MPI_ROOT`, `MPI_PROC_NULL` or a remote rank: not checked).
pub fn root(root: i32, comm: MPI_Comm) -> Checked {
    if is_inter(comm) {
        return Ok(());
    }
    let size = comm_size(comm);
    if root < 0 || root >= size {
        return Err(refuse(
            Err::Root,
            "root",
            format!("root {root} is not a rank of the communicator (size {size})"),
        ));
    }
    Ok(())
}

/// A datatype: not null, not freed, committed if derived.
pub fn datatype(dt: MPI_Datatype) -> Checked {
    typed(dt, false)
}

/// [`datatype`]'s checks, and for a receive's (`recv`) that no two of
/// its blocks overlap (MPI forbids it: the message's order would decide
/// what the bytes hold); no more work for a predefined type.
#[inline]
fn typed(dt: MPI_Datatype, recv: bool) -> Checked {
    if dt.bits() == 0 {
        let what = "the datatype is a NULL pointer, not a datatype".into();
        return Err(refuse(Err::Type, "datatype", what));
    }
    if dt.bits() == mpi::DATATYPE_NULL().bits() {
        return Err(refuse(
            Err::Type,
            "datatype",
            "the datatype is MPI_DATATYPE_NULL".into(),
        ));
    }
    if types::predefined(dt) != 0 {
        return Ok(());
    }
    let reg = registry::lock();
    match reg.types.get(&key(dt)) {
        Some(t) if !t.committed => Err(refuse(
            Err::Type,
            "datatype",
            "the datatype is not committed (MPI_Type_commit)".into(),
        )),
        Some(t) if recv && t.overlaps => Err(refuse(
            Err::Type,
            "datatype-overlap",
            "the datatype's blocks overlap: a receive into it writes some bytes twice".into(),
        )),
        None if reg.freed_types.contains(&key(dt)) => {
            Err(refuse(Err::Type, "datatype", "the datatype was freed".into()))
        }
        _ => Ok(()),
    }
}

/// A reduction operation: not null, not freed.
pub fn op(op: MPI_Op) -> Checked {
    if op.bits() == 0 {
        return Err(refuse(
            Err::Op,
            "op",
            "the operation is a NULL pointer, not an operation".into(),
        ));
    }
    if op.bits() == consts::op_null().bits() {
        return Err(refuse(Err::Op, "op", "the operation is MPI_OP_NULL".into()));
    }
    let reg = registry::lock();
    if reg.freed_ops.contains(&key(op)) && !reg.ops.contains_key(&key(op)) {
        return Err(refuse(Err::Op, "op", "the operation was freed".into()));
    }
    Ok(())
}

/// A buffer as a call passes it: address, count, datatype.
pub type Buffer = (*const c_void, c_int, MPI_Datatype);

/// A buffer of `count` elements: null only for an empty message, or with
/// a derived type (absolute addresses from `MPI_BOTTOM`).
pub fn buffer(buf: *const c_void, count: i32, dt: MPI_Datatype) -> Checked {
    if buf.is_null() && count > 0 && types::predefined(dt) != 0 && types::size(dt) > 0 {
        return Err(refuse(
            Err::Buffer,
            "buffer",
            format!("the buffer is NULL with a count of {count}"),
        ));
    }
    crate::buftype::check(buf, i64::from(count), dt);
    Ok(())
}

/// The bytes that `count` elements of `dt` at `buf` span: `[start, end)`.
pub fn span(buf: *const c_void, count: i32, dt: MPI_Datatype) -> Option<(usize, usize)> {
    if buf.is_null() || std::ptr::eq(buf, mpi::IN_PLACE()) || count <= 0 {
        return None;
    }
    let (mut lb, mut extent): (ffi::MPI_Aint, ffi::MPI_Aint) = (0, 0);
    // SAFETY: local out-parameters; the datatype passed its check.
    unsafe { ffi::PMPI_Type_get_extent(dt, &mut lb, &mut extent) };
    let (true_lb, true_extent) = types::extent(dt);
    if true_extent <= 0 {
        return None;
    }
    let start = buf as i64 + true_lb;
    // MPI_Aint is `isize` under Open MPI, `i64` under MPICH.
    #[allow(clippy::unnecessary_cast)]
    let extent = extent as i64;
    let end = start + (count as i64 - 1) * extent + true_extent;
    Some((start as usize, end as usize))
}

/// A send buffer and a receive buffer of one call do not overlap.
pub fn disjoint(send: Option<(usize, usize)>, recv: Option<(usize, usize)>) -> Checked {
    if let (Some((s0, s1)), Some((r0, r1))) = (send, recv) {
        if s0 < r1 && r0 < s1 {
            return Err(refuse(
                Err::Buffer,
                "overlap",
                format!(
                    "the send buffer [{s0:#x}, {s1:#x}) and the receive buffer [{r0:#x}, {r1:#x}) overlap"
                ),
            ));
        }
    }
    Ok(())
}

/// A count as an `int`, if it fits: MPI 4's large-count routines
/// (`MPI_Count`) are checked as their `int` twins then.
pub fn int_count<T: TryInto<i32>>(count: T) -> Option<i32> {
    count.try_into().ok()
}

/// A point-to-point call's arguments.
pub fn p2p(
    buf: *const c_void,
    count: i32,
    dt: MPI_Datatype,
    peer: i32,
    tag: i32,
    comm: MPI_Comm,
    recv: bool,
) -> Checked {
    self::comm(comm)?;
    self::count(count)?;
    typed(dt, recv)?;
    buffer(buf, count, dt)?;
    rank(peer, comm, recv)?;
    self::tag(tag, recv)
}
