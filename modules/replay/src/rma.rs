//! One-sided reads, with `rma on`: what `MPI_Get`, `MPI_Get_accumulate`,
//! `MPI_Fetch_and_op` and `MPI_Compare_and_swap` bring back depends on
//! when the target's memory was read, against other ranks' accesses: a
//! lock-based counter or queue (mpi4py's `util.sync`) takes another path
//! when it reads another value. Record keeps each read's result, packed,
//! at the call that completes it (a flush, an unlock, a fence,
//! `MPI_Win_complete`); replay makes the read for real, then puts the
//! recorded result into its buffer at the same call, so that the program
//! sees the recorded values and its control flow repeats. The writes of
//! one-sided calls are made as they come.
//!
//! Off by default, because forcing a read does not force the order in
//! which the ranks' atomics reached the target: where a read's value
//! decides a conditional write (`MPI_Compare_and_swap`, a swap with
//! `MPI_REPLACE` in a lock's queue), the target's real memory may then
//! take a state the recorded run never had, and a rank that polls its own
//! window memory for it waits for good (mpi4py's `util.sync` locks).
//!
//! The entry goes into the stream of the thread that makes the completing
//! call. A read is noted with a duplicate of its datatype (the program may
//! free its own before the read completes).

use crate::abort::diverge;
use crate::format::{Entry, Kind};
use crate::state::{self, mode, Next, State, RECORD, REPLAY, RMA_READS, STATE};
use pnmpi_sdk::constants as mpi;
use pnmpi_sdk::sys::ffi::{self, MPI_Datatype, MPI_Win};
use pnmpi_sdk::sys::Handle;
use pnmpi_sdk::threads;
use std::ffi::{c_int, c_void};
use std::sync::atomic::Ordering;
use std::sync::Mutex;

/// A read issued and not completed yet.
struct Read {
    /// The window's handle bits.
    win: u64,
    /// The target's rank in the window's group.
    target: c_int,
    /// The result buffer's address.
    buf: usize,
    /// Its count.
    count: c_int,
    /// A duplicate of its datatype's handle bits, freed once completed.
    datatype: u64,
}

/// The reads in flight, of every window and thread, in issue order.
static READS: Mutex<Vec<Read>> = Mutex::new(Vec::new());

/// Which reads a completing call completes.
#[derive(Clone, Copy)]
enum Completes {
    /// Those of the window to this target rank.
    Target(c_int),
    /// All those of the window.
    All,
}

/// Notes a read into `buf` (`count` elements of `datatype`) on `win` from
/// `target`, once MPI accepted it. A count past `int` is not noted: its
/// result is not forced (`MPI_Pack` takes an `int`).
fn issued(win: MPI_Win, target: c_int, buf: *mut c_void, count: i64, datatype: MPI_Datatype) {
    if buf.is_null() {
        return;
    }
    let Ok(count) = c_int::try_from(count) else {
        return;
    };
    let mut dup = datatype;
    // SAFETY: the datatype the application passed to a call MPI accepted;
    // `dup` is ours. A failed dup leaves the read unnoted.
    if unsafe { ffi::PMPI_Type_dup(datatype, &mut dup) } != mpi::SUCCESS() {
        return;
    }
    READS.lock().unwrap_or_else(|e| e.into_inner()).push(Read {
        win: win.bits(),
        target,
        buf: buf as usize,
        count,
        datatype: dup.bits(),
    });
}

/// Notes the read if MPI accepted it (`rc`) and reads are recorded or
/// replayed, as [`issued`]; returns `rc`.
fn noted(
    rc: c_int,
    win: MPI_Win,
    target: c_int,
    buf: *mut c_void,
    count: i64,
    datatype: MPI_Datatype,
) -> c_int {
    if rc == mpi::SUCCESS() && RMA_READS.load(Ordering::Relaxed) {
        issued(win, target, buf, count, datatype);
    }
    rc
}

/// Completes the reads if the call succeeded (`rc`), as [`completed`];
/// returns `rc`. Without `rma on` a flush, unlock or fence costs a load.
fn done(rc: c_int, win: MPI_Win, which: Completes) -> c_int {
    if rc == mpi::SUCCESS() && RMA_READS.load(Ordering::Relaxed) {
        completed(win, which);
    }
    rc
}

/// After a call on `win` that completed the reads `which` says (it
/// returned success): records their results, or puts the recorded ones
/// in their buffers, in issue order.
fn completed(win: MPI_Win, which: Completes) {
    let done: Vec<Read> = {
        let mut reads = READS.lock().unwrap_or_else(|e| e.into_inner());
        if reads.is_empty() {
            return;
        }
        let bits = win.bits();
        let (done, kept) = std::mem::take(&mut *reads).into_iter().partition(|r| {
            r.win == bits
                && match which {
                    Completes::Target(t) => r.target == t,
                    Completes::All => true,
                }
        });
        *reads = kept;
        done
    };
    for read in done {
        match mode() {
            RECORD => record(&read),
            REPLAY => replay(&read),
            _ => {}
        }
        let mut dt = MPI_Datatype::from_bits(read.datatype);
        // SAFETY: the duplicate `issued` made, freed once.
        unsafe { ffi::PMPI_Type_free(&mut dt) };
    }
}

/// The upper bound `MPI_Pack_size` gives for `read`'s result.
fn pack_size(read: &Read) -> usize {
    let mut size: c_int = 0;
    // SAFETY: a count and a datatype MPI accepted; `size` is ours.
    let rc = unsafe {
        ffi::PMPI_Pack_size(
            read.count,
            MPI_Datatype::from_bits(read.datatype),
            mpi::COMM_SELF(),
            &mut size,
        )
    };
    if rc == mpi::SUCCESS() {
        size.max(0) as usize
    } else {
        0
    }
}

/// Records `read`'s result, packed.
fn record(read: &Read) {
    let mut bytes = vec![0u8; pack_size(read)];
    let mut position: c_int = 0;
    // SAFETY: the completed read's buffer holds `count` elements of the
    // datatype; `bytes` holds their packed size (MPI_Pack_size's bound).
    unsafe {
        ffi::PMPI_Pack(
            read.buf as *const c_void,
            read.count,
            MPI_Datatype::from_bits(read.datatype),
            bytes.as_mut_ptr().cast(),
            bytes.len() as c_int,
            &mut position,
            mpi::COMM_SELF(),
        )
    };
    bytes.truncate(position.max(0) as usize);
    if let Some(State::Record(r)) = &mut *STATE.lock() {
        r.push(threads::current(), Entry::RmaRead(bytes));
    }
}

/// Puts the recorded result of `read` into its buffer; a record that
/// holds something else, or a result of another size, is a divergence.
fn replay(read: &Read) {
    let me = threads::current();
    let Some((index, next, _turn)) = state::next(me, Kind::RmaRead) else {
        return;
    };
    let bytes = match next {
        Next::Entry(Entry::RmaRead(bytes)) => bytes,
        Next::Entry(other) => diverge(me, index, Kind::RmaRead, &format!("the record holds {other:?}")),
        Next::Fail => diverge(me, index, Kind::RmaRead, "the record holds a failed call"),
    };
    let mut position: c_int = 0;
    let fits = bytes.len() <= pack_size(read);
    // SAFETY: `bytes` is the packed result of a read of `count` elements
    // of this datatype in the recorded run, unpacked into the completed
    // read's buffer, which holds as many.
    let rc = fits.then(|| unsafe {
        ffi::PMPI_Unpack(
            bytes.as_ptr().cast(),
            bytes.len() as c_int,
            &mut position,
            read.buf as *mut c_void,
            read.count,
            MPI_Datatype::from_bits(read.datatype),
            mpi::COMM_SELF(),
        )
    });
    if rc != Some(mpi::SUCCESS()) || position as usize != bytes.len() {
        diverge(
            me,
            index,
            Kind::RmaRead,
            &format!(
                "the recorded result has {} bytes, which {} element(s) of this read's datatype do not take",
                bytes.len(),
                read.count
            ),
        );
    }
}

pnmpi_sdk::wrap! {
    /// Notes the read.
    fn MPI_Get(o, n, dt, target, _disp, _tn, _tdt, win) {
        noted(next!(), win, target, o, i64::from(n), dt)
    }

    /// Notes the read into the result buffer.
    fn MPI_Get_accumulate(_o, _n, _dt, r, rn, rdt, target, _disp, _tn, _tdt, _op, win) {
        noted(next!(), win, target, r, i64::from(rn), rdt)
    }

    /// Notes the read of one element.
    fn MPI_Fetch_and_op(_o, r, dt, target, _disp, _op, win) {
        noted(next!(), win, target, r, 1, dt)
    }

    /// Notes the read of one element.
    fn MPI_Compare_and_swap(_o, _c, r, dt, target, _disp, win) {
        noted(next!(), win, target, r, 1, dt)
    }

    /// Completes the reads from `rank`.
    fn MPI_Win_flush(rank, win) {
        done(next!(), win, Completes::Target(rank))
    }

    /// Completes the reads from `rank` (a read's result is its local part).
    fn MPI_Win_flush_local(rank, win) {
        done(next!(), win, Completes::Target(rank))
    }

    /// Completes the reads from `rank`.
    fn MPI_Win_unlock(rank, win) {
        done(next!(), win, Completes::Target(rank))
    }

    /// Completes the window's reads.
    fn MPI_Win_flush_all(win) {
        done(next!(), win, Completes::All)
    }

    /// Completes the window's reads.
    fn MPI_Win_flush_local_all(win) {
        done(next!(), win, Completes::All)
    }

    /// Completes the window's reads.
    fn MPI_Win_unlock_all(win) {
        done(next!(), win, Completes::All)
    }

    /// Completes the window's reads.
    fn MPI_Win_fence(_assert, win) {
        done(next!(), win, Completes::All)
    }

    /// Completes the access epoch's reads.
    fn MPI_Win_complete(win) {
        done(next!(), win, Completes::All)
    }
}

pnmpi_sdk::wrap_optional! {
    /// Notes the read, as `MPI_Get` (a count past `int` is not noted).
    fn MPI_Get_c(o, n, dt, target, _disp, _tn, _tdt, win) {
        noted(next!(), win, target, o, n, dt)
    }

    /// Notes the read into the result buffer, as `MPI_Get_accumulate`.
    fn MPI_Get_accumulate_c(_o, _n, _dt, r, rn, rdt, target, _disp, _tn, _tdt, _op, win) {
        noted(next!(), win, target, r, rn, rdt)
    }
}
