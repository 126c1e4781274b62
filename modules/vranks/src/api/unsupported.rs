//! Routines this mode does not provide: each stops the run at its first
//! call, naming itself, rather than let the native MPI act on a virtual
//! handle (or on the whole process as if it were one rank). The list is
//! in docs/vranks.md; anything not listed here and not implemented in
//! this layer takes no communicator, request or group (datatypes,
//! operations, `MPI_Get_count`, `MPI_Error_string`, ...), and the native
//! MPI serves it.

#![allow(non_snake_case)]

use std::ffi::c_int;

/// Stops the run naming `routine`.
fn refuse(routine: &str) -> ! {
    super::fatal(
        routine,
        "not supported with virtual ranks (pnmpi run --vranks); see docs/vranks.md for what is",
    )
}

macro_rules! unsupported {
    ($($name:ident)*) => {$(
        /// Not supported with virtual ranks: stops the run.
        #[no_mangle]
        pub extern "C" fn $name() -> c_int {
            refuse(stringify!($name))
        }
    )*};
}

unsupported! {
    // One-sided routines on a window not provided.
    MPI_Win_set_attr MPI_Win_delete_attr MPI_Win_get_errhandler MPI_Win_call_errhandler
    MPI_Win_get_info MPI_Win_set_info MPI_Win_set_name MPI_Win_get_name
    // I/O.
    MPI_File_open MPI_File_delete
    // Process management and intercommunicators.
    MPI_Comm_spawn MPI_Comm_spawn_multiple MPI_Comm_get_parent MPI_Comm_accept MPI_Comm_connect
    MPI_Comm_join MPI_Comm_disconnect MPI_Open_port MPI_Close_port MPI_Publish_name
    MPI_Unpublish_name MPI_Lookup_name MPI_Intercomm_create MPI_Intercomm_merge
    MPI_Comm_remote_size MPI_Comm_remote_group
    // Communicator routines not provided.
    MPI_Comm_idup MPI_Comm_dup_with_info MPI_Comm_create_group
    MPI_Comm_set_attr MPI_Comm_delete_attr MPI_Attr_put MPI_Attr_get MPI_Attr_delete
    MPI_Comm_get_errhandler MPI_Comm_call_errhandler MPI_Comm_set_info MPI_Comm_get_info
    MPI_Comm_set_name MPI_Comm_get_name MPI_Errhandler_set MPI_Errhandler_get
    MPI_Group_union MPI_Group_intersection MPI_Group_difference MPI_Group_range_incl
    MPI_Group_range_excl
    // Topologies beyond Cartesian basics.
    MPI_Cart_sub MPI_Cart_map MPI_Graph_create MPI_Graph_get MPI_Graph_map MPI_Graph_neighbors
    MPI_Graph_neighbors_count MPI_Graphdims_get MPI_Topo_test MPI_Dist_graph_create
    MPI_Dist_graph_create_adjacent MPI_Dist_graph_neighbors MPI_Dist_graph_neighbors_count
    MPI_Neighbor_allgather MPI_Neighbor_allgatherv MPI_Neighbor_alltoall MPI_Neighbor_alltoallv
    MPI_Neighbor_alltoallw MPI_Ineighbor_allgather MPI_Ineighbor_allgatherv
    MPI_Ineighbor_alltoall MPI_Ineighbor_alltoallv MPI_Ineighbor_alltoallw
    // Collectives not provided.
    MPI_Alltoallw MPI_Ialltoallw
    MPI_Barrier_init MPI_Bcast_init MPI_Allreduce_init
    // Point-to-point extras.
    MPI_Cancel MPI_Request_get_status MPI_Grequest_start MPI_Grequest_complete
    MPI_Mprobe MPI_Improbe MPI_Mrecv MPI_Imrecv
}
