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

use super::parse::{Kind, Stmt};

/// The statement of the line at the start of `text`, and the bytes it
/// takes with its `\n`; `None` for a line of another form.
#[inline]
pub(super) fn statement(text: &[u8]) -> Option<(Stmt<'_>, usize)> {
    let n = text
        .iter()
        .position(|&c| c == b':' || c <= b' ' || c == b'/')
        .filter(|&n| n > 0)?;
    let (label, rest) = text.split_at(n);
    match rest {
        [b':', b' ', rest @ ..] => op(label, rest).map(|(st, used)| (st, n + 2 + used)),
        // A keyword's line is the parser's: `}` or `rank` is no label.
        [b' ', rest @ ..] if !matches!(label, b"}" | b"rank" | b"num_ranks") => {
            dep(label, rest).map(|(st, used)| (st, n + 1 + used))
        }
        _ => None,
    }
}

/// `send ...`, `recv ...` or `calc ...` after `label: `.
fn op<'t>(label: &'t [u8], rest: &'t [u8]) -> Option<(Stmt<'t>, usize)> {
    let (kind, want, at) = match rest.get(..5)? {
        b"send " => (Kind::Send, &b" to "[..], 5),
        b"recv " => (Kind::Recv, &b" from "[..], 5),
        b"calc " => {
            let (size, n) = digits(&rest[5..])?;
            return end(&rest[5 + n..])
                .map(|()| (stmt(label, Kind::Calc, size, Some(0), Some(0)), 5 + n + 1));
        }
        _ => return None,
    };
    let (size, n) = digits(&rest[at..])?;
    let mut at = at + n;
    if rest.get(at) != Some(&b'b') || !rest[at + 1..].starts_with(want) {
        return None;
    }
    at += 1 + want.len();
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
fn dep<'t>(waiting: &'t [u8], rest: &'t [u8]) -> Option<(Stmt<'t>, usize)> {
    let (starts, at) = if rest.starts_with(b"requires ") {
        (false, 9)
    } else if rest.starts_with(b"irequires ") {
        (true, 10)
    } else {
        return None;
    };
    let n = rest[at..].iter().position(|&c| c <= b' ' || c == b'/')?;
    let awaited = &rest[at..at + n];
    (n > 0 && rest[at + n] == b'\n').then_some((
        Stmt::Dep {
            waiting,
            starts,
            awaited,
        },
        at + n + 1,
    ))
}

/// A number, or `-1` (any) where `kind` receives: the value and its bytes.
fn rank_or_any(text: &[u8], kind: Kind) -> Option<(Option<u64>, usize)> {
    if kind == Kind::Recv && text.starts_with(b"-1") {
        return Some((None, 2));
    }
    digits(text).map(|(v, n)| (Some(v), n))
}

/// 1 to 19 decimal digits (no overflow) at the start of `text`, not
/// followed by another digit: their value and count.
#[inline]
fn digits(text: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for (n, &c) in text.iter().enumerate() {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return (n > 0).then_some((v, n));
        }
        if n == 19 {
            return None;
        }
        v = v * 10 + u64::from(d);
    }
    None
}

/// The line's end at the start of `text`.
#[inline]
fn end(text: &[u8]) -> Option<()> {
    (text.first() == Some(&b'\n')).then_some(())
}

#[cfg(test)]
mod tests {
    use super::super::lex::{Lines, MAX_WORDS};
    use super::super::parse::decode;
    use super::*;

    /// On lines of Schedgen2's forms and on near misses, the fast path
    /// gives what the word splitter and its decoder give, or leaves the
    /// line to them.
    #[test]
    fn fast_lines_read_as_split_ones() {
        let mut rng = fastrand::Rng::with_seed(11);
        let pick = |rng: &mut fastrand::Rng, of: &[&str]| of[rng.usize(..of.len())].to_string();
        let labels = [
            "l1",
            "l65578001",
            "a",
            "x:y",
            "a/b",
            "rank",
            "}",
            "num_ranks",
            "l1:",
            "\u{e9}",
        ];
        let numbers = [
            "0",
            "8",
            "007",
            "524288",
            "-1",
            "-12",
            "4294967296",
            "1234567890123456789",
            "12345678901234567890",
            "x",
            "",
        ];
        let (mut fast, mut slow) = (0, 0);
        for _ in 0..50_000 {
            let label = pick(&mut rng, &labels);
            let mut line = match rng.u8(0..4) {
                0 => format!(
                    "{label} {} {}",
                    pick(&mut rng, &["requires", "irequires", "needs"]),
                    pick(&mut rng, &labels)
                ),
                1 => format!("{label}: calc {}", pick(&mut rng, &numbers)),
                _ => {
                    let (op, to) = if rng.bool() {
                        ("send", "to")
                    } else {
                        ("recv", "from")
                    };
                    let mut l = format!(
                        "{label}: {op} {}b {to} {}",
                        pick(&mut rng, &numbers),
                        pick(&mut rng, &numbers)
                    );
                    if rng.bool() {
                        l += &format!(" tag {}", pick(&mut rng, &numbers));
                    }
                    l
                }
            };
            // Near misses: a byte changed, dropped or doubled.
            if rng.u8(0..3) == 0 && !line.is_empty() {
                let at = rng.usize(..line.len());
                if line.is_char_boundary(at) && line.is_char_boundary(at + 1) {
                    let c = pick(
                        &mut rng,
                        &[" ", "  ", "\t", "\r", ":", "/", "//", "/*", "", "b", "1", "}"],
                    );
                    line.replace_range(at..at + 1, &c);
                }
            }
            let text = format!("{line}\nnext line\n");
            let got = statement(text.as_bytes());
            let (mut lines, mut at, mut words) = (Lines::new(), 0, [&[][..]; MAX_WORDS]);
            let count = lines.next(text.as_bytes(), &mut at, &mut words).unwrap();
            match got {
                Some((st, used)) => {
                    fast += 1;
                    assert_eq!(used, at, "{line:?}");
                    let count = count.unwrap();
                    assert_eq!(decode(&words[..count]), Ok(st), "{line:?}");
                }
                None => slow += 1,
            }
        }
        assert!(fast > 5_000 && slow > 5_000, "{fast} {slow}");
    }
}
