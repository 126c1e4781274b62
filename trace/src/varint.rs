//! The integer encodings of the format: unsigned LEB128 varints (7 bits a
//! byte, low group first, the high bit set on every byte but the last) and
//! zigzag for signed values, so that small magnitudes of either sign take
//! one byte.

use crate::error::Malformed;

/// The longest varint of a `u64`.
pub const MAX_LEN: usize = 10;

/// Maps signed to unsigned so that -1, 1, -2, 2 ... become 1, 2, 3, 4 ...
#[inline]
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// The inverse of [`zigzag`].
#[inline]
pub fn unzigzag(u: u64) -> i64 {
    ((u >> 1) as i64) ^ -((u & 1) as i64)
}

/// Appends `v` to `out`.
pub fn push(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends `v` zigzagged.
pub fn push_i(out: &mut Vec<u8>, v: i64) {
    push(out, zigzag(v));
}

/// Appends a length-prefixed UTF-8 string.
pub fn push_str(out: &mut Vec<u8>, s: &str) {
    push(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// A writer into a fixed buffer that the caller has sized with an upper
/// bound of what it writes: the tracer's hot path, which must not allocate.
pub struct Sink<'a> {
    buf: &'a mut [u8],
    pos: usize,
}

impl<'a> Sink<'a> {
    /// Writes into `buf` from its start.
    #[inline(always)]
    pub fn new(buf: &'a mut [u8]) -> Sink<'a> {
        Sink { buf, pos: 0 }
    }

    /// Bytes written so far.
    #[inline]
    pub fn len(&self) -> usize {
        self.pos
    }

    /// Whether nothing was written yet.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pos == 0
    }

    /// Writes `v` as a varint. The buffer must have room (an index past its
    /// end is a bug in the caller's size bound and panics).
    #[inline(always)]
    pub fn put(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.buf[self.pos] = v as u8 | 0x80;
            self.pos += 1;
            v >>= 7;
        }
        self.buf[self.pos] = v as u8;
        self.pos += 1;
    }

    /// Writes `v` zigzagged.
    #[inline]
    pub fn put_i(&mut self, v: i64) {
        self.put(zigzag(v));
    }

    /// Writes `v` as a varint, up to 3 bytes with one store and no loop:
    /// for values that often take 2 or 3 bytes (message sizes), where
    /// [`Sink::put`]'s loop costs more. The buffer must have room for its
    /// varint and at least 4 bytes.
    #[inline(always)]
    pub fn put_short(&mut self, v: u64) {
        if v >= 1 << 21 {
            self.put(v);
            return;
        }
        // The three 7-bit groups, each with its continuation bit, then the
        // length: bytes up to the highest non-zero group.
        let (b0, b1, b2) = (v & 0x7f, v >> 7 & 0x7f, v >> 14);
        let (two, three) = (v >= 0x80, v >= 1 << 14);
        // The continuation bits of the bytes before the last.
        let more = u64::from(two) << 7 | u64::from(three) << 15;
        let word = (b0 | b1 << 8 | b2 << 16 | more) as u32;
        self.buf[self.pos..self.pos + 4].copy_from_slice(&word.to_le_bytes());
        self.pos += 1 + usize::from(two) + usize::from(three);
    }

    /// Writes three varints: when all of them take one byte (the common
    /// case on the tracer's hot path) with one store and one bounds check.
    /// The buffer must have room for their varints and at least 4 bytes.
    #[inline(always)]
    pub fn put3(&mut self, [a, b, c]: [u64; 3]) {
        if (a | b | c) < 0x80 {
            let word = (a | b << 8 | c << 16) as u32;
            self.buf[self.pos..self.pos + 4].copy_from_slice(&word.to_le_bytes());
            self.pos += 3;
        } else {
            self.put(a);
            self.put(b);
            self.put(c);
        }
    }
}

/// Where varints are written: a growing `Vec` (files) or a [`Sink`] (the
/// tracer's fixed buffer).
pub trait Put {
    /// Writes `v` as a varint.
    fn put(&mut self, v: u64);

    /// Writes `v` zigzagged.
    fn put_i(&mut self, v: i64) {
        self.put(zigzag(v));
    }
}

impl Put for Vec<u8> {
    fn put(&mut self, v: u64) {
        push(self, v);
    }
}

impl Put for Sink<'_> {
    #[inline(always)]
    fn put(&mut self, v: u64) {
        Sink::put(self, v);
    }
}

/// Writes a list of world ranks: its length, then each rank as its
/// zigzagged difference from the one before (the first from -1), so that
/// consecutive ranks take a byte each. [`Cursor::ranks`] reads it.
pub fn put_ranks(out: &mut impl Put, ranks: &[i64]) {
    out.put(ranks.len() as u64);
    let mut prev = -1i64;
    for &r in ranks {
        out.put_i(r.wrapping_sub(prev));
        prev = r;
    }
}

/// A reader over a byte slice that knows where the slice sits in its file,
/// so that every error names the byte offset where decoding failed.
#[derive(Clone)]
pub struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    origin: u64,
}

impl<'a> Cursor<'a> {
    /// Reads `data`, whose first byte is at `origin` in its file.
    pub fn new(data: &'a [u8], origin: u64) -> Cursor<'a> {
        Cursor { data, pos: 0, origin }
    }

    /// The file offset of the next byte.
    pub fn offset(&self) -> u64 {
        self.origin + self.pos as u64
    }

    /// Whether every byte was consumed.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }

    /// Bytes left.
    pub fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.pos)
    }

    /// An error at the current offset.
    pub fn error(&self, what: impl Into<String>) -> Malformed {
        Malformed::new(self.offset(), what)
    }

    /// One byte.
    pub fn u8(&mut self) -> Result<u8, Malformed> {
        let b = *self
            .data
            .get(self.pos)
            .ok_or_else(|| self.error("unexpected end of data"))?;
        self.pos += 1;
        Ok(b)
    }

    /// `n` raw bytes.
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], Malformed> {
        if self.remaining() < n {
            return Err(self.error(format!("unexpected end of data ({n} bytes needed)")));
        }
        let out = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    /// `len` bytes (at most 8), little-endian: the times of a rank file's
    /// event (format version 3).
    #[inline]
    pub fn le(&mut self, len: usize) -> Result<u64, Malformed> {
        debug_assert!(len <= 8);
        let mut b = [0u8; 8];
        b[..len].copy_from_slice(self.bytes(len)?);
        Ok(u64::from_le_bytes(b))
    }

    /// A varint; refuses encodings longer than 10 bytes or past 64 bits.
    #[inline]
    pub fn u64(&mut self) -> Result<u64, Malformed> {
        // Varints of up to 9 bytes read straight from the slice; the
        // longest and the bad ones (errors and their offsets) below.
        let rest = self.data.get(self.pos..).unwrap_or_default();
        if let Some(&b) = rest.first().filter(|&&b| b < 0x80) {
            self.pos += 1;
            return Ok(u64::from(b));
        }
        let mut v = 0u64;
        for (i, &b) in rest.iter().take(MAX_LEN - 1).enumerate() {
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                self.pos += i + 1;
                return Ok(v);
            }
        }
        self.u64_checked()
    }

    /// [`u64`](Self::u64) byte by byte, checking each.
    #[cold]
    #[inline(never)]
    fn u64_checked(&mut self) -> Result<u64, Malformed> {
        let start = self.offset();
        let mut v: u64 = 0;
        for i in 0..MAX_LEN {
            let b = self
                .u8()
                .map_err(|_| Malformed::new(start, "varint runs past the end of data"))?;
            let group = u64::from(b & 0x7f);
            if i == MAX_LEN - 1 && group > 1 {
                return Err(Malformed::new(start, "varint overflows 64 bits"));
            }
            v |= group << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(Malformed::new(start, "varint longer than 10 bytes"))
    }

    /// A zigzagged varint.
    #[inline]
    pub fn i64(&mut self) -> Result<i64, Malformed> {
        self.u64().map(unzigzag)
    }

    /// A varint that must fit `u32`.
    #[inline]
    pub fn u32(&mut self) -> Result<u32, Malformed> {
        let start = self.offset();
        let v = self.u64()?;
        u32::try_from(v).map_err(|_| Malformed::new(start, format!("value {v} out of range")))
    }

    /// A count of items that each take at least `min_item_bytes`, checked
    /// against the bytes left so that a corrupt count cannot ask for a huge
    /// allocation.
    #[inline]
    pub fn count(&mut self, min_item_bytes: usize) -> Result<usize, Malformed> {
        self.count_beyond(min_item_bytes, 0)
    }

    /// [`count`](Self::count) in data of which `beyond` more bytes follow
    /// past this cursor's end (a chunk read a piece at a time).
    #[inline]
    pub fn count_beyond(&mut self, min_item_bytes: usize, beyond: usize) -> Result<usize, Malformed> {
        let start = self.offset();
        let n = self.u64()?;
        let fits = usize::try_from(n)
            .ok()
            .filter(|&n| n.saturating_mul(min_item_bytes.max(1)) <= self.remaining() + beyond);
        fits.ok_or_else(|| Malformed::new(start, format!("count {n} exceeds the data left")))
    }

    /// A list of world ranks written by [`put_ranks`].
    pub fn ranks(&mut self) -> Result<Vec<i64>, Malformed> {
        let n = self.count(1)?;
        let mut prev = -1i64;
        (0..n)
            .map(|_| {
                prev = prev.wrapping_add(self.i64()?);
                Ok(prev)
            })
            .collect()
    }

    /// A length-prefixed UTF-8 string.
    pub fn string(&mut self) -> Result<String, Malformed> {
        let n = self.count(1)?;
        let start = self.offset();
        let bytes = self.bytes(n)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| Malformed::new(start, "string is not UTF-8"))
    }
}

/// Bytes of `v` as a varint.
pub fn len(v: u64) -> usize {
    let bits = 64 - (v | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zigzag_maps_small_magnitudes_to_small_codes() {
        let pairs = [
            (0, 0),
            (-1, 1),
            (1, 2),
            (-2, 3),
            (2, 4),
            (i64::MAX, u64::MAX - 1),
            (i64::MIN, u64::MAX),
        ];
        for (v, u) in pairs {
            assert_eq!(zigzag(v), u, "{v}");
            assert_eq!(unzigzag(u), v);
        }
    }

    #[test]
    fn varints_round_trip_at_group_boundaries() {
        let values = [
            0,
            1,
            127,
            128,
            16383,
            16384,
            (1 << 21) - 1,
            1 << 21,
            u64::from(u32::MAX),
            u64::MAX,
        ];
        for v in values {
            let mut out = Vec::new();
            push(&mut out, v);
            assert_eq!(out.len(), len(v), "{v}");
            let mut fixed = [0u8; MAX_LEN];
            let mut sink = Sink::new(&mut fixed);
            sink.put(v);
            assert_eq!(&fixed[..out.len()], &out[..]);
            // The same bytes from the one-store writers.
            let mut short = [0u8; 4 * MAX_LEN];
            let mut sink = Sink::new(&mut short);
            sink.put_short(v);
            sink.put3([v, 5, v]);
            let n = sink.len();
            let mut c = Cursor::new(&short[..n], 0);
            assert_eq!(
                [
                    c.u64().unwrap(),
                    c.u64().unwrap(),
                    c.u64().unwrap(),
                    c.u64().unwrap()
                ],
                [v, v, 5, v]
            );
            assert!(c.is_empty(), "{v}");
            assert_eq!(&short[..out.len()], &out[..]);
            let mut c = Cursor::new(&out, 100);
            assert_eq!(c.u64().unwrap(), v);
            assert!(c.is_empty());
        }
        assert_eq!(len(127), 1);
        assert_eq!(len(128), 2);
        assert_eq!(len(u64::MAX), 10);
    }

    #[test]
    fn malformed_varints_name_their_offset() {
        let e = Cursor::new(&[0x80, 0x80], 40).u64().unwrap_err();
        assert_eq!(e.offset, 40);
        let long = [0xffu8; 11];
        assert!(Cursor::new(&long, 0).u64().unwrap_err().what.contains("64 bits"));
        let mut over = vec![0xffu8; 9];
        over.push(0x02);
        assert!(Cursor::new(&over, 0).u64().is_err());
        let mut max = vec![0xffu8; 9];
        max.push(0x01);
        assert_eq!(Cursor::new(&max, 0).u64().unwrap(), u64::MAX);
    }

    #[test]
    fn counts_larger_than_the_data_are_refused() {
        let mut out = Vec::new();
        push(&mut out, 1 << 40);
        out.extend_from_slice(&[0; 8]);
        let e = Cursor::new(&out, 7).count(1).unwrap_err();
        assert_eq!(e.offset, 7);
    }
}
