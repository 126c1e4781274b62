//! Persistent requests: `MPI_*_init` records what to post, `MPI_Start`
//! posts it as an ordinary request that the persistent handle then
//! stands for until it completes.

#![allow(non_snake_case)]

use super::pt2pt::{post_recv, post_send};
use super::{ok, CallInProgress};
use crate::engine::with;
use crate::handles::{self, Kind};
use crate::p2p::{Mode, Template, Work};
use pnmpi_mpi_sys::ffi;
use std::ffi::{c_int, c_void};

/// Makes a persistent request.
fn make(t: Template, req: *mut ffi::MPI_Request) -> c_int {
    super::traced::p2p(t.peer, t.tag, t.comm, t.count, t.dtype);
    let id = with(|e| {
        let id = e.request(Work::Persistent(t), true);
        e.p2p_mut().get_mut(id).expect("just made").persistent = true;
        id
    });
    // SAFETY: the application's request handle.
    unsafe { *req = super::handle(Kind::Request, id) };
    // SAFETY: just written.
    super::traced::request(unsafe { *req });
    ok()
}

macro_rules! send_init {
    ($name:ident, $mode:expr) => {
        /// A persistent send.
        ///
        /// # Safety
        /// MPI's contract for this routine.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            buf: *const c_void,
            count: c_int,
            dtype: ffi::MPI_Datatype,
            dest: c_int,
            tag: c_int,
            comm: ffi::MPI_Comm,
            req: *mut ffi::MPI_Request,
        ) -> c_int {
            let _call = CallInProgress::enter(stringify!($name));
            super::comm_of(stringify!($name), comm);
            make(
                Template {
                    send: Some($mode),
                    buf: buf as *mut c_void,
                    count,
                    dtype,
                    peer: dest,
                    tag,
                    comm,
                    active: None,
                },
                req,
            )
        }
    };
}

send_init!(MPI_Send_init, Mode::Standard);
send_init!(MPI_Bsend_init, Mode::Buffered);
send_init!(MPI_Rsend_init, Mode::Standard);
send_init!(MPI_Ssend_init, Mode::Synchronous);

/// A persistent receive.
///
/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Recv_init(
    buf: *mut c_void,
    count: c_int,
    dtype: ffi::MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: ffi::MPI_Comm,
    req: *mut ffi::MPI_Request,
) -> c_int {
    let _call = CallInProgress::enter("MPI_Recv_init");
    super::comm_of("MPI_Recv_init", comm);
    make(
        Template {
            send: None,
            buf,
            count,
            dtype,
            peer: source,
            tag,
            comm,
            active: None,
        },
        req,
    )
}

/// Posts what persistent request `h` describes.
fn start(routine: &str, h: ffi::MPI_Request) {
    super::traced::request(h);
    let Some(id) = handles::index(Kind::Request, h) else {
        super::fatal(routine, "not a persistent request of this run")
    };
    let t = with(|e| match e.p2p().get(id).map(|r| &r.work) {
        Some(Work::Persistent(t)) if t.active.is_none() => {
            Some((t.send, t.buf, t.count, t.dtype, t.peer, t.tag, t.comm))
        }
        _ => None,
    });
    let Some((send, buf, count, dtype, peer, tag, comm)) = t else {
        super::fatal(routine, "not an inactive persistent request")
    };
    let posted = match send {
        // SAFETY: the buffer the application gave at init, which MPI
        // requires to hold the data at each start.
        Some(mode) => unsafe { post_send(routine, buf, count, dtype, peer, tag, comm, mode) },
        None => post_recv(routine, buf, count, dtype, peer, tag, comm),
    };
    let inner = posted.unwrap_or_else(|| with(|e| e.request(Work::Send, true)));
    with(|e| {
        if let Some(Work::Persistent(t)) = e.p2p_mut().get_mut(id).map(|r| &mut r.work) {
            t.active = Some(inner);
        }
    });
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Start(req: *mut ffi::MPI_Request) -> c_int {
    let _call = CallInProgress::enter("MPI_Start");
    // SAFETY: the application's handle.
    start("MPI_Start", unsafe { *req });
    ok()
}

/// # Safety
/// MPI's contract for this routine.
#[no_mangle]
pub unsafe extern "C" fn MPI_Startall(n: c_int, reqs: *mut ffi::MPI_Request) -> c_int {
    let _call = CallInProgress::enter("MPI_Startall");
    for i in 0..n.max(0) as usize {
        // SAFETY: the application's array of `n` handles.
        start("MPI_Startall", unsafe { *reqs.add(i) });
    }
    ok()
}
