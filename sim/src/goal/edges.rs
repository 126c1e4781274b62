//! A schedule's dependencies as rows of dependents per op, and the op
//! counters they count down. Every op of a collective has a row and a
//! counter (four million at 65,536 ranks of an allreduce), so both are
//! kept small: a row's length is a byte per op (a start every
//! [`GROUP`] ops: 1.5 bytes an op), a counter a byte of the op; the rare larger ones are
//! kept aside in a map.

use rustc_hash::FxHashMap;

/// A row length or a counter that is not kept in its byte but in a map.
pub const MANY: u8 = u8::MAX;

/// Ops per group: a row's start is its group's plus the lengths of the
/// rows before it in the group, summed as the bytes of one word.
const GROUP: usize = 8;

/// A group's rows: where they start in [`Edges::to`], and their lengths
/// ([`MANY`] for one in [`Edges::many`]); 12 bytes for 8 ops, read in one
/// cache line.
#[derive(Clone, Copy, Debug, Default)]
struct Group {
    start: u32,
    lens: [u8; GROUP],
}

/// Each byte's low bits of a word, and their high bits.
const LOW: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = LOW * 0x80;

/// Dependents, per op, in the order the schedule declared them.
#[derive(Clone, Debug, Default)]
pub struct Edges {
    groups: Vec<Group>,
    /// Rows held (ops with a row).
    rows: usize,
    many: FxHashMap<u32, u32>,
    to: Vec<u32>,
}

impl Edges {
    /// The ops waiting on op `i`.
    #[inline]
    pub fn of(&self, i: u32) -> &[u32] {
        let i = i as usize;
        if i >= self.rows {
            return &[];
        }
        let g = self.groups[i / GROUP];
        let (k, lens) = (i % GROUP, u64::from_le_bytes(g.lens));
        let before = lens & !(u64::MAX << (8 * k));
        let len = usize::from(g.lens[k]);
        // No row before it in the group, nor its own, in the map (no byte
        // of `before` is MANY, none of `!before` zero): the lengths' sum
        // is the bytes' (in 16-bit lanes: 8 x 254 fits).
        let many_before = (!before).wrapping_sub(LOW) & before & HIGH != 0;
        if !many_before && len != usize::from(MANY) {
            let pairs = (before & 0x00ff_00ff_00ff_00ff) + ((before >> 8) & 0x00ff_00ff_00ff_00ff);
            let start = g.start as usize + (pairs.wrapping_mul(0x0001_0001_0001_0001) >> 48) as usize;
            return &self.to[start..start + len];
        }
        let group = i - k;
        let start = (0..k).fold(g.start as usize, |s, j| s + self.length(group + j, g.lens[j]));
        &self.to[start..start + self.length(i, g.lens[k])]
    }

    fn length(&self, i: usize, len: u8) -> usize {
        match len {
            MANY => self.many[&(i as u32)] as usize,
            l => usize::from(l),
        }
    }

    /// Appends the next op's row: its start in `to` and its length (its
    /// ops are appended to `to` with the rest of its block's).
    fn push_len(&mut self, start: u32, len: u32) {
        let i = self.rows;
        if i.is_multiple_of(GROUP) {
            self.groups.push(Group {
                start,
                lens: [0; GROUP],
            });
        }
        let len = match u8::try_from(len).ok().filter(|&l| l != MANY) {
            Some(l) => l,
            None => {
                self.many.insert(i as u32, len);
                MANY
            }
        };
        self.groups[i / GROUP].lens[i % GROUP] = len;
        self.rows += 1;
    }
}

impl Edges {
    /// Appends `other`'s rows, read as the ops from `offset` on: the rows
    /// up to `offset` are completed empty, and `other`'s dependents
    /// shifted by it.
    pub fn append(&mut self, other: &Edges, offset: u32) {
        if other.rows == 0 {
            return;
        }
        while (self.rows as u32) < offset {
            self.push_len(self.to.len() as u32, 0);
        }
        for i in 0..other.rows as u32 {
            let row = other.of(i);
            self.push_len(self.to.len() as u32, row.len() as u32);
            self.to.extend(row.iter().map(|&to| to + offset));
        }
    }
}

/// [`Edges`] built a rank block at a time: a dependency joins two ops of
/// one block, so a block's pairs are placed in rows when it closes, and
/// only one block's pairs are ever held (all of a schedule's, at 8 bytes
/// each beside the rows, were the largest part of its reading's peak).
#[derive(Default)]
pub struct Rows {
    pub edges: Edges,
    /// The open block's (from, to) pairs, in declaration order.
    block: Vec<(u32, u32)>,
    /// Per op of the block, its pairs (then where its row goes), reused.
    counts: Vec<u32>,
    /// The block's rows, in order, reused.
    placed: Vec<u32>,
}

impl Rows {
    /// Op `to` waits on op `from`.
    pub fn push(&mut self, from: u32, to: u32) {
        self.block.push((from, to));
    }

    /// Places the open block's pairs: rows up to op `ops` (excluded) are
    /// then complete, each keeping its pairs' order. No rows at all while
    /// there are no pairs.
    pub fn close(&mut self, ops: u32) {
        let e = &mut self.edges;
        if self.block.is_empty() && e.rows == 0 {
            return;
        }
        // A counting sort by `from`: stable, so a row keeps its order.
        let first = e.rows as u32;
        self.counts.clear();
        self.counts.resize((ops - first) as usize + 1, 0);
        for &(from, _) in &self.block {
            self.counts[(from - first) as usize + 1] += 1;
        }
        for k in 1..self.counts.len() {
            self.counts[k] += self.counts[k - 1];
        }
        self.placed.clear();
        self.placed.resize(self.block.len(), 0);
        for &(from, to) in &self.block {
            let at = &mut self.counts[(from - first) as usize];
            self.placed[*at as usize] = to;
            *at += 1;
        }
        // Each op's row now ends where the next begins.
        let (base, mut start) = (e.to.len() as u32, 0);
        for k in 0..(ops - first) as usize {
            let end = self.counts[k];
            e.push_len(base + start, end - start);
            start = end;
        }
        e.to.extend_from_slice(&self.placed);
        self.block.clear();
    }
}

/// Adds a wait to op `i`'s counter `w`.
pub fn add_wait(w: &mut u8, many: &mut FxHashMap<u32, u32>, i: u32) {
    match *w {
        MANY => *many.get_mut(&i).expect("a counter at MANY is in the map") += 1,
        n if n + 1 == MANY => {
            *w = MANY;
            many.insert(i, u32::from(MANY));
        }
        n => *w = n + 1,
    }
}

/// Takes a wait from op `i`'s counter `w`: whether it was the last.
#[inline]
pub fn release(w: &mut u8, many: &mut FxHashMap<u32, u32>, i: u32) -> bool {
    match *w {
        MANY => {
            let n = many.get_mut(&i).expect("a counter at MANY is in the map");
            *n -= 1;
            *n == 0
        }
        n => {
            *w = n - 1;
            n == 1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_counters_of_every_length_round_trip() {
        // Blocks of ops with rows of 0 to 600 dependents (past a byte),
        // pairs declared out of order.
        let mut rows = Rows::default();
        let mut want: Vec<Vec<u32>> = Vec::new();
        let mut rng = fastrand::Rng::with_seed(3);
        for _ in 0..20 {
            let first = want.len() as u32;
            let n = rng.u32(1..40);
            let mut block = Vec::new();
            for from in first..first + n {
                let len = match rng.u8(0..10) {
                    0 => rng.usize(250..600),
                    _ => rng.usize(0..4),
                };
                let row: Vec<u32> = (0..len).map(|_| rng.u32(..1000)).collect();
                block.extend(row.iter().map(|&to| (from, to)));
                want.push(row);
            }
            // Interleave the rows' pairs, each row's in its order.
            block.sort_by_key(|&(from, to)| (to % 7, from));
            let mut per: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
            for &(from, to) in &block {
                per[(from - first) as usize].push(to);
            }
            for (k, row) in per.into_iter().enumerate() {
                want[first as usize + k] = row;
            }
            for &(from, to) in &block {
                rows.push(from, to);
            }
            rows.close(first + n);
        }
        for (i, row) in want.iter().enumerate() {
            assert_eq!(rows.edges.of(i as u32), &row[..], "op {i}");
        }
        assert_eq!(rows.edges.of(want.len() as u32), &[] as &[u32]);
        // A counter past a byte counts down to its last wait.
        let (mut w, mut many) = (0u8, FxHashMap::default());
        for _ in 0..300 {
            add_wait(&mut w, &mut many, 9);
        }
        assert_eq!(w, MANY);
        assert!((0..299).all(|_| !release(&mut w, &mut many, 9)));
        assert!(release(&mut w, &mut many, 9));
    }
}
