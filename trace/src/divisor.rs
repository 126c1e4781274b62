//! Floor division by a divisor fixed in advance, as a multiplication: a
//! rank's clock conversion divides twice per event by the same two
//! numbers, and a 64-bit division takes tens of cycles.
//!
//! With `c = ceil(2^128 / d)`, `floor(n / d) = floor(c * n / 2^128)` for
//! every `n < 2^64` (Lemire, Kaser and Kurz, "Faster remainder by direct
//! computation", 2019: it holds when `c * d - 2^128 < 2^128 / 2^64`, and
//! `c * d - 2^128 < d < 2^64`).

/// A positive `i64` divisor, prepared.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Divisor {
    d: i64,
    /// `ceil(2^128 / d)`; 0 when `d` is a power of two (a shift).
    magic: u128,
    shift: u32,
}

impl Divisor {
    /// Prepares `d`; `None` unless `d > 0`.
    pub(crate) fn new(d: i64) -> Option<Divisor> {
        let u = u64::try_from(d).ok().filter(|&u| u > 0)?;
        Some(if u.is_power_of_two() {
            Divisor {
                d,
                magic: 0,
                shift: u.trailing_zeros(),
            }
        } else {
            // 2^128 / d is not an integer: its ceiling is one more than
            // the floor of (2^128 - 1) / d.
            Divisor {
                d,
                magic: u128::MAX / u128::from(u) + 1,
                shift: 0,
            }
        })
    }

    /// `n.div_euclid(d)`.
    #[inline]
    pub(crate) fn div_euclid(&self, n: i64) -> i64 {
        let Ok(u) = u64::try_from(n) else {
            return n.div_euclid(self.d);
        };
        if self.magic == 0 {
            return (u >> self.shift) as i64;
        }
        // The top 64 bits of the 192-bit product magic * u.
        let (hi, lo) = ((self.magic >> 64) as u64, self.magic as u64);
        let carry = (u128::from(lo) * u128::from(u)) >> 64;
        ((u128::from(hi) * u128::from(u) + carry) >> 64) as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check(n: i64, d: i64) {
        assert_eq!(
            Divisor::new(d).unwrap().div_euclid(n),
            n.div_euclid(d),
            "{n} / {d}"
        );
    }

    #[test]
    fn edges_divide_as_div_euclid() {
        let ds = [
            1,
            2,
            3,
            5,
            7,
            10,
            1 << 20,
            (1 << 20) + 1,
            1_000_000_007,
            i64::MAX - 1,
            i64::MAX,
        ];
        let ns = [
            0,
            1,
            2,
            3,
            -1,
            -2,
            999,
            1 << 40,
            i64::MAX,
            i64::MAX - 1,
            i64::MIN,
            i64::MIN + 1,
        ];
        for &d in &ds {
            for &n in &ns {
                check(n, d);
                check(n.saturating_sub(d), d);
                check(d, d);
                check(d - 1, d);
            }
        }
        assert!(Divisor::new(0).is_none());
        assert!(Divisor::new(-3).is_none());
    }

    proptest! {
        #[test]
        fn any_divides_as_div_euclid(n in any::<i64>(), d in 1..=i64::MAX) {
            check(n, d);
        }

        #[test]
        fn small_divisors_divide_as_div_euclid(n in any::<i64>(), d in 1i64..100_000) {
            check(n, d);
            check(n / d * d, d);
        }
    }
}
