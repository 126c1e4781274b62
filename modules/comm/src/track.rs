//! Communicators followed through the calls that make and free them, and
//! the services that describe them.

use crate::registry::{leader, Kind, Record, Registry};
use pnmpi_sdk::constants;
use pnmpi_sdk::services::{self, ServiceFn};
use pnmpi_sdk::sys::ffi::{self, MPI_Comm, MPI_Group};
use pnmpi_sdk::sys::Handle;
use std::ffi::c_int;
use std::sync::{Mutex, MutexGuard};

/// `PNMPI_SUCCESS` and `PNMPI_FAILURE`.
const SUCCESS: c_int = 0;
const FAILURE: c_int = -1;

/// `PNMPIMOD_Comm_Info_t`: a record, as C sees it.
#[repr(C)]
pub struct Info {
    pub id: c_int,
    pub leader: c_int,
    pub kind: c_int,
    pub parent: c_int,
    pub size: c_int,
    pub remote_size: c_int,
    pub rank: c_int,
    pub inter: c_int,
    pub freed: c_int,
    pub members: *const c_int,
    pub remote_members: *const c_int,
    pub comm: MPI_Comm,
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

fn registry() -> MutexGuard<'static, Option<Registry>> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

fn ok(routine: &'static str, rc: c_int) -> Result<(), String> {
    if rc == constants::SUCCESS() {
        Ok(())
    } else {
        Err(format!("{routine} failed with error {rc}"))
    }
}

/// The world ranks of `group`'s members, by rank in it (-1: not in
/// `MPI_COMM_WORLD`).
fn world_ranks(group: MPI_Group) -> Result<Vec<i32>, String> {
    let mut size: c_int = 0;
    // SAFETY: a group handle MPI gave us; a local out-parameter.
    ok("MPI_Group_size", unsafe {
        ffi::PMPI_Group_size(group, &mut size)
    })?;
    let ranks: Vec<c_int> = (0..size).collect();
    let mut world = vec![0 as c_int; ranks.len()];
    // SAFETY: a local out-parameter; the world group is freed below.
    let mut world_group = unsafe { std::mem::zeroed::<MPI_Group>() };
    // SAFETY: as above.
    ok("MPI_Comm_group", unsafe {
        ffi::PMPI_Comm_group(constants::COMM_WORLD(), &mut world_group)
    })?;
    // SAFETY: arrays of `size` ranks; both groups are live.
    let rc = unsafe {
        ffi::PMPI_Group_translate_ranks(group, size, ranks.as_ptr(), world_group, world.as_mut_ptr())
    };
    // SAFETY: the world group this function made.
    unsafe { ffi::PMPI_Group_free(&mut world_group) };
    ok("MPI_Group_translate_ranks", rc)?;
    let undefined = constants::UNDEFINED();
    Ok(world
        .into_iter()
        .map(|r| if r == undefined { -1 } else { r })
        .collect())
}

/// The world ranks of `comm`'s local group, or remote group (`remote`).
fn group_of(comm: MPI_Comm, remote: bool) -> Result<Vec<i32>, String> {
    // SAFETY: a local out-parameter, freed below.
    let mut group = unsafe { std::mem::zeroed::<MPI_Group>() };
    // SAFETY: a communicator MPI just made; the out-parameter above.
    let rc = unsafe {
        if remote {
            ffi::PMPI_Comm_remote_group(comm, &mut group)
        } else {
            ffi::PMPI_Comm_group(comm, &mut group)
        }
    };
    ok("MPI_Comm_group", rc)?;
    let ranks = world_ranks(group);
    // SAFETY: the group made above.
    unsafe { ffi::PMPI_Group_free(&mut group) };
    ranks
}

/// The maximum of the members' `proposal`s: one allreduce on an
/// intracommunicator; on an intercommunicator, where an allreduce gives
/// each group the other's maximum, a second one brings back its own.
fn agree(comm: MPI_Comm, inter: bool, proposal: c_int) -> Result<c_int, String> {
    let reduce = |value: c_int| -> Result<c_int, String> {
        let mut out: c_int = 0;
        // SAFETY: one int in, one out; `comm` is a live communicator.
        let rc = unsafe {
            ffi::PMPI_Allreduce(
                (&value as *const c_int).cast(),
                (&mut out as *mut c_int).cast(),
                1,
                constants::INT(),
                constants::MAX(),
                comm,
            )
        };
        ok("MPI_Allreduce", rc).map(|()| out)
    };
    let other = reduce(proposal)?;
    if inter {
        Ok(other.max(reduce(other)?))
    } else {
        Ok(other)
    }
}

/// A new communicator's record (a collective call on `comm`).
fn describe(comm: MPI_Comm, kind: Kind, parent: i32, proposal: i32) -> Result<Record, String> {
    let (mut inter, mut rank): (c_int, c_int) = (0, 0);
    // SAFETY: local out-parameters; `comm` is a communicator MPI made.
    ok("MPI_Comm_test_inter", unsafe {
        ffi::PMPI_Comm_test_inter(comm, &mut inter)
    })?;
    // SAFETY: as above.
    ok("MPI_Comm_rank", unsafe { ffi::PMPI_Comm_rank(comm, &mut rank) })?;
    let members = group_of(comm, false)?;
    let remote = if inter != 0 {
        group_of(comm, true)?
    } else {
        Vec::new()
    };
    let id = match kind {
        Kind::World => 0,
        Kind::SelfComm => 1,
        _ => agree(comm, inter != 0, proposal)?,
    };
    Ok(Record {
        id,
        leader: leader(&members, &remote),
        kind,
        parent,
        rank,
        members,
        remote,
        inter: inter != 0,
        freed: false,
        handle: comm.bits(),
    })
}

/// Records `comm`, made by `kind` from `parent`.
fn track(comm: MPI_Comm, kind: Kind, parent: MPI_Comm) {
    if comm == constants::COMM_NULL() {
        return;
    }
    let (parent_id, proposal) = {
        let guard = registry();
        let parent_id = guard
            .as_ref()
            .and_then(|r| r.get(parent.bits()))
            .map_or(-1, |c| c.id);
        (parent_id, guard.as_ref().map_or(2, Registry::proposal))
    };
    match describe(comm, kind, parent_id, proposal) {
        Ok(record) => {
            registry().get_or_insert_with(Registry::default).add(record);
        }
        Err(e) => pnmpi_sdk::say::warn(
            "comm",
            format_args!("cannot track a communicator made by {kind:?}: {e}"),
        ),
    }
}

/// After a call that made `*newcomm` from `parent`: records it if the
/// call succeeded; returns the call's result.
fn made(err: c_int, newcomm: *mut MPI_Comm, kind: Kind, parent: MPI_Comm) -> c_int {
    if err == constants::SUCCESS() {
        // SAFETY: MPI wrote the new communicator there.
        if let Some(&comm) = unsafe { newcomm.as_ref() } {
            track(comm, kind, parent);
        }
    }
    err
}

/// After `MPI_Init`: the two predefined communicators.
fn started(err: c_int) -> c_int {
    if err == constants::SUCCESS() {
        track(constants::COMM_WORLD(), Kind::World, constants::COMM_NULL());
        track(constants::COMM_SELF(), Kind::SelfComm, constants::COMM_NULL());
    }
    err
}

/// `record` as C sees it.
fn info(record: &Record) -> Info {
    Info {
        id: record.id,
        leader: record.leader,
        kind: record.kind as c_int,
        parent: record.parent,
        size: record.members.len() as c_int,
        remote_size: record.remote.len() as c_int,
        rank: record.rank,
        inter: c_int::from(record.inter),
        freed: c_int::from(record.freed),
        members: record.members.as_ptr(),
        remote_members: if record.inter {
            record.remote.as_ptr()
        } else {
            std::ptr::null()
        },
        comm: if record.freed {
            constants::COMM_NULL()
        } else {
            MPI_Comm::from_bits(record.handle)
        },
    }
}

/// Writes `record`'s info to `out` if both are there.
fn answer(record: Option<&Record>, out: *mut Info) -> c_int {
    match (record, out.is_null()) {
        (Some(r), false) => {
            // SAFETY: the caller's non-null out-parameter.
            unsafe { out.write(info(r)) };
            SUCCESS
        }
        _ => FAILURE,
    }
}

/// The service `getCommInfo`.
extern "C" fn get_info(comm: MPI_Comm, out: *mut Info) -> c_int {
    let guard = registry();
    answer(guard.as_ref().and_then(|r| r.get(comm.bits())), out)
}

/// The service `getCommCount`.
extern "C" fn get_count(out: *mut c_int) -> c_int {
    let n = registry().as_ref().map_or(0, |r| r.records.len());
    // SAFETY: the caller's out-parameter, or null (refused).
    match unsafe { out.as_mut() } {
        Some(out) => {
            *out = c_int::try_from(n).unwrap_or(c_int::MAX);
            SUCCESS
        }
        None => FAILURE,
    }
}

/// The service `getCommByIndex`.
extern "C" fn get_by_index(index: c_int, out: *mut Info) -> c_int {
    let guard = registry();
    let record = usize::try_from(index)
        .ok()
        .and_then(|i| guard.as_ref()?.records.get(i));
    answer(record, out)
}

pnmpi_sdk::module! {
    name: "comm-tracking",
    registration_point: || {
        // SAFETY: C callers cast each service back to the type its
        // signature names (pnmpi/comm.h), the function's own type;
        // function pointers of any signature have one representation.
        let (info, count, by_index, callbacks) = unsafe {
            (
                std::mem::transmute::<extern "C" fn(MPI_Comm, *mut Info) -> c_int, ServiceFn>(get_info),
                std::mem::transmute::<extern "C" fn(*mut c_int) -> c_int, ServiceFn>(get_count),
                std::mem::transmute::<extern "C" fn(c_int, *mut Info) -> c_int, ServiceFn>(get_by_index),
                std::mem::transmute::<extern "C" fn(*const crate::events::Callbacks) -> c_int, ServiceFn>(
                    crate::events::register_service,
                ),
            )
        };
        let offered = services::offer("getCommInfo", "mp", info)
            .and_then(|()| services::offer("getCommCount", "p", count))
            .and_then(|()| services::offer("getCommByIndex", "ip", by_index))
            .and_then(|()| services::offer("registerCallbacks", "p", callbacks));
        if let Err(e) = offered {
            pnmpi_sdk::say::warn("comm", format_args!("cannot offer its services: {e}"));
        }
    },
}

/// Marks the communicator at `comm` (read before the call) freed.
fn freed(err: c_int, comm: Option<MPI_Comm>) -> c_int {
    if let (true, Some(c)) = (err == constants::SUCCESS(), comm) {
        if let Some(r) = registry().as_mut() {
            r.free(c.bits());
        }
    }
    err
}

/// The communicator at `at`, read before a call that nulls it.
fn read(at: *const MPI_Comm) -> Option<MPI_Comm> {
    // SAFETY: MPI's contract: the application's communicator.
    unsafe { at.as_ref() }.copied()
}

pnmpi_sdk::wrap! {
    fn MPI_Init(argc, argv) {
        let err = started(next!());
        crate::events::init(argc, argv);
        err
    }

    fn MPI_Init_thread(argc, argv, _required, _provided) {
        let err = started(next!());
        crate::events::init(argc, argv);
        err
    }

    fn MPI_Comm_dup(comm, newcomm) {
        made(next!(), newcomm, Kind::Dup, comm)
    }

    fn MPI_Comm_dup_with_info(comm, _info, newcomm) {
        made(next!(), newcomm, Kind::Dup, comm)
    }

    fn MPI_Comm_split(comm, _color, _key, newcomm) {
        made(next!(), newcomm, Kind::Split, comm)
    }

    fn MPI_Comm_split_type(comm, _split_type, _key, _info, newcomm) {
        made(next!(), newcomm, Kind::Split, comm)
    }

    fn MPI_Comm_create(comm, _group, newcomm) {
        made(next!(), newcomm, Kind::Create, comm)
    }

    fn MPI_Comm_create_group(comm, _group, _tag, newcomm) {
        made(next!(), newcomm, Kind::Create, comm)
    }

    fn MPI_Cart_create(comm, _ndims, _dims, _periods, _reorder, newcomm) {
        made(next!(), newcomm, Kind::Cart, comm)
    }

    fn MPI_Cart_sub(comm, _remain_dims, newcomm) {
        made(next!(), newcomm, Kind::Cart, comm)
    }

    fn MPI_Graph_create(comm, _nnodes, _index, _edges, _reorder, newcomm) {
        made(next!(), newcomm, Kind::Graph, comm)
    }

    fn MPI_Dist_graph_create(comm, _n, _sources, _degrees, _destinations, _weights, _info, _reorder, newcomm) {
        made(next!(), newcomm, Kind::Graph, comm)
    }

    fn MPI_Dist_graph_create_adjacent(comm, _indegree, _sources, _sourceweights, _outdegree, _destinations, _destweights, _info, _reorder, newcomm) {
        made(next!(), newcomm, Kind::Graph, comm)
    }

    fn MPI_Intercomm_create(local_comm, _local_leader, _peer_comm, _remote_leader, _tag, newcomm) {
        made(next!(), newcomm, Kind::Intercomm, local_comm)
    }

    fn MPI_Intercomm_merge(intercomm, _high, newcomm) {
        made(next!(), newcomm, Kind::Merge, intercomm)
    }

    fn MPI_Comm_free(comm) {
        let before = read(comm);
        freed(next!(), before)
    }

    fn MPI_Comm_disconnect(comm) {
        let before = read(comm);
        freed(next!(), before)
    }
}
