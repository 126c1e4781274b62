//! The lines Schedgen2 writes, read straight from their bytes: at 65,536
//! ranks an allreduce is 8.6 million of them, nearly all of four forms,
//!
//! ```text
//! L: send 8b to 3 tag 42001      L: recv 8b from 3 tag 42001 (or -1s)
//! L: calc 100                    A requires B  /  A irequires B
//! ```
//!
//! with one space between words and `\n` at the end. Such a line is read
//! in one pass, where splitting it into words first costs several times
//! more; any other line (other spacing, `cpu`/`nic`, comments, `\r`, a
//! keyword, an error) is left to the word splitter, which reads it the
//! same way. The statement is then checked by the parser as any other.

use super::lex::stop;
use super::stmt::{Kind, Stmt};

/// The statement of the line at the start of `text`, and the bytes it
/// takes with its `\n`; `None` for a line of another form.
#[inline]
pub(super) fn statement(text: &[u8]) -> Option<(Stmt<'_>, usize)> {
    // The first word, as the word splitter cuts it.
    let n = stop(text, 0);
    let (word, rest) = text.split_at(n);
    let [b' ', rest @ ..] = rest else {
        return None;
    };
    match word.strip_suffix(b":") {
        Some(label) => op(label, rest).map(|(st, used)| (st, n + 1 + used)),
        // A keyword's line is the parser's: `}` or `rank` is no label.
        None if !matches!(word, b"" | b"}" | b"rank" | b"num_ranks") => {
            dep(word, rest).map(|(st, used)| (st, n + 1 + used))
        }
        None => None,
    }
}

/// `send ...`, `recv ...` or `calc ...` after `label: `.
#[inline(always)]
fn op<'t>(label: &'t [u8], rest: &'t [u8]) -> Option<(Stmt<'t>, usize)> {
    let (kind, at) = match rest.get(..5)? {
        b"send " => (Kind::Send, 5),
        b"recv " => (Kind::Recv, 5),
        b"calc " => {
            let (size, n) = digits(&rest[5..])?;
            return end(&rest[5 + n..])
                .map(|()| (stmt(label, Kind::Calc, size, Some(0), Some(0)), 5 + n + 1));
        }
        _ => return None,
    };
    let (size, n) = digits(&rest[at..])?;
    let mut at = at + n;
    if rest.get(at) != Some(&b'b') {
        return None;
    }
    // Words of a length known here, compared in place (not by `memcmp`).
    let after = &rest[at + 1..];
    at += 1 + match kind {
        Kind::Send if after.starts_with(b" to ") => 4,
        Kind::Recv if after.starts_with(b" from ") => 6,
        _ => return None,
    };
    let (peer, n) = rank_or_any(&rest[at..], kind)?;
    at += n;
    let mut tag = Some(0);
    if rest[at..].starts_with(b" tag ") {
        at += 5;
        let (t, n) = rank_or_any(&rest[at..], kind)?;
        (tag, at) = (t, at + n);
    }
    end(&rest[at..]).map(|()| (stmt(label, kind, size, peer, tag), at + 1))
}

fn stmt(label: &[u8], kind: Kind, size: u64, peer: Option<u64>, tag: Option<u64>) -> Stmt<'_> {
    Stmt::Op {
        label: Some(label),
        kind,
        size,
        peer,
        tag,
        cpu: 0,
        nic: 0,
    }
}

/// `requires B` or `irequires B` after `A `.
#[inline(always)]
fn dep<'t>(waiting: &'t [u8], rest: &'t [u8]) -> Option<(Stmt<'t>, usize)> {
    let (starts, at) = if rest.starts_with(b"requires ") {
        (false, 9)
    } else if rest.starts_with(b"irequires ") {
        (true, 10)
    } else {
        return None;
    };
    let n = stop(rest, at) - at;
    let awaited = &rest[at..at + n];
    (n > 0 && rest.get(at + n) == Some(&b'\n')).then_some((
        Stmt::Dep {
            waiting,
            starts,
            awaited,
        },
        at + n + 1,
    ))
}

/// A number, or `-1` (any) where `kind` receives: the value and its bytes.
#[inline(always)]
fn rank_or_any(text: &[u8], kind: Kind) -> Option<(Option<u64>, usize)> {
    if kind == Kind::Recv && text.starts_with(b"-1") {
        return Some((None, 2));
    }
    digits(text).map(|(v, n)| (Some(v), n))
}

/// 1 to 19 decimal digits (no overflow) at the start of `text`, not
/// followed by another digit: their value and count. Eight bytes at a
/// time where the text has them (a schedule's numbers are most of its
/// bytes).
#[inline(always)]
fn digits(text: &[u8]) -> Option<(u64, usize)> {
    let (mut v, mut n) = (0u64, 0);
    while let Some(chunk) = text.get(n..).and_then(|t| t.first_chunk::<8>()) {
        let w = u64::from_le_bytes(*chunk);
        // A byte's high bit where it is no digit (exact up to the first
        // such byte: a borrow or carry only reaches the bytes after it).
        let other = (w.wrapping_sub(LOW * 0x30) | w.wrapping_add(LOW * 0x46) | w) & HIGH;
        let count = (other.trailing_zeros() / 8) as usize;
        if count > 0 {
            if n + count > 19 {
                return None;
            }
            v = v * POW10[count] + eight_digits((w & (LOW * 0x0f)) << (8 * (8 - count)));
            n += count;
        }
        if count < 8 {
            return (n > 0).then_some((v, n));
        }
    }
    for &c in &text[n..] {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return (n > 0).then_some((v, n));
        }
        if n == 19 {
            return None;
        }
        v = v * 10 + u64::from(d);
        n += 1;
    }
    None
}

const POW10: [u64; 9] = [
    1,
    10,
    100,
    1000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
];

/// Each byte's low bit, and its high bit.
const LOW: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = LOW * 0x80;

/// The number whose eight decimal digits are the bytes of `d`, the first
/// in the lowest: pairs, then fours, then the eight.
#[inline]
fn eight_digits(d: u64) -> u64 {
    let pairs = (d.wrapping_mul(10 * 256 + 1) >> 8) & 0x00ff_00ff_00ff_00ff;
    let fours = (pairs.wrapping_mul(100 * 65536 + 1) >> 16) & 0x0000_ffff_0000_ffff;
    fours.wrapping_mul(10000 * (1 << 32) + 1) >> 32
}

/// The line's end at the start of `text`.
#[inline]
fn end(text: &[u8]) -> Option<()> {
    (text.first() == Some(&b'\n')).then_some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_read_as_decimal_does() {
        let mut rng = fastrand::Rng::with_seed(5);
        for _ in 0..100_000 {
            let n = rng.usize(0..24);
            let mut t: Vec<u8> = (0..n).map(|_| b'0' + rng.u8(0..10)).collect();
            // Ended by a byte that is no digit, then anything; or not ended.
            let ended = rng.u8(0..4) > 0;
            if ended {
                t.push(b"b \n:/x\x80\xff"[rng.usize(..8)]);
                t.extend((0..rng.usize(0..12)).map(|_| rng.u8(..)));
            }
            let want = std::str::from_utf8(&t[..n])
                .ok()
                .and_then(|d| d.parse::<u64>().ok())
                .filter(|_| n <= 19 && ended);
            assert_eq!(
                digits(&t),
                want.map(|v| (v, n)),
                "{:?}",
                String::from_utf8_lossy(&t)
            );
        }
    }
}
