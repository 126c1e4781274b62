//! One-sided synchronization: a window's creation (its arguments, the
//! call compared across its communicator's ranks, every rank's size and
//! displacement unit gathered on the window's own duplicate), its fences
//! and its free (compared across ranks there, so that a rank's fence
//! where another frees the window, or one rank's fence missing, is
//! reported instead of hanging), its locks and `MPI_Win_start` epochs,
//! and each synchronization's completion of the operations issued
//! before it (`windows::Issued`: an origin buffer written meanwhile is
//! reported).

use crate::args::{self, refuse, Checked, Refusal};
use crate::collective;
use crate::consts::Err;
use crate::desc::Desc;
use crate::gate::{gate, gate_passive};
use crate::origin::Origin;
use crate::report::{self, Class};
use crate::site::{self, named, Here};
use crate::windows::{self, Issued, WinInfo};
use pnmpi_mpi_sys::ROUTINE_NAMES;
use pnmpi_sdk::constants as mpi;
use pnmpi_sdk::raw::routine;
use pnmpi_sdk::sys::ffi::{self, MPI_Comm, MPI_Win};
use pnmpi_sdk::sys::Handle;
use std::ffi::{c_int, c_void};

/// A one-sided error: the call is refused with `err`.
pub fn rma_error(err: Err, check: &'static str, what: String) -> Refusal {
    let mut r = refuse(err, check, what);
    r.class = Class::Rma;
    r
}

/// The window is one the application created and has not freed; its
/// duplicate of the communicator.
pub fn known(win: MPI_Win) -> Result<MPI_Comm, Refusal> {
    match windows::lock().get(&win.bits()) {
        Some(w) => Ok(MPI_Comm::from_bits(w.shadow)),
        None => Err(rma_error(
            Err::Win,
            "win",
            "the window is not a window: never created (or its creation refused), or freed".into(),
        )),
    }
}

/// Whether assertion `mode` (an index of `mpi::modes()`: 3
/// `MPI_MODE_NOPRECEDE`, 4 `MPI_MODE_NOSUCCEED`) is in `assert`.
fn has(assert: c_int, mode: usize) -> bool {
    assert & mpi::modes()[mode] != 0
}

/// A window's size and displacement unit.
fn shape(size: i64, disp_unit: c_int) -> Checked {
    if size < 0 {
        return Err(refuse(
            Err::Size,
            "size",
            format!("the window's size {size} is negative"),
        ));
    }
    if disp_unit <= 0 {
        return Err(refuse(
            Err::Disp,
            "disp-unit",
            format!("the displacement unit {disp_unit} is not positive"),
        ));
    }
    Ok(())
}

/// The memory `MPI_Win_create` is given: `size` bytes at `base`, mapped.
fn memory(base: *const c_void, size: i64) -> Checked {
    if size == 0 {
        return Ok(());
    }
    if base.is_null() {
        return Err(refuse(
            Err::Buffer,
            "buffer",
            format!("the window's memory is NULL with a size of {size} bytes"),
        ));
    }
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as usize;
    let start = base as usize & !(page - 1);
    let Some(end) = (base as usize).checked_add(size as usize) else {
        return Err(refuse(
            Err::Buffer,
            "buffer",
            format!("the window's memory ends past the address space ({size} bytes)"),
        ));
    };
    let len = end - start;
    let mut pages = vec![0u8; len.div_ceil(page)];
    // SAFETY: mincore only reads the mapping of the range and writes one
    // byte per page into `pages`, which has room for them.
    let rc = unsafe { libc::mincore(start as *mut c_void, len, pages.as_mut_ptr()) };
    if rc != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOMEM) {
        return Err(refuse(
            Err::Buffer,
            "buffer",
            format!(
                "the window's memory [{:#x}, {:#x}) is not memory of the process (an uninitialized or stale pointer)",
                base as usize, end
            ),
        ));
    }
    Ok(())
}

/// Checks and compares a window's creation over `comm`, makes it
/// (`create`), then registers the window `*win` with this rank's memory
/// (`base()`, asked after the call: `MPI_Win_allocate` sets it) and
/// `size` bytes, and gathers every rank's shape; `None` for a dynamic
/// window.
fn create(
    here: &Here,
    comm: MPI_Comm,
    shape_: Option<(i64, c_int)>,
    checks: impl FnOnce() -> Checked,
    win: *mut MPI_Win,
    create: impl FnOnce() -> c_int,
    base: impl FnOnce() -> usize,
) -> c_int {
    let checked = args::comm(comm)
        .and_then(|()| args::out_param(win, "window"))
        .and_then(|()| shape_.map_or(Ok(()), |(s, u)| shape(s, u)))
        .and_then(|()| checks())
        .and_then(|()| collective::agree(here, comm, Desc::new(here.routine)));
    if let Err(r) = checked {
        return r.report(here);
    }
    // SAFETY: the caller's window variable (checked not NULL), which
    // the call overwrites.
    let old = unsafe { *win }.bits();
    if let Some(w) = windows::lock().get(&old) {
        report::report(
            Class::Rma,
            "overwritten",
            here.call(),
            &here.site(),
            format!(
                "the window variable still holds the window created by {}, never freed: it is lost",
                named(w.origin)
            ),
        );
    }
    let rc = create();
    if rc != mpi::SUCCESS() {
        return rc;
    }
    let shadow = crate::objects::shadow_of(comm);
    let (size, unit) = shape_.unwrap_or((-1, 1));
    let mine = [size, i64::from(unit)];
    let ranks = if shadow == 0 {
        0
    } else {
        args::comm_size(MPI_Comm::from_bits(shadow))
    };
    let mut all = vec![0i64; 2 * ranks.max(0) as usize];
    if shadow != 0 {
        // SAFETY: `all` has room for two words from each rank of the
        // duplicate, which every rank of the new window joins here.
        unsafe {
            ffi::PMPI_Allgather(
                mine.as_ptr().cast(),
                2,
                mpi::LONG_LONG(),
                all.as_mut_ptr().cast(),
                2,
                mpi::LONG_LONG(),
                MPI_Comm::from_bits(shadow),
            );
        }
    }
    let extents = all.chunks(2).map(|w| (w[0], w[1])).collect();
    let mut info = WinInfo::new(shadow, Origin::of(here), extents, (base(), size));
    if shadow != 0 {
        let mut me = 0;
        // SAFETY: a local out-parameter.
        unsafe { ffi::PMPI_Comm_rank(MPI_Comm::from_bits(shadow), &mut me) };
        info.rank = me;
    }
    info.mark = crate::gate::syncs();
    // SAFETY: MPI just wrote the new window's handle.
    windows::lock().insert(unsafe { *win }.bits(), info);
    rc
}

/// Reports a window whose memory lies on this thread's stack below the
/// caller's frame: a local variable of a function that has returned
/// (`MPI_Win_create` in a function, `MPI_Win_free` after it returned).
fn stale_memory(here: &Here, w: &WinInfo) {
    let (base, size) = w.memory;
    if size <= 0 || w.origin.routine != routine::MPI_Win_create {
        return;
    }
    let Some((caller, low)) = here.caller_stack() else {
        return;
    };
    if base >= low && base < caller {
        report::report(
            Class::Rma,
            "stale-memory",
            here.call(),
            &here.site(),
            format!(
                "the window's memory ({size} bytes at {base:#x}, given to {}) lies on the stack below this call's frame: it was a local variable of a function that has returned",
                named(w.origin)
            ),
        );
    }
}

/// Checks every operation a synchronization completed: an origin buffer
/// written since its call is reported (at the operation's call, naming
/// the synchronization); a get's data is then given to its buffer.
pub fn completed(here: &Here, ops: Vec<Issued>) {
    for op in ops {
        let Some((start, len, sum)) = op.sum else {
            continue;
        };
        windows::release(len);
        // SAFETY: the application's origin buffer, which it keeps until
        // the synchronization that completes the operation.
        if unsafe { crate::checksum::checksum(start, len) } != sum {
            report::report(
                Class::Rma,
                "buffer-modified",
                ROUTINE_NAMES[op.origin.routine],
                &site::name(op.origin.ra),
                format!(
                    "its origin buffer was written before {} at {} completed it",
                    here.call(),
                    here.site()
                ),
            );
        }
        if let Some(data) = op.scratch {
            // SAFETY: `len` bytes of the origin buffer, as long as `data`.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), start as *mut u8, len) };
        }
    }
}

/// Runs a synchronization of `win` (`sync`, MPI's call) after `checks`
/// on the window's state, then completes the operations to `target`
/// (all: `None`; none: no completion) and updates the state (`after`).
fn synchronize(
    here: &Here,
    win: MPI_Win,
    checks: impl FnOnce(&WinInfo) -> Checked,
    sync: impl FnOnce() -> c_int,
    completes: Option<Option<i32>>,
    after: impl FnOnce(&mut WinInfo),
) -> c_int {
    let checked = known(win).and_then(|_| match windows::lock().get(&win.bits()) {
        Some(w) => checks(w),
        None => Ok(()),
    });
    if let Err(r) = checked {
        return r.report(here);
    }
    let rc = sync();
    if rc != mpi::SUCCESS() {
        return rc;
    }
    let done = {
        let mut wins = windows::lock();
        let Some(w) = wins.get_mut(&win.bits()) else {
            return rc;
        };
        after(w);
        completes.map(|t| w.complete(t)).unwrap_or_default()
    };
    completed(here, done);
    rc
}

/// A target rank of the window (for locks and flushes).
fn target(rank: c_int, shadow: MPI_Comm) -> Checked {
    args::rank(rank, shadow, false)
}

/// Compares a fence or a free of the window across its ranks; `false`
/// if they went out of step before (reported then): the call is not
/// made, and returns [`out_of_step`].
fn compared(here: &Here, win: MPI_Win) -> Result<bool, Refusal> {
    let shadow = known(win)?;
    if windows::lock().get(&win.bits()).is_some_and(|w| w.broken) {
        return Ok(false);
    }
    if shadow.bits() == 0 {
        return Ok(true);
    }
    collective::agree_on(here, shadow, Desc::new(here.routine)).inspect_err(|_| {
        if let Some(w) = windows::lock().get_mut(&win.bits()) {
            w.broken = true;
        }
    })?;
    Ok(true)
}

/// The code of a fence or free not made on a window out of step.
fn out_of_step() -> c_int {
    crate::consts::err(Err::RmaSync)
}

pnmpi_sdk::wrap! {
    /// Checks the window's memory and shape, compares the call.
    fn MPI_Win_create(base, size, disp_unit, info, comm, win) {
        let here = Here::new(routine::MPI_Win_create);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        #[allow(clippy::unnecessary_cast)]
        let bytes = size as i64;
        create(&here, comm, Some((bytes, disp_unit)), || memory(base, bytes), win, || next!(), || base as usize)
    }

    /// Checks the shape, compares the call.
    fn MPI_Win_allocate(size, disp_unit, info, comm, baseptr, win) {
        let here = Here::new(routine::MPI_Win_allocate);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        #[allow(clippy::unnecessary_cast)]
        let bytes = size as i64;
        let out = || args::out_param(baseptr.cast::<*mut c_void>(), "base pointer");
        // SAFETY: MPI set the base pointer (the call succeeded).
        create(&here, comm, Some((bytes, disp_unit)), out, win, || next!(), || unsafe { *baseptr.cast::<usize>() })
    }

    /// Checks the shape, compares the call.
    fn MPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win) {
        let here = Here::new(routine::MPI_Win_allocate_shared);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        #[allow(clippy::unnecessary_cast)]
        let bytes = size as i64;
        let out = || args::out_param(baseptr.cast::<*mut c_void>(), "base pointer");
        // SAFETY: MPI set the base pointer (the call succeeded).
        create(&here, comm, Some((bytes, disp_unit)), out, win, || next!(), || unsafe { *baseptr.cast::<usize>() })
    }

    /// Compares the call; the window's memory is attached later.
    fn MPI_Win_create_dynamic(info, comm, win) {
        let here = Here::new(routine::MPI_Win_create_dynamic);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        create(&here, comm, None, || Ok(()), win, || next!(), || 0)
    }

    /// Compares the free across the window's ranks; reports operations
    /// never completed by a synchronization.
    fn MPI_Win_free(win) {
        let here = Here::new(routine::MPI_Win_free);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        if let Err(r) = args::out_param(win, "window") {
            return r.report(&here);
        }
        // SAFETY: the caller's window variable.
        let w = unsafe { *win };
        match compared(&here, w) {
            Err(r) => return r.report(&here),
            Ok(false) => return out_of_step(),
            Ok(true) => {}
        }
        let info = windows::lock().remove(&w.bits());
        let Some(mut info) = info else {
            return next!();
        };
        stale_memory(&here, &info);
        crate::rma_race::at_free(&here, &mut info);
        let open = info.open_epochs(site::name);
        if !open.is_empty() {
            report::report(
                Class::Rma,
                "epoch-open",
                here.call(),
                &here.site(),
                format!("the window is freed while {} is still open", open.join(" and ")),
            );
        }
        // Reported before the call: MPICH aborts the job in it.
        let left = info.complete(None);
        if let Some(first) = left.first() {
            report::report(
                Class::Rma,
                "unsynchronized",
                here.call(),
                &here.site(),
                format!(
                    "the window is freed while {} operation(s) issued on it, the first {} to rank {}, were never completed by a synchronization",
                    left.len(),
                    named(first.origin),
                    first.target
                ),
            );
        }
        let rc = next!();
        completed(&here, left);
        if info.shadow != 0 {
            let _ = pnmpi_sdk::native::comm_free(MPI_Comm::from_bits(info.shadow));
        }
        rc
    }

    /// Compares the fence across the window's ranks; completes every
    /// operation issued before it.
    fn MPI_Win_fence(assert, win) {
        let here = Here::new(routine::MPI_Win_fence);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        match compared(&here, win) {
            Err(r) => return r.report(&here),
            Ok(false) => return out_of_step(),
            Ok(true) => {}
        }
        let ra = here.ra();
        // MPI_MODE_NOPRECEDE after operations of this rank: reported, and
        // the fence made without it, so that it completes them.
        let preceded = windows::lock().get(&win.bits()).and_then(|w| w.issued.first().map(|op| (w.issued.len(), op.origin)));
        let mut assert = assert;
        if let Some((n, first)) = preceded.filter(|_| has(assert, 3)) {
            report::report(Class::Rma, "fence-assert", here.call(), &here.site(), format!(
                "the fence asserts MPI_MODE_NOPRECEDE, but {n} operation(s) of this rank precede it, the first {}: it is made without the assertion",
                named(first)
            ));
            assert &= !mpi::modes()[3];
        }
        // A lock taken right after the last fence, with operations, ends
        // here: inside the fence epoch (MPI: a fence starts one when RMA
        // calls follow it before the next fence). One after another
        // synchronizing call, as MPICH's mixedsync.c takes after a
        // barrier, is not reported.
        let locked = windows::lock().get(&win.bits()).and_then(|w| match w.lock_after_fence {
            Some((site, true)) if w.fenced => Some(site),
            _ => None,
        });
        if let Some(lock) = locked {
            report::report(Class::Rma, "lock-in-fence-epoch", here.call(), &here.site(), format!(
                "the passive-target epoch of {} (with its operations) lies inside the active-target epoch of the fence before it, which this fence closes",
                named(lock)
            ));
        }
        // SAFETY: MPI's fence, with the application's window.
        let fence = || unsafe { pnmpi_sdk::raw::XMPI_Win_fence(assert, win) };
        let rc = synchronize(&here, win, |_| Ok(()), fence, Some(None), |w| w.fence(has(assert, 4), ra));
        if rc == mpi::SUCCESS() {
            crate::rma_race::at_fence(&here, win);
            if let Some(w) = windows::lock().get_mut(&win.bits()) {
                w.fence_syncs = crate::gate::syncs();
            }
        }
        rc
    }

    /// Checks the target and that no fence epoch is open.
    fn MPI_Win_lock(lock_type, rank, assert, win) {
        let here = Here::new(routine::MPI_Win_lock);
        // A shared lock orders this rank with no other (`race`).
        let shared = lock_type == mpi::LOCK_SHARED();
        if let Some(rc) = if shared { gate_passive(&here) } else { gate(&here) } {
            return rc;
        }
        let origin = Origin::of(&here);
        let checks = |w: &WinInfo| {
            target(rank, MPI_Comm::from_bits(w.shadow))?;
            if w.in_fence_epoch() {
                return Err(rma_error(Err::RmaSync, "lock-in-fence-epoch", format!(
                    "rank {rank} is locked inside the active-target epoch that MPI_Win_fence at {} opened, which no fence closed",
                    site::name(w.fence_ra)
                )));
            }
            if w.locks.contains(&rank) || w.lock_all {
                return Err(rma_error(Err::RmaSync, "lock-held", format!("rank {rank} of the window is locked already")));
            }
            Ok(())
        };
        let opened = |w: &mut WinInfo| {
            w.locks.push(rank);
            w.lock_epochs.push((rank, shared));
            crate::rma_race::own_lock(w, shared);
            if w.fenced && w.lock_after_fence.is_none() && w.fence_syncs == crate::gate::syncs() {
                w.lock_after_fence = Some((origin, false));
            }
        };
        synchronize(&here, win, checks, || next!(), None, opened)
    }

    /// Checks that the target is locked; completes its operations.
    fn MPI_Win_unlock(rank, win) {
        let here = Here::new(routine::MPI_Win_unlock);
        let shared = windows::lock().get(&win.bits()).is_some_and(|w| w.lock_epochs.iter().any(|l| l.0 == rank && l.1));
        if let Some(rc) = if shared { gate_passive(&here) } else { gate(&here) } {
            return rc;
        }
        let checks = |w: &WinInfo| {
            if w.locks.contains(&rank) {
                return Ok(());
            }
            Err(rma_error(Err::RmaSync, "not-locked", format!("rank {rank} of the window is not locked (MPI_Win_lock)")))
        };
        let closed = |w: &mut WinInfo| {
            w.locks.retain(|&t| t != rank);
            w.lock_epochs.retain(|l| l.0 != rank);
            w.close_passive(Some(rank), crate::gate::syncs());
            crate::rma_race::own_unlock(w);
        };
        synchronize(&here, win, checks, || next!(), Some(Some(rank)), closed)
    }

    /// Checks that no fence epoch is open.
    fn MPI_Win_lock_all(assert, win) {
        let here = Here::new(routine::MPI_Win_lock_all);
        if let Some(rc) = gate_passive(&here) {
            return rc;
        }
        let origin = Origin::of(&here);
        let checks = |w: &WinInfo| {
            if w.in_fence_epoch() {
                return Err(rma_error(Err::RmaSync, "lock-in-fence-epoch", format!(
                    "the window is locked inside the active-target epoch that MPI_Win_fence at {} opened, which no fence closed",
                    site::name(w.fence_ra)
                )));
            }
            if w.lock_all || !w.locks.is_empty() {
                return Err(rma_error(Err::RmaSync, "lock-held", "the window is locked already (MPI_Win_lock_all, or MPI_Win_lock of a rank)".into()));
            }
            Ok(())
        };
        let opened = |w: &mut WinInfo| {
            w.lock_all = true;
            crate::rma_race::own_lock(w, true);
            if w.fenced && w.lock_after_fence.is_none() && w.fence_syncs == crate::gate::syncs() {
                w.lock_after_fence = Some((origin, false));
            }
        };
        synchronize(&here, win, checks, || next!(), None, opened)
    }

    /// Completes every operation.
    fn MPI_Win_unlock_all(win) {
        let here = Here::new(routine::MPI_Win_unlock_all);
        if let Some(rc) = gate_passive(&here) {
            return rc;
        }
        let checks = |w: &WinInfo| {
            if w.lock_all {
                return Ok(());
            }
            Err(rma_error(Err::RmaSync, "not-locked", "the window is not locked (MPI_Win_lock_all)".into()))
        };
        let closed = |w: &mut WinInfo| {
            w.lock_all = false;
            w.close_passive(None, crate::gate::syncs());
            crate::rma_race::own_unlock(w);
        };
        synchronize(&here, win, checks, || next!(), Some(None), closed)
    }

    /// Completes the target's operations.
    fn MPI_Win_flush(rank, win) {
        let here = Here::new(routine::MPI_Win_flush);
        if let Some(rc) = gate_passive(&here) {
            return rc;
        }
        let done = move |w: &mut WinInfo| w.close_passive(Some(rank), crate::gate::syncs());
        synchronize(&here, win, |w| target(rank, MPI_Comm::from_bits(w.shadow)), || next!(), Some(Some(rank)), done)
    }

    /// Completes the target's operations at the origin.
    fn MPI_Win_flush_local(rank, win) {
        let here = Here::new(routine::MPI_Win_flush_local);
        if let Some(rc) = gate_passive(&here) {
            return rc;
        }
        synchronize(&here, win, |w| target(rank, MPI_Comm::from_bits(w.shadow)), || next!(), Some(Some(rank)), |_| {})
    }

    /// Completes every operation.
    fn MPI_Win_flush_all(win) {
        let here = Here::new(routine::MPI_Win_flush_all);
        if let Some(rc) = gate_passive(&here) {
            return rc;
        }
        synchronize(&here, win, |_| Ok(()), || next!(), Some(None), |w| w.close_passive(None, crate::gate::syncs()))
    }

    /// Completes every operation at the origin.
    fn MPI_Win_flush_local_all(win) {
        let here = Here::new(routine::MPI_Win_flush_local_all);
        if let Some(rc) = gate_passive(&here) {
            return rc;
        }
        synchronize(&here, win, |_| Ok(()), || next!(), Some(None), |_| {})
    }

    /// Opens an access epoch to the group: none may be open already, nor
    /// the active-target epoch of a fence.
    fn MPI_Win_start(group, assert, win) {
        let here = Here::new(routine::MPI_Win_start);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        let ra = here.ra();
        let checks = |w: &WinInfo| {
            if let Some(first) = w.started {
                return Err(rma_error(Err::RmaSync, "epoch-open", format!(
                    "an access epoch of the window is open already: MPI_Win_start at {} was not closed by MPI_Win_complete",
                    site::name(first)
                )));
            }
            if w.in_fence_epoch() {
                return Err(rma_error(Err::RmaSync, "start-in-fence-epoch", format!(
                    "the access epoch starts inside the active-target epoch that MPI_Win_fence at {} opened, which no fence closed",
                    site::name(w.fence_ra)
                )));
            }
            Ok(())
        };
        synchronize(&here, win, checks, || next!(), None, |w| w.started = Some(ra))
    }

    /// Completes every operation of the access epoch `MPI_Win_start`
    /// opened.
    fn MPI_Win_complete(win) {
        let here = Here::new(routine::MPI_Win_complete);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        let checks = |w: &WinInfo| match w.started {
            Some(_) => Ok(()),
            None => Err(rma_error(Err::RmaSync, "not-started", "no access epoch of the window is open (MPI_Win_start) for MPI_Win_complete to close".into())),
        };
        synchronize(&here, win, checks, || next!(), Some(None), |w| w.started = None)
    }

    /// Opens an exposure epoch to the group: none may be open already.
    fn MPI_Win_post(group, assert, win) {
        let here = Here::new(routine::MPI_Win_post);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        let ra = here.ra();
        let checks = |w: &WinInfo| match w.posted {
            None => Ok(()),
            Some(first) => Err(rma_error(Err::RmaSync, "epoch-open", format!(
                "an exposure epoch of the window is open already: MPI_Win_post at {} was not closed by MPI_Win_wait",
                site::name(first)
            ))),
        };
        synchronize(&here, win, checks, || next!(), None, |w| w.posted = Some(ra))
    }

    /// Closes the exposure epoch `MPI_Win_post` opened.
    fn MPI_Win_wait(win) {
        let here = Here::new(routine::MPI_Win_wait);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        synchronize(&here, win, posted, || next!(), None, |w| w.posted = None)
    }

    /// Closes the exposure epoch `MPI_Win_post` opened, if the accesses
    /// to it are done.
    fn MPI_Win_test(win, flag) {
        let here = Here::new(routine::MPI_Win_test);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        if let Err(r) = args::out_param(flag, "flag") {
            return r.report(&here);
        }
        // SAFETY: `flag` is the caller's variable (checked not null), which
        // MPI set when the call returned success.
        let closes = move |w: &mut WinInfo| if unsafe { *flag } != 0 { w.posted = None };
        synchronize(&here, win, posted, || next!(), None, closes)
    }
}

/// An exposure epoch of the window is open, for `MPI_Win_wait` or
/// `MPI_Win_test` to close.
fn posted(w: &WinInfo) -> Checked {
    match w.posted {
        Some(_) => Ok(()),
        None => Err(rma_error(
            Err::RmaSync,
            "not-posted",
            "no exposure epoch of the window is open (MPI_Win_post) to wait for".into(),
        )),
    }
}

// MPI 4's large-count window creations (MPICH 4 has them, and mpi4py
// calls them there; Open MPI 4.1 has not): checked as their `int`
// twins, the displacement unit an `MPI_Aint` (one past an `int` is
// checked as the largest `int`), so that the window they create is known
// to its fences, epochs and free.
pnmpi_sdk::wrap_optional! {
    /// As `MPI_Win_create`.
    fn MPI_Win_create_c(base, size, disp_unit, info, comm, win) {
        let here = Here::new(routine::MPI_Win_create_c);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        #[allow(clippy::unnecessary_cast)]
        let bytes = size as i64;
        create(&here, comm, Some((bytes, (disp_unit as i64).clamp(c_int::MIN.into(), c_int::MAX.into()) as c_int)), || memory(base, bytes), win, || next!(), || base as usize)
    }

    /// As `MPI_Win_allocate`.
    fn MPI_Win_allocate_c(size, disp_unit, info, comm, baseptr, win) {
        let here = Here::new(routine::MPI_Win_allocate_c);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        #[allow(clippy::unnecessary_cast)]
        let bytes = size as i64;
        let out = || args::out_param(baseptr.cast::<*mut c_void>(), "base pointer");
        // SAFETY: MPI set the base pointer (the call succeeded).
        create(&here, comm, Some((bytes, (disp_unit as i64).clamp(c_int::MIN.into(), c_int::MAX.into()) as c_int)), out, win, || next!(), || unsafe { *baseptr.cast::<usize>() })
    }

    /// As `MPI_Win_allocate_shared`.
    fn MPI_Win_allocate_shared_c(size, disp_unit, info, comm, baseptr, win) {
        let here = Here::new(routine::MPI_Win_allocate_shared_c);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        #[allow(clippy::unnecessary_cast)]
        let bytes = size as i64;
        let out = || args::out_param(baseptr.cast::<*mut c_void>(), "base pointer");
        // SAFETY: MPI set the base pointer (the call succeeded).
        create(&here, comm, Some((bytes, (disp_unit as i64).clamp(c_int::MIN.into(), c_int::MAX.into()) as c_int)), out, win, || next!(), || unsafe { *baseptr.cast::<usize>() })
    }
}
