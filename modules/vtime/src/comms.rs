//! Shadow communicators: each communicator the application has gets a
//! duplicate of the module's own, on which the timestamps of its messages
//! and the reductions of its collectives' entry times travel. Created when
//! the application's communicator is (every member does it, so the
//! duplicate, a collective call, is matched), freed when it is freed.

use crate::state::{self, CommInfo};
use pnmpi_mpi_sys::ffi::{self, MPI_Group};
use pnmpi_mpi_sys::Handle;
use pnmpi_sdk::{constants, native, Comm};
use std::ffi::c_int;

/// The ranks in `to` of `group`'s members, in group order.
pub fn translate(group: MPI_Group, to: MPI_Group) -> Vec<c_int> {
    let mut n: c_int = 0;
    // SAFETY: `group` is a valid group; `n` is local.
    unsafe { ffi::PMPI_Group_size(group, &mut n) };
    let ranks: Vec<c_int> = (0..n.max(0)).collect();
    let mut out = vec![0 as c_int; ranks.len()];
    // SAFETY: both arrays hold `n` ints; `to` is a valid group.
    unsafe { ffi::PMPI_Group_translate_ranks(group, n, ranks.as_ptr(), to, out.as_mut_ptr()) };
    out
}

/// World ranks of `group`'s members, in group order.
fn world_ranks(group: MPI_Group) -> Vec<u32> {
    // SAFETY: MPI_Group is a handle for which zeroes are a placeholder that
    // MPI_Comm_group overwrites.
    let mut world_group: MPI_Group = unsafe { std::mem::zeroed() };
    // SAFETY: the world group is local and freed below.
    unsafe { ffi::PMPI_Comm_group(constants::COMM_WORLD(), &mut world_group) };
    let world = translate(group, world_group);
    // SAFETY: the group MPI_Comm_group returned.
    unsafe { ffi::PMPI_Group_free(&mut world_group) };
    world.iter().map(|&r| u32::try_from(r).unwrap_or(0)).collect()
}

/// The local (and, for an intercommunicator, remote) group of `comm`.
fn groups(comm: Comm, inter: bool) -> (Vec<u32>, Option<Vec<u32>>) {
    // SAFETY: zeroes are a placeholder that MPI_Comm_group overwrites.
    let mut group: MPI_Group = unsafe { std::mem::zeroed() };
    // SAFETY: `comm` is a valid communicator; the group is freed below.
    unsafe { ffi::PMPI_Comm_group(comm, &mut group) };
    let local = world_ranks(group);
    // SAFETY: the group MPI_Comm_group returned.
    unsafe { ffi::PMPI_Group_free(&mut group) };
    let remote = inter.then(|| {
        // SAFETY: as above, for the remote group of an intercommunicator.
        unsafe { ffi::PMPI_Comm_remote_group(comm, &mut group) };
        let r = world_ranks(group);
        // SAFETY: the group MPI_Comm_remote_group returned.
        unsafe { ffi::PMPI_Group_free(&mut group) };
        r
    });
    (local, remote)
}

/// World ranks of intracommunicator `comm`'s members, in rank order.
pub fn members(comm: Comm) -> Vec<u32> {
    groups(comm, false).0
}

/// The application has a new communicator `comm` (every member calls
/// this at the same point): gives it a shadow.
pub fn created(comm: Comm) {
    if comm == constants::COMM_NULL() {
        return;
    }
    if state::with(|_| ()).is_none() {
        return;
    }
    let mut inter: c_int = 0;
    // SAFETY: `comm` is the valid communicator MPI just created.
    unsafe { ffi::PMPI_Comm_test_inter(comm, &mut inter) };
    let shadow = match native::comm_dup(comm) {
        Ok(s) => s,
        Err(e) => {
            pnmpi_sdk::say::warn(
                "vtime",
                format_args!("cannot duplicate a new communicator ({e}): its messages are not timed"),
            );
            return;
        }
    };
    let (local, remote) = groups(comm, inter != 0);
    let me = native::comm_rank(comm).unwrap_or(0).max(0) as u32;
    state::with(|st| {
        let nodes = local
            .iter()
            .map(|&r| st.node_of.get(r as usize).copied().unwrap_or(0))
            .collect();
        st.comms.insert(
            comm.bits(),
            CommInfo {
                shadow: shadow.bits(),
                inter: inter != 0,
                peers: remote.unwrap_or(local),
                nodes,
                me,
            },
        );
    });
}

/// Before MPI starts, under Open MPI: asks its shared-memory segments to
/// take POSIX names of their own (`OMPI_MCA_shmem=posix`), unless the user
/// chose a component. [`split_by_node`] leaves several node communicators
/// on one real node, and Open MPI 4.1's one-sided component names a
/// window's backing file by node, job and communicator id alone; two
/// target nodes' communicators on one real node get the same id, so two
/// windows made at once over them share the file, and one side's unlink
/// fails the other's `MPI_Win_allocate` (seen natively, with
/// `MPI_Comm_split` into halves). POSIX segments are named uniquely.
pub fn unique_shared_segments() {
    const SHMEM: &str = "OMPI_MCA_shmem";
    if pnmpi_mpi_sys::FLAVOR == "openmpi" && std::env::var_os(SHMEM).is_none() {
        std::env::set_var(SHMEM, "posix");
    }
}

/// `*comm`, made by `MPI_Comm_split_type`, holds the ranks of one real
/// node: where the target machine places them on several nodes, each
/// rank gets its target node's ranks instead (split from it, through the
/// modules below, and the real node's freed), as the program would on
/// the target, and as virtual ranks give it; its first rank says so once.
pub fn split_by_node(comm: &mut Comm) {
    let Some(Some((spread, size, me, node))) = state::with(|st| {
        st.comms.get(&comm.bits()).map(|c| {
            let mut nodes = c.nodes.clone();
            nodes.sort_unstable();
            nodes.dedup();
            let node = c.nodes.get(c.me as usize).copied().unwrap_or(0);
            (nodes.len(), c.nodes.len(), c.me, node)
        })
    }) else {
        return;
    };
    if spread < 2 {
        return;
    }
    let part = match pnmpi_sdk::next::comm_split(*comm, node as c_int, me as c_int) {
        Ok(p) => p,
        Err(e) => {
            pnmpi_sdk::say::warn(
                "vtime",
                format_args!("MPI_Comm_split_type: cannot split the real node's ranks by the target's nodes ({e}): they stay together"),
            );
            return;
        }
    };
    if me == 0 {
        pnmpi_sdk::say::warn(
            "vtime",
            format_args!(
                "MPI_Comm_split_type gave the real node's {size} ranks, which the target machine places on {spread} nodes: each rank gets its target node's ranks, as on the target"
            ),
        );
    }
    freed(*comm);
    let _ = pnmpi_sdk::next::comm_free(*comm);
    created(part);
    *comm = part;
}

/// The application frees `comm` (its handle before the call): frees the
/// shadow too.
pub fn freed(comm: Comm) {
    let Some(Some(info)) = state::with(|st| st.comms.remove(&comm.bits())) else {
        return;
    };
    if let Err(e) = native::comm_free(Comm::from_bits(info.shadow)) {
        pnmpi_sdk::say::warn("vtime", format_args!("cannot free a shadow communicator: {e}"));
    }
}
