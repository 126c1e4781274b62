//! Collectives: every member completes at the latest member's entry time
//! plus the model's cost of the collective,
//!
//! ```text
//! clock = collective(CollCall { shape, nodes }, max over members of entry)
//! ```
//!
//! as `pnmpi sim replay` times an analytic collective. The latest entry
//! (and the largest per-process size, for members whose counts differ) is
//! an `MPI_Allreduce(MPI_MAX)` on the communicator's shadow; a
//! nonblocking collective posts it as an `MPI_Iallreduce` and finishes it
//! when the application's request completes.
//!
//! A blocking collective that the machine file makes algorithmic is
//! replayed instead: the members all-gather their entries and sizes, and
//! each runs `pnmpi sim`'s engine over the algorithm's messages among
//! them, as the replay expands it, and takes its own end.

use crate::state::{self, Req};
use pnmpi_mpi_sys::ffi::{self, MPI_Request};
use pnmpi_mpi_sys::Handle;
use pnmpi_sdk::{constants, native, Comm};
use pnmpi_sim::coll::Shape;
use pnmpi_sim::machine::CollChoice;
use pnmpi_sim::model::CollCall;
use pnmpi_trace::routine::Coll;
use std::ffi::c_int;

/// The shadow of `comm` if its collectives are timed (MPI running, an
/// intracommunicator with a shadow).
fn shadow_of(comm: Comm) -> Option<u64> {
    state::with(|st| st.comms.get(&comm.bits()).filter(|i| !i.inter).map(|i| i.shadow)).flatten()
}

/// Moves the clock to the end of collective `coll` on `comm` whose
/// members' latest entry and largest size are `max`.
fn close(comm: u64, coll: Coll, max: [f64; 2]) {
    state::with(|st| {
        let state::State {
            comms,
            model,
            clock,
            call_late,
            totals,
            ..
        } = st;
        let Some(info) = comms.get(&comm) else { return };
        let shape = Shape {
            coll,
            size: info.nodes.len() as u32,
            me: info.me,
            root: 0,
            bytes: max[1] as u64,
        };
        let end = model.collective(
            &CollCall {
                shape,
                nodes: &info.nodes,
            },
            max[0],
        );
        *clock = clock.max(end);
        *call_late = call_late.max(max[0]);
        totals.collectives += 1;
    });
}

/// A blocking collective `coll` on `comm` (rooted at `root`) moving
/// `bytes()` per process: runs `real` and times it, analytically, or by
/// replaying its algorithm's messages when the machine file asks for it.
pub fn blocking(
    comm: Comm,
    coll: Coll,
    root: Option<c_int>,
    bytes: impl FnOnce() -> u64,
    real: impl FnOnce() -> c_int,
) -> c_int {
    state::call(|timed| {
        let Some(shadow) = timed.then(|| shadow_of(comm)).flatten() else {
            return real();
        };
        let (entry, algorithm) = state::with(|st| {
            let algorithm = match st.machine.collective(coll) {
                CollChoice::Algorithmic(name) => Some(name.clone()),
                CollChoice::Analytic(_) => None,
            };
            (st.clock, algorithm)
        })
        .unwrap_or((0.0, None));
        if let Some(name) = algorithm {
            let mine = [entry, bytes() as f64];
            let all = allgather(&mine, Comm::from_bits(shadow));
            let rc = real();
            match all {
                Ok(all) => replayed(comm.bits(), coll, &name, root, &all),
                Err(e) => eprintln!("pnmpi vtime: cannot gather a collective's entry times ({e}): not timed"),
            }
            return rc;
        }
        let max = native::allreduce(
            &[entry, bytes() as f64],
            constants::MAX(),
            Comm::from_bits(shadow),
        );
        let rc = real();
        match max {
            Ok(m) if m.len() == 2 => close(comm.bits(), coll, [m[0], m[1]]),
            Ok(_) => {}
            Err(e) => eprintln!("pnmpi vtime: cannot reduce a collective's entry times ({e}): not timed"),
        }
        rc
    })
}

/// `MPI_Allgather` of `mine` (two doubles) on `comm`: every member's.
fn allgather(mine: &[f64; 2], comm: Comm) -> Result<Vec<f64>, native::MpiError> {
    let n = usize::try_from(native::comm_size(comm)?).unwrap_or(0);
    let mut all = vec![0.0f64; 2 * n];
    // SAFETY: `mine` holds 2 doubles, `all` 2 per member of `comm`.
    let rc = unsafe {
        ffi::PMPI_Allgather(
            mine.as_ptr().cast(),
            2,
            constants::DOUBLE(),
            all.as_mut_ptr().cast(),
            2,
            constants::DOUBLE(),
            comm,
        )
    };
    if rc == constants::SUCCESS() {
        Ok(all)
    } else {
        Err(native::MpiError::Code(rc))
    }
}

/// An algorithmic collective whose members entered at and moved the
/// sizes in `all` (pairs): replays its algorithm's messages among them
/// with `pnmpi sim`'s own engine and model (`pnmpi_sim::live::algorithmic`),
/// as `pnmpi sim replay` does, and moves the clock to this member's end.
fn replayed(comm: u64, coll: Coll, name: &str, root: Option<c_int>, all: &[f64]) {
    let Some(Some((machine, model_name, nodes, me))) = state::with(|st| {
        let info = st.comms.get(&comm)?;
        Some((
            st.machine.clone(),
            st.model_name.clone(),
            info.nodes.clone(),
            info.me as usize,
        ))
    }) else {
        return;
    };
    let members: Vec<(f64, u64)> = all.chunks(2).map(|p| (p[0], p[1] as u64)).collect();
    let root = root.and_then(|r| u32::try_from(r).ok());
    match pnmpi_sim::live::algorithmic::replay(&machine, &model_name, nodes, coll, name, root, &members) {
        Ok(ends) => {
            let Some(&(end, wait)) = ends.get(me) else { return };
            state::with(|st| {
                let start = st.call_start;
                st.clock = st.clock.max(end);
                st.call_late = st.call_late.max(start + wait);
                st.totals.collectives += 1;
            });
        }
        Err(e) => eprintln!("pnmpi vtime: cannot replay a collective's algorithm `{name}`: {e}"),
    }
}

/// A nonblocking collective in flight: its entry-time reduction.
pub struct Pending {
    comm: u64,
    coll: Coll,
    req: MPI_Request,
    /// This member's entry and size, then the reduced maxima: from
    /// `Box::into_raw`, as MPI reads and writes it until the reduction
    /// completes; [`finish`] frees it.
    buf: *mut [f64; 4],
}

// SAFETY: a request handle names the same request in every thread, and
// the buffer is the module's own heap allocation; the state's lock
// serialises their use.
unsafe impl Send for Pending {}

/// A nonblocking collective `coll` on `comm`: runs `real`, which fills
/// the application's request `*request`, and posts the reduction of the
/// entry times to finish when that request completes.
///
/// # Safety
/// `request` is the application's request argument of `real`.
pub unsafe fn nonblocking(
    comm: Comm,
    coll: Coll,
    bytes: impl FnOnce() -> u64,
    request: *mut MPI_Request,
    real: impl FnOnce() -> c_int,
) -> c_int {
    state::call(|timed| {
        let Some(shadow) = timed.then(|| shadow_of(comm)).flatten() else {
            return real();
        };
        let entry = state::with(|st| st.clock).unwrap_or(0.0);
        let buf = Box::into_raw(Box::new([entry, bytes() as f64, 0.0, 0.0]));
        let base = buf.cast::<f64>();
        let mut req = constants::REQUEST_NULL();
        // SAFETY: `buf` holds the 2 doubles sent and the 2 received (disjoint
        // halves) and is only freed once the reduction completed; `req` is a
        // local out-parameter.
        let posted = unsafe {
            ffi::PMPI_Iallreduce(
                base.cast_const().cast(),
                base.add(2).cast(),
                2,
                constants::DOUBLE(),
                constants::MAX(),
                Comm::from_bits(shadow),
                &mut req,
            )
        };
        let rc = real();
        let pending = Pending {
            comm: comm.bits(),
            coll,
            req,
            buf,
        };
        if posted == constants::SUCCESS() && rc == constants::SUCCESS() && !request.is_null() {
            // SAFETY: `real` succeeded, so it wrote the application's request.
            let handle = unsafe { *request }.bits();
            state::with(|st| st.reqs.insert(handle, Req::Coll(Box::new(pending))));
        } else if posted == constants::SUCCESS() {
            // The application's call failed: complete the reduction anyway,
            // as every member posted it.
            finish(pending);
        } else {
            // SAFETY: from Box::into_raw above; MPI never saw it.
            drop(unsafe { Box::from_raw(buf) });
        }
        rc
    })
}

/// The application's request of a nonblocking collective completed: the
/// members' reduction completes too (every member has posted it), and
/// the clock moves to the collective's end.
pub fn finish(mut p: Pending) {
    // SAFETY: the module's own request, whose buffer is alive.
    let rc = unsafe { ffi::PMPI_Wait(&mut p.req, constants::STATUS_IGNORE()) };
    // SAFETY: from Box::into_raw in `nonblocking`; the reduction is
    // complete, so MPI no longer uses it, and it is freed only here.
    let buf = unsafe { Box::from_raw(p.buf) };
    if rc == constants::SUCCESS() {
        close(p.comm, p.coll, [buf[2], buf[3]]);
    }
}

/// `count` elements of `datatype`, in bytes (0 if MPI cannot say).
pub fn bytes<C: Into<i64>>(count: C, datatype: pnmpi_sdk::Datatype) -> u64 {
    let size = native::type_size(datatype).unwrap_or(0);
    u64::try_from(count.into().saturating_mul(i64::from(size))).unwrap_or(0)
}

/// The sum of the `n` counts at `counts`, in elements (0 if null).
///
/// # Safety
/// `counts` is null or points to `n` counts.
pub unsafe fn sum<C: Copy + Into<i64>>(counts: *const C, n: c_int) -> i64 {
    if counts.is_null() || n <= 0 {
        return 0;
    }
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts(counts, n as usize) }
        .iter()
        .map(|&c| c.into())
        .sum()
}

/// The count at index `i` of `counts` (0 if null or out of range).
///
/// # Safety
/// `counts` is null or points to more than `i` counts.
pub unsafe fn at<C: Copy + Into<i64>>(counts: *const C, i: c_int) -> i64 {
    if counts.is_null() || i < 0 {
        return 0;
    }
    // SAFETY: the caller's contract.
    unsafe { *counts.add(i as usize) }.into()
}

/// The number of processes of `comm`.
pub fn size(comm: Comm) -> c_int {
    native::comm_size(comm).unwrap_or(0)
}

/// This process's rank in `comm`.
pub fn rank(comm: Comm) -> c_int {
    native::comm_rank(comm).unwrap_or(-1)
}

/// Whether a buffer argument is `MPI_IN_PLACE`.
pub fn in_place(buf: *const std::ffi::c_void) -> bool {
    buf == constants::IN_PLACE().cast_const()
}
