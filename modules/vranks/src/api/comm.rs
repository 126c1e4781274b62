//! Start and end of a rank, its clock, and communicators, groups and
//! Cartesian topologies over virtual ranks.

#![allow(non_snake_case)]

use super::coll::go;
use super::{comm_of, fatal, ok, rank_size, CallInProgress};
use crate::cart::{coords_of, rank_at};
use crate::coll::{Gift, Op};
use crate::engine::{self, with};
use crate::handles::{self, Kind};
use crate::p2p::Out;
use crate::sched::Rank;
use pnmpi_mpi_sys::{constants as c, ffi};
use std::ffi::{c_char, c_int, c_void};

/// `MPI_THREAD_SINGLE` and `MPI_THREAD_FUNNELED` (the same numbers in
/// Open MPI and MPICH).
const THREAD_SINGLE: c_int = 0;
const THREAD_FUNNELED: c_int = 1;

/// Starts the rank's clock (its virtual time is 0 at the end of
/// `MPI_Init`, as under vtime), with thread level `level`.
fn init(routine: &'static str, level: c_int) -> c_int {
    let first = with(|e| {
        let rank = e.sched_mut().me();
        if rank.initialized {
            return false;
        }
        rank.initialized = true;
        rank.thread_level = level;
        rank.clock = rank.clock.max(0.0);
        rank.cpu_mark = pnmpi_sdk::clock::thread_cpu_ns();
        true
    });
    if first {
        super::traced::init(routine);
    }
    ok()
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Init(_argc: *mut c_int, _argv: *mut *mut *mut c_char) -> c_int {
    init("MPI_Init", THREAD_SINGLE)
}

/// Provides at most `MPI_THREAD_FUNNELED`: a virtual rank is a context
/// of the process's main thread, and the scheduler switches contexts
/// without locks, so only that thread may call MPI (`SERIALIZED` would
/// let a rank's other threads call it, behind the scheduler's back).
/// Asking for more is legal and gets `FUNNELED`.
///
/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Init_thread(
    _argc: *mut c_int,
    _argv: *mut *mut *mut c_char,
    required: c_int,
    provided: *mut c_int,
) -> c_int {
    let level = required.clamp(THREAD_SINGLE, THREAD_FUNNELED);
    // SAFETY: the application's out-pointer.
    unsafe { *provided = level };
    init("MPI_Init_thread", level)
}

/// The level the rank's `MPI_Init_thread` provided (the native MPI's
/// would be the process's).
///
/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Query_thread(provided: *mut c_int) -> c_int {
    let level = with(|e| e.sched_mut().me().thread_level);
    // SAFETY: the application's out-pointer.
    unsafe { *provided = level };
    ok()
}

/// The running rank's state; outside the ranks (a constructor before
/// they start, an `atexit` handler after they end), the process's; in
/// a thread a rank started (these two queries are legal in any thread),
/// `threaded`, what the process's is while the ranks run.
fn rank_state(get: impl FnOnce(&Rank) -> bool, threaded: bool) -> bool {
    if !engine::running() {
        engine::finished()
    } else if !engine::on_engine_thread() {
        threaded
    } else {
        with(|e| get(e.sched_mut().me()))
    }
}

/// Legal at any time, also after `MPI_Finalize`.
///
/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Initialized(flag: *mut c_int) -> c_int {
    let v = rank_state(|r| r.initialized, true);
    // SAFETY: the application's out-pointer.
    unsafe { *flag = c_int::from(v) };
    ok()
}

/// Legal at any time, also after `MPI_Finalize`.
///
/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Finalized(flag: *mut c_int) -> c_int {
    let v = rank_state(|r| r.finalized, false);
    // SAFETY: the application's out-pointer.
    unsafe { *flag = c_int::from(v) };
    ok()
}

/// Records the rank's run time (its clock at `MPI_Finalize`).
///
/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Finalize() -> c_int {
    {
        let _call = CallInProgress::enter("MPI_Finalize");
        with(|e| {
            let rank = &mut e.sched_mut().me();
            rank.end = Some(rank.clock);
            rank.finalized = true;
        });
    }
    super::traced::finalize();
    ok()
}

/// Stops the whole run, as `MPI_Abort` stops a job.
///
/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Abort(_comm: ffi::MPI_Comm, code: c_int) -> c_int {
    with(|e| {
        pnmpi_sdk::say::unranked(
            "vranks",
            pnmpi_sdk::say::Level::Note,
            format_args!("virtual rank {} called MPI_Abort with code {code}", e.current()),
        );
        if let Some(t) = e.trace_mut() {
            t.abandon();
        }
    });
    // The ranks run, so the native MPI does: the job ends with the code.
    pnmpi_sdk::say::stop_with(code)
}

/// The virtual clock, in seconds since the end of `MPI_Init`.
///
/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Wtime() -> f64 {
    let _call = CallInProgress::enter("MPI_Wtime");
    with(|e| e.sched_mut().me().clock * 1e-9)
}

/// The virtual clock's resolution: 1 ns.
///
/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Wtick() -> f64 {
    1e-9
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_rank(comm: ffi::MPI_Comm, rank: *mut c_int) -> c_int {
    let comm = comm_of("MPI_Comm_rank", comm);
    let r = with(|e| e.comms().rank_of(comm, e.current()));
    // SAFETY: the application's out-pointer.
    unsafe { *rank = r.map_or(c::UNDEFINED(), |r| r as c_int) };
    ok()
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_size(comm: ffi::MPI_Comm, size: *mut c_int) -> c_int {
    let comm = comm_of("MPI_Comm_size", comm);
    // SAFETY: the application's out-pointer.
    unsafe { *size = with(|e| e.comms().size(comm)) as c_int };
    ok()
}

/// A constructor: the rendezvous that makes the new communicators.
fn construct(routine: &str, comm: ffi::MPI_Comm, gift: Gift, out: *mut ffi::MPI_Comm) -> c_int {
    let parent = comm_of(routine, comm);
    let rc = go(
        routine,
        parent,
        Op::Constructor,
        0,
        gift,
        Default::default(),
        Out::Comm(out),
        None,
    );
    // SAFETY: the application's out-pointer, which the constructor wrote.
    super::traced::new_comm(comm, unsafe { *out });
    rc
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_dup(comm: ffi::MPI_Comm, out: *mut ffi::MPI_Comm) -> c_int {
    let _call = CallInProgress::enter("MPI_Comm_dup");
    construct("MPI_Comm_dup", comm, Gift::Nothing, out)
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_split(
    comm: ffi::MPI_Comm,
    color: c_int,
    key: c_int,
    out: *mut ffi::MPI_Comm,
) -> c_int {
    let _call = CallInProgress::enter("MPI_Comm_split");
    construct("MPI_Comm_split", comm, Gift::Split(color, key), out)
}

/// Splits `comm` by node, as a shared-memory split does (every split
/// type but `MPI_UNDEFINED`): the ranks of one node of the target
/// machine share one new communicator, ordered by `key`.
///
/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_split_type(
    comm: ffi::MPI_Comm,
    split_type: c_int,
    key: c_int,
    _info: ffi::MPI_Info,
    out: *mut ffi::MPI_Comm,
) -> c_int {
    let _call = CallInProgress::enter("MPI_Comm_split_type");
    let color = if split_type == c::UNDEFINED() {
        c::UNDEFINED()
    } else {
        with(|e| e.timing().node(e.current())) as c_int
    };
    construct("MPI_Comm_split_type", comm, Gift::Split(color, key), out)
}

/// The world ranks of group handle `g`.
fn group_of(routine: &str, g: ffi::MPI_Group) -> Vec<u32> {
    match handles::index(Kind::Group, g).and_then(|i| with(|e| e.comms().groups.get(i).cloned())) {
        Some(list) => list,
        None => fatal(routine, "invalid group (not one of this run's, or freed)"),
    }
}

/// A handle for a new group.
fn new_group(list: Vec<u32>) -> ffi::MPI_Group {
    super::handle(Kind::Group, with(|e| e.comms_mut().groups.insert(list)))
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_create(
    comm: ffi::MPI_Comm,
    group: ffi::MPI_Group,
    out: *mut ffi::MPI_Comm,
) -> c_int {
    let _call = CallInProgress::enter("MPI_Comm_create");
    let list = group_of("MPI_Comm_create", group);
    construct("MPI_Comm_create", comm, Gift::Group(Some(list)), out)
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_free(comm: *mut ffi::MPI_Comm) -> c_int {
    // SAFETY: the application's handle.
    let i = comm_of("MPI_Comm_free", unsafe { *comm });
    if i <= 1 {
        fatal("MPI_Comm_free", "cannot free MPI_COMM_WORLD or MPI_COMM_SELF");
    }
    with(|e| e.comms_mut().release(i));
    // SAFETY: the application's handle.
    unsafe { *comm = c::COMM_NULL() };
    ok()
}

/// `MPI_IDENT`, `MPI_CONGRUENT`, `MPI_SIMILAR`, `MPI_UNEQUAL` (the same
/// numbers in Open MPI and MPICH).
const IDENT: c_int = 0;
const CONGRUENT: c_int = 1;
const SIMILAR: c_int = 2;
const UNEQUAL: c_int = 3;

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_compare(a: ffi::MPI_Comm, b: ffi::MPI_Comm, result: *mut c_int) -> c_int {
    let (a, b) = (comm_of("MPI_Comm_compare", a), comm_of("MPI_Comm_compare", b));
    let r = if a == b {
        IDENT
    } else {
        let (la, lb) = with(|e| (e.members(a), e.members(b)));
        compare(&la, &lb, CONGRUENT)
    };
    // SAFETY: the application's out-pointer.
    unsafe { *result = r };
    ok()
}

/// Same members in the same order (`same`), in another order
/// (`SIMILAR`), or not (`UNEQUAL`).
fn compare(a: &[u32], b: &[u32], same: c_int) -> c_int {
    if a == b {
        return same;
    }
    let (mut x, mut y) = (a.to_vec(), b.to_vec());
    x.sort_unstable();
    y.sort_unstable();
    if x == y {
        SIMILAR
    } else {
        UNEQUAL
    }
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_group(comm: ffi::MPI_Comm, group: *mut ffi::MPI_Group) -> c_int {
    let comm = comm_of("MPI_Comm_group", comm);
    let list = with(|e| e.members(comm));
    // SAFETY: the application's out-pointer.
    unsafe { *group = new_group(list) };
    ok()
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Group_size(group: ffi::MPI_Group, size: *mut c_int) -> c_int {
    // SAFETY: the application's out-pointer.
    unsafe { *size = group_of("MPI_Group_size", group).len() as c_int };
    ok()
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Group_rank(group: ffi::MPI_Group, rank: *mut c_int) -> c_int {
    let me = engine::me();
    let list = group_of("MPI_Group_rank", group);
    // SAFETY: the application's out-pointer.
    unsafe {
        *rank = list
            .iter()
            .position(|&w| w == me)
            .map_or(c::UNDEFINED(), |p| p as c_int)
    };
    ok()
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Group_incl(
    group: ffi::MPI_Group,
    n: c_int,
    ranks: *const c_int,
    out: *mut ffi::MPI_Group,
) -> c_int {
    let list = group_of("MPI_Group_incl", group);
    let mut new = Vec::with_capacity(n.max(0) as usize);
    for i in 0..n.max(0) as usize {
        // SAFETY: the application's array of `n` ranks.
        let r = unsafe { *ranks.add(i) };
        match list.get(r as usize) {
            Some(&w) if r >= 0 => new.push(w),
            _ => fatal(
                "MPI_Group_incl",
                &format!("rank {r} is not in the group of {}", list.len()),
            ),
        }
    }
    // SAFETY: the application's out-pointer.
    unsafe { *out = new_group(new) };
    ok()
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Group_excl(
    group: ffi::MPI_Group,
    n: c_int,
    ranks: *const c_int,
    out: *mut ffi::MPI_Group,
) -> c_int {
    let list = group_of("MPI_Group_excl", group);
    // SAFETY: the application's array of `n` ranks.
    let drop: Vec<c_int> = (0..n.max(0) as usize).map(|i| unsafe { *ranks.add(i) }).collect();
    let new = list
        .iter()
        .enumerate()
        .filter(|(i, _)| !drop.contains(&(*i as c_int)))
        .map(|(_, &w)| w)
        .collect();
    // SAFETY: the application's out-pointer.
    unsafe { *out = new_group(new) };
    ok()
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Group_translate_ranks(
    a: ffi::MPI_Group,
    n: c_int,
    ranks: *const c_int,
    b: ffi::MPI_Group,
    out: *mut c_int,
) -> c_int {
    let (la, lb) = (
        group_of("MPI_Group_translate_ranks", a),
        group_of("MPI_Group_translate_ranks", b),
    );
    for i in 0..n.max(0) as usize {
        // SAFETY: the application's arrays of `n` ranks.
        unsafe {
            let r = *ranks.add(i);
            *out.add(i) = if r == c::PROC_NULL() {
                c::PROC_NULL()
            } else {
                la.get(r as usize)
                    .and_then(|w| lb.iter().position(|x| x == w))
                    .map_or(c::UNDEFINED(), |p| p as c_int)
            };
        }
    }
    ok()
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Group_compare(
    a: ffi::MPI_Group,
    b: ffi::MPI_Group,
    result: *mut c_int,
) -> c_int {
    let (la, lb) = (group_of("MPI_Group_compare", a), group_of("MPI_Group_compare", b));
    // SAFETY: the application's out-pointer.
    unsafe { *result = compare(&la, &lb, IDENT) };
    ok()
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Group_free(group: *mut ffi::MPI_Group) -> c_int {
    // SAFETY: the application's handle.
    if let Some(i) = handles::index(Kind::Group, unsafe { *group }) {
        with(|e| e.comms_mut().groups.try_remove(i));
    }
    ok()
}

/// Intercommunicators are not made in this mode, so never.
///
/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_test_inter(comm: ffi::MPI_Comm, flag: *mut c_int) -> c_int {
    comm_of("MPI_Comm_test_inter", comm);
    // SAFETY: the application's out-pointer.
    unsafe { *flag = 0 };
    ok()
}

/// Errors are fatal in this mode whatever the handler; accepted.
///
/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_set_errhandler(comm: ffi::MPI_Comm, _h: ffi::MPI_Errhandler) -> c_int {
    comm_of("MPI_Comm_set_errhandler", comm);
    ok()
}

/// The native world's attributes (`MPI_TAG_UB`, ...) serve every
/// virtual communicator.
///
/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_get_attr(
    comm: ffi::MPI_Comm,
    key: c_int,
    value: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    comm_of("MPI_Comm_get_attr", comm);
    // SAFETY: the application's out-pointers, on the native world.
    unsafe { ffi::PMPI_Comm_get_attr(c::COMM_WORLD(), key, value, flag) }
}

/// Packing uses no communicator state: the native `MPI_COMM_SELF` serves.
///
/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Pack(
    inbuf: *const c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    outbuf: *mut c_void,
    size: c_int,
    pos: *mut c_int,
    _comm: ffi::MPI_Comm,
) -> c_int {
    // SAFETY: the application's arguments.
    unsafe { ffi::PMPI_Pack(inbuf, count, dt, outbuf, size, pos, c::COMM_SELF()) }
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Unpack(
    inbuf: *const c_void,
    size: c_int,
    pos: *mut c_int,
    outbuf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    _comm: ffi::MPI_Comm,
) -> c_int {
    // SAFETY: the application's arguments.
    unsafe { ffi::PMPI_Unpack(inbuf, size, pos, outbuf, count, dt, c::COMM_SELF()) }
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Pack_size(
    count: c_int,
    dt: ffi::MPI_Datatype,
    _comm: ffi::MPI_Comm,
    size: *mut c_int,
) -> c_int {
    // SAFETY: the application's arguments.
    unsafe { ffi::PMPI_Pack_size(count, dt, c::COMM_SELF(), size) }
}

/// A Cartesian communicator: the first `prod(dims)` ranks, in order
/// (`reorder` is allowed to keep them).
///
/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_create(
    comm: ffi::MPI_Comm,
    ndims: c_int,
    dims: *const c_int,
    periods: *const c_int,
    _reorder: c_int,
    out: *mut ffi::MPI_Comm,
) -> c_int {
    let _call = CallInProgress::enter("MPI_Cart_create");
    let n = ndims.max(0) as usize;
    // SAFETY: the application's arrays of `ndims` entries.
    let d: Vec<i32> = (0..n).map(|i| unsafe { *dims.add(i) }).collect();
    // SAFETY: as above.
    let p: Vec<bool> = (0..n).map(|i| unsafe { *periods.add(i) } != 0).collect();
    let cells: i64 = d.iter().map(|&x| i64::from(x)).product();
    let ci = comm_of("MPI_Cart_create", comm);
    let (_, size) = rank_size(ci);
    if cells > i64::from(size) || d.iter().any(|&x| x <= 0) {
        fatal(
            "MPI_Cart_create",
            &format!("dimensions {d:?} need {cells} ranks; the communicator has {size}"),
        );
    }
    let list = with(|e| e.members(ci))[..cells as usize].to_vec();
    construct("MPI_Cart_create", comm, Gift::Group(Some(list)), out);
    // SAFETY: the handle just made.
    if let Some(nc) = handles::comm(unsafe { *out }) {
        with(|e| e.comms_mut().comms[nc].cart.get_or_insert((d, p)).0.len());
    }
    ok()
}

/// The topology of a Cartesian communicator.
fn cart(routine: &str, comm: ffi::MPI_Comm) -> (usize, Vec<i32>, Vec<bool>) {
    let i = comm_of(routine, comm);
    match with(|e| e.comms_mut().comms[i].cart.clone()) {
        Some((d, p)) => (i, d, p),
        None => fatal(routine, "not a Cartesian communicator"),
    }
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Cartdim_get(comm: ffi::MPI_Comm, ndims: *mut c_int) -> c_int {
    let (_, d, _) = cart("MPI_Cartdim_get", comm);
    // SAFETY: the application's out-pointer.
    unsafe { *ndims = d.len() as c_int };
    ok()
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_get(
    comm: ffi::MPI_Comm,
    max: c_int,
    dims: *mut c_int,
    periods: *mut c_int,
    coords: *mut c_int,
) -> c_int {
    let (i, d, p) = cart("MPI_Cart_get", comm);
    let me = with(|e| e.comms().rank_of(i, e.current())).unwrap_or(0);
    let co = coords_of(&d, me as i32);
    for k in 0..d.len().min(max.max(0) as usize) {
        // SAFETY: the application's arrays of `max` entries.
        unsafe {
            *dims.add(k) = d[k];
            *periods.add(k) = c_int::from(p[k]);
            *coords.add(k) = co[k];
        }
    }
    ok()
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_coords(
    comm: ffi::MPI_Comm,
    rank: c_int,
    max: c_int,
    coords: *mut c_int,
) -> c_int {
    let (_, d, _) = cart("MPI_Cart_coords", comm);
    for (k, v) in coords_of(&d, rank)
        .into_iter()
        .enumerate()
        .take(max.max(0) as usize)
    {
        // SAFETY: the application's array of `max` entries.
        unsafe { *coords.add(k) = v };
    }
    ok()
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_rank(comm: ffi::MPI_Comm, coords: *const c_int, rank: *mut c_int) -> c_int {
    let (_, d, p) = cart("MPI_Cart_rank", comm);
    // SAFETY: the application's array of ndims entries.
    let co: Vec<i32> = (0..d.len()).map(|k| unsafe { *coords.add(k) }).collect();
    match rank_at(&d, &p, &co) {
        // SAFETY: the application's out-pointer.
        Some(r) => unsafe { *rank = r },
        None => fatal("MPI_Cart_rank", &format!("coordinates {co:?} are outside {d:?}")),
    }
    ok()
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_shift(
    comm: ffi::MPI_Comm,
    dir: c_int,
    disp: c_int,
    source: *mut c_int,
    dest: *mut c_int,
) -> c_int {
    let (i, d, p) = cart("MPI_Cart_shift", comm);
    if dir < 0 || dir as usize >= d.len() {
        fatal(
            "MPI_Cart_shift",
            &format!("direction {dir} of a {}-dimensional grid", d.len()),
        );
    }
    let me = with(|e| e.comms().rank_of(i, e.current())).unwrap_or(0);
    let co = coords_of(&d, me as i32);
    let moved = |by: i32| {
        let mut c2 = co.clone();
        c2[dir as usize] += by;
        rank_at(&d, &p, &c2).unwrap_or(c::PROC_NULL())
    };
    // SAFETY: the application's out-pointers.
    unsafe {
        *source = moved(-disp);
        *dest = moved(disp);
    }
    ok()
}
