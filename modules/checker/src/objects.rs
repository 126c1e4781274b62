//! Wrappers of the routines that create and free communicators, groups,
//! datatypes and operations: each new object is registered with its
//! creation site (a leak report names it); each freed handle is
//! remembered (a later use is reported); a new communicator gets the
//! checker's own duplicate, for the collective checks.

use crate::args;
use crate::consts::Err;
use crate::gate::gate;
use crate::origin::Origin;
use crate::registry::{self, key, CommInfo, OpInfo, TypeInfo};
use crate::site::Here;
use crate::types;
use pnmpi_sdk::constants as mpi;
use pnmpi_sdk::raw::routine;
use pnmpi_sdk::sys::ffi::{MPI_Comm, MPI_Datatype, MPI_Group, MPI_Op};
use pnmpi_sdk::sys::Handle;

/// The checker's duplicate of `comm` (0 for an intercommunicator, whose
/// collectives are not compared). Collective over `comm`: called by
/// every rank that got it, right after the call that made it.
pub fn shadow_of(comm: MPI_Comm) -> u64 {
    if args::is_inter(comm) {
        return 0;
    }
    pnmpi_sdk::native::comm_dup(comm).map_or(0, |c| c.bits())
}

/// Registers a communicator the application made.
fn new_comm(here: &Here, comm: MPI_Comm) {
    if comm.bits() == mpi::COMM_NULL().bits() {
        return;
    }
    let (shadow, started) = (shadow_of(comm), shadow_of(comm));
    let mut reg = registry::lock();
    reg.freed_comms.remove(&key(comm));
    reg.comms.insert(
        key(comm),
        CommInfo {
            shadow,
            started,
            origin: Some(Origin::of(here)),
        },
    );
}

/// A communicator handle `MPI_Comm_idup` or a dynamic-process routine
/// gave: MPI may have reused a freed one, which is valid again. Not
/// registered: the checker cannot duplicate it before `MPI_Comm_idup`
/// completes, and an intercommunicator gets no duplicate anyway.
fn reused_comm(_here: &Here, comm: MPI_Comm) {
    registry::lock().freed_comms.remove(&key(comm));
}

fn new_group(here: &Here, group: MPI_Group) {
    if crate::consts::group_constants()
        .iter()
        .any(|g| g.bits() == group.bits())
    {
        return;
    }
    registry::lock().groups.insert(key(group), Origin::of(here));
}

fn new_type(here: &Here, dt: MPI_Datatype) {
    let mut reg = registry::lock();
    reg.freed_types.remove(&key(dt));
    reg.types.insert(
        key(dt),
        TypeInfo {
            origin: Origin::of(here),
            committed: false,
            sig: None,
            overlaps: false,
        },
    );
}

/// A datatype handle MPI made on demand (`MPI_Type_create_f90_*`,
/// `MPI_Type_match_size`): it may be a freed handle reused, valid again.
/// Not registered: the application must not free it.
fn reused_type(_here: &Here, dt: MPI_Datatype) {
    registry::lock().freed_types.remove(&key(dt));
}

/// Registers an operation with its creation number (collectives compare
/// user operations by it across ranks).
fn new_op(here: &Here, op: MPI_Op) {
    let o = Origin::of(here);
    let mut reg = registry::lock();
    reg.op_seq += 1;
    let seq = reg.op_seq;
    reg.freed_ops.remove(&key(op));
    reg.ops.insert(key(op), OpInfo { origin: o, seq });
}

/// A datatype constructor's count and old datatype.
fn constructor(count: i64, oldtype: MPI_Datatype) -> args::Checked {
    if count < 0 {
        return Err(args::refuse(
            Err::Count,
            "count",
            format!("count {count} is negative"),
        ));
    }
    if oldtype.bits() == 0 || oldtype.bits() == mpi::DATATYPE_NULL().bits() {
        let what = "the old datatype is null".to_string();
        return Err(args::refuse(Err::Type, "datatype", what));
    }
    // A freed old type is not refused here: MPICH hands a freed handle
    // out again, and a type made by a routine the checker does not
    // register (mpi4py's on MPICH) then looked freed; its use in
    // communication is checked there.
    Ok(())
}

/// A datatype constructor's block length.
fn block(blocklength: i64) -> args::Checked {
    if blocklength < 0 {
        return Err(args::refuse(
            Err::Count,
            "count",
            format!("block length {blocklength} is negative"),
        ));
    }
    Ok(())
}

/// A datatype constructor's `count` blocks: each block length (`lengths`,
/// `count` of them) not negative, and each type of `types` (a struct's,
/// else NULL) not null.
///
/// # Safety
/// `lengths` and `types`, when not NULL, hold `count` elements.
unsafe fn blocks<L: Copy + Into<i64>>(
    count: i64,
    lengths: *const L,
    types: *const MPI_Datatype,
) -> args::Checked {
    if count < 0 {
        return Err(args::refuse(
            Err::Count,
            "count",
            format!("count {count} is negative"),
        ));
    }
    for i in 0..count as usize {
        if !lengths.is_null() {
            // SAFETY: the caller's array of `count` block lengths.
            block(unsafe { *lengths.add(i) }.into())?;
        }
        if !types.is_null() {
            // SAFETY: the caller's array of `count` datatypes.
            let t = unsafe { *types.add(i) };
            if t.bits() == 0 || t.bits() == mpi::DATATYPE_NULL().bits() {
                let what = format!("the datatype of block {i} is null");
                return Err(args::refuse(Err::Type, "datatype", what));
            }
        }
    }
    Ok(())
}

/// Wrappers that register the object each routine creates (its new
/// handle's pointer checked, a datatype constructor's `count` and
/// old datatype `of`, and its other arguments' `checks`); `wrap` or,
/// for routines only some MPIs have, `wrap_optional`.
macro_rules! creates {
    ($wrap:ident: $($name:ident ($($arg:ident),*) -> $out:ident by $register:ident $(, count $count:ident of $old:ident)? $(, checks $checks:expr)?;)*) => {
        pnmpi_sdk::$wrap! {
            $(
                /// Registers the object it creates.
                fn $name($($arg),*) {
                    let here = Here::new(routine::$name);
                    if let Some(rc) = gate(&here) {
                        return rc;
                    }
                    let checked = args::out_param($out, "new handle's")
                        $(.and_then(|()| constructor(i64::from($count), $old)))?
                        // SAFETY: the arrays the routine reads, as MPI would.
                        $(.and_then(|()| unsafe { $checks }))?;
                    if let Err(r) = checked {
                        return r.report(&here);
                    }
                    let rc = next!();
                    if rc == mpi::SUCCESS() {
                        // SAFETY: MPI just wrote the new handle.
                        $register(&here, unsafe { *$out });
                    }
                    rc
                }
            )*
        }
    };
}

creates! { wrap:
    MPI_Comm_dup(comm, newcomm) -> newcomm by new_comm;
    MPI_Comm_split(comm, color, key_, newcomm) -> newcomm by new_comm;
    MPI_Comm_create(comm, group, newcomm) -> newcomm by new_comm;
    MPI_Comm_split_type(comm, split_type, key_, info, newcomm) -> newcomm by new_comm;
    MPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm) -> newcomm by new_comm;
    MPI_Cart_sub(comm, remain_dims, newcomm) -> newcomm by new_comm;
    MPI_Comm_dup_with_info(comm, info, newcomm) -> newcomm by new_comm;
    MPI_Comm_create_group(comm, group, tag, newcomm) -> newcomm by new_comm;
    MPI_Intercomm_create(local_comm, local_leader, peer_comm, remote_leader, tag, newintercomm) -> newintercomm by new_comm;
    MPI_Intercomm_merge(intercomm, high, newintracomm) -> newintracomm by new_comm;
    MPI_Graph_create(comm_old, nnodes, index, edges, reorder, comm_graph) -> comm_graph by new_comm;
    MPI_Dist_graph_create(comm_old, n, sources, degrees, destinations, weights, info, reorder, comm_dist_graph) -> comm_dist_graph by new_comm;
    MPI_Dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights, outdegree, destinations, destweights, info, reorder, comm_dist_graph) -> comm_dist_graph by new_comm;
    MPI_Comm_idup(comm, newcomm, request) -> newcomm by reused_comm;
    MPI_Comm_accept(port_name, info, root, comm, newcomm) -> newcomm by reused_comm;
    MPI_Comm_connect(port_name, info, root, comm, newcomm) -> newcomm by reused_comm;
    MPI_Comm_join(fd, intercomm) -> intercomm by reused_comm;
    MPI_Comm_get_parent(parent) -> parent by reused_comm;
    MPI_Comm_group(comm, group) -> group by new_group;
    MPI_Group_incl(group, n, ranks, newgroup) -> newgroup by new_group;
    MPI_Group_excl(group, n, ranks, newgroup) -> newgroup by new_group;
    MPI_Group_range_incl(group, n, ranges, newgroup) -> newgroup by new_group;
    MPI_Group_range_excl(group, n, ranges, newgroup) -> newgroup by new_group;
    MPI_Group_union(group1, group2, newgroup) -> newgroup by new_group;
    MPI_Group_intersection(group1, group2, newgroup) -> newgroup by new_group;
    MPI_Group_difference(group1, group2, newgroup) -> newgroup by new_group;
    MPI_Type_contiguous(count, oldtype, newtype) -> newtype by new_type, count count of oldtype;
    MPI_Type_vector(count, blocklength, stride, oldtype, newtype) -> newtype by new_type, count count of oldtype, checks block(i64::from(blocklength));
    MPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype) -> newtype by new_type, count count of oldtype, checks block(i64::from(blocklength));
    MPI_Type_indexed(count, blocklengths, displs, oldtype, newtype) -> newtype by new_type, count count of oldtype, checks blocks(i64::from(count), blocklengths, std::ptr::null());
    MPI_Type_create_hindexed(count, blocklengths, displs, oldtype, newtype) -> newtype by new_type, count count of oldtype, checks blocks(i64::from(count), blocklengths, std::ptr::null());
    MPI_Type_create_indexed_block(count, blocklength, displs, oldtype, newtype) -> newtype by new_type, count count of oldtype, checks block(i64::from(blocklength));
    MPI_Type_create_hindexed_block(count, blocklength, displs, oldtype, newtype) -> newtype by new_type, count count of oldtype, checks block(i64::from(blocklength));
    MPI_Type_create_struct(count, blocklengths, displs, types_, newtype) -> newtype by new_type, checks blocks(i64::from(count), blocklengths, types_);
    MPI_Type_create_subarray(ndims, sizes, subsizes, starts, order, oldtype, newtype) -> newtype by new_type;
    MPI_Type_create_resized(oldtype, lb, extent, newtype) -> newtype by new_type;
    MPI_Type_dup(oldtype, newtype) -> newtype by new_type;
    MPI_Type_create_f90_integer(r, newtype) -> newtype by reused_type;
    MPI_Type_create_f90_real(p, r, newtype) -> newtype by reused_type;
    MPI_Type_create_f90_complex(p, r, newtype) -> newtype by reused_type;
    MPI_Type_match_size(typeclass, size, datatype) -> datatype by reused_type;
    MPI_Type_create_darray(size, rank, ndims, gsizes, distribs, dargs, psizes, order, oldtype, newtype) -> newtype by new_type;
    MPI_Comm_remote_group(comm, group) -> group by new_group;
    MPI_Win_get_group(win, group) -> group by new_group;
    MPI_Comm_spawn(command, argv, maxprocs, info, root, comm, intercomm, array_of_errcodes) -> intercomm by reused_comm;
    MPI_Comm_spawn_multiple(count, array_of_commands, array_of_argv, array_of_maxprocs, array_of_info, root, comm, intercomm, array_of_errcodes) -> intercomm by reused_comm;
    MPI_Op_create(user_fn, commute, op) -> op by new_op;
}

// MPI 4's creators (MPICH 4 has them, Open MPI 4.1 not), and MPI 1's,
// which an MPI may still export: MPI may give them a freed handle again.
creates! { wrap_optional:
    MPI_Comm_idup_with_info(comm, info, newcomm, request) -> newcomm by reused_comm;
    MPI_Comm_create_from_group(group, stringtag, info, errhandler, newcomm) -> newcomm by new_comm;
    MPI_Intercomm_create_from_groups(local_group, local_leader, remote_group, remote_leader, stringtag, info, errhandler, newintercomm) -> newintercomm by new_comm;
    MPI_Group_from_session_pset(session, pset_name, newgroup) -> newgroup by new_group;
    MPI_Type_contiguous_c(count, oldtype, newtype) -> newtype by new_type, count count of oldtype;
    MPI_Type_vector_c(count, blocklength, stride, oldtype, newtype) -> newtype by new_type, count count of oldtype;
    MPI_Type_create_hvector_c(count, blocklength, stride, oldtype, newtype) -> newtype by new_type, count count of oldtype;
    MPI_Type_indexed_c(count, blocklengths, displs, oldtype, newtype) -> newtype by new_type, count count of oldtype;
    MPI_Type_create_hindexed_c(count, blocklengths, displs, oldtype, newtype) -> newtype by new_type, count count of oldtype;
    MPI_Type_create_indexed_block_c(count, blocklength, displs, oldtype, newtype) -> newtype by new_type, count count of oldtype;
    MPI_Type_create_hindexed_block_c(count, blocklength, displs, oldtype, newtype) -> newtype by new_type, count count of oldtype;
    MPI_Type_create_struct_c(count, blocklengths, displs, types_, newtype) -> newtype by new_type;
    MPI_Type_create_subarray_c(ndims, sizes, subsizes, starts, order, oldtype, newtype) -> newtype by new_type;
    MPI_Type_create_resized_c(oldtype, lb, extent, newtype) -> newtype by new_type;
    MPI_Type_create_darray_c(size, rank, ndims, gsizes, distribs, dargs, psizes, order, oldtype, newtype) -> newtype by new_type;
    MPI_Type_hvector(count, blocklength, stride, oldtype, newtype) -> newtype by new_type, count count of oldtype;
    MPI_Type_hindexed(count, blocklengths, displs, oldtype, newtype) -> newtype by new_type, count count of oldtype;
    MPI_Type_struct(count, blocklengths, displs, types_, newtype) -> newtype by new_type;
    MPI_Op_create_c(user_fn, commute, op) -> op by new_op;
}

pnmpi_sdk::wrap! {
    /// Frees the checker's duplicate too; remembers the freed handle.
    fn MPI_Comm_free(comm) {
        let here = Here::new(routine::MPI_Comm_free);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        // SAFETY: the caller's communicator variable.
        let c = unsafe { *comm };
        if let Err(r) = args::comm(c) {
            return r.report(&here);
        }
        let rc = next!();
        if rc == mpi::SUCCESS() {
            let info = registry::lock().comms.remove(&key(c));
            registry::lock().freed_comms.insert(key(c));
            if let Some(info) = info.filter(|i| i.shadow != 0) {
                let started = info.started;
                if !crate::pending::none_on(started) {
                    crate::wait::block_on(&here, || {
                        crate::wait::waiting_for(Vec::new(), false, "the other ranks to start the nonblocking collectives it started on the communicator".into())
                    }, || {
                        crate::pending::progress();
                        Ok(crate::pending::none_on(started))
                    });
                }
                for s in [info.shadow, started].into_iter().filter(|&s| s != 0) {
                    let _ = pnmpi_sdk::native::comm_free(MPI_Comm::from_bits(s));
                }
            }
        }
        rc
    }

    /// Forgets the group.
    fn MPI_Group_free(group) {
        let here = Here::new(routine::MPI_Group_free);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        // SAFETY: the caller's group variable.
        let g = unsafe { *group };
        let rc = next!();
        if rc == mpi::SUCCESS() {
            registry::lock().groups.remove(&key(g));
        }
        rc
    }

    /// Marks the datatype committed and computes its signature.
    fn MPI_Type_commit(datatype) {
        let here = Here::new(routine::MPI_Type_commit);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        // SAFETY: the caller's datatype variable.
        let dt = unsafe { *datatype };
        if dt.bits() == mpi::DATATYPE_NULL().bits() || registry::lock().freed_types.contains(&key(dt)) {
            if let Err(r) = args::datatype(dt) {
                return r.report(&here);
            }
        }
        let rc = next!();
        if rc == mpi::SUCCESS() && types::predefined(dt) == 0 {
            let sig = types::walk(dt, 0);
            let blocks = types::blocks(dt).unwrap_or_default();
            let mut reg = registry::lock();
            let info = reg.types.entry(key(dt)).or_insert(TypeInfo {
                origin: Origin::default(),
                committed: true,
                sig: None,
                overlaps: false,
            });
            info.committed = true;
            info.sig = Some(sig);
            info.overlaps = crate::layout::overlapping(&blocks);
        }
        rc
    }

    /// The derived datatypes it returns are new handles, which MPI may
    /// have taken from freed ones: valid again.
    fn MPI_Type_get_contents(datatype, max_integers, max_addresses, max_datatypes, array_of_integers, array_of_addresses, array_of_datatypes) {
        let rc = next!();
        if rc == mpi::SUCCESS() {
            // SAFETY: the caller's array, of `max_datatypes` handles.
            unsafe { revived_types(datatype, max_datatypes as i64, array_of_datatypes) };
        }
        rc
    }

    /// Forgets the datatype; remembers the freed handle.
    fn MPI_Type_free(datatype) {
        let here = Here::new(routine::MPI_Type_free);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        // SAFETY: the caller's datatype variable.
        let dt = unsafe { *datatype };
        let rc = next!();
        if rc == mpi::SUCCESS() {
            let mut reg = registry::lock();
            reg.types.remove(&key(dt));
            reg.freed_types.insert(key(dt));
        }
        rc
    }

    /// Forgets the operation; remembers the freed handle.
    fn MPI_Op_free(op) {
        let here = Here::new(routine::MPI_Op_free);
        if let Some(rc) = gate(&here) {
            return rc;
        }
        // SAFETY: the caller's op variable.
        let o = unsafe { *op };
        let rc = next!();
        if rc == mpi::SUCCESS() {
            let mut reg = registry::lock();
            reg.ops.remove(&key(o));
            reg.freed_ops.insert(key(o));
        }
        rc
    }
}

pnmpi_sdk::wrap_optional! {
    /// As `MPI_Type_get_contents`.
    fn MPI_Type_get_contents_c(datatype, max_integers, max_addresses, max_large_counts, max_datatypes, array_of_integers, array_of_addresses, array_of_large_counts, array_of_datatypes) {
        let rc = next!();
        if rc == mpi::SUCCESS() {
            // SAFETY: the caller's array, of `max_datatypes` handles.
            unsafe { revived_types(datatype, max_datatypes as i64, array_of_datatypes) };
        }
        rc
    }
}

/// The datatypes `MPI_Type_get_contents` just wrote to `array` for
/// `datatype`'s constructor: new handles, which MPI may have taken from
/// freed ones, valid again.
///
/// # Safety
/// `array` holds `max` handles, the first ones written by MPI.
unsafe fn revived_types(datatype: MPI_Datatype, max: i64, array: *const MPI_Datatype) {
    let (mut ni, mut na, mut nd, mut combiner) = (0, 0, 0, 0);
    // SAFETY: local out-parameters; MPI accepted the datatype.
    let env = unsafe {
        pnmpi_sdk::sys::ffi::PMPI_Type_get_envelope(datatype, &mut ni, &mut na, &mut nd, &mut combiner)
    };
    if env != mpi::SUCCESS() {
        return;
    }
    let mut reg = registry::lock();
    for i in 0..i64::from(nd).clamp(0, max.max(0)) as usize {
        // SAFETY: MPI wrote the envelope's number of handles, at most
        // `max`, into the caller's array.
        reg.freed_types.remove(&key(unsafe { *array.add(i) }));
    }
}
