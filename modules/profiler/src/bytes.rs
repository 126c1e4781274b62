//! Bytes a call moves: count x type size, for point-to-point, collective,
//! one-sided and file routines whose count is one number. The send side
//! when the routine sends (the "sent message size" of mpiP), otherwise
//! the receive buffer's capacity. Routines with per-rank count arrays
//! (the `v` and `w` variants' receive or send sides) count the side that
//! is one number, or nothing (`Alltoallv`, `Alltoallw`, `Reduce_scatter`).

use pnmpi_mpi_sys::constants;
use pnmpi_sdk::{next, Datatype};
use std::ffi::c_void;

/// `MPI_IN_PLACE`: `(void *) 1` in Open MPI, `(void *) -1` in MPICH. The
/// SDK's constants do not have it (it is a cast macro like the handles).
fn in_place(buf: *const c_void) -> bool {
    let value = buf as usize;
    if pnmpi_mpi_sys::FLAVOR == "mpich" {
        value == usize::MAX
    } else {
        value == 1
    }
}

/// `count` elements of `datatype`, in bytes; 0 for a count that is not
/// positive (its datatype may then be anything) or a failed query.
pub fn sized(count: impl Into<i64>, datatype: Datatype) -> u64 {
    let count: i64 = count.into();
    if count <= 0 || datatype == constants::DATATYPE_NULL() {
        return 0;
    }
    let size = next::type_size(datatype).unwrap_or(0);
    u64::try_from(count.saturating_mul(i64::from(size))).unwrap_or(0)
}

/// As [`sized`], but 0 when `buf` is `MPI_IN_PLACE`: then MPI ignores the
/// count and datatype, which may be garbage.
pub fn sized_unless_in_place(buf: *const c_void, count: impl Into<i64>, datatype: Datatype) -> u64 {
    if in_place(buf) {
        0
    } else {
        sized(count, datatype)
    }
}

/// Whether the routine's bytes are received rather than sent (left out
/// of the report's sent-message sizes).
pub fn receives(routine: &str) -> bool {
    let base = routine.strip_suffix("_c").unwrap_or(routine);
    matches!(
        base,
        "MPI_Recv"
            | "MPI_Irecv"
            | "MPI_Mrecv"
            | "MPI_Imrecv"
            | "MPI_Scatter"
            | "MPI_Iscatter"
            | "MPI_Scatterv"
            | "MPI_Iscatterv"
    ) || base.starts_with("MPI_File_read")
        || base.starts_with("MPI_File_iread")
        || base == "MPI_Get"
        || base == "MPI_Rget"
}

/// The bytes expression of routine `$name`, whose C arguments are `$a`:
/// `moved!(MPI_Send; a0, a1, a2, a3, a4, a5)`.
macro_rules! moved {
    // buf, count, datatype, ...: point to point, Bcast, one-sided origins.
    (@at1 $a0:ident, $a1:ident, $a2:ident $(, $rest:ident)*) => {
        $crate::bytes::sized($a1, $a2)
    };
    // sendbuf (maybe MPI_IN_PLACE), sendcount, sendtype, ...: gathers, all-to-all.
    (@in_place1 $a0:ident, $a1:ident, $a2:ident $(, $rest:ident)*) => {
        $crate::bytes::sized_unless_in_place($a0, $a1, $a2)
    };
    // sendbuf, recvbuf, count, datatype, ...: reductions (count and type
    // stay valid with MPI_IN_PLACE).
    (@at2 $a0:ident, $a1:ident, $a2:ident, $a3:ident $(, $rest:ident)*) => {
        $crate::bytes::sized($a2, $a3)
    };
    // file handle, buf, count, datatype, ...
    (@file $a0:ident, $a1:ident, $a2:ident, $a3:ident $(, $rest:ident)*) => {
        $crate::bytes::sized($a2, $a3)
    };
    // file handle, offset, buf, count, datatype, ...
    (@file_at $a0:ident, $a1:ident, $a2:ident, $a3:ident, $a4:ident $(, $rest:ident)*) => {
        $crate::bytes::sized($a3, $a4)
    };
    // sendbuf, sendcount, sendtype, recvbuf (maybe MPI_IN_PLACE), recvcount, recvtype, ...: Scatter.
    (@scatter $a0:ident, $a1:ident, $a2:ident, $a3:ident, $a4:ident, $a5:ident $(, $rest:ident)*) => {
        $crate::bytes::sized_unless_in_place($a3, $a4, $a5)
    };
    // sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, ...: Scatterv.
    (@scatterv $a0:ident, $a1:ident, $a2:ident, $a3:ident, $a4:ident, $a5:ident, $a6:ident
     $(, $rest:ident)*) => {
        $crate::bytes::sized_unless_in_place($a4, $a5, $a6)
    };

    (MPI_Send; $($a:ident),*) => { $crate::bytes::moved!(@at1 $($a),*) };
    (MPI_Bsend; $($a:ident),*) => { $crate::bytes::moved!(@at1 $($a),*) };
    (MPI_Ssend; $($a:ident),*) => { $crate::bytes::moved!(@at1 $($a),*) };
    (MPI_Rsend; $($a:ident),*) => { $crate::bytes::moved!(@at1 $($a),*) };
    (MPI_Isend; $($a:ident),*) => { $crate::bytes::moved!(@at1 $($a),*) };
    (MPI_Ibsend; $($a:ident),*) => { $crate::bytes::moved!(@at1 $($a),*) };
    (MPI_Issend; $($a:ident),*) => { $crate::bytes::moved!(@at1 $($a),*) };
    (MPI_Irsend; $($a:ident),*) => { $crate::bytes::moved!(@at1 $($a),*) };
    (MPI_Recv; $($a:ident),*) => { $crate::bytes::moved!(@at1 $($a),*) };
    (MPI_Irecv; $($a:ident),*) => { $crate::bytes::moved!(@at1 $($a),*) };
    (MPI_Mrecv; $($a:ident),*) => { $crate::bytes::moved!(@at1 $($a),*) };
    (MPI_Imrecv; $($a:ident),*) => { $crate::bytes::moved!(@at1 $($a),*) };
    (MPI_Sendrecv; $($a:ident),*) => { $crate::bytes::moved!(@at1 $($a),*) };
    (MPI_Sendrecv_replace; $($a:ident),*) => { $crate::bytes::moved!(@at1 $($a),*) };
    (MPI_Bcast; $($a:ident),*) => { $crate::bytes::moved!(@at1 $($a),*) };
    (MPI_Ibcast; $($a:ident),*) => { $crate::bytes::moved!(@at1 $($a),*) };
    (MPI_Put; $($a:ident),*) => { $crate::bytes::moved!(@at1 $($a),*) };
    (MPI_Rput; $($a:ident),*) => { $crate::bytes::moved!(@at1 $($a),*) };
    (MPI_Get; $($a:ident),*) => { $crate::bytes::moved!(@at1 $($a),*) };
    (MPI_Rget; $($a:ident),*) => { $crate::bytes::moved!(@at1 $($a),*) };
    (MPI_Accumulate; $($a:ident),*) => { $crate::bytes::moved!(@at1 $($a),*) };
    (MPI_Raccumulate; $($a:ident),*) => { $crate::bytes::moved!(@at1 $($a),*) };
    (MPI_Get_accumulate; $($a:ident),*) => { $crate::bytes::moved!(@at1 $($a),*) };
    (MPI_Rget_accumulate; $($a:ident),*) => { $crate::bytes::moved!(@at1 $($a),*) };
    (MPI_Gather; $($a:ident),*) => { $crate::bytes::moved!(@in_place1 $($a),*) };
    (MPI_Igather; $($a:ident),*) => { $crate::bytes::moved!(@in_place1 $($a),*) };
    (MPI_Gatherv; $($a:ident),*) => { $crate::bytes::moved!(@in_place1 $($a),*) };
    (MPI_Igatherv; $($a:ident),*) => { $crate::bytes::moved!(@in_place1 $($a),*) };
    (MPI_Allgather; $($a:ident),*) => { $crate::bytes::moved!(@in_place1 $($a),*) };
    (MPI_Iallgather; $($a:ident),*) => { $crate::bytes::moved!(@in_place1 $($a),*) };
    (MPI_Allgatherv; $($a:ident),*) => { $crate::bytes::moved!(@in_place1 $($a),*) };
    (MPI_Iallgatherv; $($a:ident),*) => { $crate::bytes::moved!(@in_place1 $($a),*) };
    (MPI_Alltoall; $($a:ident),*) => { $crate::bytes::moved!(@in_place1 $($a),*) };
    (MPI_Ialltoall; $($a:ident),*) => { $crate::bytes::moved!(@in_place1 $($a),*) };
    (MPI_Neighbor_allgather; $($a:ident),*) => { $crate::bytes::moved!(@at1 $($a),*) };
    (MPI_Neighbor_allgatherv; $($a:ident),*) => { $crate::bytes::moved!(@at1 $($a),*) };
    (MPI_Neighbor_alltoall; $($a:ident),*) => { $crate::bytes::moved!(@at1 $($a),*) };
    (MPI_Reduce; $($a:ident),*) => { $crate::bytes::moved!(@at2 $($a),*) };
    (MPI_Ireduce; $($a:ident),*) => { $crate::bytes::moved!(@at2 $($a),*) };
    (MPI_Allreduce; $($a:ident),*) => { $crate::bytes::moved!(@at2 $($a),*) };
    (MPI_Iallreduce; $($a:ident),*) => { $crate::bytes::moved!(@at2 $($a),*) };
    (MPI_Reduce_local; $($a:ident),*) => { $crate::bytes::moved!(@at2 $($a),*) };
    (MPI_Scan; $($a:ident),*) => { $crate::bytes::moved!(@at2 $($a),*) };
    (MPI_Iscan; $($a:ident),*) => { $crate::bytes::moved!(@at2 $($a),*) };
    (MPI_Exscan; $($a:ident),*) => { $crate::bytes::moved!(@at2 $($a),*) };
    (MPI_Iexscan; $($a:ident),*) => { $crate::bytes::moved!(@at2 $($a),*) };
    (MPI_Reduce_scatter_block; $($a:ident),*) => { $crate::bytes::moved!(@at2 $($a),*) };
    (MPI_Ireduce_scatter_block; $($a:ident),*) => { $crate::bytes::moved!(@at2 $($a),*) };
    (MPI_Scatter; $($a:ident),*) => { $crate::bytes::moved!(@scatter $($a),*) };
    (MPI_Iscatter; $($a:ident),*) => { $crate::bytes::moved!(@scatter $($a),*) };
    (MPI_Scatterv; $($a:ident),*) => { $crate::bytes::moved!(@scatterv $($a),*) };
    (MPI_Iscatterv; $($a:ident),*) => { $crate::bytes::moved!(@scatterv $($a),*) };
    (MPI_File_read; $($a:ident),*) => { $crate::bytes::moved!(@file $($a),*) };
    (MPI_File_read_all; $($a:ident),*) => { $crate::bytes::moved!(@file $($a),*) };
    (MPI_File_read_shared; $($a:ident),*) => { $crate::bytes::moved!(@file $($a),*) };
    (MPI_File_read_ordered; $($a:ident),*) => { $crate::bytes::moved!(@file $($a),*) };
    (MPI_File_iread; $($a:ident),*) => { $crate::bytes::moved!(@file $($a),*) };
    (MPI_File_write; $($a:ident),*) => { $crate::bytes::moved!(@file $($a),*) };
    (MPI_File_write_all; $($a:ident),*) => { $crate::bytes::moved!(@file $($a),*) };
    (MPI_File_write_shared; $($a:ident),*) => { $crate::bytes::moved!(@file $($a),*) };
    (MPI_File_write_ordered; $($a:ident),*) => { $crate::bytes::moved!(@file $($a),*) };
    (MPI_File_iwrite; $($a:ident),*) => { $crate::bytes::moved!(@file $($a),*) };
    (MPI_File_read_at; $($a:ident),*) => { $crate::bytes::moved!(@file_at $($a),*) };
    (MPI_File_read_at_all; $($a:ident),*) => { $crate::bytes::moved!(@file_at $($a),*) };
    (MPI_File_iread_at; $($a:ident),*) => { $crate::bytes::moved!(@file_at $($a),*) };
    (MPI_File_write_at; $($a:ident),*) => { $crate::bytes::moved!(@file_at $($a),*) };
    (MPI_File_write_at_all; $($a:ident),*) => { $crate::bytes::moved!(@file_at $($a),*) };
    (MPI_File_iwrite_at; $($a:ident),*) => { $crate::bytes::moved!(@file_at $($a),*) };
    // MPI 4 large-count variants (MPICH): the same arguments, MPI_Count counts.
    (MPI_Send_c; $($a:ident),*) => { $crate::bytes::moved!(@at1 $($a),*) };
    (MPI_Isend_c; $($a:ident),*) => { $crate::bytes::moved!(@at1 $($a),*) };
    (MPI_Ssend_c; $($a:ident),*) => { $crate::bytes::moved!(@at1 $($a),*) };
    (MPI_Recv_c; $($a:ident),*) => { $crate::bytes::moved!(@at1 $($a),*) };
    (MPI_Irecv_c; $($a:ident),*) => { $crate::bytes::moved!(@at1 $($a),*) };
    (MPI_Bcast_c; $($a:ident),*) => { $crate::bytes::moved!(@at1 $($a),*) };
    (MPI_Reduce_c; $($a:ident),*) => { $crate::bytes::moved!(@at2 $($a),*) };
    (MPI_Allreduce_c; $($a:ident),*) => { $crate::bytes::moved!(@at2 $($a),*) };
    (MPI_Gather_c; $($a:ident),*) => { $crate::bytes::moved!(@in_place1 $($a),*) };
    (MPI_Allgather_c; $($a:ident),*) => { $crate::bytes::moved!(@in_place1 $($a),*) };
    (MPI_Alltoall_c; $($a:ident),*) => { $crate::bytes::moved!(@in_place1 $($a),*) };
    ($other:ident; $($a:ident),*) => {
        0
    };
}

pub(crate) use moved;
