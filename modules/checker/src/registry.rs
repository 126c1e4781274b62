//! What the checker knows of the application's MPI objects: the
//! communicators, groups, datatypes and operations it created and not yet
//! freed (with the site that created each, for leak reports), the handles
//! it freed (a later use is an error), and its requests.

use crate::origin::Origin;
use crate::sig::Sig;
use crate::site::Here;
use parking_lot::{Mutex, MutexGuard};
use pnmpi_sdk::sys::ffi::MPI_Comm;
use pnmpi_sdk::sys::Handle;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering::Relaxed};
use std::sync::LazyLock;

/// Hashes a handle (a pointer under Open MPI, an integer under MPICH) by
/// one multiplication: the maps are looked up on every checked call, and
/// their keys are not chosen by an adversary, so SipHash's cost buys
/// nothing here.
#[derive(Default)]
pub struct HandleHasher(u64);

impl Hasher for HandleHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.write_u64(u64::from(i));
    }
    #[inline]
    fn write_u64(&mut self, h: u64) {
        // Fibonacci hashing; the high bits, which hashbrown uses, mix all.
        self.0 = (self.0 ^ h).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(20);
    }
}

/// A map keyed by handles.
pub type Map<V> = HashMap<u64, V, BuildHasherDefault<HandleHasher>>;
/// A set of handles.
pub type Set = HashSet<u64, BuildHasherDefault<HandleHasher>>;

impl Origin {
    /// The call the wrapper at `here` makes.
    pub fn of(here: &Here) -> Origin {
        Origin {
            routine: here.routine,
            ra: here.ra(),
        }
    }
}

/// A communicator the checker knows.
#[derive(Clone, Copy, Debug)]
pub struct CommInfo {
    /// The checker's own duplicate, for its collective checks (0: none,
    /// e.g. an intercommunicator).
    pub shadow: u64,
    /// A second duplicate, on which the nonblocking collectives are
    /// compared: MPI matches them apart from the blocking ones (a rank may
    /// start one before a barrier that another rank makes first, as
    /// mpi4py's `Iagree` does).
    pub started: u64,
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
    /// Its blocks of basic elements overlap (found at commit, `layout`):
    /// it may be sent, not received into.
    pub overlaps: bool,
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
    /// A send's buffer, bytes and checksum at its start, when its data is
    /// contiguous: checked again at completion.
    pub checksum: Option<(usize, usize, u64)>,
    /// A persistent send's buffer, count and datatype, for its checksum
    /// at each start.
    pub args: Option<(usize, i32, u64)>,
    /// Its peer (a rank of its communicator), tag and communicator.
    pub env: Option<(i32, i32, u64)>,
    /// A nonblocking collective's communicator.
    pub coll: Option<u64>,
    /// A point-to-point operation's buffer, the bytes `[start, end)` it
    /// spans: no other operation may write them before it completes.
    pub span: Option<(usize, usize)>,
}

impl RequestInfo {
    /// A nonblocking collective on the communicator `comm` (its bits).
    pub fn collective(comm: u64) -> RequestInfo {
        RequestInfo {
            origin: Origin::default(),
            persistent: false,
            active: true,
            recv: false,
            checksum: None,
            args: None,
            env: None,
            coll: Some(comm),
            span: None,
        }
    }
}

/// Everything, behind one lock.
#[derive(Default)]
pub struct Registry {
    pub comms: Map<CommInfo>,
    pub freed_comms: Set,
    pub groups: Map<Origin>,
    pub types: Map<TypeInfo>,
    pub freed_types: Set,
    pub ops: Map<OpInfo>,
    pub freed_ops: Set,
    pub op_seq: u64,
    pub requests: Map<RequestInfo>,
}

static REGISTRY: LazyLock<Mutex<Registry>> = LazyLock::new(|| Mutex::new(Registry::default()));

/// `MPI_COMM_WORLD`'s duplicate and size, kept outside the lock: most
/// checked calls are on the world, and ask for both (0: not yet known,
/// or after `MPI_Finalize`).
static WORLD_SHADOW: AtomicU64 = AtomicU64::new(0);
static WORLD_SIZE: AtomicI32 = AtomicI32::new(0);
static WORLD_STARTED: AtomicU64 = AtomicU64::new(0);

/// Registers `MPI_COMM_WORLD`'s duplicates and size (0, 0, 0: forgets them).
pub fn set_world(shadow: u64, started: u64, size: i32) {
    WORLD_SHADOW.store(shadow, Relaxed);
    WORLD_STARTED.store(started, Relaxed);
    WORLD_SIZE.store(size, Relaxed);
}

/// Whether `comm` is `MPI_COMM_WORLD`.
#[inline]
pub fn is_world(comm: MPI_Comm) -> bool {
    comm.bits() == pnmpi_sdk::constants::COMM_WORLD().bits()
}

/// `MPI_COMM_WORLD`'s size, once known.
#[inline]
pub fn world_size() -> Option<i32> {
    Some(WORLD_SIZE.load(Relaxed)).filter(|&s| s > 0)
}

/// The checker's duplicate of `comm`, if it has one.
pub fn shadow(comm: MPI_Comm) -> Option<MPI_Comm> {
    let s = if is_world(comm) {
        WORLD_SHADOW.load(Relaxed)
    } else {
        lock().comms.get(&key(comm))?.shadow
    };
    (s != 0).then(|| MPI_Comm::from_bits(s))
}

/// The checker's duplicate of `comm` for its nonblocking collectives,
/// if it has one.
pub fn started_shadow(comm: MPI_Comm) -> Option<MPI_Comm> {
    let s = if is_world(comm) {
        WORLD_STARTED.load(Relaxed)
    } else {
        lock().comms.get(&key(comm))?.started
    };
    (s != 0).then(|| MPI_Comm::from_bits(s))
}

/// The registry, locked. Never held across a blocking MPI call.
pub fn lock() -> MutexGuard<'static, Registry> {
    REGISTRY.lock()
}

/// A handle's key in the maps.
pub fn key<H: Handle>(h: H) -> u64 {
    h.bits()
}
