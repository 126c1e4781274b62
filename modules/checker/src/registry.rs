//! What the checker knows of the application's MPI objects: the
//! communicators, groups, datatypes and operations it created and not yet
//! freed (with the site that created each, for leak reports), the handles
//! it freed (a later use is an error), and its requests.

use crate::sig::Sig;
use parking_lot::{Mutex, MutexGuard};
use pnmpi_sdk::sys::Handle;
use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

/// Where an object was created: the routine and the site's return address.
#[derive(Clone, Copy, Debug, Default)]
pub struct Origin {
    pub routine: usize,
    pub ra: usize,
}

/// A communicator the checker knows.
#[derive(Clone, Copy, Debug)]
pub struct CommInfo {
    /// The checker's own duplicate, for its collective checks (0: none,
    /// e.g. an intercommunicator).
    pub shadow: u64,
    /// Created by the application (else `MPI_COMM_WORLD` or `MPI_COMM_SELF`).
    pub origin: Option<Origin>,
}

/// A derived datatype.
#[derive(Clone, Copy, Debug)]
pub struct TypeInfo {
    pub origin: Origin,
    pub committed: bool,
    /// Its signature, computed at commit.
    pub sig: Option<Sig>,
}

/// A user-defined operation: its creation order names it across ranks.
#[derive(Clone, Copy, Debug)]
pub struct OpInfo {
    pub origin: Origin,
    pub seq: u64,
}

/// A nonblocking or persistent operation.
#[derive(Clone, Copy, Debug)]
pub struct RequestInfo {
    pub origin: Origin,
    /// A persistent request (freed by `MPI_Request_free` only).
    pub persistent: bool,
    /// Started and not yet completed.
    pub active: bool,
    /// A receive (else a send).
    pub recv: bool,
    /// World rank of the peer, or -1 for any.
    pub peer: i32,
    /// A send's buffer, bytes and checksum at its start, when its data is
    /// contiguous: checked again at completion.
    pub checksum: Option<(usize, usize, u64)>,
    /// A persistent send's buffer, count and datatype, for its checksum
    /// at each start.
    pub args: Option<(usize, i32, u64)>,
    /// Its peer (a rank of its communicator), tag and communicator.
    pub env: Option<(i32, i32, u64)>,
}

/// Everything, behind one lock.
#[derive(Default)]
pub struct Registry {
    pub comms: HashMap<u64, CommInfo>,
    pub freed_comms: HashSet<u64>,
    pub groups: HashMap<u64, Origin>,
    pub types: HashMap<u64, TypeInfo>,
    pub freed_types: HashSet<u64>,
    pub ops: HashMap<u64, OpInfo>,
    pub freed_ops: HashSet<u64>,
    pub op_seq: u64,
    pub requests: HashMap<u64, RequestInfo>,
}

static REGISTRY: LazyLock<Mutex<Registry>> = LazyLock::new(|| Mutex::new(Registry::default()));

/// The registry, locked. Never held across a blocking MPI call.
pub fn lock() -> MutexGuard<'static, Registry> {
    REGISTRY.lock()
}

/// A handle's key in the maps.
pub fn key<H: Handle>(h: H) -> u64 {
    h.bits()
}
