//! LLNL PnMPI's communication callbacks (its `comm` module's interface:
//! `SEND_P2P_START`, `RECV_P2P_END`, `COMM_COLL_START`, ...), called for
//! a tool that registered them with the service `registerCallbacks`
//! instead of being compiled with LLNL's `comm.c`: every send and
//! receive, blocking or not, and every collective, in a few callbacks
//! with LLNL's signatures, `type` values and `ptr` hand-over (what a
//! `_START` stores in `*ptr` comes back to the matching `_END`, for a
//! nonblocking call through the wait or test that completes it).

use pnmpi_sdk::constants;
use pnmpi_sdk::sys::ffi::{self, MPI_Comm, MPI_Datatype, MPI_Request, MPI_Status};
use pnmpi_sdk::sys::Handle;
use std::collections::{HashMap, VecDeque};
use std::ffi::{c_char, c_int, c_void};
use std::ptr::null_mut;
use std::sync::{Mutex, MutexGuard, OnceLock};

/// LLNL's `type` values (commsub.h).
pub mod kind {
    use std::ffi::c_int;
    pub const P2P: c_int = 0x0;
    pub const ASYNC_P2P: c_int = 0x1;
    pub const COLL_FANIN: c_int = 0x2;
    pub const COLL_FANOUT: c_int = 0x3;
    pub const COLL_ALL2ALL: c_int = 0x4;
    pub const COLL_OTHER: c_int = 0x5;
    pub const COLL_BARRIER: c_int = 0x6;
    pub const COLL_REDUCE: c_int = 0x8;
    pub const BARRIER: c_int = 0x10;
    pub const BCAST: c_int = 0x20;
    pub const GATHER: c_int = 0x30;
    pub const GATHERV: c_int = 0x40;
    pub const SCATTER: c_int = 0x50;
    pub const SCATTERV: c_int = 0x60;
    pub const ALLGATHER: c_int = 0x70;
    pub const ALLGATHERV: c_int = 0x80;
    pub const ALL2ALL: c_int = 0x90;
    pub const ALL2ALLV: c_int = 0xA0;
    pub const REDUCE: c_int = 0xB0;
    pub const REDUCESCATTER: c_int = 0xC0;
    pub const ALLREDUCE: c_int = 0xD0;
    pub const SCAN: c_int = 0xE0;
    pub const TEST: c_int = 0x000;
    pub const WAIT: c_int = 0x100;
    pub const ONE: c_int = 0x000;
    pub const ANY: c_int = 0x200;
    pub const SOME: c_int = 0x400;
    pub const ALL: c_int = 0x600;
}

type Ptr = *mut *mut c_void;

/// `SEND_P2P_START`, `SEND_P2P_ASYNC_MID1` and `RECV_P2P_START` (whose
/// `void *buf` has the ABI of this `const void *`).
type Start = extern "C" fn(*const c_void, c_int, MPI_Datatype, c_int, c_int, MPI_Comm, Ptr, c_int);

/// `RECV_P2P_END`.
type RecvEnd = extern "C" fn(
    *mut c_void,
    c_int,
    MPI_Datatype,
    c_int,
    c_int,
    MPI_Comm,
    c_int,
    Ptr,
    Ptr,
    c_int,
    *mut MPI_Status,
    c_int,
    c_int,
);

/// `PNMPIMOD_Comm_Callbacks_t`: LLNL's callbacks, each optional.
#[repr(C)]
pub struct Callbacks {
    pub all_init: Option<extern "C" fn(c_int, *mut *mut c_char)>,
    pub all_finalize: Option<extern "C" fn()>,
    pub send_start: Option<Start>,
    pub send_mid1: Option<Start>,
    pub send_end: Option<
        extern "C" fn(*const c_void, c_int, MPI_Datatype, c_int, c_int, MPI_Comm, c_int, Ptr, Ptr, c_int),
    >,
    pub recv_start: Option<Start>,
    pub recv_mid1:
        Option<extern "C" fn(*mut c_void, c_int, MPI_Datatype, c_int, c_int, MPI_Comm, c_int, Ptr, c_int)>,
    pub recv_end: Option<RecvEnd>,
    pub async_mid2: Option<extern "C" fn(c_int, *mut MPI_Request, c_int, Ptr)>,
    pub async_completion: Option<extern "C" fn(c_int)>,
    pub coll_start: Option<extern "C" fn(MPI_Comm, c_int, c_int, Ptr)>,
    pub coll_end: Option<extern "C" fn(MPI_Comm, c_int, c_int, Ptr)>,
}

static CALLBACKS: OnceLock<Callbacks> = OnceLock::new();

/// The registered callbacks, if a tool registered them.
pub fn callbacks() -> Option<&'static Callbacks> {
    CALLBACKS.get()
}

/// A send or receive between its callbacks (for a nonblocking one, from
/// its call to its completion), with the tool's `ptr`.
pub struct Pending {
    pub send: bool,
    pub buf: *mut c_void,
    pub count: c_int,
    pub datatype: MPI_Datatype,
    pub node: c_int,
    pub tag: c_int,
    pub comm: MPI_Comm,
    pub ptr: *mut c_void,
}

impl Pending {
    /// `SEND_P2P_START` or `RECV_P2P_START`.
    pub fn start(&mut self, cb: &Callbacks, ty: c_int) {
        self.call(if self.send { cb.send_start } else { cb.recv_start }, ty);
    }

    /// A callback of the `_START` signature, if the tool set it.
    fn call(&mut self, f: Option<Start>, ty: c_int) {
        if let Some(f) = f {
            f(
                self.buf,
                self.count,
                self.datatype,
                self.node,
                self.tag,
                self.comm,
                &mut self.ptr,
                ty,
            );
        }
    }

    /// `SEND_P2P_ASYNC_MID1` or `RECV_P2P_ASYNC_MID1`, after the call.
    pub fn mid1(&mut self, cb: &Callbacks, err: c_int) {
        let ty = kind::ASYNC_P2P;
        if self.send {
            self.call(cb.send_mid1, ty);
        } else if let Some(f) = cb.recv_mid1 {
            f(
                self.buf,
                self.count,
                self.datatype,
                self.node,
                self.tag,
                self.comm,
                err,
                &mut self.ptr,
                ty,
            );
        }
    }

    /// `SEND_P2P_END`.
    pub fn send_end(&mut self, cb: &Callbacks, err: c_int, mid: Ptr, ty: c_int) {
        if let Some(f) = cb.send_end {
            f(
                self.buf,
                self.count,
                self.datatype,
                self.node,
                self.tag,
                self.comm,
                err,
                &mut self.ptr,
                mid,
                ty,
            );
        }
    }

    /// `RECV_P2P_END`, with the source, tag and count `status` says came
    /// (number `index` of `numindex` completions of one call).
    #[allow(clippy::too_many_arguments)]
    pub fn recv_end(
        &mut self,
        cb: &Callbacks,
        err: c_int,
        mid: Ptr,
        ty: c_int,
        status: *mut MPI_Status,
        numindex: c_int,
        index: c_int,
    ) {
        let Some(f) = cb.recv_end else { return };
        let mut count: c_int = 0;
        // SAFETY: a status MPI filled for this receive; a local
        // out-parameter.
        unsafe { ffi::PMPI_Get_count(status, self.datatype, &mut count) };
        // SAFETY: as above.
        let (source, tag) = unsafe { ((*status).MPI_SOURCE, (*status).MPI_TAG) };
        f(
            self.buf,
            count,
            self.datatype,
            source,
            tag,
            self.comm,
            err,
            &mut self.ptr,
            mid,
            ty,
            status,
            numindex,
            index,
        );
    }
}

/// Pending calls by request handle; one handle may stand for several
/// (Open MPI's one static request for sends that completed at once),
/// completed in the order they were made.
#[derive(Default)]
struct Table(HashMap<u64, VecDeque<Pending>>);

// SAFETY: the raw pointers are the application's buffers and the tool's
// `ptr`s, handed back to the tool, never dereferenced here; every access
// is behind TABLE's mutex.
unsafe impl Send for Table {}

static TABLE: Mutex<Option<Table>> = Mutex::new(None);

fn table() -> MutexGuard<'static, Option<Table>> {
    TABLE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Remembers the call that made `request`.
pub fn pending(request: MPI_Request, call: Pending) {
    if request != constants::REQUEST_NULL() {
        table()
            .get_or_insert_with(Table::default)
            .0
            .entry(request.bits())
            .or_default()
            .push_back(call);
    }
}

/// The oldest call pending on `request`, now complete.
fn take(request: MPI_Request) -> Option<Pending> {
    let mut guard = table();
    let t = guard.as_mut()?;
    let queue = t.0.get_mut(&request.bits())?;
    let first = queue.pop_front();
    if queue.is_empty() {
        t.0.remove(&request.bits());
    }
    first
}

/// The `_END` callback of the call pending on `request`, completed with
/// `status` (number `index` of `numindex` completions of one call).
pub fn complete(
    cb: &Callbacks,
    request: MPI_Request,
    err: c_int,
    status: *mut MPI_Status,
    mid: Ptr,
    numindex: c_int,
    index: c_int,
) {
    let Some(mut p) = take(request) else { return };
    if p.send {
        p.send_end(cb, err, mid, kind::ASYNC_P2P);
    } else {
        p.recv_end(cb, err, mid, kind::ASYNC_P2P, status, numindex, index);
    }
}

/// The service `registerCallbacks`: copies the tool's callbacks;
/// `PNMPI_FAILURE` (-1) for a null pointer or when a tool already
/// registered (one tool at a time, as under LLNL's).
pub extern "C" fn register_service(callbacks: *const Callbacks) -> c_int {
    if callbacks.is_null() {
        return -1;
    }
    // SAFETY: the caller's structure, of pnmpi/commsub.h's layout; read
    // once (the fields are plain function pointers, Copy).
    let copy = unsafe { callbacks.read() };
    if CALLBACKS.set(copy).is_ok() {
        0
    } else {
        pnmpi_sdk::say::error(
            "comm",
            "registerCallbacks: a tool registered its callbacks already; one tool at a time",
        );
        -1
    }
}

/// After `MPI_Init`: `COMM_ALL_INIT` with the program's arguments.
pub fn init(argc: *mut c_int, argv: *mut *mut *mut c_char) {
    if let Some(f) = callbacks().and_then(|c| c.all_init) {
        // SAFETY: MPI_Init's own arguments: null or the program's.
        let (n, v) = unsafe {
            (
                argc.as_ref().copied().unwrap_or(0),
                argv.as_ref().copied().unwrap_or(null_mut()),
            )
        };
        f(n, v);
    }
}
