//! One-sided communication between virtual ranks: windows of every kind,
//! puts, gets, accumulates and atomics (and their request forms), and
//! every synchronization, timed by the kernel's one-sided rule as the
//! replay and vtime time them (docs/sim.md, "One-sided communication").
//!
//! The ranks share one address space, so an operation moves its data at
//! once, when the origin issues it, in the origin's context: into or out
//! of the target's memory (its own copy of the privatized globals, where
//! the window lies in them). A correct program cannot tell: MPI lets an
//! operation complete any time before the call that closes its epoch,
//! and an exclusive lock, a fence or a post/start pair orders the
//! accesses that conflict. The times are the kernel's:
//!
//! - an operation frees the origin after its overhead and is done when
//!   its data (and the acknowledgement, or the fetched data) has crossed
//!   the network; a request form's request completes at its local
//!   completion;
//! - a fence waits for the rank's own operations, then is a barrier of
//!   the window's group, on the window's own communicator; so are the
//!   window's creation and its free;
//! - `MPI_Win_post` and `MPI_Win_complete` (once its operations are done)
//!   send each rank of their group an empty message on that
//!   communicator; `MPI_Win_start` and `MPI_Win_wait` receive one from
//!   each of theirs;
//! - a lock is granted in the order the ranks ask for it, in virtual
//!   time, and a holder granted it after others released it receives
//!   the target's grant (`crate::windows`); an unlock and a flush wait
//!   for the operations they complete.
//!
//! A window whose group spans processes (`mpirun -np P` with P > 1,
//! ranks of several processes in it) is refused at its creation: its
//! data would have to cross processes.

#![allow(non_snake_case)]

use super::coll::barrier_on;
use super::complete::wait_unseen;
use super::traced::{self as trace, note};
use super::{comm_of, fatal, ok, CallInProgress};
use crate::comm::child_gid;
use crate::dtype::{pack, unpack};
use crate::engine::{self, with, Rma};
use crate::handles::{self, Kind};
use crate::one_sided::{self, reduction_code, Sent, Shape};
use crate::p2p::{Mode, RecvSpec, Work};
use crate::windows::{allocate, Attributes, Fetch, Region};
use pnmpi_mpi_sys::{constants as c, ffi, Handle};
use pnmpi_sdk::rma_codes::{assert_bits, lock_code, op_code};
use pnmpi_sim::kernel::rma::Issued;
use pnmpi_trace::rank::NewWin;
use pnmpi_trace::rma::{DataOp, WinKind};
use std::ffi::{c_int, c_void};
use std::ptr::null_mut;

type Dt = ffi::MPI_Datatype;

/// Tags of the notifications on a window's own communicator.
const POST_TAG: c_int = 1;
const DONE_TAG: c_int = 2;

/// The window `h` names, or stops naming the routine.
fn win_of(routine: &str, h: ffi::MPI_Win) -> usize {
    match handles::index(Kind::Win, h) {
        Some(w) if with(|e| e.windows().get(w).is_some()) => w,
        _ => fatal(
            routine,
            "invalid window (MPI_WIN_NULL, freed, or not one of this run's)",
        ),
    }
}

/// The running rank's rank in window `w`, and the window's size.
fn me_in(w: usize) -> (u32, u32) {
    with(|e| {
        let win = e.windows().get(w).expect("a live window");
        // The window's ranks are its communicator's (a map, not a search).
        let me = e.comms().rank_of(win.comm, e.current()).expect("a member");
        (me, win.members.len() as u32)
    })
}

/// Window `w`'s own communicator (its fences' and notifications').
fn comm_of_win(w: usize) -> usize {
    with(|e| e.windows().get(w).expect("a live window").comm)
}

/// The world rank of window rank `r` of `w`, or stops: a rank outside
/// the window.
fn world_of(routine: &str, w: usize, r: c_int) -> u32 {
    let (world, n) = with(|e| {
        let members = &e.windows().get(w).expect("a live window").members;
        let world = usize::try_from(r).ok().and_then(|i| members.get(i)).copied();
        (world, members.len())
    });
    world.unwrap_or_else(|| {
        fatal(
            routine,
            &format!("invalid target rank {r} (the window has {n} ranks)"),
        )
    })
}

/// Makes the running rank's next window of `kind` over `comm` (its
/// memory `region`, or what the window allocates for it: `owned`),
/// synchronizes the window's group, and writes its handle (and, for the
/// allocating kinds, its base into `baseptr`).
///
/// # Safety
/// `win` (and `baseptr`, if not null) are the application's out-pointers.
unsafe fn create(
    routine: &str,
    (kind, comm): (WinKind, ffi::MPI_Comm),
    (base, size, disp_unit): (*mut c_void, ffi::MPI_Aint, c_int),
    (baseptr, win): (*mut c_void, *mut ffi::MPI_Win),
) -> c_int {
    let parent = comm_of(routine, comm);
    if size < 0 {
        fatal(routine, &format!("invalid size {size}"));
    }
    if disp_unit <= 0 && kind != WinKind::Dynamic {
        fatal(routine, &format!("invalid displacement unit {disp_unit}"));
    }
    let (size, unit) = (size as usize, disp_unit.max(1) as usize);
    let owned = matches!(kind, WinKind::Allocate).then(|| allocate(size));
    let region = match kind {
        WinKind::Create => Some(Region {
            base: base as usize,
            size,
            disp_unit: unit,
        }),
        WinKind::Allocate => owned.as_ref().map(|o| Region {
            base: o.as_ptr() as usize,
            size,
            disp_unit: unit,
        }),
        // Placed once every member gave its size.
        WinKind::AllocateShared => Some(Region {
            base: 0,
            size,
            disp_unit: unit,
        }),
        WinKind::Dynamic => None,
    };
    let made = with(|e| {
        let spread = !e.comms().comms[parent].remote.is_empty();
        if spread && kind == WinKind::AllocateShared {
            return Err(());
        }
        let me = e.current();
        let rank = e.comms().rank_of(parent, me).unwrap_or(0);
        // Only the member that makes the window lists its group, and
        // counts its members here.
        let group = || {
            let members = e.members(parent);
            let blocks = e.comms().blocks;
            let here = members.iter().filter(|&&m| blocks.local(m)).count() as u32;
            (members, here)
        };
        let joined = e.windows().joins(parent, me).is_none().then(group);
        let joined = e.windows_mut().join(
            parent,
            joined.as_ref().map(|(m, here)| (&m[..], *here)),
            me,
            rank,
            (kind, region, owned),
        );
        if let Some(number) = joined.made {
            let members = e.windows().get(joined.win).expect("just made").members.clone();
            let gid = child_gid(e.comms().comms[parent].gid, 1 << 31 | number, 0);
            let own = e.comms_mut().add(members, gid).expect("the maker is a member");
            e.windows_mut().set_comm(joined.win, own, gid);
        }
        Ok(joined.win)
    });
    let Ok(w) = made else {
        fatal(
            routine,
            "a shared-memory window over ranks of several processes: the machine file puts ranks of one node into two processes' blocks of virtual ranks; choose a process count whose blocks hold whole nodes (see docs/vranks.md)",
        )
    };
    let h: ffi::MPI_Win = super::handle(Kind::Win, w);
    // SAFETY: the application's out-pointer.
    unsafe { *win = h };
    barrier_on(routine, comm_of_win(w), None);
    if !baseptr.is_null() {
        let (me, _) = me_in(w);
        let at = with(|e| e.windows().get(w).map_or(0, |w| w.regions[me as usize][0].base));
        // SAFETY: the application's `void *` out-pointer for the base.
        unsafe { *baseptr.cast::<*mut c_void>() = at as *mut c_void };
    }
    if trace::on() {
        let members = with(|e| e.windows().get(w).map(|w| w.members.clone()).unwrap_or_default());
        note(|rec| {
            rec.comm = Some(comm.bits());
            rec.bytes = Some(size as i64);
            rec.newwin = Some(NewWin {
                handle: h.bits(),
                kind,
                disp_unit: unit as i64,
                members: members.iter().map(|&m| i64::from(m)).collect(),
            });
        });
    }
    ok()
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_create(
    base: *mut c_void,
    size: ffi::MPI_Aint,
    disp_unit: c_int,
    _info: ffi::MPI_Info,
    comm: ffi::MPI_Comm,
    win: *mut ffi::MPI_Win,
) -> c_int {
    let _call = CallInProgress::enter("MPI_Win_create");
    // SAFETY: the application's arguments.
    unsafe {
        create(
            "MPI_Win_create",
            (WinKind::Create, comm),
            (base, size, disp_unit),
            (null_mut(), win),
        )
    }
}

/// Defines a window creation that allocates its memory
/// (`MPI_Win_allocate`, `_allocate_shared`).
macro_rules! allocating {
    ($name:ident, $kind:ident) => {
        /// # Safety
        /// MPI's contract for this routine.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            size: ffi::MPI_Aint,
            disp_unit: c_int,
            _info: ffi::MPI_Info,
            comm: ffi::MPI_Comm,
            baseptr: *mut c_void,
            win: *mut ffi::MPI_Win,
        ) -> c_int {
            let _call = CallInProgress::enter(stringify!($name));
            let memory = (null_mut(), size, disp_unit);
            // SAFETY: the application's arguments.
            unsafe {
                create(
                    stringify!($name),
                    (WinKind::$kind, comm),
                    memory,
                    (baseptr, win),
                )
            }
        }
    };
}

allocating!(MPI_Win_allocate, Allocate);
allocating!(MPI_Win_allocate_shared, AllocateShared);

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_create_dynamic(
    _info: ffi::MPI_Info,
    comm: ffi::MPI_Comm,
    win: *mut ffi::MPI_Win,
) -> c_int {
    let _call = CallInProgress::enter("MPI_Win_create_dynamic");
    // SAFETY: the application's arguments.
    unsafe {
        create(
            "MPI_Win_create_dynamic",
            (WinKind::Dynamic, comm),
            (null_mut(), 0, 1),
            (null_mut(), win),
        )
    }
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_attach(win: ffi::MPI_Win, base: *mut c_void, size: ffi::MPI_Aint) -> c_int {
    let w = win_of("MPI_Win_attach", win);
    let (me, _) = me_in(w);
    with(|e| {
        let win = e.windows_mut().get_mut(w).expect("a live window");
        win.regions[me as usize].push(Region {
            base: base as usize,
            size: size.max(0) as usize,
            disp_unit: 1,
        });
    });
    ok()
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_detach(win: ffi::MPI_Win, base: *const c_void) -> c_int {
    let w = win_of("MPI_Win_detach", win);
    let (me, _) = me_in(w);
    let found = with(|e| {
        let regions = &mut e.windows_mut().get_mut(w).expect("a live window").regions[me as usize];
        let i = regions.iter().position(|r| r.base == base as usize)?;
        Some(regions.remove(i))
    });
    if found.is_none() {
        fatal("MPI_Win_detach", "no memory attached at that address");
    }
    ok()
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_free(win: *mut ffi::MPI_Win) -> c_int {
    let _call = CallInProgress::enter("MPI_Win_free");
    // SAFETY: the application's handle.
    let h = unsafe { *win };
    let w = win_of("MPI_Win_free", h);
    let (me, _) = me_in(w);
    let comm = comm_of_win(w);
    note(|rec| rec.win = Some(h.bits()));
    settle(w, me, None);
    barrier_on("MPI_Win_free", comm, None);
    with(|e| {
        e.comms_mut().release(comm);
        e.windows_mut().free(w);
    });
    // SAFETY: the application's handle.
    unsafe { *win = c::WIN_NULL() };
    ok()
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_shared_query(
    win: ffi::MPI_Win,
    rank: c_int,
    size: *mut ffi::MPI_Aint,
    disp_unit: *mut c_int,
    baseptr: *mut c_void,
) -> c_int {
    let w = win_of("MPI_Win_shared_query", win);
    let (_, n) = me_in(w);
    let region = with(|e| {
        let win = e.windows().get(w).expect("a live window");
        let of = |r: usize| win.regions.get(r).and_then(|v| v.first().copied());
        if rank == c::PROC_NULL() {
            // The lowest rank's memory of nonzero size.
            (0..n as usize).filter_map(of).find(|r| r.size > 0)
        } else {
            usize::try_from(rank).ok().and_then(of)
        }
    });
    let r = region.unwrap_or_else(|| fatal("MPI_Win_shared_query", &format!("invalid rank {rank}")));
    // SAFETY: the application's out-pointers.
    unsafe {
        *size = r.size as ffi::MPI_Aint;
        *disp_unit = r.disp_unit as c_int;
        *baseptr.cast::<*mut c_void>() = r.base as *mut c_void;
    }
    ok()
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_get_group(win: ffi::MPI_Win, group: *mut ffi::MPI_Group) -> c_int {
    let w = win_of("MPI_Win_get_group", win);
    let members = with(|e| e.windows().get(w).map(|w| w.members.clone()).unwrap_or_default());
    let g = with(|e| e.comms_mut().groups.insert(members));
    // SAFETY: the application's out-pointer.
    unsafe { *group = super::handle(Kind::Group, g) };
    ok()
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_get_attr(
    win: ffi::MPI_Win,
    key: c_int,
    value: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    let w = win_of("MPI_Win_get_attr", win);
    let (me, _) = me_in(w);
    let keys = c::win_keys();
    let Some(k) = keys.iter().position(|&x| x == key) else {
        // SAFETY: the application's out-pointer.
        unsafe { *flag = 0 };
        return ok();
    };
    let at = with(|e| {
        let win = e.windows_mut().get_mut(w).expect("a live window");
        let region = win.regions[me as usize].first().copied().unwrap_or_default();
        let kind = win.kind as usize;
        let a = win.attrs[me as usize].get_or_insert_with(|| {
            Box::new(Attributes {
                base: region.base as *mut c_void,
                size: region.size as ffi::MPI_Aint,
                disp_unit: region.disp_unit as c_int,
                flavor: c::win_flavors()[kind],
                model: c::WIN_UNIFIED(),
            })
        });
        match k {
            0 => a.base,
            1 => (&raw mut a.size).cast(),
            2 => (&raw mut a.disp_unit).cast(),
            3 => (&raw mut a.flavor).cast(),
            _ => (&raw mut a.model).cast(),
        }
    });
    // SAFETY: the application's out-pointers; MPI hands out the base
    // itself, and a pointer to the value for the others.
    unsafe {
        *value.cast::<*mut c_void>() = at;
        *flag = 1;
    }
    ok()
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_set_errhandler(win: ffi::MPI_Win, _h: ffi::MPI_Errhandler) -> c_int {
    win_of("MPI_Win_set_errhandler", win);
    ok()
}

/// What a data operation reads at the origin and where its result goes.
struct Origin {
    /// The origin data, packed (none for a get).
    data: Vec<u8>,
    /// For a compare-and-swap, the compare value, packed.
    compare: Vec<u8>,
    /// Where fetched data goes: a get's origin buffer, or the result
    /// buffer of the fetching operations.
    result: Option<(*mut c_void, c_int, Dt)>,
}

/// A data operation of the running rank on window `win`: `op` of the
/// origin's `o` to window rank `target` at displacement `disp`, `count`
/// elements of `dt` there; the request forms give `req`. A target of
/// this process is operated on at once; one of another process is sent
/// the operation, and what a fetching one fetches comes back before the
/// epoch's closing call (or the request) completes.
///
/// # Safety
/// The buffers in `o` are the application's, valid for their types.
#[allow(clippy::too_many_arguments)]
unsafe fn operate(
    routine: &str,
    op: DataOp,
    o: Origin,
    (bytes, rbytes): (i64, i64),
    target: c_int,
    disp: ffi::MPI_Aint,
    (count, dt): (c_int, Dt),
    acc: Option<ffi::MPI_Op>,
    win: ffi::MPI_Win,
    req: Option<*mut ffi::MPI_Request>,
) -> c_int {
    let w = win_of(routine, win);
    note(|rec| {
        rec.peer = Some(i64::from(target));
        rec.bytes = Some(bytes);
        rec.rbytes = matches!(
            op,
            DataOp::GetAccumulate | DataOp::FetchAndOp | DataOp::CompareAndSwap
        )
        .then_some(rbytes);
        rec.win = Some(win.bits());
        rec.op = acc.map(op_code);
    });
    if target == c::PROC_NULL() {
        if let Some(r) = req {
            let id = with(|e| e.request(Work::Send, true));
            let h = super::handle(Kind::Request, id);
            // SAFETY: the application's request handle.
            unsafe { *r = h };
            trace::request(h);
        }
        return ok();
    }
    let world = world_of(routine, w, target);
    let reduction = acc.map(|a| {
        reduction_code(a)
            .unwrap_or_else(|| fatal(routine, "a one-sided accumulate takes a predefined operation"))
    });
    let combining = matches!(
        op,
        DataOp::Accumulate | DataOp::GetAccumulate | DataOp::FetchAndOp
    );
    let shape = Shape::of(count, dt, combining).unwrap_or_else(|what| fatal(routine, &what));
    let sent = Sent {
        data: o.data,
        compare: o.compare,
    };
    let (me, _) = me_in(w);
    let sizes = (bytes.max(0) as u64, rbytes.max(0) as u64);
    // The model sees the operations in virtual-time order.
    engine::catch_up();
    let here = with(|e| e.comms().blocks.local(world));
    let request = if here {
        let span = shape.span().unwrap_or_else(|what| fatal(routine, &what));
        let at = with(|e| {
            e.windows()
                .get(w)
                .expect("a live window")
                .address(target as u32, aint(disp), span)
        });
        let at = at.unwrap_or_else(|what| fatal(routine, &what));
        let fetched = with(|e| {
            // SAFETY: the runs lie inside the target's window memory
            // (checked above), in the target's own globals.
            e.in_memory_of(world, (at, at + span), || unsafe {
                one_sided::apply(op, reduction, &sent, at as *mut u8, &shape)
            })
        });
        if let Some((buf, n, rdt)) = o.result {
            // SAFETY: the application's result buffer, of `n` elements of `rdt`.
            if unsafe { unpack(&fetched, buf, n, rdt) }.is_err() {
                fatal(routine, "the result buffer is smaller than the data fetched");
            }
        }
        let issued = with(|e| e.rma_issue((w, me, world), op, sizes, req.is_some()));
        req.map(|_| {
            with(|e| match issued {
                Rma::Known(issued) => e.request_done_at(issued.local),
                Rma::Moving { local } => local.expect("asked for"),
            })
        })
    } else {
        let issued = match with(|e| e.rma_issue((w, me, world), op, sizes, req.is_some())) {
            Rma::Known(issued) => issued,
            // Shared links put every rank in one process.
            Rma::Moving { .. } => unreachable!("flows over shared links within one process"),
        };
        send_away(
            w,
            (me, world, target as u32),
            (op, reduction, shape, sent),
            (aint(disp), o.result),
            (issued, req.is_some()),
        )
    };
    if let (Some(r), Some(id)) = (req, request) {
        let h = super::handle(Kind::Request, id);
        // SAFETY: the application's request handle.
        unsafe { *r = h };
        trace::request(h);
    }
    ok()
}

/// Sends an operation of the running rank (window rank `me` of `w`) to
/// window rank `target` (world rank `world`) of another process; a
/// fetching one's data is awaited by the epoch's closing call, and by a
/// request form's request (returned): both complete when it comes back,
/// at the times the kernel gave (`issued`).
fn send_away(
    w: usize,
    (me, world, target): (u32, u32, u32),
    (op, acc, shape, sent): (DataOp, Option<u8>, Shape, Sent),
    (disp, result): (i64, Option<(*mut c_void, c_int, Dt)>),
    (issued, with_request): (Issued, bool),
) -> Option<usize> {
    with(|e| {
        let origin = e.current();
        let (token, request) = match result {
            Some((buf, count, dt)) => {
                let done = e.request(Work::Send, false);
                let local = with_request.then(|| e.request(Work::Send, false));
                let win = e.windows_mut().get_mut(w).expect("a live window");
                win.epochs[me as usize].flowing.push((world, done));
                let token = e.windows_mut().fetching(Fetch {
                    rank: origin,
                    buf: buf as usize,
                    count,
                    dt,
                    done: (done, issued.done),
                    local: local.map(|q| (q, issued.local)),
                });
                (Some(token), local)
            }
            None => (None, with_request.then(|| e.request_done_at(issued.local))),
        };
        let gid = e.comms().comms[e.windows().get(w).expect("a live window").comm].gid;
        let record = one_sided::Record::Op(one_sided::Op {
            win: gid,
            origin,
            target,
            disp,
            op: one_sided::op_code(op),
            acc,
            shape,
            sent,
            token,
        });
        let stamp = e.p2p_mut().stamp();
        let to = e.comms().blocks.owner(world);
        e.windows_mut().owe(stamp, to, record);
        request
    })
}

/// The packed origin data of a fetching operation, none for a null
/// buffer (MPI lets `MPI_NO_OP` pass one).
///
/// # Safety
/// `buf` is null or holds `count` elements of `dt`.
unsafe fn packed_or_none(buf: *const c_void, count: c_int, dt: Dt) -> Vec<u8> {
    if buf.is_null() {
        return Vec::new();
    }
    // SAFETY: the caller's buffer.
    unsafe { pack(buf, count, dt) }
}

/// An `MPI_Aint` as an `i64` (it is `isize` under Open MPI, `i64` under
/// MPICH).
#[allow(clippy::unnecessary_cast)]
fn aint(a: ffi::MPI_Aint) -> i64 {
    a as i64
}

/// Bytes of `count` elements of `dt`, as the trace counts them.
fn bytes(count: c_int, dt: Dt) -> i64 {
    trace::bytes(count, dt)
}

/// Defines a put or get and its request form.
macro_rules! put_get {
    ($name:ident, $rname:ident, $op:ident, $buf:ty) => {
        put_get!(@one $name, $op, $buf, None, ());
        put_get!(@one $rname, $op, $buf, Some(req), (req: *mut ffi::MPI_Request));
    };
    (@one $name:ident, $op:ident, $buf:ty, $req:expr, ($($r:ident: $rt:ty)?)) => {
        /// # Safety
        /// MPI's contract for this routine.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            buf: $buf,
            count: c_int,
            dt: Dt,
            target: c_int,
            disp: ffi::MPI_Aint,
            tcount: c_int,
            tdt: Dt,
            win: ffi::MPI_Win,
            $($r: $rt)?
        ) -> c_int {
            let _call = CallInProgress::enter(stringify!($name));
            let o = if DataOp::$op == DataOp::Get {
                Origin { data: Vec::new(), compare: Vec::new(), result: Some((buf as *mut c_void, count, dt)) }
            } else {
                // SAFETY: the application's origin buffer.
                Origin { data: unsafe { pack(buf as *const c_void, count, dt) }, compare: Vec::new(), result: None }
            };
            // SAFETY: the application's arguments.
            unsafe {
                operate(stringify!($name), DataOp::$op, o, (bytes(count, dt), 0), target, disp, (tcount, tdt),
                    None, win, $req)
            }
        }
    };
}

put_get!(MPI_Put, MPI_Rput, Put, *const c_void);
put_get!(MPI_Get, MPI_Rget, Get, *mut c_void);

/// Defines an accumulate and its request form.
macro_rules! accumulate {
    ($name:ident, $($req:ident)?) => {
        /// # Safety
        /// MPI's contract for this routine.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            buf: *const c_void,
            count: c_int,
            dt: Dt,
            target: c_int,
            disp: ffi::MPI_Aint,
            tcount: c_int,
            tdt: Dt,
            op: ffi::MPI_Op,
            win: ffi::MPI_Win,
            $($req: *mut ffi::MPI_Request)?
        ) -> c_int {
            let _call = CallInProgress::enter(stringify!($name));
            // SAFETY: the application's origin buffer.
            let o = Origin { data: unsafe { pack(buf, count, dt) }, compare: Vec::new(), result: None };
            // SAFETY: the application's arguments.
            unsafe {
                operate(stringify!($name), DataOp::Accumulate, o, (bytes(count, dt), 0), target, disp,
                    (tcount, tdt), Some(op), win, None$(.or(Some($req)))?)
            }
        }
    };
}

accumulate!(MPI_Accumulate,);
accumulate!(MPI_Raccumulate, req);

/// Defines a get-accumulate and its request form.
macro_rules! get_accumulate {
    ($name:ident, $($req:ident)?) => {
        /// # Safety
        /// MPI's contract for this routine.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            buf: *const c_void,
            count: c_int,
            dt: Dt,
            res: *mut c_void,
            rcount: c_int,
            rdt: Dt,
            target: c_int,
            disp: ffi::MPI_Aint,
            tcount: c_int,
            tdt: Dt,
            op: ffi::MPI_Op,
            win: ffi::MPI_Win,
            $($req: *mut ffi::MPI_Request)?
        ) -> c_int {
            let _call = CallInProgress::enter(stringify!($name));
            // SAFETY: the application's origin buffer.
            let data = unsafe { packed_or_none(buf, count, dt) };
            let o = Origin { data, compare: Vec::new(), result: Some((res, rcount, rdt)) };
            // SAFETY: the application's arguments.
            unsafe {
                operate(stringify!($name), DataOp::GetAccumulate, o, (bytes(count, dt), bytes(rcount, rdt)), target,
                    disp, (tcount, tdt), Some(op), win, None$(.or(Some($req)))?)
            }
        }
    };
}

get_accumulate!(MPI_Get_accumulate,);
get_accumulate!(MPI_Rget_accumulate, req);

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Fetch_and_op(
    buf: *const c_void,
    res: *mut c_void,
    dt: Dt,
    target: c_int,
    disp: ffi::MPI_Aint,
    op: ffi::MPI_Op,
    win: ffi::MPI_Win,
) -> c_int {
    let _call = CallInProgress::enter("MPI_Fetch_and_op");
    let o = Origin {
        // SAFETY: the application's origin buffer.
        data: unsafe { packed_or_none(buf, 1, dt) },
        compare: Vec::new(),
        result: Some((res, 1, dt)),
    };
    // SAFETY: the application's arguments.
    unsafe {
        operate(
            "MPI_Fetch_and_op",
            DataOp::FetchAndOp,
            o,
            (bytes(1, dt), bytes(1, dt)),
            target,
            disp,
            (1, dt),
            Some(op),
            win,
            None,
        )
    }
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Compare_and_swap(
    buf: *const c_void,
    compare: *const c_void,
    res: *mut c_void,
    dt: Dt,
    target: c_int,
    disp: ffi::MPI_Aint,
    win: ffi::MPI_Win,
) -> c_int {
    let _call = CallInProgress::enter("MPI_Compare_and_swap");
    // SAFETY: the application's origin and compare values.
    let o = unsafe {
        Origin {
            data: pack(buf, 1, dt),
            compare: pack(compare, 1, dt),
            result: Some((res, 1, dt)),
        }
    };
    // SAFETY: the application's arguments.
    unsafe {
        operate(
            "MPI_Compare_and_swap",
            DataOp::CompareAndSwap,
            o,
            (bytes(2, dt), bytes(1, dt)),
            target,
            disp,
            (1, dt),
            None,
            win,
            None,
        )
    }
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_fence(assert: c_int, win: ffi::MPI_Win) -> c_int {
    let _call = CallInProgress::enter("MPI_Win_fence");
    let w = win_of("MPI_Win_fence", win);
    note(|rec| {
        rec.win = Some(win.bits());
        rec.assert = Some(assert_bits(assert));
    });
    let (me, _) = me_in(w);
    settle(w, me, None);
    barrier_on("MPI_Win_fence", comm_of_win(w), None);
    ok()
}

/// The window ranks of `group`'s members (world ranks) in window `w`.
fn window_ranks(routine: &str, w: usize, group: ffi::MPI_Group) -> (Vec<u32>, Vec<u32>) {
    let list =
        match handles::index(Kind::Group, group).and_then(|i| with(|e| e.comms().groups.get(i).cloned())) {
            Some(l) => l,
            None if group.bits() == c::GROUP_EMPTY().bits() => Vec::new(),
            None => fatal(routine, "invalid group (not one of this run's, or freed)"),
        };
    let ranks = with(|e| {
        let comm = e.windows().get(w).expect("a live window").comm;
        list.iter()
            .map(|&m| e.comms().rank_of(comm, m))
            .collect::<Option<Vec<u32>>>()
    });
    match ranks {
        Some(r) => (r, list),
        None => fatal(routine, "the group has a rank outside the window"),
    }
}

/// Sends the empty notification `tag` to each window rank of `to`, one
/// after another, each waited for, on window `w`'s communicator.
fn notify(w: usize, to: &[u32], tag: c_int) {
    let (me, _) = me_in(w);
    let comm = comm_of_win(w);
    for &t in to {
        engine::catch_up();
        let id = with(|e| {
            let dst = e.windows().get(w).expect("a live window").members[t as usize];
            e.send(Vec::new(), dst, comm as u32, me as c_int, tag, Mode::Standard)
        });
        wait_unseen(&[id]);
    }
}

/// Receives the empty notification `tag` from each window rank of
/// `from`: every receive posted at the call's start, then all waited
/// for.
fn notified(w: usize, from: &[u32], tag: c_int) {
    let comm = comm_of_win(w);
    engine::catch_up();
    let ids: Vec<usize> = from
        .iter()
        .map(|&f| with(|e| e.recv(RecvSpec::empty(comm as u32, f as c_int, tag))))
        .collect();
    wait_unseen(&ids);
}

/// Records a post's or start's window, assertion and group.
fn note_group(win: ffi::MPI_Win, assert: c_int, members: &[u32]) {
    note(|rec| {
        rec.win = Some(win.bits());
        rec.assert = Some(assert_bits(assert));
        rec.group = Some(members.iter().map(|&m| i64::from(m)).collect());
    });
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_post(group: ffi::MPI_Group, assert: c_int, win: ffi::MPI_Win) -> c_int {
    let _call = CallInProgress::enter("MPI_Win_post");
    let w = win_of("MPI_Win_post", win);
    let (origins, members) = window_ranks("MPI_Win_post", w, group);
    note_group(win, assert, &members);
    let (me, _) = me_in(w);
    with(|e| e.windows_mut().get_mut(w).expect("a live window").epochs[me as usize].posted = origins.clone());
    notify(w, &origins, POST_TAG);
    ok()
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_start(group: ffi::MPI_Group, assert: c_int, win: ffi::MPI_Win) -> c_int {
    let _call = CallInProgress::enter("MPI_Win_start");
    let w = win_of("MPI_Win_start", win);
    let (targets, members) = window_ranks("MPI_Win_start", w, group);
    note_group(win, assert, &members);
    let (me, _) = me_in(w);
    with(|e| {
        e.windows_mut().get_mut(w).expect("a live window").epochs[me as usize].started = targets.clone()
    });
    notified(w, &targets, POST_TAG);
    ok()
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_complete(win: ffi::MPI_Win) -> c_int {
    let _call = CallInProgress::enter("MPI_Win_complete");
    let w = win_of("MPI_Win_complete", win);
    note(|rec| rec.win = Some(win.bits()));
    let (me, _) = me_in(w);
    wait_flowing(w, me, None);
    let targets = with(|e| {
        let win = e.windows_mut().get_mut(w).expect("a live window");
        let targets = std::mem::take(&mut win.epochs[me as usize].started);
        let worlds: Vec<u32> = targets.iter().map(|&t| win.members[t as usize]).collect();
        for t in worlds {
            e.rma_settle(w, me, Some(t));
        }
        targets
    });
    notify(w, &targets, DONE_TAG);
    ok()
}

/// Ends the running rank's exposure epoch on `w`: each origin's
/// notification received.
fn end_exposure(w: usize) {
    let (me, _) = me_in(w);
    let origins = with(|e| {
        std::mem::take(&mut e.windows_mut().get_mut(w).expect("a live window").epochs[me as usize].posted)
    });
    notified(w, &origins, DONE_TAG);
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_wait(win: ffi::MPI_Win) -> c_int {
    let _call = CallInProgress::enter("MPI_Win_wait");
    let w = win_of("MPI_Win_wait", win);
    note(|rec| rec.win = Some(win.bits()));
    end_exposure(w);
    ok()
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_test(win: ffi::MPI_Win, flag: *mut c_int) -> c_int {
    let call = CallInProgress::enter("MPI_Win_test");
    let w = win_of("MPI_Win_test", win);
    note(|rec| rec.win = Some(win.bits()));
    engine::catch_up();
    let (me, _) = me_in(w);
    let comm = comm_of_win(w);
    let all = with(|e| {
        let origins = &e.windows().get(w).expect("a live window").epochs[me as usize].posted;
        origins.iter().all(|&o| {
            e.probe(&RecvSpec::empty(comm as u32, o as c_int, DONE_TAG))
                .is_some()
        })
    });
    if all {
        end_exposure(w);
    } else if call.polling() {
        engine::idle(std::iter::empty());
    }
    // SAFETY: the application's out-pointer.
    unsafe { *flag = c_int::from(all) };
    ok()
}

/// The running rank's lock event on window `w`, at its clock: kept here
/// and, when the window's ranks run in several processes, sent to the
/// window's other processes.
fn lock_event(w: usize, target: u32, ask: Option<bool>) {
    with(|e| {
        let origin = e.current();
        let at = e.sched().rank(origin).clock;
        let comm = &e.comms().comms[e.windows().get(w).expect("a live window").comm];
        let (gid, remote) = (comm.gid, comm.remote.clone());
        let event = e.windows_mut().lock_event(gid, at, (origin, target), ask);
        for p in remote {
            let stamp = e.p2p_mut().stamp();
            e.windows_mut().owe(stamp, p, one_sided::Record::Lock(event));
        }
    });
}

/// The running rank takes the locks of window rank `targets` of `w`
/// (`exclusive` or shared), asked for at once: each granted in turn (in
/// the order of virtual time, ties in rank order: once virtual time has
/// passed the request, or on a window across processes between time
/// windows, from every process's requests and releases), then the
/// target's grant received, one after another, if a holder before it
/// released it.
fn take_locks(w: usize, targets: &[u32], exclusive: bool) {
    let (me, _) = me_in(w);
    with(|e| {
        let win = e.windows_mut().get_mut(w).expect("a live window");
        for &t in targets {
            win.epochs[me as usize].held.insert(t, exclusive);
        }
    });
    for &t in targets {
        lock_event(w, t, Some(exclusive));
    }
    let origin = engine::me();
    for &t in targets {
        let grant = loop {
            if let Some(g) = with(|e| e.windows_mut().take_grant(w, origin, t)) {
                break g;
            }
            engine::suspend_until_woken();
        };
        with(|e| {
            let posted = e.sched().rank(origin).clock;
            e.sched_mut().woken_at(grant.at);
            let world = e.windows().get(w).expect("a live window").members[t as usize];
            e.rma_granted(world, grant.released, posted);
        });
    }
}

/// The running rank releases its lock of window rank `target` of `w`,
/// once its operations there are done: those in line are granted it when
/// the release is applied ([`take_locks`]).
fn release_lock(routine: &str, w: usize, target: u32) {
    let (me, _) = me_in(w);
    let world = with(|e| e.windows().get(w).map(|win| win.members[target as usize]));
    wait_flowing(w, me, world);
    let released = with(|e| {
        let win = e.windows_mut().get_mut(w).expect("a live window");
        win.epochs[me as usize].held.remove(&target)?;
        let world = win.members[target as usize];
        e.rma_settle(w, me, Some(world));
        Some(())
    });
    if released.is_none() {
        fatal(
            routine,
            &format!("window rank {target} is not locked by this rank"),
        );
    }
    lock_event(w, target, None);
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_lock(kind: c_int, target: c_int, assert: c_int, win: ffi::MPI_Win) -> c_int {
    let _call = CallInProgress::enter("MPI_Win_lock");
    let w = win_of("MPI_Win_lock", win);
    note(|rec| {
        rec.peer = Some(i64::from(target));
        rec.lock = Some(lock_code(kind));
        rec.assert = Some(assert_bits(assert));
        rec.win = Some(win.bits());
    });
    if target == c::PROC_NULL() {
        return ok();
    }
    world_of("MPI_Win_lock", w, target);
    let exclusive = kind == c::LOCK_EXCLUSIVE();
    if !exclusive && kind != c::LOCK_SHARED() {
        fatal("MPI_Win_lock", &format!("invalid lock type {kind}"));
    }
    engine::catch_up();
    take_locks(w, &[target as u32], exclusive);
    ok()
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_unlock(target: c_int, win: ffi::MPI_Win) -> c_int {
    let _call = CallInProgress::enter("MPI_Win_unlock");
    let w = win_of("MPI_Win_unlock", win);
    note(|rec| {
        rec.peer = Some(i64::from(target));
        rec.win = Some(win.bits());
    });
    if target == c::PROC_NULL() {
        return ok();
    }
    world_of("MPI_Win_unlock", w, target);
    engine::catch_up();
    release_lock("MPI_Win_unlock", w, target as u32);
    ok()
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_lock_all(assert: c_int, win: ffi::MPI_Win) -> c_int {
    let _call = CallInProgress::enter("MPI_Win_lock_all");
    let w = win_of("MPI_Win_lock_all", win);
    note(|rec| {
        rec.assert = Some(assert_bits(assert));
        rec.win = Some(win.bits());
    });
    engine::catch_up();
    let (_, n) = me_in(w);
    take_locks(w, &(0..n).collect::<Vec<u32>>(), false);
    ok()
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_unlock_all(win: ffi::MPI_Win) -> c_int {
    let _call = CallInProgress::enter("MPI_Win_unlock_all");
    let w = win_of("MPI_Win_unlock_all", win);
    note(|rec| rec.win = Some(win.bits()));
    engine::catch_up();
    let (me, n) = me_in(w);
    settle(w, me, None);
    for t in 0..n {
        release_lock("MPI_Win_unlock_all", w, t);
    }
    ok()
}

/// A flush of window `win` to `target` (`None`: every target).
fn flush(routine: &'static str, win: ffi::MPI_Win, target: Option<c_int>) -> c_int {
    let _call = CallInProgress::enter(routine);
    let w = win_of(routine, win);
    note(|rec| {
        rec.peer = target.map(i64::from);
        rec.win = Some(win.bits());
    });
    if target == Some(c::PROC_NULL()) {
        return ok();
    }
    let world = target.map(|t| world_of(routine, w, t));
    let (me, _) = me_in(w);
    settle(w, me, world);
    ok()
}

/// The running rank, window rank `me` of `w`, waits for its operations
/// to world rank `target` (`None`: every target) to be done.
fn settle(w: usize, me: u32, target: Option<u32>) {
    wait_flowing(w, me, target);
    with(|e| e.rma_settle(w, me, target));
}

/// Waits for the operations of [`settle`] that move as flows over shared
/// links: their requests complete when their last flow ends.
fn wait_flowing(w: usize, me: u32, target: Option<u32>) {
    let ids = with(|e| e.rma_flowing(w, me, target));
    if !ids.is_empty() {
        wait_unseen(&ids);
    }
}

/// Defines the flushes of one target (`(target, win)`) and of all
/// (`(win)`).
macro_rules! flushes {
    ($($name:ident ($($t:ident)?);)*) => {$(
        /// # Safety
        /// MPI's contract for this routine.
        #[no_mangle]
        pub unsafe extern "C" fn $name($($t: c_int,)? win: ffi::MPI_Win) -> c_int {
            flush(stringify!($name), win, None$(.or(Some($t)))?)
        }
    )*};
}

flushes! {
    MPI_Win_flush(target);
    MPI_Win_flush_local(target);
    MPI_Win_flush_all();
    MPI_Win_flush_local_all();
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_sync(win: ffi::MPI_Win) -> c_int {
    let _call = CallInProgress::enter("MPI_Win_sync");
    win_of("MPI_Win_sync", win);
    note(|rec| rec.win = Some(win.bits()));
    ok()
}
