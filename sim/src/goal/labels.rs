//! A rank block's labels and the ops they name. Every op of a schedule
//! may carry one (Schedgen2 labels each, `l1` to `l62914560` at a million
//! ranks), and the block's dependencies name them again, so this is the
//! parser's busiest table: a label of up to 15 bytes is its bytes packed
//! in a `u128` key, in an open-addressing table that a block's end empties
//! by counting a generation, with no allocation; a longer label is kept
//! as bytes in a map.

use rustc_hash::FxHashMap;

/// The labels of the open rank block.
pub struct Labels {
    /// Linear probing; a slot is taken when its generation is `generation`.
    slots: Vec<Slot>,
    /// Bits of the slots' count (a power of two).
    bits: u32,
    /// Short labels held.
    len: usize,
    generation: u32,
    long: FxHashMap<Box<[u8]>, u32>,
}

#[derive(Clone, Copy, Default)]
struct Slot {
    key: u128,
    op: u32,
    generation: u32,
}

/// `label`'s bytes and length in one number, when it has 15 bytes or fewer:
/// its bytes from the lowest, then zeros, its length in the top byte.
/// Built from two loads that overlap where the label is shorter than
/// both (the bytes they share are the same), not byte by byte.
#[inline]
fn key(label: &[u8]) -> Option<u128> {
    let n = label.len();
    let bytes = match n {
        0 => 0,
        1..=3 => {
            let at = |i: usize| u128::from(label[i]) << (8 * i);
            at(0) | at(n / 2) | at(n - 1)
        }
        4..=7 => {
            let word = |i: usize| u128::from(u32::from_le_bytes(*label[i..].first_chunk().unwrap()));
            word(0) | word(n - 4) << (8 * (n - 4))
        }
        8..=15 => {
            let word = |i: usize| u128::from(u64::from_le_bytes(*label[i..].first_chunk().unwrap()));
            word(0) | word(n - 8) << (8 * (n - 8))
        }
        _ => return None,
    };
    Some(bytes | (n as u128) << 120)
}

impl Default for Labels {
    fn default() -> Labels {
        let bits = 6;
        Labels {
            slots: vec![Slot::default(); 1 << bits],
            bits,
            len: 0,
            generation: 1,
            long: FxHashMap::default(),
        }
    }
}

impl Labels {
    /// Where `key`'s probe starts: the top bits of a multiplicative hash
    /// of both halves (a label's varying bytes are its last ones).
    fn home(&self, key: u128) -> usize {
        let mixed = (key as u64) ^ ((key >> 64) as u64).rotate_left(29);
        (mixed.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - self.bits)) as usize
    }

    /// The slot holding `key`, or the free slot where it goes.
    #[inline(always)]
    fn find(&self, key: u128) -> usize {
        let mask = self.slots.len() - 1;
        let mut at = self.home(key);
        loop {
            let s = &self.slots[at];
            if s.generation != self.generation || s.key == key {
                return at;
            }
            at = (at + 1) & mask;
        }
    }

    /// Names op `op` `label`; false when the label names an op already.
    #[inline(always)]
    pub fn insert(&mut self, label: &[u8], op: u32) -> bool {
        let Some(key) = key(label) else {
            return self.long.insert(label.into(), op).is_none();
        };
        if 2 * (self.len + 1) > self.slots.len() {
            self.grow();
        }
        let at = self.find(key);
        let generation = self.generation;
        let slot = &mut self.slots[at];
        if slot.generation == generation {
            return false;
        }
        *slot = Slot { key, op, generation };
        self.len += 1;
        true
    }

    /// The op `label` names.
    #[inline(always)]
    pub fn get(&self, label: &[u8]) -> Option<u32> {
        let Some(key) = key(label) else {
            return self.long.get(label).copied();
        };
        let s = self.slots[self.find(key)];
        (s.generation == self.generation).then_some(s.op)
    }

    /// Forgets every label (a rank block closed).
    pub fn clear(&mut self) {
        if self.generation == u32::MAX {
            self.slots.fill(Slot::default());
            self.generation = 0;
        }
        self.generation += 1;
        self.len = 0;
        if !self.long.is_empty() {
            self.long.clear();
        }
    }

    /// Twice the slots, the labels held placed again.
    #[cold]
    fn grow(&mut self) {
        let generation = self.generation;
        let old = std::mem::replace(&mut self.slots, vec![Slot::default(); 2 << self.bits]);
        self.bits += 1;
        for s in old.into_iter().filter(|s| s.generation == generation) {
            let at = self.find(s.key);
            self.slots[at] = s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_the_bytes_then_the_length() {
        let mut rng = fastrand::Rng::with_seed(7);
        for n in 0..20 {
            for _ in 0..100 {
                let label: Vec<u8> = (0..n).map(|_| rng.u8(..)).collect();
                let want = (n < 16).then(|| {
                    let mut b = [0u8; 16];
                    b[..n].copy_from_slice(&label);
                    b[15] = n as u8;
                    u128::from_le_bytes(b)
                });
                assert_eq!(key(&label), want, "{label:?}");
            }
        }
    }

    #[test]
    fn short_and_long_labels_are_distinct_names() {
        let mut l = Labels::default();
        let long = b"a_label_longer_than_fifteen_bytes";
        // Labels that share a prefix, differ by a trailing NUL or by
        // length, or straddle the 15-byte limit name different ops.
        let names: [&[u8]; 7] = [
            b"l1",
            b"l10",
            b"l1\0",
            b"",
            b"fifteen_bytes_x",
            b"sixteen_bytes_xy",
            long,
        ];
        for (op, n) in names.iter().enumerate() {
            assert!(l.insert(n, op as u32), "{n:?}");
        }
        for (op, n) in names.iter().enumerate() {
            assert_eq!(l.get(n), Some(op as u32), "{n:?}");
            assert!(!l.insert(n, 99), "{n:?} twice");
        }
        assert_eq!(l.get(b"l2"), None);
        assert_eq!(l.get(&long[..20]), None);
        l.clear();
        assert_eq!((l.get(b"l1"), l.get(long)), (None, None));
        // Blocks of many labels grow the table; each block's end empties
        // it, however many blocks there are.
        for block in 0..3u32 {
            let names: Vec<String> = (0..5000).map(|i| format!("l{}", block * 5000 + i)).collect();
            for (op, n) in names.iter().enumerate() {
                assert!(l.insert(n.as_bytes(), op as u32));
            }
            for (op, n) in names.iter().enumerate() {
                assert_eq!(l.get(n.as_bytes()), Some(op as u32));
            }
            assert_eq!(l.get(b"l0"), (block == 0).then_some(0));
            l.clear();
        }
        l.generation = u32::MAX;
        l.insert(b"x", 1);
        l.clear();
        assert_eq!((l.get(b"x"), l.generation), (None, 1));
    }
}
