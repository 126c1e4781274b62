//! The layout of a derived datatype's blocks of basic elements, as far
//! as the checker compares it with what C lays out: a block whose
//! displacement is not a multiple of its element's alignment (no C
//! object has a `double` at byte 5: the displacements were not computed
//! with `MPI_Get_address` or `offsetof`), and blocks that overlap (a
//! receive into them writes some bytes twice, which MPI forbids).

/// A block: its displacement and length in bytes, and its elements'
/// alignment (their size, when a power of two).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    pub disp: i64,
    pub len: i64,
    pub align: i64,
}

/// The alignment C gives a basic element of `size` bytes (0: none known,
/// a size not a power of two, or 0 for a pair type such as `MPI_2INT`).
pub fn alignment(size: u64) -> i64 {
    if size.is_power_of_two() {
        size.min(16) as i64
    } else {
        0
    }
}

/// The first block that is not aligned: its index.
pub fn misaligned(blocks: &[Block]) -> Option<usize> {
    blocks
        .iter()
        .position(|b| b.len > 0 && b.align > 1 && b.disp.rem_euclid(b.align) != 0)
}

/// Whether two blocks share bytes.
pub fn overlapping(blocks: &[Block]) -> bool {
    let mut spans: Vec<(i64, i64)> = blocks
        .iter()
        .filter(|b| b.len > 0)
        .map(|b| (b.disp, b.disp.saturating_add(b.len)))
        .collect();
    spans.sort_unstable();
    spans.windows(2).any(|w| w[1].0 < w[0].1)
}

/// The blocks of a vector of `count` blocks of `blocklength` elements
/// of `size` bytes and extent `extent`, `stride` bytes apart: the first
/// two stand for all (the others repeat their layout).
pub fn vector(count: i64, blocklength: i64, stride: i64, size: u64, extent: i64) -> Vec<Block> {
    let align = alignment(size);
    let len = blocklength.saturating_mul(extent);
    (0..count.clamp(0, 2))
        .map(|i| Block {
            disp: i.saturating_mul(stride),
            len,
            align,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(disp: i64, len: i64, align: i64) -> Block {
        Block { disp, len, align }
    }

    #[test]
    fn a_struct_of_int_char_double_is_checked_against_c() {
        // struct { int i; char c; double d; }: offsets 0, 4, 8.
        let good = [block(0, 4, 4), block(4, 1, 1), block(8, 8, 8)];
        assert_eq!(misaligned(&good), None);
        assert!(!overlapping(&good));
        // Displacements added up from the sizes: the double at 5.
        let summed = [block(0, 4, 4), block(4, 1, 1), block(5, 8, 8)];
        assert_eq!(misaligned(&summed), Some(2));
        // Two ints for the first member: they cover the char.
        let two_ints = [block(0, 8, 4), block(4, 1, 1), block(8, 8, 8)];
        assert!(overlapping(&two_ints));
    }

    #[test]
    fn a_vector_overlaps_when_its_stride_is_shorter_than_its_block() {
        let floats = vector(16, 1, 3, 4, 4);
        assert!(overlapping(&floats));
        assert_eq!(misaligned(&floats), Some(1));
        let column = vector(16, 1, 64, 4, 4);
        assert!(!overlapping(&column) && misaligned(&column).is_none());
        assert!(vector(1, 1, 0, 4, 4).len() == 1 && !overlapping(&vector(1, 1, 0, 4, 4)));
        assert_eq!(alignment(12), 0);
    }
}
