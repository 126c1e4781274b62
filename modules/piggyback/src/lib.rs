//! piggyback: LLNL PnMPI's piggyback service. Every point-to-point
//! message (blocking, nonblocking and persistent sends and receives,
//! `Sendrecv`, matched probes) carries `size` extra bytes that the sending
//! side set; the receiving side finds the bytes that came with a message
//! in the status extension of its completion. The bytes travel in the
//! message itself (a struct datatype, see `wire.rs`), so wildcards, any
//! datatype and both MPIs work; `MPI_Get_count` answers as without them.
//!
//! LLNL's API, unchanged: the module registers as `piggyback`, with the
//! services `piggyback-size` (`"i"`: `int (*)(int size)`, before
//! `MPI_Init`; 4 bytes by default) and `piggyback` (`"ip"`:
//! `int (*)(int size, char *bytes)`, the bytes the next sends carry), and
//! the global `piggyback-offset` (`'i'`: where a message's bytes are in
//! the `status` module's extension). It needs `status` above it and
//! `requests` below it:
//!
//! ```text
//! module status
//! module mytool
//! module piggyback
//! module requests
//! ```

mod record;
mod wire;
mod wrappers;

use pnmpi_sdk::llnl::RequestParameters;
use pnmpi_sdk::services::{self, ServiceFn};
use pnmpi_sdk::sys::ffi::MPI_Request;
use std::ffi::{c_char, c_int};
use std::mem::size_of;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering::Relaxed};
use std::sync::{Mutex, OnceLock};

/// Bytes attached to each message, fixed once MPI runs.
static SIZE: AtomicUsize = AtomicUsize::new(4);
/// Set once MPI runs and the size is fixed.
static STARTED: AtomicBool = AtomicBool::new(false);
/// The bytes the next sends carry (the service `piggyback`).
static OUTGOING: Mutex<Vec<u8>> = Mutex::new(Vec::new());
/// The global `piggyback-offset`; -1 until the `status` module gave room.
static OFFSET: AtomicI32 = AtomicI32::new(-1);

/// What the modules around this one offer, found in `MPI_Init`.
pub struct Around {
    /// Where this module's record pointer is in a request's `data`.
    pub data_offset: usize,
    /// Where the `requests` module puts a request's parameters in a status block.
    pub request_offset: &'static AtomicI32,
    /// The size of a status block.
    pub total: &'static AtomicI32,
    /// Where this module's bytes are in a status block.
    pub pb_offset: usize,
    /// `requests`' `map-request`.
    pub map: MapRequest,
}

/// `PNMPIMOD_Requests_MapRequest_t`.
pub type MapRequest = extern "C" fn(MPI_Request) -> *mut RequestParameters;

/// Set in `MPI_Init` when `status` and `requests` are both there; without
/// them the module passes every call on unchanged.
static AROUND: OnceLock<Around> = OnceLock::new();

/// The service `piggyback-size`: refused (-1) once MPI runs.
extern "C" fn set_size(size: c_int) -> c_int {
    match usize::try_from(size) {
        Ok(size) if !STARTED.load(Relaxed) => {
            SIZE.store(size, Relaxed);
            0
        }
        _ => -1,
    }
}

/// The service `piggyback`: the bytes the next sends carry (at most
/// `size`; fewer are padded with zeros).
extern "C" fn set_bytes(size: c_int, bytes: *const c_char) -> c_int {
    let n = usize::try_from(size).unwrap_or(0).min(SIZE.load(Relaxed));
    if bytes.is_null() && n > 0 {
        return -1;
    }
    let mut out = lock_outgoing();
    out.clear();
    if n > 0 {
        // SAFETY: the caller passes `size` >= n readable bytes.
        out.extend_from_slice(unsafe { std::slice::from_raw_parts(bytes.cast::<u8>(), n) });
    }
    0
}

fn lock_outgoing() -> std::sync::MutexGuard<'static, Vec<u8>> {
    OUTGOING.lock().unwrap_or_else(|e| e.into_inner())
}

/// The bytes a send made now carries: exactly `size`, zero-padded.
pub fn outgoing() -> Vec<u8> {
    let size = SIZE.load(Relaxed);
    let mut bytes = lock_outgoing().clone();
    bytes.resize(size, 0);
    bytes
}

/// The number of bytes each message carries, once MPI runs.
pub fn size() -> usize {
    SIZE.load(Relaxed)
}

/// The modules around, if piggybacking is on.
pub fn around() -> Option<&'static Around> {
    AROUND.get()
}

pnmpi_sdk::module! {
    name: "piggyback",
    registration_point: || {
        // SAFETY: C callers cast each service back to the type its
        // signature names (LLNL's pb_mod.h), the function's own type;
        // function pointers of any signature have one representation.
        let (size, bytes) = unsafe {
            (
                std::mem::transmute::<extern "C" fn(c_int) -> c_int, ServiceFn>(set_size),
                std::mem::transmute::<extern "C" fn(c_int, *const c_char) -> c_int, ServiceFn>(set_bytes),
            )
        };
        let offered = services::offer("piggyback-size", "i", size)
            .and_then(|()| services::offer("piggyback", "ip", bytes))
            .and_then(|()| services::register_global("piggyback-offset", &OFFSET));
        if let Err(e) = offered {
            pnmpi_sdk::say::warn("piggyback", format_args!("cannot offer its services: {e}"));
        }
    },
}

/// A service `name` (signature "i") of `module`, as `int (*)(int)`.
fn int_service(module: services::Module, name: &str) -> Option<extern "C" fn(c_int) -> c_int> {
    let f = services::service_by_name(module, name, "i").ok()?.function()?;
    // SAFETY: registered with signature "i": int (*)(int).
    Some(unsafe { std::mem::transmute::<ServiceFn, extern "C" fn(c_int) -> c_int>(f) })
}

/// Before `XMPI_Init`: a pointer's room in every request of `requests`.
fn reserve_in_requests() -> Option<usize> {
    let requests = services::module_by_name("request-storage").ok()?;
    usize::try_from(int_service(requests, "add-storage")?(size_of::<usize>() as c_int)).ok()
}

/// After `XMPI_Init`: room for the bytes in every status of `status`, and
/// the rest of what this module needs from both.
fn find_around(data_offset: Option<usize>) -> Option<Around> {
    let requests = services::module_by_name("request-storage").ok()?;
    let status = services::module_by_name("status-storage").ok()?;
    let map = services::service_by_name(requests, "map-request", "r")
        .ok()?
        .function()?;
    let size = c_int::try_from(size()).ok()?;
    let pb_offset = int_service(status, "add-storage")?(size);
    OFFSET.store(pb_offset, Relaxed);
    Some(Around {
        data_offset: data_offset?,
        request_offset: services::global_by_name::<AtomicI32>(requests, "status-offset").ok()?,
        total: services::global_by_name::<AtomicI32>(status, "total-status-extension").ok()?,
        pb_offset: usize::try_from(pb_offset).ok()?,
        // SAFETY: registered with signature "r": the requests module's
        // PNMPIMOD_Requests_MapRequest_t, this type.
        map: unsafe { std::mem::transmute::<ServiceFn, MapRequest>(map) },
    })
}

/// After `XMPI_Init`: fixes the size and turns piggybacking on if
/// `status` and `requests` are both loaded, saying so on rank 0 if not.
fn start(data_offset: Option<usize>) {
    STARTED.store(true, Relaxed);
    match find_around(data_offset) {
        Some(around) => {
            AROUND.get_or_init(|| around);
        }
        None => {
            if pnmpi_sdk::native::comm_rank(pnmpi_sdk::constants::COMM_WORLD()) == Ok(0) {
                pnmpi_sdk::say::warn(
                    "piggyback",
                    "needs `module status` above it and `module requests` below it; attaching nothing",
                );
            }
        }
    }
}
