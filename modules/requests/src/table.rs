//! The table of live requests: for each, LLNL PnMPI's
//! `PNMPIMOD_Requests_Parameters_t` (the call that made it, its buffer,
//! count, type, peer, tag and communicator, whether it is persistent,
//! active or cancelled) and the bytes other modules reserved with
//! `add-storage`.

pub use pnmpi_sdk::llnl::kind::*;
pub use pnmpi_sdk::llnl::RequestParameters as Parameters;
use pnmpi_sdk::sys::ffi::MPI_Request;
use pnmpi_sdk::{constants, Comm, Datatype};
use std::collections::{HashMap, VecDeque};
use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicI32, Ordering::Relaxed};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// What a request was made with.
pub struct Call {
    pub kind: c_int,
    pub buf: *const c_void,
    pub count: c_int,
    pub datatype: Datatype,
    pub peer: c_int,
    pub tag: c_int,
    pub comm: Comm,
    pub persistent: bool,
}

/// A request's parameters and its reserved bytes, boxed so that the
/// pointer `map-request` hands out stays put while the request lives.
pub struct Entry {
    pub params: Parameters,
    data: Vec<c_char>,
}

/// Bytes other modules reserved in every request (`add-storage`).
pub static EXTRA: AtomicI32 = AtomicI32::new(0);

/// The entries by handle. One handle may stand for several live requests:
/// Open MPI hands out its one static "empty" request for every send that
/// completed before it returned. Those complete in the order they were
/// made (the best that can be told apart), and `map-request` gives the
/// newest, the one its caller has just made.
#[derive(Default)]
struct Table(HashMap<usize, VecDeque<Box<Entry>>>);

// SAFETY: the table owns its entries; the raw pointers inside are MPI
// handles and the application's buffer addresses, never dereferenced
// here, and every access is behind TABLE's mutex.
unsafe impl Send for Table {}

static TABLE: Mutex<Option<Table>> = Mutex::new(None);

fn table() -> MutexGuard<'static, Option<Table>> {
    TABLE.lock().unwrap_or_else(|e| e.into_inner())
}

/// The table's key for a request handle (a pointer or an int).
fn key(request: MPI_Request) -> usize {
    request as usize
}

/// Records the request `request` made by `call`.
pub fn associate(request: MPI_Request, call: &Call) {
    if request == constants::REQUEST_NULL() {
        return;
    }
    let extra = usize::try_from(EXTRA.load(Relaxed)).unwrap_or(0);
    let mut entry = Box::new(Entry {
        params: Parameters {
            kind: call.kind,
            buf: call.buf.cast_mut(),
            count: call.count,
            datatype: call.datatype,
            node: call.peer,
            tag: call.tag,
            persistent: c_int::from(call.persistent),
            active: c_int::from(!call.persistent),
            cancelled: 0,
            comm: call.comm,
            inreq: request,
            data: std::ptr::null_mut(),
        },
        data: vec![0; extra],
    });
    entry.params.data = entry.data.as_mut_ptr();
    table()
        .get_or_insert_with(Table::default)
        .0
        .entry(key(request))
        .or_default()
        .push_back(entry);
}

/// Runs `f` on the newest entry of `request`, if it is tracked.
pub fn with<T>(request: MPI_Request, f: impl FnOnce(&mut Entry) -> T) -> Option<T> {
    table()
        .as_mut()?
        .0
        .get_mut(&key(request))?
        .back_mut()
        .map(|e| f(e))
}

/// Removes the oldest entry of `request`.
fn remove_oldest(entries: &mut Table, request: MPI_Request) -> Option<Box<Entry>> {
    let queue = entries.0.get_mut(&key(request))?;
    let oldest = queue.pop_front();
    if queue.is_empty() {
        entries.0.remove(&key(request));
    }
    oldest
}

/// A request completed: a persistent one becomes inactive, any other is
/// forgotten. Returns its parameters and reserved bytes, or a null
/// request's.
pub fn complete(request: MPI_Request) -> (Parameters, Vec<c_char>) {
    let mut guard = table();
    let Some(entries) = guard.as_mut() else {
        return (null_parameters(request), Vec::new());
    };
    let oldest = entries.0.get_mut(&key(request)).and_then(|q| q.front_mut());
    match oldest {
        Some(e) if e.params.persistent != 0 => {
            e.params.active = 0;
            (e.params, e.data.clone())
        }
        Some(_) => match remove_oldest(entries, request) {
            Some(e) => (e.params, e.data),
            None => (null_parameters(request), Vec::new()),
        },
        None => (null_parameters(request), Vec::new()),
    }
}

/// Forgets `request` (freed).
pub fn forget(request: MPI_Request) {
    if let Some(t) = table().as_mut() {
        remove_oldest(t, request);
    }
}

/// The parameters of a request the table does not know.
fn null_parameters(request: MPI_Request) -> Parameters {
    Parameters {
        kind: NULL,
        buf: std::ptr::null_mut(),
        count: 0,
        datatype: constants::DATATYPE_NULL(),
        node: -1,
        tag: -1,
        persistent: 0,
        active: 0,
        cancelled: 0,
        comm: constants::COMM_NULL(),
        inreq: request,
        data: std::ptr::null_mut(),
    }
}

/// `map-request`: the live parameters of `request`, or those of a null
/// request (read-only) when it is not tracked.
pub fn map(request: MPI_Request) -> *mut Parameters {
    if let Some(p) = with(request, |e| std::ptr::from_mut(&mut e.params)) {
        return p;
    }
    static NULL_ENTRY: OnceLock<usize> = OnceLock::new();
    let at = *NULL_ENTRY
        .get_or_init(|| Box::into_raw(Box::new(null_parameters(constants::REQUEST_NULL()))) as usize);
    at as *mut Parameters
}

/// The requests still tracked: neither completed nor freed.
pub fn leftovers() -> Vec<Parameters> {
    table()
        .as_ref()
        .map_or_else(Vec::new, |t| t.0.values().flatten().map(|e| e.params).collect())
}
