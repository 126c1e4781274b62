//! Flattened type signatures: a datatype as the sequence of its runs,
//! each a number of elements of one basic type laid end to end at a byte
//! offset, in the order of the type map. Runs that continue one another
//! (same basic type, next element where the last one ends) are merged,
//! so that `contiguous(3, vector(2, 4, 4, int))` is one run of 24 ints.
//!
//! The logic is independent of MPI: a [`Types`] describes each type's
//! [`Shape`] and extent (MPI's envelope, contents and extents in the
//! module, a table in the unit tests).

use std::fmt;

/// A run of `count` elements of the basic type `basic`, each `size`
/// bytes, the first at `offset` bytes from the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block<B> {
    pub offset: i64,
    pub basic: B,
    pub count: u64,
    pub size: i64,
}

/// What one element of a type is made of.
#[derive(Debug, PartialEq, Eq)]
pub enum Shape<H> {
    /// A basic type: one element of itself.
    Basic,
    /// A predefined pair type (`MPI_FLOAT_INT`, ...): basic parts at
    /// byte offsets.
    Parts(Vec<(i64, H)>),
    /// Runs of elements of other types: `(displacement, count, type)`,
    /// element `k` of a run at `displacement + k * extent(type)` bytes.
    Runs(Vec<(i64, u64, H)>),
}

/// Why a type cannot be walked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// An MPI query failed: the routine and its error code.
    Mpi(&'static str, i32),
    /// A combiner the module cannot walk.
    Unsupported(String),
    /// Contents that contradict the combiner (too few integers...).
    Malformed(&'static str),
    /// Nested deeper than [`MAX_DEPTH`] (a guard against cycles in a
    /// broken description).
    TooDeep,
    /// More runs or bytes than the C layout's `int` fields hold.
    TooLarge,
    /// The caller asked for a negative number of elements.
    NegativeCount,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Mpi(routine, code) => write!(f, "{routine} failed with error {code}"),
            Error::Unsupported(combiner) => {
                write!(
                    f,
                    "types made by {combiner} cannot be walked; build the type from the other constructors"
                )
            }
            Error::Malformed(what) => write!(f, "MPI described the type inconsistently ({what})"),
            Error::TooDeep => write!(f, "the type nests more than {MAX_DEPTH} constructors"),
            Error::TooLarge => write!(f, "the walk has more runs or bytes than an int counts"),
            Error::NegativeCount => write!(f, "the count is negative"),
        }
    }
}

/// Constructors nested deeper than this are refused.
pub const MAX_DEPTH: u32 = 64;

/// The types a walk asks about.
pub trait Types {
    /// A type handle (which may own a reference MPI handed out).
    type Handle;
    /// A basic type's name in the walk's runs.
    type Basic: Copy + PartialEq;
    /// What one element of `t` is made of.
    fn shape(&self, t: &Self::Handle) -> Result<Shape<Self::Handle>, Error>;
    /// `t`'s extent in bytes (the step between consecutive elements).
    fn extent(&self, t: &Self::Handle) -> Result<i64, Error>;
    /// A basic type's size in bytes.
    fn size(&self, t: &Self::Handle) -> Result<i64, Error>;
    /// A basic type's name.
    fn basic(&self, t: &Self::Handle) -> Self::Basic;
}

/// Runs being collected, merging each with the last when it continues it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Runs<B> {
    pub blocks: Vec<Block<B>>,
}

impl<B> Default for Runs<B> {
    fn default() -> Runs<B> {
        Runs { blocks: Vec::new() }
    }
}

impl<B: Copy + PartialEq> Runs<B> {
    /// Appends `count` elements of `basic` (`size` bytes each) at `offset`.
    pub fn push(&mut self, offset: i64, basic: B, count: u64, size: i64) {
        if count == 0 {
            return;
        }
        if let Some(last) = self.blocks.last_mut() {
            let end = last.offset + last.count as i64 * last.size;
            if last.basic == basic && last.size == size && end == offset {
                last.count += count;
                return;
            }
        }
        self.blocks.push(Block {
            offset,
            basic,
            count,
            size,
        });
    }

    /// Appends `count` copies of `unit` (one element's runs), the first at
    /// `base`, each `extent` bytes after the one before.
    pub fn repeat(&mut self, unit: &[Block<B>], base: i64, count: u64, extent: i64) {
        if let [one] = unit {
            if one.count as i64 * one.size == extent {
                // One dense run per element: all of them in one run.
                self.push(base + one.offset, one.basic, one.count * count, one.size);
                return;
            }
        }
        for k in 0..count {
            let at = base + k as i64 * extent;
            for b in unit {
                self.push(at + b.offset, b.basic, b.count, b.size);
            }
        }
    }
}

/// The runs of one element of `t`, at offset 0.
pub fn element<T: Types>(types: &T, t: &T::Handle) -> Result<Runs<T::Basic>, Error> {
    element_at(types, t, 0)
}

fn element_at<T: Types>(types: &T, t: &T::Handle, depth: u32) -> Result<Runs<T::Basic>, Error> {
    if depth > MAX_DEPTH {
        return Err(Error::TooDeep);
    }
    let mut runs = Runs::default();
    match types.shape(t)? {
        Shape::Basic => runs.push(0, types.basic(t), 1, types.size(t)?),
        Shape::Parts(parts) => {
            for (offset, part) in &parts {
                runs.push(*offset, types.basic(part), 1, types.size(part)?);
            }
        }
        Shape::Runs(list) => {
            for (displacement, count, sub) in &list {
                let unit = element_at(types, sub, depth + 1)?;
                runs.repeat(&unit.blocks, *displacement, *count, types.extent(sub)?);
            }
        }
    }
    Ok(runs)
}

/// The runs of `count` elements of a type whose one element is `unit`
/// and whose extent is `extent`.
pub fn elements<B: Copy + PartialEq>(unit: &Runs<B>, count: u64, extent: i64) -> Runs<B> {
    let mut runs = Runs::default();
    runs.repeat(&unit.blocks, 0, count, extent);
    runs
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Types by number: basic 1 = int (4 bytes), 2 = double (8), 3 =
    /// char (1), 4 = a {double, int} pair (extent 16); derived ones added
    /// with their shape and extent.
    struct Table(HashMap<u32, (Shape<u32>, i64)>);

    const INT: u32 = 1;
    const DOUBLE: u32 = 2;
    const CHAR: u32 = 3;
    const DOUBLE_INT: u32 = 4;

    impl Table {
        fn new() -> Table {
            let mut t = HashMap::new();
            t.insert(INT, (Shape::Basic, 4));
            t.insert(DOUBLE, (Shape::Basic, 8));
            t.insert(CHAR, (Shape::Basic, 1));
            t.insert(DOUBLE_INT, (Shape::Parts(vec![(0, DOUBLE), (8, INT)]), 16));
            Table(t)
        }
        fn add(&mut self, id: u32, shape: Shape<u32>, extent: i64) -> u32 {
            self.0.insert(id, (shape, extent));
            id
        }
    }

    impl Types for Table {
        type Handle = u32;
        type Basic = u32;
        fn shape(&self, t: &u32) -> Result<Shape<u32>, Error> {
            match &self.0[t].0 {
                Shape::Basic => Ok(Shape::Basic),
                Shape::Parts(p) => Ok(Shape::Parts(p.clone())),
                Shape::Runs(r) => Ok(Shape::Runs(r.clone())),
            }
        }
        fn extent(&self, t: &u32) -> Result<i64, Error> {
            Ok(self.0[t].1)
        }
        fn size(&self, t: &u32) -> Result<i64, Error> {
            Ok(self.0[t].1)
        }
        fn basic(&self, t: &u32) -> u32 {
            *t
        }
    }

    fn b(offset: i64, basic: u32, count: u64, size: i64) -> Block<u32> {
        Block {
            offset,
            basic,
            count,
            size,
        }
    }

    fn flat(t: &Table, id: u32, count: u64) -> Vec<Block<u32>> {
        let unit = element(t, &id).unwrap();
        elements(&unit, count, t.extent(&id).unwrap()).blocks
    }

    #[test]
    fn a_basic_type_is_one_run_of_count_elements() {
        let t = Table::new();
        assert_eq!(flat(&t, DOUBLE, 5), vec![b(0, DOUBLE, 5, 8)]);
        assert_eq!(flat(&t, DOUBLE, 0), vec![]);
    }

    #[test]
    fn a_vector_is_a_run_per_block_and_dense_vectors_merge() {
        let mut t = Table::new();
        // vector(3, 2, 4, int): blocks of 2 ints every 16 bytes, extent 40.
        let v = t.add(10, Shape::Runs(vec![(0, 2, INT), (16, 2, INT), (32, 2, INT)]), 40);
        assert_eq!(
            flat(&t, v, 2),
            vec![
                b(0, INT, 2, 4),
                b(16, INT, 2, 4),
                b(32, INT, 4, 4),
                b(56, INT, 2, 4),
                b(72, INT, 2, 4)
            ]
        );
        // (The first element's last block and the second's first touch: one run.)
        // vector(3, 2, 2, int) is 6 ints end to end: one run, and 4 of it one run of 24.
        let dense = t.add(11, Shape::Runs(vec![(0, 2, INT), (8, 2, INT), (16, 2, INT)]), 24);
        assert_eq!(flat(&t, dense, 4), vec![b(0, INT, 24, 4)]);
    }

    #[test]
    fn a_struct_keeps_its_order_and_pairs_split_into_parts() {
        let mut t = Table::new();
        // struct { char c[3]; double d; int i[2]; }: offsets 0, 8, 16; extent 24.
        let s = t.add(
            20,
            Shape::Runs(vec![(0, 3, CHAR), (8, 1, DOUBLE), (16, 2, INT)]),
            24,
        );
        assert_eq!(
            flat(&t, s, 1),
            vec![b(0, CHAR, 3, 1), b(8, DOUBLE, 1, 8), b(16, INT, 2, 4)]
        );
        // Two elements: the second int run does not touch the next char run.
        assert_eq!(flat(&t, s, 2).len(), 6);
        // A displacement going backwards keeps the type map's order.
        let back = t.add(21, Shape::Runs(vec![(8, 1, INT), (0, 1, INT)]), 12);
        assert_eq!(flat(&t, back, 1), vec![b(8, INT, 1, 4), b(0, INT, 1, 4)]);
        // {double, int}: double at 0, int at 8, padding to 16.
        assert_eq!(
            flat(&t, DOUBLE_INT, 2),
            vec![
                b(0, DOUBLE, 1, 8),
                b(8, INT, 1, 4),
                b(16, DOUBLE, 1, 8),
                b(24, INT, 1, 4)
            ]
        );
    }

    #[test]
    fn runs_of_other_types_or_sizes_never_merge() {
        let mut r = Runs::default();
        r.push(0, INT, 2, 4);
        r.push(8, DOUBLE, 1, 8);
        r.push(16, DOUBLE, 1, 8);
        r.push(24, INT, 1, 4);
        r.push(24, INT, 0, 4);
        assert_eq!(
            r.blocks,
            vec![b(0, INT, 2, 4), b(8, DOUBLE, 2, 8), b(24, INT, 1, 4)]
        );
    }

    #[test]
    fn a_resized_type_steps_by_its_new_extent() {
        let mut t = Table::new();
        // resized(int, lb 0, extent 12): one int every 12 bytes.
        let r = t.add(30, Shape::Runs(vec![(0, 1, INT)]), 12);
        assert_eq!(
            flat(&t, r, 3),
            vec![b(0, INT, 1, 4), b(12, INT, 1, 4), b(24, INT, 1, 4)]
        );
        // contiguous(2, resized) at a displacement, nested.
        let c = t.add(31, Shape::Runs(vec![(4, 2, r)]), 24);
        assert_eq!(flat(&t, c, 1), vec![b(4, INT, 1, 4), b(16, INT, 1, 4)]);
    }

    #[test]
    fn a_cycle_is_refused_not_followed_forever() {
        let mut t = Table::new();
        t.add(40, Shape::Runs(vec![(0, 1, 40)]), 4);
        assert_eq!(element(&t, &40), Err(Error::TooDeep));
    }
}
