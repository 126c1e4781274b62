//! The unsaturated links of a progressive filling by the level at which
//! each would saturate (its remainder over its usage), so that a round
//! finds the next level and the links at it without rescanning every
//! link: a min-heap whose entries are refreshed lazily.
//!
//! A round fixes flows, which only lowers the remainder and usage of
//! their links, and so (up to rounding) only raises those links' levels.
//! A link's entry keeps the level it had when pushed; a raised level
//! leaves it in place, a lower bound, and the entry is re-keyed only when
//! it reaches the top. A lowered level (rounding) pushes a fresh entry at
//! once. So the top's key, once it equals its link's level, is the least
//! level of all, and the levels compared are the very quotients a full
//! scan would compute: the same level and the same links, bit for bit.

use crate::network::graph::LinkId;
use std::cmp::Reverse;
use std::collections::binary_heap::PeekMut;
use std::collections::BinaryHeap;

/// A level's bits: levels are positive (a remainder and a usage above
/// the precision), so their bits order as their values.
fn bits(level: f64) -> u64 {
    level.to_bits()
}

/// The heap and, per link, its live entry: its key and its version
/// (older entries of the link are dead).
#[derive(Default)]
pub(super) struct Levels {
    heap: BinaryHeap<Reverse<(u64, LinkId, u32)>>,
    key: Vec<u64>,
    version: Vec<u32>,
}

/// "No live entry": the link was taken at a level and is pushed again,
/// if still unsaturated, after its round.
const TAKEN: u64 = 0;

impl Levels {
    /// Room for `links` links, no entry.
    pub(super) fn new(links: usize) -> Levels {
        Levels {
            heap: BinaryHeap::new(),
            key: vec![TAKEN; links],
            version: vec![0; links],
        }
    }

    /// A new filling of the unsaturated links `light`, at their levels
    /// (`level_of`), heaped at once.
    pub(super) fn start(&mut self, light: &[LinkId], level_of: impl Fn(LinkId) -> f64) {
        let mut entries = std::mem::take(&mut self.heap).into_vec();
        entries.clear();
        entries.extend(light.iter().map(|&l| Reverse(self.entry(l, level_of(l)))));
        self.heap = BinaryHeap::from(entries);
    }

    /// Link `l`'s live entry at `level`, older ones dead.
    fn entry(&mut self, l: LinkId, level: f64) -> (u64, LinkId, u32) {
        let li = l as usize;
        self.version[li] = self.version[li].wrapping_add(1);
        self.key[li] = bits(level);
        (self.key[li], l, self.version[li])
    }

    /// Link `l` is unsaturated at `level`: its live entry.
    pub(super) fn push(&mut self, l: LinkId, level: f64) {
        let entry = self.entry(l, level);
        self.heap.push(Reverse(entry));
    }

    /// Link `l`'s level is now `level`: a fresh entry if it went down
    /// (its old one would hide it); none if it went up or `l` was taken.
    pub(super) fn changed(&mut self, l: LinkId, level: f64) {
        let key = self.key[l as usize];
        if key != TAKEN && bits(level) < key {
            self.push(l, level);
        }
    }

    /// The least level of the unsaturated links, and into `at` those
    /// at it (in no order; their entries are taken). `level_of` gives an
    /// unsaturated link's level, `None` for a link saturated since.
    pub(super) fn next(
        &mut self,
        level_of: impl Fn(LinkId) -> Option<f64>,
        at: &mut Vec<LinkId>,
    ) -> Option<f64> {
        at.clear();
        let mut least = None;
        while let Some(mut top) = self.heap.peek_mut() {
            let Reverse((key, l, version)) = *top;
            if least.is_some_and(|least| key != least) {
                break;
            }
            let live = if version == self.version[l as usize] {
                level_of(l)
            } else {
                None
            };
            match live {
                // Raised since pushed: back at its level, in place.
                Some(level) if bits(level) != key => {
                    let li = l as usize;
                    self.key[li] = bits(level);
                    *top = Reverse((self.key[li], l, version));
                }
                Some(_) => {
                    PeekMut::pop(top);
                    least = Some(key);
                    self.key[l as usize] = TAKEN;
                    at.push(l);
                }
                // Dead, or saturated since.
                None => {
                    PeekMut::pop(top);
                }
            }
        }
        least.map(f64::from_bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_level_comes_first_with_its_ties_raised_links_re_keyed_lowered_ones_pushed() {
        let mut level = [4.0, 2.0, 2.0, 8.0];
        let mut q = Levels::new(4);
        q.start(&[0, 1, 2, 3], |l| level[l as usize]);
        let mut at = Vec::new();
        let got = q.next(|l| Some(level[l as usize]), &mut at);
        at.sort_unstable();
        assert_eq!((got, at.clone()), (Some(2.0), vec![1, 2]), "the tie, both taken");
        // Link 0 rises past link 3 (its entry is left at 4), link 3 falls
        // to 3 (a fresh entry): link 3 comes first.
        level[0] = 9.0;
        q.changed(0, 9.0);
        level[3] = 3.0;
        q.changed(3, 3.0);
        assert_eq!(q.next(|l| Some(level[l as usize]), &mut at), Some(3.0));
        assert_eq!(at, vec![3]);
        // Link 1, taken, is pushed again at 5: it comes before link 0,
        // re-keyed at 9 on the way.
        q.push(1, 5.0);
        level[1] = 5.0;
        assert_eq!(q.next(|l| Some(level[l as usize]), &mut at), Some(5.0));
        assert_eq!(at, vec![1]);
        // Link 0 saturates: nothing is left.
        let open = |l: LinkId| (l != 0).then(|| level[l as usize]);
        assert_eq!(q.next(open, &mut at), None);
        assert!(at.is_empty());
    }
}
