//! A derived type's contents (`MPI_Type_get_contents`: the integers,
//! addresses and types its constructor was called with) turned into the
//! [`Shape`] of one element: runs of the old types at byte displacements.
//! Vectors and indexed types in units of the old type's extent,
//! subarrays and distributed arrays as their rows.

use crate::flatten::{Error, Shape};
pub use pnmpi_mpi_sys::combiner::Combiner;

/// The values of MPI's array orders and distributions.
#[derive(Clone, Copy, Debug)]
pub struct Consts {
    pub order_c: i32,
    pub order_fortran: i32,
    pub block: i32,
    pub cyclic: i32,
    pub none: i32,
    pub dflt_darg: i32,
}

/// What a constructor was called with.
pub struct Contents<H> {
    pub combiner: Combiner,
    pub ints: Vec<i32>,
    pub addrs: Vec<i64>,
    pub types: Vec<H>,
}

/// The shape of one element of a type made by `c`; `extent` gives an old
/// type's extent (vectors and indexed types count in it).
pub fn shape<H: Clone>(
    c: &Contents<H>,
    consts: &Consts,
    extent: impl Fn(&H) -> Result<i64, Error>,
) -> Result<Shape<H>, Error> {
    let int = |i: usize| {
        c.ints
            .get(i)
            .copied()
            .map(i64::from)
            .ok_or(Error::Malformed("too few integers"))
    };
    let addr = |i: usize| {
        c.addrs
            .get(i)
            .copied()
            .ok_or(Error::Malformed("too few addresses"))
    };
    let ty = |i: usize| c.types.get(i).cloned().ok_or(Error::Malformed("too few types"));
    let count = |v: i64| u64::try_from(v).map_err(|_| Error::Malformed("a negative count"));
    let n = |v: i64| usize::try_from(v).map_err(|_| Error::Malformed("a negative count"));
    let runs = |v: Vec<(i64, u64, H)>| Ok(Shape::Runs(v));
    match c.combiner {
        Combiner::Named | Combiner::F90Real | Combiner::F90Complex | Combiner::F90Integer => Ok(Shape::Basic),
        Combiner::Dup | Combiner::Resized => runs(vec![(0, 1, ty(0)?)]),
        Combiner::Contiguous => runs(vec![(0, count(int(0)?)?, ty(0)?)]),
        Combiner::Vector | Combiner::Hvector | Combiner::HvectorInteger => {
            let old = ty(0)?;
            let stride = match c.combiner {
                Combiner::Vector => int(2)? * extent(&old)?,
                Combiner::Hvector => addr(0)?,
                _ => int(2)?,
            };
            let block = count(int(1)?)?;
            runs((0..int(0)?).map(|k| (k * stride, block, old.clone())).collect())
        }
        Combiner::Indexed | Combiner::Hindexed | Combiner::HindexedInteger => {
            let (blocks, old) = (n(int(0)?)?, ty(0)?);
            let unit = if c.combiner == Combiner::Indexed {
                extent(&old)?
            } else {
                1
            };
            (0..blocks)
                .map(|k| {
                    let disp = match c.combiner {
                        Combiner::Hindexed => addr(k)?,
                        _ => int(1 + blocks + k)? * unit,
                    };
                    Ok((disp, count(int(1 + k)?)?, old.clone()))
                })
                .collect::<Result<_, _>>()
                .map(Shape::Runs)
        }
        Combiner::IndexedBlock | Combiner::HindexedBlock => {
            let (blocks, block, old) = (n(int(0)?)?, count(int(1)?)?, ty(0)?);
            let unit = extent(&old)?;
            (0..blocks)
                .map(|k| {
                    let disp = match c.combiner {
                        Combiner::IndexedBlock => int(2 + k)? * unit,
                        _ => addr(k)?,
                    };
                    Ok((disp, block, old.clone()))
                })
                .collect::<Result<_, _>>()
                .map(Shape::Runs)
        }
        Combiner::Struct | Combiner::StructInteger => {
            let blocks = n(int(0)?)?;
            (0..blocks)
                .map(|k| {
                    let disp = match c.combiner {
                        Combiner::Struct => addr(k)?,
                        _ => int(1 + blocks + k)?,
                    };
                    Ok((disp, count(int(1 + k)?)?, ty(k)?))
                })
                .collect::<Result<_, _>>()
                .map(Shape::Runs)
        }
        Combiner::Subarray => {
            let dims = n(int(0)?)?;
            let at =
                |k: usize| -> Result<Vec<i64>, Error> { (0..dims).map(|d| int(1 + k * dims + d)).collect() };
            let (sizes, subsizes, starts) = (at(0)?, at(1)?, at(2)?);
            let c_order = is_c_order(int(1 + 3 * dims)?, consts)?;
            let owned = (0..dims)
                .map(|d| (starts[d]..starts[d] + subsizes[d]).collect())
                .collect();
            grid(sizes, owned, c_order, ty(0)?, &extent)
        }
        Combiner::Darray => darray(&c.ints, consts, ty(0)?, &extent),
    }
}

/// A distributed array's rows: `MPI_Type_create_darray(size, rank, ndims,
/// gsizes, distribs, dargs, psizes, order, old)`. Processes are laid out
/// on the grid in row-major order whatever the array's order.
fn darray<H: Clone>(
    ints: &[i32],
    consts: &Consts,
    old: H,
    extent: &impl Fn(&H) -> Result<i64, Error>,
) -> Result<Shape<H>, Error> {
    let int = |i: usize| {
        ints.get(i)
            .copied()
            .map(i64::from)
            .ok_or(Error::Malformed("too few integers"))
    };
    let dims = usize::try_from(int(2)?).map_err(|_| Error::Malformed("a negative count"))?;
    let at = |k: usize| -> Result<Vec<i64>, Error> { (0..dims).map(|d| int(3 + k * dims + d)).collect() };
    let (gsizes, distribs, dargs, psizes) = (at(0)?, at(1)?, at(2)?, at(3)?);
    let c_order = is_c_order(int(3 + 4 * dims)?, consts)?;
    // The rank's coordinates on the process grid, last dimension fastest.
    let mut rest = int(1)?;
    let mut coords = vec![0; dims];
    for d in (0..dims).rev() {
        let p = psizes[d].max(1);
        coords[d] = rest % p;
        rest /= p;
    }
    let dflt = i64::from(consts.dflt_darg);
    let mut owned = Vec::with_capacity(dims);
    for d in 0..dims {
        let (g, p, c) = (gsizes[d], psizes[d].max(1), coords[d]);
        let distrib = i32::try_from(distribs[d]).unwrap_or(consts.none);
        let indices: Vec<i64> = if distrib == consts.block {
            let b = if dargs[d] == dflt {
                (g + p - 1) / p
            } else {
                dargs[d]
            };
            (c * b..((c + 1) * b).min(g)).collect()
        } else if distrib == consts.cyclic {
            let b = if dargs[d] == dflt { 1 } else { dargs[d].max(1) };
            (0..g).filter(|j| (j / b) % p == c).collect()
        } else {
            (0..g).collect()
        };
        owned.push(indices);
    }
    grid(gsizes, owned, c_order, old, extent)
}

/// Whether `order` is `MPI_ORDER_C` (else `MPI_ORDER_FORTRAN`).
fn is_c_order(order: i64, consts: &Consts) -> Result<bool, Error> {
    if order == i64::from(consts.order_c) {
        Ok(true)
    } else if order == i64::from(consts.order_fortran) {
        Ok(false)
    } else {
        Err(Error::Malformed("an array order neither C nor Fortran"))
    }
}

/// The rows of the elements of an array of `sizes` whose index along
/// each dimension is one of `owned`'s (increasing), in memory order: C
/// order (`c_order`, the last dimension contiguous) or Fortran's.
fn grid<H: Clone>(
    mut sizes: Vec<i64>,
    mut owned: Vec<Vec<i64>>,
    c_order: bool,
    old: H,
    extent: &impl Fn(&H) -> Result<i64, Error>,
) -> Result<Shape<H>, Error> {
    if c_order {
        sizes.reverse();
        owned.reverse();
    }
    let unit = extent(&old)?;
    let rows = grid_rows(&sizes, &owned);
    Ok(Shape::Runs(
        rows.into_iter()
            .map(|(d, n)| (d * unit, n, old.clone()))
            .collect(),
    ))
}

/// `(displacement, count)` in elements of the contiguous rows of the
/// elements selected by `owned` in an array of `sizes`, the first
/// dimension contiguous, in increasing address order.
pub fn grid_rows(sizes: &[i64], owned: &[Vec<i64>]) -> Vec<(i64, u64)> {
    let dims = sizes.len();
    if dims == 0 || owned.iter().any(Vec::is_empty) {
        return Vec::new();
    }
    let mut strides = vec![1i64; dims];
    for d in 1..dims {
        strides[d] = strides[d - 1] * sizes[d - 1];
    }
    // The first dimension's indices, grouped into consecutive runs.
    let mut first: Vec<(i64, u64)> = Vec::new();
    for &i in &owned[0] {
        match first.last_mut() {
            Some((start, n)) if *start + *n as i64 == i => *n += 1,
            _ => first.push((i, 1)),
        }
    }
    let mut rows = Vec::new();
    let mut at = vec![0usize; dims];
    loop {
        let base: i64 = (1..dims).map(|d| owned[d][at[d]] * strides[d]).sum();
        rows.extend(first.iter().map(|&(i, n)| (base + i, n)));
        // The next index tuple of the outer dimensions, second fastest.
        let mut d = 1;
        while d < dims {
            at[d] += 1;
            if at[d] < owned[d].len() {
                break;
            }
            at[d] = 0;
            d += 1;
        }
        if d == dims {
            return rows;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONSTS: Consts = Consts {
        order_c: 56,
        order_fortran: 57,
        block: 121,
        cyclic: 122,
        none: 123,
        dflt_darg: -49767,
    };

    /// One old type (named 7) of extent 4.
    fn of(combiner: Combiner, ints: &[i32], addrs: &[i64]) -> Result<Shape<u32>, Error> {
        let c = Contents {
            combiner,
            ints: ints.to_vec(),
            addrs: addrs.to_vec(),
            types: vec![7],
        };
        shape(&c, &CONSTS, |_| Ok(4))
    }

    fn runs(v: &[(i64, u64)]) -> Shape<u32> {
        Shape::Runs(v.iter().map(|&(d, n)| (d, n, 7)).collect())
    }

    #[test]
    fn vectors_and_indexed_types_count_in_the_old_extent_h_ones_in_bytes() {
        assert_eq!(
            of(Combiner::Vector, &[3, 2, 5], &[]),
            Ok(runs(&[(0, 2), (20, 2), (40, 2)]))
        );
        assert_eq!(
            of(Combiner::Hvector, &[2, 1], &[12]),
            Ok(runs(&[(0, 1), (12, 1)]))
        );
        assert_eq!(
            of(Combiner::Indexed, &[2, 3, 1, 4, 0], &[]),
            Ok(runs(&[(16, 3), (0, 1)]))
        );
        assert_eq!(
            of(Combiner::Hindexed, &[2, 3, 1], &[16, 0]),
            Ok(runs(&[(16, 3), (0, 1)]))
        );
        assert_eq!(
            of(Combiner::IndexedBlock, &[2, 2, 5, 1], &[]),
            Ok(runs(&[(20, 2), (4, 2)]))
        );
        assert_eq!(
            of(Combiner::HindexedBlock, &[2, 2], &[20, 4]),
            Ok(runs(&[(20, 2), (4, 2)]))
        );
        assert_eq!(of(Combiner::Contiguous, &[6], &[]), Ok(runs(&[(0, 6)])));
        assert_eq!(of(Combiner::Resized, &[], &[0, 12]), Ok(runs(&[(0, 1)])));
    }

    #[test]
    fn a_struct_has_a_type_per_block() {
        let c = Contents {
            combiner: Combiner::Struct,
            ints: vec![2, 3, 1],
            addrs: vec![0, 8],
            types: vec![1u32, 2],
        };
        assert_eq!(
            shape(&c, &CONSTS, |_| Ok(4)),
            Ok(Shape::Runs(vec![(0, 3, 1), (8, 1, 2)]))
        );
    }

    #[test]
    fn a_subarray_is_its_rows_in_memory_order() {
        // 4x5 ints, the 2x3 block at (1, 2), C order: rows at 1*5+2 and 2*5+2.
        let c_order = [2, 4, 5, 2, 3, 1, 2, CONSTS.order_c];
        assert_eq!(
            of(Combiner::Subarray, &c_order, &[]),
            Ok(runs(&[(28, 3), (48, 3)]))
        );
        // The same numbers in Fortran order: columns of 2 at 2*4+1, 3*4+1, 4*4+1.
        let fortran = [2, 4, 5, 2, 3, 1, 2, CONSTS.order_fortran];
        assert_eq!(
            of(Combiner::Subarray, &fortran, &[]),
            Ok(runs(&[(36, 2), (52, 2), (68, 2)]))
        );
        // An empty subarray has no rows.
        assert_eq!(
            of(Combiner::Subarray, &[1, 4, 0, 0, CONSTS.order_c], &[]),
            Ok(runs(&[]))
        );
    }

    #[test]
    fn a_darray_is_the_rank_s_share_of_the_grid() {
        // 8 elements, 2 processes, block: rank 1 owns 4..8.
        let block = [2, 1, 1, 8, CONSTS.block, CONSTS.dflt_darg, 2, CONSTS.order_c];
        assert_eq!(of(Combiner::Darray, &block, &[]), Ok(runs(&[(16, 4)])));
        // Cyclic(2) over 3 processes of 10 elements: rank 1 owns 2,3,8,9.
        let cyclic = [3, 1, 1, 10, CONSTS.cyclic, 2, 3, CONSTS.order_c];
        assert_eq!(of(Combiner::Darray, &cyclic, &[]), Ok(runs(&[(8, 2), (32, 2)])));
        // 4x4 on a 2x2 grid, block both ways, C order: rank 1 is at (0, 1),
        // rows 0 and 1, columns 2 and 3.
        let two_d = [
            4,
            1,
            2,
            4,
            4,
            CONSTS.block,
            CONSTS.block,
            CONSTS.dflt_darg,
            CONSTS.dflt_darg,
            2,
            2,
            CONSTS.order_c,
        ];
        assert_eq!(of(Combiner::Darray, &two_d, &[]), Ok(runs(&[(8, 2), (24, 2)])));
    }

    #[test]
    fn short_contents_are_an_error_not_a_panic() {
        assert_eq!(
            of(Combiner::Vector, &[3], &[]),
            Err(Error::Malformed("too few integers"))
        );
        assert_eq!(
            of(Combiner::Hindexed, &[2, 1, 1], &[0]),
            Err(Error::Malformed("too few addresses"))
        );
        assert_eq!(
            of(Combiner::Contiguous, &[-1], &[]),
            Err(Error::Malformed("a negative count"))
        );
    }
}
