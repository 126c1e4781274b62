//! Point-to-point routines: every send mode, blocking and nonblocking,
//! receives, `Sendrecv`, probes, and the `Wait`/`Test` families.
//! The data is copied at once (no attached buffer is used); the timing
//! follows the kernel's send modes: standard and ready sends are eager up
//! to the eager threshold and rendezvous above it, buffered sends always
//! eager, synchronous sends always rendezvous.

#![allow(non_snake_case)]

use super::complete::{self, wait_id};
use super::{comm_of, fatal, ok, rank_size, set_status, CallInProgress};
use crate::engine::{self, with};
use crate::handles::{self, Kind};
use crate::p2p::{Mode, RecvSpec, Work};
use pnmpi_mpi_sys::{constants as c, ffi};
use std::ffi::{c_int, c_void};

/// Posts a send; `None` for `MPI_PROC_NULL`.
///
/// # Safety
/// `buf` holds `count` elements of `dt`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn post_send(
    routine: &str,
    buf: *const c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: ffi::MPI_Comm,
    mode: Mode,
) -> Option<usize> {
    let comm = comm_of(routine, comm);
    if dest == c::PROC_NULL() {
        return None;
    }
    let (me, size) = rank_size(comm);
    if dest < 0 || dest as u32 >= size {
        fatal(
            routine,
            &format!("invalid destination rank {dest} (the communicator has {size} ranks)"),
        );
    }
    if tag < 0 {
        fatal(routine, &format!("invalid tag {tag}"));
    }
    // SAFETY: the caller's send buffer.
    let data = unsafe { crate::dtype::pack(buf, count, dt) };
    // The model sees the messages in virtual-time order.
    engine::catch_up();
    Some(with(|e| {
        let w = e.comms().world_of(comm, dest as u32, e.current());
        e.send(data, w, comm as u32, me as c_int, tag, mode)
    }))
}

/// Posts a receive; `None` for `MPI_PROC_NULL`.
pub fn post_recv(
    routine: &str,
    buf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: ffi::MPI_Comm,
) -> Option<usize> {
    let comm = comm_of(routine, comm);
    if source == c::PROC_NULL() {
        return None;
    }
    let (_, size) = rank_size(comm);
    if source != c::ANY_SOURCE() && (source < 0 || source as u32 >= size) {
        fatal(
            routine,
            &format!("invalid source rank {source} (the communicator has {size} ranks)"),
        );
    }
    // A receive may match a rendezvous at once, which takes the network.
    engine::catch_up();
    Some(with(|e| {
        e.recv(RecvSpec {
            buf,
            count,
            dtype: dt,
            comm: comm as u32,
            from: source,
            tag,
        })
    }))
}

/// A request handle for `id`, or an already complete one for
/// `MPI_PROC_NULL` (`None`, a receive when `recv`).
fn handle(id: Option<usize>, recv: bool) -> ffi::MPI_Request {
    let id = id.unwrap_or_else(|| {
        with(|e| {
            let work = if recv {
                Work::Recv(
                    RecvSpec {
                        buf: std::ptr::null_mut(),
                        count: 0,
                        dtype: c::BYTE(),
                        comm: 0,
                        from: c::PROC_NULL(),
                        tag: c::ANY_TAG(),
                    },
                    None,
                )
            } else {
                Work::Send
            };
            e.request(work, true)
        })
    });
    super::handle(Kind::Request, id)
}

macro_rules! send {
    ($name:ident, $mode:expr) => {
        /// A blocking send.
        ///
        /// # Safety
        /// MPI's contract for this routine.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            buf: *const c_void,
            count: c_int,
            dt: ffi::MPI_Datatype,
            dest: c_int,
            tag: c_int,
            comm: ffi::MPI_Comm,
        ) -> c_int {
            let _call = CallInProgress::enter(stringify!($name));
            let name = stringify!($name);
            super::traced::p2p(dest, tag, comm, count, dt);
            // SAFETY: the application's arguments.
            if let Some(id) = unsafe { post_send(name, buf, count, dt, dest, tag, comm, $mode) } {
                // SAFETY: no status.
                unsafe { wait_id(name, id, c::STATUS_IGNORE()) };
            }
            ok()
        }
    };
}

macro_rules! isend {
    ($name:ident, $mode:expr) => {
        /// A nonblocking send.
        ///
        /// # Safety
        /// MPI's contract for this routine.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            buf: *const c_void,
            count: c_int,
            dt: ffi::MPI_Datatype,
            dest: c_int,
            tag: c_int,
            comm: ffi::MPI_Comm,
            req: *mut ffi::MPI_Request,
        ) -> c_int {
            let _call = CallInProgress::enter(stringify!($name));
            super::traced::p2p(dest, tag, comm, count, dt);
            // SAFETY: the application's arguments.
            let id = unsafe { post_send(stringify!($name), buf, count, dt, dest, tag, comm, $mode) };
            // SAFETY: the application's request handle.
            unsafe { *req = handle(id, false) };
            // SAFETY: just written.
            super::traced::request(unsafe { *req });
            ok()
        }
    };
}

send!(MPI_Send, Mode::Standard);
send!(MPI_Bsend, Mode::Buffered);
send!(MPI_Rsend, Mode::Standard);
send!(MPI_Ssend, Mode::Synchronous);
isend!(MPI_Isend, Mode::Standard);
isend!(MPI_Ibsend, Mode::Buffered);
isend!(MPI_Irsend, Mode::Standard);
isend!(MPI_Issend, Mode::Synchronous);

/// A blocking receive.
///
/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Recv(
    buf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: ffi::MPI_Comm,
    st: *mut ffi::MPI_Status,
) -> c_int {
    let _call = CallInProgress::enter("MPI_Recv");
    super::traced::p2p(source, tag, comm, count, dt);
    match post_recv("MPI_Recv", buf, count, dt, source, tag, comm) {
        // SAFETY: the application's status.
        Some(id) => unsafe { wait_id("MPI_Recv", id, st) },
        // SAFETY: the application's status.
        None => unsafe { set_status(st, c::PROC_NULL(), c::ANY_TAG(), 0) },
    }
    ok()
}

/// A nonblocking receive.
///
/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Irecv(
    buf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: ffi::MPI_Comm,
    req: *mut ffi::MPI_Request,
) -> c_int {
    let _call = CallInProgress::enter("MPI_Irecv");
    super::traced::p2p(source, tag, comm, count, dt);
    let id = post_recv("MPI_Irecv", buf, count, dt, source, tag, comm);
    // SAFETY: the application's request handle.
    unsafe { *req = handle(id, true) };
    // SAFETY: just written.
    super::traced::request(unsafe { *req });
    ok()
}

/// Waits for both halves of a send-receive: the receive's status goes
/// to `st` (`MPI_PROC_NULL`'s when there was none).
///
/// # Safety
/// `st` is the application's status or ignore.
unsafe fn finish_exchange(name: &str, s: Option<usize>, r: Option<usize>, st: *mut ffi::MPI_Status) -> c_int {
    // SAFETY: the caller's status.
    unsafe {
        match r {
            Some(id) => wait_id(name, id, st),
            None => set_status(st, c::PROC_NULL(), c::ANY_TAG(), 0),
        }
        if let Some(id) = s {
            wait_id(name, id, c::STATUS_IGNORE());
        }
    }
    ok()
}

/// Send and receive at once (both posted, then both awaited).
///
/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Sendrecv(
    sbuf: *const c_void,
    scount: c_int,
    stype: ffi::MPI_Datatype,
    dest: c_int,
    stag: c_int,
    rbuf: *mut c_void,
    rcount: c_int,
    rtype: ffi::MPI_Datatype,
    source: c_int,
    rtag: c_int,
    comm: ffi::MPI_Comm,
    st: *mut ffi::MPI_Status,
) -> c_int {
    let _call = CallInProgress::enter("MPI_Sendrecv");
    let name = "MPI_Sendrecv";
    super::traced::p2p(dest, stag, comm, scount, stype);
    super::traced::recv_half(source, rtag, rcount, rtype);
    // SAFETY: the application's arguments.
    let s = unsafe { post_send(name, sbuf, scount, stype, dest, stag, comm, Mode::Standard) };
    let r = post_recv(name, rbuf, rcount, rtype, source, rtag, comm);
    // SAFETY: the application's status.
    unsafe { finish_exchange(name, s, r, st) }
}

/// Send and receive in one buffer: the outgoing data is packed first.
///
/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Sendrecv_replace(
    buf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    dest: c_int,
    stag: c_int,
    source: c_int,
    rtag: c_int,
    comm: ffi::MPI_Comm,
    st: *mut ffi::MPI_Status,
) -> c_int {
    let _call = CallInProgress::enter("MPI_Sendrecv_replace");
    let name = "MPI_Sendrecv_replace";
    super::traced::p2p(dest, stag, comm, count, dt);
    super::traced::recv_half(source, rtag, count, dt);
    // SAFETY: the application's arguments: the send is packed before the
    // receive may overwrite the buffer.
    let s = unsafe { post_send(name, buf, count, dt, dest, stag, comm, Mode::Standard) };
    let r = post_recv(name, buf, count, dt, source, rtag, comm);
    // SAFETY: the application's status.
    unsafe { finish_exchange(name, s, r, st) }
}

/// What a probe of `source`, `tag` on virtual communicator `comm` looks
/// for.
fn probe_spec(source: c_int, tag: c_int, comm: usize) -> RecvSpec {
    RecvSpec {
        buf: std::ptr::null_mut(),
        count: 0,
        dtype: c::BYTE(),
        comm: comm as u32,
        from: source,
        tag,
    }
}

/// Checks for a message that fits, once the simulation has caught up
/// with the rank's clock.
fn look(source: c_int, tag: c_int, comm: usize) -> Option<(c_int, c_int, usize)> {
    if source == c::PROC_NULL() {
        return Some((c::PROC_NULL(), c::ANY_TAG(), 0));
    }
    engine::catch_up();
    with(|e| e.probe(&probe_spec(source, tag, comm)))
}

/// Records a probe's source, tag and communicator.
fn probed(source: c_int, tag: c_int, comm: ffi::MPI_Comm) {
    super::traced::note(|rec| {
        rec.peer = Some(i64::from(source));
        rec.tag = Some(i64::from(tag));
        rec.comm = Some(pnmpi_mpi_sys::Handle::bits(comm));
    });
}

/// Whether a message has arrived, by the rank's virtual clock.
///
/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Iprobe(
    source: c_int,
    tag: c_int,
    comm: ffi::MPI_Comm,
    flag: *mut c_int,
    st: *mut ffi::MPI_Status,
) -> c_int {
    let call = CallInProgress::enter("MPI_Iprobe");
    probed(source, tag, comm);
    let found = look(source, tag, comm_of("MPI_Iprobe", comm));
    if let Some((s, t, _)) = found {
        super::traced::status(s, t);
    }
    // SAFETY: the application's out-pointers.
    unsafe {
        *flag = c_int::from(found.is_some());
        if let Some((s, t, b)) = found {
            set_status(st, s, t, b);
        }
    }
    if found.is_none() && call.polling() {
        engine::idle(std::iter::empty());
    }
    ok()
}

/// Waits for a message that fits, in virtual time: blocked until one
/// arrives (if none ever does, the run ends in a deadlock report that
/// names the rank and this routine).
///
/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Probe(
    source: c_int,
    tag: c_int,
    comm: ffi::MPI_Comm,
    st: *mut ffi::MPI_Status,
) -> c_int {
    let _call = CallInProgress::enter("MPI_Probe");
    probed(source, tag, comm);
    let comm = comm_of("MPI_Probe", comm);
    loop {
        if let Some((s, t, b)) = look(source, tag, comm) {
            super::traced::status(s, t);
            // SAFETY: the application's status.
            unsafe { set_status(st, s, t, b) };
            return ok();
        }
        with(|e| e.await_probe(probe_spec(source, tag, comm)));
        engine::block_until_woken();
    }
}

/// Defines an exported completion routine that charges the compute
/// (`call`, which polling tests use) and runs `$imp`.
macro_rules! completion {
    ($name:ident($($arg:ident: $ty:ty),* $(,)?) => |$call:ident| $imp:expr) => {
        /// # Safety
        /// MPI's contract for this routine.
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> c_int {
            let $call = CallInProgress::enter(stringify!($name));
            // SAFETY: the application's arguments.
            unsafe { $imp };
            ok()
        }
    };
}

type Req = *mut ffi::MPI_Request;
type St = *mut ffi::MPI_Status;

completion!(MPI_Wait(req: Req, st: St) => |_call| complete::wait("MPI_Wait", req, st));
completion!(MPI_Waitall(n: c_int, reqs: Req, sts: St) => |_call| complete::wait_all("MPI_Waitall", n, reqs, sts));
completion!(MPI_Waitany(n: c_int, reqs: Req, index: *mut c_int, st: St)
    => |call| complete::any("MPI_Waitany", n, reqs, index, std::ptr::null_mut(), st, &call));
completion!(MPI_Waitsome(n: c_int, reqs: Req, outcount: *mut c_int, indices: *mut c_int, sts: St)
    => |call| complete::some("MPI_Waitsome", n, reqs, outcount, indices, sts, false, &call));
completion!(MPI_Test(req: Req, flag: *mut c_int, st: St)
    => |call| complete::test_all("MPI_Test", 1, req, flag, st, &call));
completion!(MPI_Testall(n: c_int, reqs: Req, flag: *mut c_int, sts: St)
    => |call| complete::test_all("MPI_Testall", n, reqs, flag, sts, &call));
completion!(MPI_Testany(n: c_int, reqs: Req, index: *mut c_int, flag: *mut c_int, st: St)
    => |call| complete::any("MPI_Testany", n, reqs, index, flag, st, &call));
completion!(MPI_Testsome(n: c_int, reqs: Req, outcount: *mut c_int, indices: *mut c_int, sts: St)
    => |call| complete::some("MPI_Testsome", n, reqs, outcount, indices, sts, true, &call));

/// Frees a request; an active one still completes (its data still
/// arrives), but nobody waits for it.
///
/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Request_free(req: *mut ffi::MPI_Request) -> c_int {
    let _call = CallInProgress::enter("MPI_Request_free");
    // SAFETY: the application's handle.
    let h = unsafe { *req };
    super::traced::done(pnmpi_mpi_sys::Handle::bits(h), None);
    if let Some(id) = handles::index(Kind::Request, h) {
        with(|e| {
            let remove = match e.p2p().get(id).map(|r| (&r.work, r.done)) {
                Some((Work::Persistent(t), _)) => t.active.is_none(),
                Some((_, done)) => done,
                None => false,
            };
            if remove {
                e.p2p_mut().remove(id);
            }
        });
    }
    // SAFETY: the application's handle.
    unsafe { *req = c::REQUEST_NULL() };
    ok()
}

/// Each virtual rank's attached buffer (`MPI_Buffer_attach`: address and
/// size), handed back by `MPI_Buffer_detach`. A buffered send copies its
/// data at once, so the buffer is only remembered, per rank: the real
/// MPI's one buffer per process cannot take every virtual rank's.
static BUFFERS: std::sync::Mutex<std::collections::BTreeMap<u32, (usize, c_int)>> =
    std::sync::Mutex::new(std::collections::BTreeMap::new());

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Buffer_attach(buf: *mut c_void, size: c_int) -> c_int {
    let _call = CallInProgress::enter("MPI_Buffer_attach");
    let me = with(|e| e.current());
    if let Ok(mut b) = BUFFERS.lock() {
        b.insert(me, (buf as usize, size));
    }
    ok()
}

/// # Safety
/// MPI's contract for this routine: `buf` points to a pointer, `size` to
/// an `int`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Buffer_detach(buf: *mut c_void, size: *mut c_int) -> c_int {
    let _call = CallInProgress::enter("MPI_Buffer_detach");
    let me = with(|e| e.current());
    let (addr, n) = BUFFERS
        .lock()
        .ok()
        .and_then(|mut b| b.remove(&me))
        .unwrap_or((0, 0));
    // SAFETY: the application's out-arguments (MPI's contract), written
    // only when given.
    unsafe {
        if !buf.is_null() {
            *buf.cast::<*mut c_void>() = addr as *mut c_void;
        }
        if !size.is_null() {
            *size = n;
        }
    }
    ok()
}
