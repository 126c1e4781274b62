//! Bytes a call moves: count x type size, for point-to-point, collective,
//! one-sided and file routines whose count is one number. The send side
//! when the routine sends (the "sent message size" of mpiP), otherwise
//! the receive buffer's capacity. Routines with per-rank count arrays
//! (the `v` and `w` variants' receive or send sides) count the side that
//! is one number, or nothing (`Alltoallv`, `Alltoallw`, `Reduce_scatter`).

use pnmpi_mpi_sys::constants;
use pnmpi_sdk::sizes::SizeCache;
use pnmpi_sdk::Datatype;
use pnmpi_trace::rma::RmaRole;
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
pub fn sized(sizes: &SizeCache, count: impl Into<i64>, datatype: Datatype) -> u64 {
    let count: i64 = count.into();
    if count <= 0 || datatype == constants::DATATYPE_NULL() {
        return 0;
    }
    u64::try_from(sizes.bytes(count, datatype)).unwrap_or(0)
}

/// As [`sized`], but 0 when `buf` is `MPI_IN_PLACE`: then MPI ignores the
/// count and datatype, which may be garbage.
pub fn sized_unless_in_place(
    sizes: &SizeCache,
    buf: *const c_void,
    count: impl Into<i64>,
    datatype: Datatype,
) -> u64 {
    if in_place(buf) {
        0
    } else {
        sized(sizes, count, datatype)
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

/// Whether the routine moves data one-sided (`MPI_Put`, `MPI_Get`, the
/// accumulates and atomics): its bytes are the origin's, reported apart
/// as mpiP does ("Aggregate RMA Origin Size").
pub fn one_sided(routine: &str) -> bool {
    matches!(RmaRole::of(routine), Some(RmaRole::Data(_)))
}

/// The bytes expression of routine `$name`, whose C arguments are `$a`:
/// `moved!(MPI_Send; sizes; a0, a1, a2, a3, a4, a5)`, with `sizes` the
/// thread's [`SizeCache`].
macro_rules! moved {
    // buf, count, datatype, ...: point to point, Bcast, one-sided origins.
    (@at1 $s:ident; $a0:ident, $a1:ident, $a2:ident $(, $rest:ident)*) => {
        $crate::bytes::sized($s, $a1, $a2)
    };
    // sendbuf (maybe MPI_IN_PLACE), sendcount, sendtype, ...: gathers, all-to-all.
    (@in_place1 $s:ident; $a0:ident, $a1:ident, $a2:ident $(, $rest:ident)*) => {
        $crate::bytes::sized_unless_in_place($s, $a0, $a1, $a2)
    };
    // sendbuf, recvbuf, count, datatype, ...: reductions (count and type
    // stay valid with MPI_IN_PLACE).
    (@at2 $s:ident; $a0:ident, $a1:ident, $a2:ident, $a3:ident $(, $rest:ident)*) => {
        $crate::bytes::sized($s, $a2, $a3)
    };
    // origin, result, datatype, ...: one element (`MPI_Fetch_and_op`).
    (@element3 $s:ident; $a0:ident, $a1:ident, $a2:ident $(, $rest:ident)*) => {
        $crate::bytes::sized($s, 1, $a2)
    };
    // origin, compare, result, datatype, ...: one element (`MPI_Compare_and_swap`).
    (@element4 $s:ident; $a0:ident, $a1:ident, $a2:ident, $a3:ident $(, $rest:ident)*) => {
        $crate::bytes::sized($s, 1, $a3)
    };
    // file handle, buf, count, datatype, ...
    (@file $s:ident; $a0:ident, $a1:ident, $a2:ident, $a3:ident $(, $rest:ident)*) => {
        $crate::bytes::sized($s, $a2, $a3)
    };
    // file handle, offset, buf, count, datatype, ...
    (@file_at $s:ident; $a0:ident, $a1:ident, $a2:ident, $a3:ident, $a4:ident $(, $rest:ident)*) => {
        $crate::bytes::sized($s, $a3, $a4)
    };
    // sendbuf, sendcount, sendtype, recvbuf (maybe MPI_IN_PLACE), recvcount, recvtype, ...: Scatter.
    (@scatter $s:ident; $a0:ident, $a1:ident, $a2:ident, $a3:ident, $a4:ident, $a5:ident $(, $rest:ident)*) => {
        $crate::bytes::sized_unless_in_place($s, $a3, $a4, $a5)
    };
    // sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, ...: Scatterv.
    (@scatterv $s:ident; $a0:ident, $a1:ident, $a2:ident, $a3:ident, $a4:ident, $a5:ident, $a6:ident
     $(, $rest:ident)*) => {
        $crate::bytes::sized_unless_in_place($s, $a4, $a5, $a6)
    };

    (MPI_Send; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Bsend; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Ssend; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Rsend; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Isend; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Ibsend; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Issend; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Irsend; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Recv; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Irecv; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Mrecv; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Imrecv; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Sendrecv; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Sendrecv_replace; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Bcast; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Ibcast; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Put; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Rput; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Get; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Rget; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Accumulate; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Raccumulate; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Get_accumulate; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Rget_accumulate; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Fetch_and_op; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@element3 $s; $($a),*) };
    (MPI_Compare_and_swap; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@element4 $s; $($a),*) };
    (MPI_Gather; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@in_place1 $s; $($a),*) };
    (MPI_Igather; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@in_place1 $s; $($a),*) };
    (MPI_Gatherv; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@in_place1 $s; $($a),*) };
    (MPI_Igatherv; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@in_place1 $s; $($a),*) };
    (MPI_Allgather; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@in_place1 $s; $($a),*) };
    (MPI_Iallgather; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@in_place1 $s; $($a),*) };
    (MPI_Allgatherv; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@in_place1 $s; $($a),*) };
    (MPI_Iallgatherv; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@in_place1 $s; $($a),*) };
    (MPI_Alltoall; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@in_place1 $s; $($a),*) };
    (MPI_Ialltoall; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@in_place1 $s; $($a),*) };
    (MPI_Neighbor_allgather; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Neighbor_allgatherv; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Neighbor_alltoall; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Reduce; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at2 $s; $($a),*) };
    (MPI_Ireduce; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at2 $s; $($a),*) };
    (MPI_Allreduce; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at2 $s; $($a),*) };
    (MPI_Iallreduce; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at2 $s; $($a),*) };
    (MPI_Reduce_local; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at2 $s; $($a),*) };
    (MPI_Scan; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at2 $s; $($a),*) };
    (MPI_Iscan; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at2 $s; $($a),*) };
    (MPI_Exscan; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at2 $s; $($a),*) };
    (MPI_Iexscan; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at2 $s; $($a),*) };
    (MPI_Reduce_scatter_block; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at2 $s; $($a),*) };
    (MPI_Ireduce_scatter_block; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at2 $s; $($a),*) };
    (MPI_Scatter; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@scatter $s; $($a),*) };
    (MPI_Iscatter; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@scatter $s; $($a),*) };
    (MPI_Scatterv; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@scatterv $s; $($a),*) };
    (MPI_Iscatterv; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@scatterv $s; $($a),*) };
    (MPI_File_read; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@file $s; $($a),*) };
    (MPI_File_read_all; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@file $s; $($a),*) };
    (MPI_File_read_shared; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@file $s; $($a),*) };
    (MPI_File_read_ordered; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@file $s; $($a),*) };
    (MPI_File_iread; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@file $s; $($a),*) };
    (MPI_File_write; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@file $s; $($a),*) };
    (MPI_File_write_all; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@file $s; $($a),*) };
    (MPI_File_write_shared; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@file $s; $($a),*) };
    (MPI_File_write_ordered; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@file $s; $($a),*) };
    (MPI_File_iwrite; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@file $s; $($a),*) };
    (MPI_File_read_at; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@file_at $s; $($a),*) };
    (MPI_File_read_at_all; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@file_at $s; $($a),*) };
    (MPI_File_iread_at; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@file_at $s; $($a),*) };
    (MPI_File_write_at; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@file_at $s; $($a),*) };
    (MPI_File_write_at_all; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@file_at $s; $($a),*) };
    (MPI_File_iwrite_at; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@file_at $s; $($a),*) };
    // MPI 4 large-count variants (MPICH): the same arguments, MPI_Count counts.
    (MPI_Send_c; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Isend_c; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Ssend_c; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Recv_c; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Irecv_c; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Bcast_c; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Reduce_c; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at2 $s; $($a),*) };
    (MPI_Allreduce_c; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at2 $s; $($a),*) };
    (MPI_Gather_c; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@in_place1 $s; $($a),*) };
    (MPI_Allgather_c; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@in_place1 $s; $($a),*) };
    (MPI_Alltoall_c; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@in_place1 $s; $($a),*) };
    (MPI_Put_c; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Rput_c; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Get_c; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Rget_c; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Accumulate_c; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Raccumulate_c; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Get_accumulate_c; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    (MPI_Rget_accumulate_c; $s:ident; $($a:ident),*) => { $crate::bytes::moved!(@at1 $s; $($a),*) };
    ($other:ident; $s:ident; $($a:ident),*) => {{
        let _ = $s;
        0
    }};
}

pub(crate) use moved;
