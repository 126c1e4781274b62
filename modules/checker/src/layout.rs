//! The layout of a derived datatype's blocks of basic elements: blocks
//! that overlap, which a receive may not use (it would write some bytes
//! twice, which MPI forbids).

/// A block: its displacement and length in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    pub disp: i64,
    pub len: i64,
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
/// of extent `extent`, `stride` bytes apart: the first two stand for all
/// (the others repeat their layout).
pub fn vector(count: i64, blocklength: i64, stride: i64, extent: i64) -> Vec<Block> {
    let len = blocklength.saturating_mul(extent);
    (0..count.clamp(0, 2))
        .map(|i| Block {
            disp: i.saturating_mul(stride),
            len,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(disp: i64, len: i64) -> Block {
        Block { disp, len }
    }

    #[test]
    fn struct_blocks_overlap_when_one_covers_the_next() {
        // struct { int i; char c; double d; }: offsets 0, 4, 8.
        assert!(!overlapping(&[block(0, 4), block(4, 1), block(8, 8)]));
        // Two ints for the first member: they cover the char.
        assert!(overlapping(&[block(0, 8), block(4, 1), block(8, 8)]));
    }

    #[test]
    fn a_vector_overlaps_when_its_stride_is_shorter_than_its_block() {
        assert!(overlapping(&vector(16, 1, 3, 4)));
        assert!(overlapping(&vector(4, 1, 0, 4)));
        assert!(!overlapping(&vector(16, 1, 64, 4)));
        assert!(!overlapping(&vector(1, 1, 0, 4)));
    }
}
