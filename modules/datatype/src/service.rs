//! The services and the one wrapper: walks started and ended for other
//! modules, each type's runs cached until `MPI_Type_free`.

use crate::flatten::{self, Block, Error, Runs, Types};
use crate::layout::{self, Parameters};
use crate::mpi::{self, Mpi};
use pnmpi_sdk::constants;
use pnmpi_sdk::services::{self, ServiceFn};
use pnmpi_sdk::sys::ffi::{self, MPI_Datatype};
use pnmpi_sdk::sys::Handle;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void};
use std::sync::{Arc, Mutex, MutexGuard};

/// `PNMPI_SUCCESS` and `PNMPI_FAILURE`.
const SUCCESS: c_int = 0;
const FAILURE: c_int = -1;

/// One element's runs and the type's extent.
struct Element {
    runs: Runs<MPI_Datatype>,
    extent: i64,
}

// SAFETY: the runs hold MPI datatype handles (pointers under Open MPI),
// never dereferenced here; MPI allows them to be used from any thread.
unsafe impl Send for Element {}
// SAFETY: as for Send; the element is never mutated once cached.
unsafe impl Sync for Element {}

/// The runs of the types walked so far, by handle.
static CACHE: Mutex<Option<HashMap<u64, Arc<Element>>>> = Mutex::new(None);

fn cache() -> MutexGuard<'static, Option<HashMap<u64, Arc<Element>>>> {
    CACHE.lock().unwrap_or_else(|e| e.into_inner())
}

/// One element of `dt`, from the cache or computed now.
fn element(dt: MPI_Datatype) -> Result<Arc<Element>, Error> {
    if let Some(e) = cache().as_ref().and_then(|c| c.get(&dt.bits())) {
        return Ok(Arc::clone(e));
    }
    let handle = mpi::borrowed(dt);
    let element = Arc::new(Element {
        runs: flatten::element(&Mpi, &handle)?,
        extent: Mpi.extent(&handle)?,
    });
    cache()
        .get_or_insert_with(HashMap::new)
        .insert(dt.bits(), Arc::clone(&element));
    Ok(element)
}

/// A basic type and its size.
type BasicAndSize = (MPI_Datatype, i64);

/// The runs of `count` elements of `dt`, and the basic type and size an
/// empty walk names (the type's first, else `MPI_BYTE`).
fn runs(count: c_int, dt: MPI_Datatype) -> Result<(Vec<Block<MPI_Datatype>>, BasicAndSize), Error> {
    let count = u64::try_from(count).map_err(|_| Error::NegativeCount)?;
    let element = element(dt)?;
    let first = element
        .runs
        .blocks
        .first()
        .map_or((constants::BYTE(), 1), |b| (b.basic, b.size));
    Ok((
        flatten::elements(&element.runs, count, element.extent).blocks,
        first,
    ))
}

/// The service `getDatatypeReference`: starts a walk of `count` elements
/// of `dt` at `buf` in `*params`.
extern "C" fn get_reference(
    buf: *const c_void,
    count: c_int,
    dt: MPI_Datatype,
    params: *mut Parameters,
) -> c_int {
    // SAFETY: the caller passes its own Parameters (or null, refused).
    let Some(params) = (unsafe { params.as_mut() }) else {
        return FAILURE;
    };
    params.top = std::ptr::null_mut();
    params.stack = std::ptr::null_mut();
    params.level = -1;
    let started = runs(count, dt).and_then(|(blocks, first)| {
        layout::start(params, buf.cast_mut().cast::<c_char>(), dt, &blocks, first)
    });
    match started {
        Ok(()) => SUCCESS,
        Err(e) => {
            pnmpi_sdk::say::error(
                "datatype",
                format_args!("getDatatypeReference: cannot walk {count} element(s) of the type: {e}"),
            );
            FAILURE
        }
    }
}

/// The service `delDatatypeReference`: ends a walk.
extern "C" fn del_reference(params: *mut Parameters) -> c_int {
    // SAFETY: the caller passes the Parameters its getDatatypeReference
    // filled (top null if that failed, or after an earlier delete).
    match unsafe { params.as_mut() } {
        Some(p) => {
            // SAFETY: as above: `top` is null or a live walk's.
            unsafe { layout::end(p) };
            SUCCESS
        }
        None => FAILURE,
    }
}

/// The service `getDatatypeSize`: the bytes of data in one element.
extern "C" fn get_size(dt: MPI_Datatype, size: *mut c_int) -> c_int {
    if size.is_null() {
        return FAILURE;
    }
    // SAFETY: `size` is the caller's non-null out-parameter; MPI checks
    // the handle.
    let rc = unsafe { ffi::PMPI_Type_size(dt, size) };
    if rc == constants::SUCCESS() {
        SUCCESS
    } else {
        FAILURE
    }
}

pnmpi_sdk::module! {
    name: "datatype-tracking",
    registration_point: || {
        // SAFETY: C callers cast each service back to the type its
        // signature names (LLNL's datatype.h), the function's own type;
        // function pointers of any signature have one representation.
        let (get, del, size) = unsafe {
            (
                std::mem::transmute::<extern "C" fn(*const c_void, c_int, MPI_Datatype, *mut Parameters) -> c_int, ServiceFn>(get_reference),
                std::mem::transmute::<extern "C" fn(*mut Parameters) -> c_int, ServiceFn>(del_reference),
                std::mem::transmute::<extern "C" fn(MPI_Datatype, *mut c_int) -> c_int, ServiceFn>(get_size),
            )
        };
        let offered = services::offer("getDatatypeReference", "pimp", get)
            .and_then(|()| services::offer("delDatatypeReference", "p", del))
            .and_then(|()| services::offer("getDatatypeSize", "mp", size));
        if let Err(e) = offered {
            pnmpi_sdk::say::warn("datatype", format_args!("cannot offer its services: {e}"));
        }
    },
}

pnmpi_sdk::wrap! {
    fn MPI_Type_free(datatype) {
        // SAFETY: MPI's contract: the application's handle to free.
        if let Some(&dt) = unsafe { datatype.as_ref() } {
            if let Some(c) = cache().as_mut() {
                c.remove(&dt.bits());
            }
        }
        next!()
    }
}
