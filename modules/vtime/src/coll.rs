//! Collectives, timed by the kernel's collective rule
//! (`pnmpi_sim::kernel::coll`): every member completes at the closed
//! form from the latest member's entry,
//!
//! ```text
//! clock = closed_form(shape, nodes, max over members of entry)
//! ```
//!
//! with the largest size any member is charged ([`Member::charged`]: a `v`
//! collective's largest block), as `pnmpi sim replay` times an analytic
//! collective. Both maxima are one `MPI_Allreduce(MPI_MAX)` on the
//! communicator's shadow; a nonblocking collective posts it as an
//! `MPI_Iallreduce` and finishes it when the application's request
//! completes.
//!
//! A blocking collective that the machine file makes algorithmic is
//! replayed instead: the members all-gather their entries and parts (a
//! `v` collective's per-peer bytes too), and each runs `pnmpi sim`'s
//! engine over the algorithm's messages among them, as the replay expands
//! it, and takes its own end.

use crate::state::{self, Pending, Req};
use pnmpi_mpi_sys::ffi::{self, MPI_Request};
use pnmpi_mpi_sys::Handle;
use pnmpi_sdk::{constants, native, Comm};
use pnmpi_sim::input::VCounts;
use pnmpi_sim::kernel::coll::{algorithm, closed_form, Member, Shape};
use pnmpi_trace::routine::Coll;
use std::ffi::c_int;

/// The shadow of `comm` if its collectives are timed (MPI running, an
/// intracommunicator with a shadow).
fn shadow_of(comm: Comm) -> Option<u64> {
    state::with(|st| st.comms.get(&comm.bits()).filter(|i| !i.inter).map(|i| i.shadow)).flatten()
}

/// Moves the clock to the end of collective `coll` on `comm` (rooted at
/// `root`) whose members' latest entry and largest charged size are
/// `max`.
fn close(comm: u64, coll: Coll, root: Option<c_int>, max: [f64; 2]) {
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
            root: root.and_then(|r| u32::try_from(r).ok()).unwrap_or(0),
            bytes: max[1] as u64,
        };
        let end = closed_form(&mut **model, shape, &info.nodes, max[0]);
        *clock = clock.max(end);
        *call_late = call_late.max(max[0]);
        totals.collectives += 1;
    });
}

/// A blocking collective `coll` on `comm` (rooted at `root`) to which
/// this process brings `part()`: runs `real` and times it, analytically,
/// or by replaying its algorithm's messages when the machine file asks
/// for it.
pub fn blocking(
    comm: Comm,
    coll: Coll,
    root: Option<c_int>,
    part: impl FnOnce() -> Member,
    real: impl FnOnce() -> c_int,
) -> c_int {
    state::call(|timed| timed_within(timed, comm, coll, root, || {}, part, real))
}

/// A blocking collective `coll` of no data on `comm`, made by `real`,
/// that each member enters once `before` moved its clock (a fence, once
/// the rank's one-sided operations are done), inside a wrapper's own
/// [`state::call`] (`timed` its flag): a window's creation and free
/// synchronize its group besides their own work, and their start stays
/// the application's.
pub fn blocking_after_within(
    timed: bool,
    comm: Comm,
    coll: Coll,
    before: impl FnOnce(),
    real: impl FnOnce() -> c_int,
) -> c_int {
    timed_within(timed, comm, coll, None, before, || Member::of(0), real)
}

/// [`blocking`] in a call already entered (`timed` its flag), the clock
/// moved by `before` at the call's entry.
fn timed_within(
    timed: bool,
    comm: Comm,
    coll: Coll,
    root: Option<c_int>,
    before: impl FnOnce(),
    part: impl FnOnce() -> Member,
    real: impl FnOnce() -> c_int,
) -> c_int {
    {
        let Some(shadow) = timed.then(|| shadow_of(comm)).flatten() else {
            return real();
        };
        before();
        let (entry, algorithm) = state::with(|st| {
            let algorithm = algorithm(&st.machine, coll, true).map(str::to_owned);
            (st.clock, algorithm)
        })
        .unwrap_or((0.0, None));
        let part = part();
        if let Some(name) = algorithm {
            let all = allgather(entry, &part, Comm::from_bits(shadow));
            let rc = real();
            match all {
                Ok(all) => replayed(comm.bits(), coll, &name, root, &all),
                Err(e) => pnmpi_sdk::say::warn(
                    "vtime",
                    format_args!("cannot gather a collective's entry times ({e}): not timed"),
                ),
            }
            return rc;
        }
        let max = native::allreduce(
            &[entry, part.charged() as f64],
            constants::MAX(),
            Comm::from_bits(shadow),
        );
        let rc = real();
        match max {
            Ok(m) if m.len() == 2 => close(comm.bits(), coll, root, [m[0], m[1]]),
            Ok(_) => {}
            Err(e) => pnmpi_sdk::say::warn(
                "vtime",
                format_args!("cannot reduce a collective's entry times ({e}): not timed"),
            ),
        }
        rc
    }
}

/// Every member's entry and part, in communicator order: an
/// `MPI_Allgather` of each one's entry, size and numbers of per-peer
/// bytes, then (a `v` collective) an `MPI_Allgatherv` of those bytes.
fn allgather(entry: f64, part: &Member, comm: Comm) -> Result<Vec<(f64, Member)>, native::MpiError> {
    let n = usize::try_from(native::comm_size(comm)?).unwrap_or(0);
    let (send, recv) = part
        .counts
        .as_ref()
        .map_or((&[][..], &[][..]), |c| (&c.send[..], &c.recv[..]));
    let mine = [entry.to_bits(), part.bytes, send.len() as u64, recv.len() as u64];
    let mut heads = vec![0u64; 4 * n];
    // SAFETY: `mine` holds 4 u64, `heads` 4 per member of `comm`.
    let rc = unsafe {
        ffi::PMPI_Allgather(
            mine.as_ptr().cast(),
            4,
            constants::UINT64_T(),
            heads.as_mut_ptr().cast(),
            4,
            constants::UINT64_T(),
            comm,
        )
    };
    if rc != constants::SUCCESS() {
        return Err(native::MpiError::Code(rc));
    }
    let lens: Vec<c_int> = heads
        .chunks(4)
        .map(|h| c_int::try_from(h[2] + h[3]).unwrap_or(c_int::MAX))
        .collect();
    let mut peers = Vec::new();
    if lens.iter().any(|&l| l > 0) {
        let displs: Vec<c_int> = lens
            .iter()
            .scan(0 as c_int, |at, &l| {
                let d = *at;
                *at = at.saturating_add(l);
                Some(d)
            })
            .collect();
        let total = displs
            .last()
            .copied()
            .unwrap_or(0)
            .saturating_add(lens.last().copied().unwrap_or(0));
        peers = vec![0u64; usize::try_from(total).unwrap_or(0)];
        let ours: Vec<u64> = send.iter().chain(recv).copied().collect();
        // SAFETY: `ours` holds this member's `lens[me]` values, `peers`
        // the sum of `lens` at `displs`, one count per member.
        let rc = unsafe {
            ffi::PMPI_Allgatherv(
                ours.as_ptr().cast(),
                ours.len() as c_int,
                constants::UINT64_T(),
                peers.as_mut_ptr().cast(),
                lens.as_ptr(),
                displs.as_ptr(),
                constants::UINT64_T(),
                comm,
            )
        };
        if rc != constants::SUCCESS() {
            return Err(native::MpiError::Code(rc));
        }
    }
    let mut at = 0;
    Ok(heads
        .chunks(4)
        .map(|h| {
            let (ns, nr) = (h[2] as usize, h[3] as usize);
            let counts = (ns + nr > 0).then(|| {
                Box::new(VCounts {
                    send: peers[at..at + ns].to_vec(),
                    recv: peers[at + ns..at + ns + nr].to_vec(),
                })
            });
            at += ns + nr;
            (f64::from_bits(h[0]), Member { bytes: h[1], counts })
        })
        .collect())
}

/// An algorithmic collective whose members entered at and brought the
/// parts in `all`: replays its algorithm's messages among them
/// with `pnmpi sim`'s own engine and model (`pnmpi_sim::live::algorithmic`),
/// as `pnmpi sim replay` does, and moves the clock to this member's end.
fn replayed(comm: u64, coll: Coll, name: &str, root: Option<c_int>, all: &[(f64, Member)]) {
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
    let root = root.and_then(|r| u32::try_from(r).ok());
    match pnmpi_sim::live::algorithmic::replay(&machine, &model_name, nodes, coll, name, root, all) {
        Ok(ends) => {
            let Some(&(end, wait)) = ends.get(me) else { return };
            state::with(|st| {
                let start = st.call_start;
                st.clock = st.clock.max(end);
                st.call_late = st.call_late.max(start + wait);
                st.totals.collectives += 1;
            });
        }
        Err(e) => pnmpi_sdk::say::warn(
            "vtime",
            format_args!("cannot replay a collective's algorithm `{name}`: {e}"),
        ),
    }
}

/// A nonblocking collective `coll` on `comm`: runs `real`, which fills
/// the application's request `*request`, and posts the reduction of the
/// entry times to finish when that request completes.
///
/// # Safety
/// `request` is the application's request argument of `real`.
pub unsafe fn nonblocking(
    comm: Comm,
    coll: Coll,
    root: Option<c_int>,
    part: impl FnOnce() -> Member,
    request: *mut MPI_Request,
    real: impl FnOnce() -> c_int,
) -> c_int {
    state::call(|timed| {
        let Some(shadow) = timed.then(|| shadow_of(comm)).flatten() else {
            return real();
        };
        let entry = state::with(|st| st.clock).unwrap_or(0.0);
        let buf = Box::into_raw(Box::new([entry, part().charged() as f64, 0.0, 0.0]));
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
            root,
            req,
            buf,
        };
        if posted == constants::SUCCESS() && rc == constants::SUCCESS() && !request.is_null() {
            // SAFETY: `real` succeeded, so it wrote the application's request.
            let handle = unsafe { *request }.bits();
            state::with(|st| st.track(handle, Req::Coll(Box::new(pending))));
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
        close(p.comm, p.coll, p.root, [buf[2], buf[3]]);
    }
}

/// This member's part of collective `coll` on `comm` by the kernel's
/// rule ([`Member::of_call`], as the replay and virtual ranks derive it):
/// `send` and `recv` the bytes it sends and receives (a side with a count
/// per peer summed; in place, the block it contributes or keeps, as the
/// other side's arguments describe it), `counts` the per-peer bytes
/// significant on this member.
pub fn part(comm: Comm, coll: Coll, vector: bool, send: u64, recv: u64, counts: Option<VCounts>) -> Member {
    let members = u64::try_from(size(comm)).unwrap_or(0);
    Member::of_call(coll, vector, send, recv, members, counts)
}

/// `count` elements of `datatype`, in bytes (0 if MPI cannot say).
pub fn bytes<C: Into<i64>>(count: C, datatype: pnmpi_sdk::Datatype) -> u64 {
    let size = native::type_size(datatype).unwrap_or(0);
    u64::try_from(count.into().saturating_mul(i64::from(size))).unwrap_or(0)
}

/// The bytes of each of the `n` counts at `counts`, items of `datatype`
/// (empty if null).
///
/// # Safety
/// `counts` is null or points to `n` counts.
pub unsafe fn per_peer<C: Copy + Into<i64>>(
    counts: *const C,
    n: c_int,
    datatype: pnmpi_sdk::Datatype,
) -> Vec<u64> {
    if counts.is_null() || n <= 0 {
        return Vec::new();
    }
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts(counts, n as usize) }
        .iter()
        .map(|&c| bytes(c, datatype))
        .collect()
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
