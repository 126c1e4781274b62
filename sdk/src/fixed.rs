//! Fixed-point decimals for the reports modules write at `MPI_Finalize`:
//! `Fixed(x, 6)` prints what `{:.6}` prints for `x`, digit for digit, in
//! a few dozen instructions where `core::fmt` takes one to two thousand
//! (an exactly rounded expansion, often through its big-number fallback).
//! The profiler's rank 0 writes some 800 of them, which were a third of its
//! report's cost. Width, fill and alignment come from the format string
//! (`{:>12}`), as for a number.

use std::fmt;

/// `self.0` with `self.1` digits after the point, as `{:.N}` writes it.
#[derive(Clone, Copy, Debug)]
pub struct Fixed(pub f64, pub usize);

/// Digits after the point the fast path takes: `10^9` times any value
/// below `2^53 / 10^9` is still an integer-precise product.
const MAX_DIGITS: usize = 9;

impl fmt::Display for Fixed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A plain `{}` (the reports' cells, pasted as they are) needs no
        // padding: one write, sign included.
        if f.width().is_none() && !f.sign_plus() && !f.sign_aware_zero_pad() {
            return self.with_text(|text| f.write_str(text));
        }
        let Fixed(x, digits) = *self;
        let mut buf = [0u8; 40];
        match fast(x.abs(), digits, &mut buf) {
            Some(from) => f.pad_integral(!x.is_sign_negative(), "", ascii(&buf[from..])),
            None if x.is_finite() => {
                f.pad_integral(!x.is_sign_negative(), "", &format!("{:.*}", digits, x.abs()))
            }
            None => f.pad_integral(true, "", &format!("{x:.digits$}")),
        }
    }
}

impl Fixed {
    /// Hands `f` the text `{}` writes, without `core::fmt` on the fast
    /// path (a report's cells are padded and pushed by hand).
    pub fn with_text<R>(self, f: impl FnOnce(&str) -> R) -> R {
        let Fixed(x, digits) = self;
        let mut buf = [0u8; 40];
        match fast(x.abs(), digits, &mut buf) {
            Some(mut from) => {
                if x.is_sign_negative() {
                    from -= 1;
                    buf[from] = b'-';
                }
                f(ascii(&buf[from..]))
            }
            // What `{:.N}` writes, sign and all (`inf`, `NaN` too).
            None => f(&format!("{x:.digits$}")),
        }
    }
}

/// `00` to `99`, two ASCII digits each.
const PAIRS: [u8; 200] = {
    let mut pairs = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        pairs[2 * i] = b'0' + (i / 10) as u8;
        pairs[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    pairs
};

/// `10^k` for the digits the fast path takes.
const POW10: [u64; MAX_DIGITS + 1] = {
    let mut p = [1u64; MAX_DIGITS + 1];
    let mut k = 1;
    while k <= MAX_DIGITS {
        p[k] = p[k - 1] * 10;
        k += 1;
    }
    p
};

/// The digits, point and sign that [`fast`] and its caller wrote, as
/// text: ASCII, so never the fallback.
fn ascii(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).unwrap_or("?")
}

/// Writes `a` (finite, not negative) with `digits` decimals at the end of
/// `buf` and returns where it starts (at least 1: room for a sign), when
/// the rounding of the scaled product is certain: `a * 10^digits` is
/// computed within half an ulp, so unless it lies within an ulp of a half
/// the exact value rounds the same way. Otherwise (a tie or nearly, a
/// huge value, many digits) `None`, and `core::fmt` decides.
fn fast(a: f64, digits: usize, buf: &mut [u8; 40]) -> Option<usize> {
    if !a.is_finite() || digits > MAX_DIGITS {
        return None;
    }
    let scaled = a * POW10[digits] as f64;
    if scaled >= (1u64 << 53) as f64 {
        return None;
    }
    // Below 2^53 and not negative, the conversion truncates: the floor.
    let below = scaled as u64;
    let fraction = scaled - below as f64;
    let ulp = f64::EPSILON * scaled.max(1.0);
    if (fraction - 0.5).abs() <= 2.0 * ulp {
        return None;
    }
    // Not within an ulp of a half: `round` rounds to the nearer integer.
    let mut v = below + u64::from(fraction > 0.5);
    // The rounded product's digits, two at a time, last first, the point
    // after the `digits` last ones and at least one digit before it
    // (below 2^53: 16 digits, a point and a sign fit).
    let mut at = buf.len();
    let mut left = digits;
    while left >= 2 {
        let pair = (v % 100) as usize * 2;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
        v /= 100;
        left -= 2;
    }
    if left == 1 {
        at -= 1;
        buf[at] = b'0' + (v % 10) as u8;
        v /= 10;
    }
    if digits > 0 {
        at -= 1;
        buf[at] = b'.';
    }
    while v >= 100 {
        let pair = (v % 100) as usize * 2;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
        v /= 100;
    }
    if v >= 10 {
        let pair = v as usize * 2;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    } else {
        at -= 1;
        buf[at] = b'0' + v as u8;
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(x: f64, digits: usize) {
        assert_eq!(
            Fixed(x, digits).with_text(str::to_string),
            format!("{x:.digits$}"),
            "{x:e} with {digits} digits, as text"
        );
        assert_eq!(
            format!("{}", Fixed(x, digits)),
            format!("{x:.digits$}"),
            "{x:e} with {digits} digits"
        );
        assert_eq!(
            format!("{:>14}", Fixed(x, digits)),
            format!("{x:>14.digits$}"),
            "{x:e} with {digits} digits, right-aligned"
        );
        assert_eq!(
            format!("{:<14}", Fixed(x, digits)),
            format!("{x:<14.digits$}"),
            "{x:e} with {digits} digits, left-aligned"
        );
    }

    #[test]
    fn prints_what_core_fmt_prints() {
        for x in [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            1.5,
            2.5,
            0.125,
            0.0625,
            12.0,
            1e-9,
            123.456789,
            0.1,
            0.7,
            99.995,
            1e15,
            9.1e15,
            1e300,
            f64::MIN_POSITIVE,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            for digits in 0..=12 {
                same(x, digits);
            }
        }
    }

    #[test]
    fn prints_what_core_fmt_prints_on_random_values() {
        // A fixed xorshift: the same values every run, spread over every
        // magnitude the report prints (seconds, percentages, GHz, bytes).
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..100_000 {
            let bits = next();
            let mantissa = (bits >> 11) as f64 / (1u64 << 53) as f64;
            let exponent = (next() % 40) as i32 - 20;
            let x = mantissa * 10f64.powi(exponent);
            let x = if bits & 1 == 0 { x } else { -x };
            same(x, (next() % 10) as usize);
        }
        // Values on a grid of halves, where ties are decided.
        for k in 0..20_000u64 {
            same(k as f64 / 2000.0, 3);
            same(k as f64 / 8.0, 2);
        }
    }
}
