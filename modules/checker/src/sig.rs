//! Type signatures, as MPI's matching rules define them: the sequence of
//! basic types a (count, datatype) pair sends, whatever the layout. A
//! [`Sig`] is a polynomial hash of that sequence with its length, built
//! by concatenation and repetition in O(log count), so that a count of a
//! million elements of a struct type costs a few multiplications.

/// The hash base (odd, so that powers never vanish modulo 2^64).
const BASE: u64 = 0x0000_0100_0000_01b3;

/// A type signature: equal sequences of basic types have equal `Sig`s;
/// unequal ones almost surely not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Sig {
    /// The sequence's polynomial hash.
    pub hash: u64,
    /// Basic elements in the sequence.
    pub len: u64,
    /// Bytes of data (the sum of the basic types' sizes).
    pub bytes: u64,
    /// Contains `MPI_BYTE`, `MPI_PACKED` or a type the checker cannot
    /// name: only the bytes can be compared.
    pub loose: bool,
}

fn pow(mut base: u64, mut exp: u64) -> u64 {
    let mut acc = 1u64;
    while exp > 0 {
        if exp & 1 == 1 {
            acc = acc.wrapping_mul(base);
        }
        base = base.wrapping_mul(base);
        exp >>= 1;
    }
    acc
}

impl Sig {
    /// One basic type named `id` (> 0) of `size` bytes.
    pub fn basic(id: u64, size: u64) -> Sig {
        Sig {
            hash: id,
            len: 1,
            bytes: size,
            loose: false,
        }
    }

    /// A type the checker cannot name, of `bytes` bytes: compared by size.
    pub fn opaque(bytes: u64) -> Sig {
        Sig {
            hash: 0,
            len: 1,
            bytes,
            loose: true,
        }
    }

    /// This sequence followed by `other`.
    pub fn then(self, other: Sig) -> Sig {
        Sig {
            hash: self
                .hash
                .wrapping_mul(pow(BASE, other.len))
                .wrapping_add(other.hash),
            len: self.len + other.len,
            bytes: self.bytes + other.bytes,
            loose: self.loose || other.loose,
        }
    }

    /// This sequence `n` times over: repeated doubling, with the power
    /// of the base that each doubling shifts by carried along.
    pub fn times(self, n: u64) -> Sig {
        match n {
            0 => {
                return Sig {
                    loose: self.loose,
                    ..Sig::default()
                }
            }
            1 => return self,
            _ => {}
        }
        let mut acc = Sig::default();
        let mut unit = self;
        // BASE^unit.len
        let mut shift = pow(BASE, unit.len);
        let mut n = n;
        while n > 0 {
            if n & 1 == 1 {
                acc.hash = acc.hash.wrapping_mul(shift).wrapping_add(unit.hash);
                acc.len += unit.len;
                acc.bytes += unit.bytes;
            }
            n >>= 1;
            if n > 0 {
                unit.hash = unit.hash.wrapping_mul(shift).wrapping_add(unit.hash);
                unit.len *= 2;
                unit.bytes *= 2;
                shift = shift.wrapping_mul(shift);
            }
        }
        acc.loose = self.loose;
        acc
    }

    /// Whether a message of signature `self` may be received by a
    /// receive of `count` elements of signature `unit`: its basic types
    /// are those of the first whole elements of the receive (a message
    /// may be shorter than the receive), or, when either is loose, it
    /// has no more bytes.
    pub fn fits(self, unit: Sig, count: u64) -> bool {
        if self.loose || unit.loose {
            return self.bytes <= unit.bytes * count;
        }
        if unit.len == 0 {
            return self.len == 0;
        }
        let n = self.len / unit.len;
        self.len.is_multiple_of(unit.len) && n <= count && unit.times(n) == self
    }

    /// Whether two sides of a collective agree: the same basic types, or
    /// when either is loose, the same bytes.
    pub fn agrees(self, other: Sig) -> bool {
        if self.loose || other.loose {
            self.bytes == other.bytes
        } else {
            self.hash == other.hash && self.len == other.len
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int() -> Sig {
        Sig::basic(8, 4)
    }
    fn dbl() -> Sig {
        Sig::basic(15, 8)
    }

    #[test]
    fn layout_does_not_matter_only_the_sequence() {
        // contiguous(4, int) x 3 == 12 ints == vector(3, 2, 5, int) x 2.
        assert_eq!(int().times(4).times(3), int().times(12));
        assert_eq!(int().times(2).times(3).times(2), int().times(12));
        // {int, double} x 3 != {double, int} x 3, though both are 36 bytes.
        let a = int().then(dbl()).times(3);
        let b = dbl().then(int()).times(3);
        assert_eq!(a.bytes, b.bytes);
        assert!(!a.agrees(b));
        assert!(a.agrees(int().then(dbl()).then(int().then(dbl()).times(2))));
    }

    #[test]
    fn a_receive_may_be_longer_never_shorter_or_of_another_type() {
        assert!(int().times(3).fits(int(), 5));
        assert!(int().times(4).fits(int().times(2), 5));
        assert!(!int().times(3).fits(int().times(2), 5));
        assert!(!int().times(5).fits(int(), 3));
        assert!(!int().times(2).fits(dbl(), 1));
        assert!(!int().times(2).fits(Sig::basic(13, 4), 2));
        // Bytes against anything: sizes only.
        assert!(Sig::opaque(8).fits(dbl(), 1));
        assert!(!Sig::opaque(9).fits(dbl(), 1));
    }

    #[test]
    fn times_is_repeated_concatenation() {
        for unit in [int(), int().then(dbl()), Sig::opaque(3).then(dbl())] {
            for n in 0..40 {
                let by_then = (0..n).fold(
                    Sig {
                        loose: unit.loose,
                        ..Sig::default()
                    },
                    |acc, _| acc.then(unit),
                );
                assert_eq!(unit.times(n), by_then, "n = {n}");
            }
        }
    }

    #[test]
    fn zero_counts_are_empty() {
        assert_eq!(int().times(0), Sig::default());
        assert!(int().times(0).agrees(dbl().times(0)));
    }
}
