//! requests: LLNL PnMPI's request tracking service. It remembers, for
//! every nonblocking and persistent request, the call that made it, its
//! buffer, count, datatype, peer, tag and communicator; other modules ask
//! for a request's parameters (`map-request`), reserve bytes of their own
//! in each request (`add-storage`), and find a completed request's
//! parameters and bytes in the extension of its status (when the `status`
//! module is loaded above them).
//!
//! LLNL's API, unchanged (`include/pnmpi/requests.h`): the module
//! registers as `request-storage`, with the services `add-storage`
//! (`"i"`: `int add(int bytes)`, called before `XMPI_Init`, returning the
//! offset of the bytes in the `data` of each request) and `map-request`
//! (`"r"`: `PNMPIMOD_Requests_Parameters_t *map(MPI_Request)`), and the
//! global `status-offset` (`'i'`: where the parameters, then the bytes,
//! start in each status's extension). Load it *below* the modules that
//! use it. `argument check 1` lists, at `MPI_Finalize`, the requests
//! never completed or freed.

mod table;
mod wrappers;

use pnmpi_sdk::services::{self, ServiceFn};
use pnmpi_sdk::sys::ffi::{MPI_Request, MPI_Status};
use std::ffi::c_int;
use std::mem::size_of;
use std::sync::atomic::{AtomicI32, Ordering::Relaxed};
use std::sync::OnceLock;
use table::Parameters;

/// The global `status-offset`; -1 while no `status` module gave room.
static STATUS_OFFSET: AtomicI32 = AtomicI32::new(-1);
/// Bytes of each request's `data` that fit in a status (those reserved
/// before `MPI_Init`).
static DATA_IN_STATUS: AtomicI32 = AtomicI32::new(0);
/// The `status` module's `total-status-extension`, once found.
static STATUS_TOTAL: OnceLock<&'static AtomicI32> = OnceLock::new();

/// The service `add-storage`: `bytes` more in every request's `data`.
extern "C" fn add_storage(bytes: c_int) -> c_int {
    if bytes < 0 {
        return -1;
    }
    table::EXTRA.fetch_add(bytes, Relaxed)
}

/// The service `map-request`.
extern "C" fn map_request(request: MPI_Request) -> *mut Parameters {
    table::map(request)
}

pnmpi_sdk::module! {
    name: "request-storage",
    registration_point: || {
        // SAFETY: C callers cast each service back to the type its
        // signature names (LLNL's requests.h), the function's own type;
        // function pointers of any signature have one representation.
        let (add, map) = unsafe {
            (
                std::mem::transmute::<extern "C" fn(c_int) -> c_int, ServiceFn>(add_storage),
                std::mem::transmute::<extern "C" fn(MPI_Request) -> *mut Parameters, ServiceFn>(map_request),
            )
        };
        let offered = services::offer("add-storage", "i", add)
            .and_then(|()| services::offer("map-request", "r", map))
            .and_then(|()| services::register_global("status-offset", &STATUS_OFFSET));
        if let Err(e) = offered {
            pnmpi_sdk::say::warn("requests", format_args!("cannot offer its services: {e}"));
        }
    },
}

/// Once MPI runs: reserves room for the parameters and the reserved bytes
/// in every status of the `status` module, if it is loaded.
fn reserve_in_statuses() {
    let Ok(status) = services::module_by_name("status-storage") else {
        return;
    };
    let add = services::service_by_name(status, "add-storage", "i")
        .ok()
        .and_then(|s| s.function());
    let total = services::global_by_name::<AtomicI32>(status, "total-status-extension");
    if let (Some(add), Ok(total)) = (add, total) {
        // SAFETY: registered with signature "i": int (*)(int).
        let add = unsafe { std::mem::transmute::<ServiceFn, extern "C" fn(c_int) -> c_int>(add) };
        let data = table::EXTRA.load(Relaxed);
        DATA_IN_STATUS.store(data, Relaxed);
        let bytes = size_of::<Parameters>() as c_int + data;
        STATUS_OFFSET.store(add(bytes), Relaxed);
        STATUS_TOTAL.get_or_init(|| total);
    }
}

/// A request completed: writes its parameters and bytes into the
/// extension of status `num` of an array of `count`, if the array was
/// extended (`Some`).
fn into_status(statuses: Option<*mut MPI_Status>, count: usize, num: usize, request: MPI_Request) {
    let (params, data) = table::complete(request);
    let Some(statuses) = statuses else { return };
    let (Ok(offset), Some(total)) = (usize::try_from(STATUS_OFFSET.load(Relaxed)), STATUS_TOTAL.get()) else {
        return;
    };
    let total = usize::try_from(total.load(Relaxed)).unwrap_or(0);
    let len = data
        .len()
        .min(usize::try_from(DATA_IN_STATUS.load(Relaxed)).unwrap_or(0));
    // SAFETY: the array was marked, so the `status` module above made the
    // array: `count` statuses, then `count` blocks of `total` bytes, of
    // which this module owns size_of::<Parameters>() + data.len() bytes at
    // `offset` of block `num`.
    unsafe {
        let block = pnmpi_sdk::llnl::extension(statuses, count, total, num, offset);
        block.cast::<Parameters>().write_unaligned(params);
        std::ptr::copy_nonoverlapping(
            data.as_ptr().cast::<u8>(),
            block.add(size_of::<Parameters>()),
            len,
        );
    }
}
