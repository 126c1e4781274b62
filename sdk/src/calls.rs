// The safe calls of `next.rs` and `native.rs`, included into each: `layer`
// is the including module's own route (`XMPI_X` or `PMPI_X` under the
// name `MPI_X`), so that the two can never drift apart.

/// `MPI_Comm_rank`: the caller's rank in `comm`.
pub fn comm_rank(comm: Comm) -> Result<i32, MpiError> {
    let mut rank = 0;
    // SAFETY: `rank` is a local out-parameter of the type MPI writes.
    check(unsafe { layer::MPI_Comm_rank(comm, &mut rank) })?;
    Ok(rank)
}

/// `MPI_Comm_size`: the number of ranks in `comm`.
pub fn comm_size(comm: Comm) -> Result<i32, MpiError> {
    let mut size = 0;
    // SAFETY: `size` is a local out-parameter of the type MPI writes.
    check(unsafe { layer::MPI_Comm_size(comm, &mut size) })?;
    Ok(size)
}

/// `MPI_Comm_dup`: a communicator of the module's own, whose messages
/// cannot match the application's. Release it with [`comm_free`].
pub fn comm_dup(comm: Comm) -> Result<Comm, MpiError> {
    let mut dup = constants::COMM_NULL();
    // SAFETY: `dup` is a local out-parameter of the type MPI writes.
    check(unsafe { layer::MPI_Comm_dup(comm, &mut dup) })?;
    Ok(dup)
}

/// `MPI_Comm_split`: the members of `comm` that give the same `color`,
/// ordered by `key`. Release it with [`comm_free`].
pub fn comm_split(comm: Comm, color: i32, key: i32) -> Result<Comm, MpiError> {
    let mut part = constants::COMM_NULL();
    // SAFETY: `part` is a local out-parameter of the type MPI writes.
    check(unsafe { layer::MPI_Comm_split(comm, color, key, &mut part) })?;
    Ok(part)
}

/// `MPI_Comm_free` of a communicator from [`comm_dup`] or [`comm_split`].
pub fn comm_free(comm: Comm) -> Result<(), MpiError> {
    let mut comm = comm;
    // SAFETY: `comm` is a local copy that MPI sets to MPI_COMM_NULL.
    check(unsafe { layer::MPI_Comm_free(&mut comm) })
}

/// `MPI_Type_size`: the bytes of data in one element of `datatype`, e.g.
/// to turn a wrapper's `count` into bytes.
pub fn type_size(datatype: Datatype) -> Result<i32, MpiError> {
    let mut size = 0;
    // SAFETY: `size` is a local out-parameter of the type MPI writes.
    check(unsafe { layer::MPI_Type_size(datatype, &mut size) })?;
    Ok(size)
}

/// `MPI_Wtime`: seconds since an arbitrary time in the past.
pub fn wtime() -> f64 {
    // SAFETY: takes no argument; MPI_Wtime may be called at any time.
    unsafe { layer::MPI_Wtime() }
}

/// `MPI_Barrier` on `comm`.
pub fn barrier(comm: Comm) -> Result<(), MpiError> {
    // SAFETY: no buffer is involved.
    check(unsafe { layer::MPI_Barrier(comm) })
}

/// `MPI_Send` of `data` to rank `dest` of `comm`.
pub fn send<T: Element>(data: &[T], dest: i32, tag: i32, comm: Comm) -> Result<(), MpiError> {
    let n = count(data.len())?;
    // SAFETY: `data` holds `n` elements of `T::datatype()` (Element's
    // contract), and MPI only reads them.
    check(unsafe { layer::MPI_Send(data.as_ptr().cast(), n, T::datatype(), dest, tag, comm) })
}

/// `MPI_Recv` into `buf`, of at most `buf.len()` elements, from `source`
/// (or `constants::ANY_SOURCE()`) with `tag` (or `constants::ANY_TAG()`).
pub fn recv<T: Element>(buf: &mut [T], source: i32, tag: i32, comm: Comm) -> Result<Received, MpiError> {
    let n = count(buf.len())?;
    // SAFETY: MPI_Status is a C struct of integers, for which all zeroes
    // is a valid value.
    let mut status: ffi::MPI_Status = unsafe { std::mem::zeroed() };
    // SAFETY: `buf` has room for `n` elements of `T::datatype()`
    // (Element's contract); `status` is a local out-parameter.
    check(unsafe {
        layer::MPI_Recv(
            buf.as_mut_ptr().cast(),
            n,
            T::datatype(),
            source,
            tag,
            comm,
            &mut status,
        )
    })?;
    let mut len = 0;
    // SAFETY: `status` was filled by MPI_Recv; `len` is a local out-parameter.
    check(unsafe { layer::MPI_Get_count(&status, T::datatype(), &mut len) })?;
    Ok(Received {
        source: status.MPI_SOURCE,
        tag: status.MPI_TAG,
        len: usize::try_from(len).unwrap_or(0),
    })
}

/// `MPI_Allreduce` of `values` with `op` (e.g. `constants::SUM()`): every
/// rank gets the element-wise result.
pub fn allreduce<T: Element>(values: &[T], op: Op, comm: Comm) -> Result<Vec<T>, MpiError> {
    let n = count(values.len())?;
    let mut result = vec![T::default(); values.len()];
    // SAFETY: both buffers hold `n` elements of `T::datatype()`.
    check(unsafe {
        layer::MPI_Allreduce(
            values.as_ptr().cast(),
            result.as_mut_ptr().cast(),
            n,
            T::datatype(),
            op,
            comm,
        )
    })?;
    Ok(result)
}

/// `MPI_Gather` to rank 0 of `comm`: every rank passes a slice of the same
/// length; rank 0 gets them all, rank after rank, and the others `None`.
pub fn gather<T: Element>(values: &[T], comm: Comm) -> Result<Option<Vec<T>>, MpiError> {
    let n = count(values.len())?;
    let root = comm_rank(comm)? == 0;
    let mut all = Vec::new();
    if root {
        let ranks = usize::try_from(comm_size(comm)?).unwrap_or(0);
        all = vec![T::default(); values.len() * ranks];
    }
    // SAFETY: `values` holds `n` elements; on rank 0, `all` holds `n` for
    // each rank of `comm`; elsewhere the receive buffer is not used.
    check(unsafe {
        layer::MPI_Gather(
            values.as_ptr().cast(),
            n,
            T::datatype(),
            all.as_mut_ptr().cast(),
            n,
            T::datatype(),
            0,
            comm,
        )
    })?;
    Ok(root.then_some(all))
}

/// `MPI_Gatherv` to rank 0 of `comm`: every rank passes a slice of any
/// length; rank 0 gets each rank's slice, and the others `None`.
pub fn gatherv<T: Element>(values: &[T], comm: Comm) -> Result<Option<Vec<Vec<T>>>, MpiError> {
    let n = count(values.len())?;
    let Some(counts) = gather(&[n], comm)? else {
        // SAFETY: `values` holds `n` elements; the receive arguments are
        // only read on rank 0.
        check(unsafe {
            layer::MPI_Gatherv(
                values.as_ptr().cast(),
                n,
                T::datatype(),
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
                T::datatype(),
                0,
                comm,
            )
        })?;
        return Ok(None);
    };
    let lens: Vec<usize> = counts.iter().map(|&c| usize::try_from(c).unwrap_or(0)).collect();
    let mut displs = Vec::with_capacity(counts.len());
    let mut total = 0;
    for &len in &lens {
        displs.push(count(total)?);
        total += len;
    }
    let mut all = vec![T::default(); total];
    // SAFETY: `values` holds `n` elements; `all` holds the sum of `counts`,
    // and each rank's block starts at its displacement within it.
    check(unsafe {
        layer::MPI_Gatherv(
            values.as_ptr().cast(),
            n,
            T::datatype(),
            all.as_mut_ptr().cast(),
            counts.as_ptr(),
            displs.as_ptr(),
            T::datatype(),
            0,
            comm,
        )
    })?;
    let mut rest = &all[..];
    let blocks = lens
        .iter()
        .map(|&len| {
            let (block, tail) = rest.split_at(len);
            rest = tail;
            block.to_vec()
        })
        .collect();
    Ok(Some(blocks))
}
