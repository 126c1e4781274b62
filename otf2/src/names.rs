//! What OTF2 calls an MPI routine: its region role and, for collectives,
//! its collective operation, from the routine's name.

use crate::ffi;
use pnmpi_trace::routine::{classify, Coll, RoutineKind};

/// The region role Score-P gives the routine.
pub fn role(name: &str) -> ffi::OTF2_RegionRole {
    (match classify(name) {
        RoutineKind::Send { .. }
        | RoutineKind::Recv { .. }
        | RoutineKind::Sendrecv
        | RoutineKind::Start
        | RoutineKind::Complete
        | RoutineKind::Cancel => ffi::OTF2_REGION_ROLE_POINT2POINT,
        RoutineKind::Collective { op, .. } => match op {
            Coll::Barrier => ffi::OTF2_REGION_ROLE_BARRIER,
            Coll::Bcast | Coll::Scatter => ffi::OTF2_REGION_ROLE_COLL_ONE2ALL,
            Coll::Reduce | Coll::Gather => ffi::OTF2_REGION_ROLE_COLL_ALL2ONE,
            Coll::Allreduce | Coll::Allgather | Coll::Alltoall | Coll::ReduceScatter => {
                ffi::OTF2_REGION_ROLE_COLL_ALL2ALL
            }
            Coll::Scan => ffi::OTF2_REGION_ROLE_COLL_OTHER,
        },
        RoutineKind::Communicator | RoutineKind::Other => ffi::OTF2_REGION_ROLE_FUNCTION,
    }) as ffi::OTF2_RegionRole
}

/// The collective operation of a collective routine (blocking,
/// nonblocking or persistent form), `None` for other routines.
pub fn collective_op(name: &str) -> Option<ffi::OTF2_CollectiveOp> {
    let base = name.strip_prefix("MPI_").unwrap_or(name);
    let base = base.strip_suffix("_c").unwrap_or(base);
    let base = base.strip_suffix("_init").unwrap_or(base).to_ascii_lowercase();
    let op = |b: &str| {
        Some(match b {
            "barrier" => ffi::OTF2_COLLECTIVE_OP_BARRIER,
            "bcast" => ffi::OTF2_COLLECTIVE_OP_BCAST,
            "gather" => ffi::OTF2_COLLECTIVE_OP_GATHER,
            "gatherv" => ffi::OTF2_COLLECTIVE_OP_GATHERV,
            "scatter" => ffi::OTF2_COLLECTIVE_OP_SCATTER,
            "scatterv" => ffi::OTF2_COLLECTIVE_OP_SCATTERV,
            "allgather" => ffi::OTF2_COLLECTIVE_OP_ALLGATHER,
            "allgatherv" => ffi::OTF2_COLLECTIVE_OP_ALLGATHERV,
            "alltoall" => ffi::OTF2_COLLECTIVE_OP_ALLTOALL,
            "alltoallv" => ffi::OTF2_COLLECTIVE_OP_ALLTOALLV,
            "alltoallw" => ffi::OTF2_COLLECTIVE_OP_ALLTOALLW,
            "allreduce" => ffi::OTF2_COLLECTIVE_OP_ALLREDUCE,
            "reduce" => ffi::OTF2_COLLECTIVE_OP_REDUCE,
            "reduce_scatter" => ffi::OTF2_COLLECTIVE_OP_REDUCE_SCATTER,
            "reduce_scatter_block" => ffi::OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK,
            "scan" => ffi::OTF2_COLLECTIVE_OP_SCAN,
            "exscan" => ffi::OTF2_COLLECTIVE_OP_EXSCAN,
            _ => return None,
        } as ffi::OTF2_CollectiveOp)
    };
    op(&base).or_else(|| base.strip_prefix('i').and_then(op))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_and_roles() {
        assert_eq!(
            collective_op("MPI_Allreduce"),
            Some(ffi::OTF2_COLLECTIVE_OP_ALLREDUCE as _)
        );
        assert_eq!(
            collective_op("MPI_Iallreduce"),
            Some(ffi::OTF2_COLLECTIVE_OP_ALLREDUCE as _)
        );
        assert_eq!(
            collective_op("MPI_Ibarrier"),
            Some(ffi::OTF2_COLLECTIVE_OP_BARRIER as _)
        );
        assert_eq!(
            collective_op("MPI_Bcast_init"),
            Some(ffi::OTF2_COLLECTIVE_OP_BCAST as _)
        );
        assert_eq!(collective_op("MPI_Isend"), None);
        assert_eq!(role("MPI_Isend"), ffi::OTF2_REGION_ROLE_POINT2POINT as _);
        assert_eq!(role("MPI_Bcast"), ffi::OTF2_REGION_ROLE_COLL_ONE2ALL as _);
        assert_eq!(role("MPI_Comm_rank"), ffi::OTF2_REGION_ROLE_FUNCTION as _);
    }
}
