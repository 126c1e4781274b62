//! GOAL text as lines of words, on bytes: the input is read in large
//! chunks cut at a line's end ([`Chunks`]), and each line split into the
//! words of its statement ([`Lines`]), comments dropped, with no
//! allocation per line. A schedule of a million ranks is gigabytes of text
//! and tens of millions of lines: this is where its reading spends its time.

/// The most words a statement has (`l: send 8 b to 3 tag 0 cpu 0 nic 0`
/// is 12).
pub const MAX_WORDS: usize = 12;

/// What a byte is to the word splitter.
const WORD: u8 = 0;
const SPACE: u8 = 1;
const NEWLINE: u8 = 2;
/// `/`: a comment's start when `/` or `*` follows it, else part of a word.
const SLASH: u8 = 3;

/// Byte classes: ASCII whitespace (as Rust's `is_ascii_whitespace`)
/// separates words, `\n` ends a line.
const CLASS: [u8; 256] = {
    let mut c = [WORD; 256];
    c[b' ' as usize] = SPACE;
    c[b'\t' as usize] = SPACE;
    c[b'\r' as usize] = SPACE;
    c[0x0c] = SPACE;
    c[b'\n' as usize] = NEWLINE;
    c[b'/' as usize] = SLASH;
    c
};

/// A line had more than [`MAX_WORDS`] words.
#[derive(Debug, PartialEq, Eq)]
pub struct TooManyWords;

/// The lines of a chunk of text, each split into words; a `/* */`
/// comment may run over lines (and chunks: the state is kept in
/// [`Lines::in_comment`]), and a line it spans ends a statement as
/// any line does.
pub struct Lines {
    /// Inside a `/* */` comment.
    pub in_comment: bool,
    /// Lines read so far (the current line's number, once it is read).
    pub line: usize,
}

impl Lines {
    pub fn new() -> Lines {
        Lines {
            in_comment: false,
            line: 0,
        }
    }

    /// Splits the line of `text` that begins at `*at` into `words` (how
    /// many it has), and moves `*at` past its `\n`; `None` at the end of
    /// `text`. Comments are dropped; a `/` that starts none belongs to
    /// its word.
    pub fn next<'t>(
        &mut self,
        text: &'t [u8],
        at: &mut usize,
        words: &mut [&'t [u8]; MAX_WORDS],
    ) -> Option<Result<usize, TooManyWords>> {
        let mut i = *at;
        if i >= text.len() {
            return None;
        }
        self.line += 1;
        if !self.in_comment {
            if let Some((end, words)) = plain_line(text, i, words) {
                *at = end + 1;
                return Some(words);
            }
        }
        let mut count = 0;
        let mut too_many = false;
        loop {
            if self.in_comment {
                // To the comment's end, or the line's.
                match memchr::memchr2(b'*', b'\n', &text[i..]) {
                    None => i = text.len(),
                    Some(n) if text[i + n] == b'\n' => i += n,
                    Some(n) if text.get(i + n + 1) == Some(&b'/') => {
                        i += n + 2;
                        self.in_comment = false;
                    }
                    Some(n) => {
                        i += n + 1;
                        continue;
                    }
                }
            }
            while i < text.len() && CLASS[usize::from(text[i])] == SPACE {
                i += 1;
            }
            let Some(&c) = text.get(i) else {
                break;
            };
            match CLASS[usize::from(c)] {
                NEWLINE => {
                    i += 1;
                    break;
                }
                SLASH if text.get(i + 1) == Some(&b'/') => {
                    i = memchr::memchr(b'\n', &text[i..]).map_or(text.len(), |n| i + n + 1);
                    break;
                }
                SLASH if text.get(i + 1) == Some(&b'*') => {
                    self.in_comment = true;
                    i += 2;
                    continue;
                }
                _ => {}
            }
            let start = i;
            loop {
                i = stop(text, i);
                // A control byte that is not a space, or a `/` that starts
                // no comment, is part of the word.
                match text.get(i).map(|&c| CLASS[usize::from(c)]) {
                    Some(WORD) => i += 1,
                    Some(SLASH) if !matches!(text.get(i + 1), Some(b'/' | b'*')) => i += 1,
                    _ => break,
                }
            }
            match words.get_mut(count) {
                Some(w) => *w = &text[start..i],
                None => too_many = true,
            }
            count += 1;
        }
        *at = i;
        Some(if too_many { Err(TooManyWords) } else { Ok(count) })
    }
}

/// Eight bytes at a time: 1 in each byte, and each byte's high bit.
const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = ONES * 0x80;

/// The high bit of each byte of `v` that is zero (exactly: no carry
/// crosses bytes).
fn zero_bytes(v: u64) -> u64 {
    !(((v & !HIGH) + !HIGH) | v) & HIGH
}

/// The high bit of each byte of `v` below 0x21 (exactly).
fn low_bytes(v: u64) -> u64 {
    !(((v & !HIGH) + ONES * (0x80 - 0x21)) | v) & HIGH
}

/// Byte k's high bit in `marks` as bit k.
fn pack(marks: u64) -> u64 {
    (marks >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56
}

/// The words of the line at `text[at..]` when it is plain, as most are:
/// its `\n` within 64 bytes, and before it only spaces and bytes above
/// 0x20 other than `/` (no comment). A bit per byte, eight bytes at a
/// time, marks the bytes that are not a word's; words are the runs between
/// marks. Where the line ends, and its words; `None` for any other line,
/// which the careful path reads.
fn plain_line<'t>(
    text: &'t [u8],
    at: usize,
    words: &mut [&'t [u8]; MAX_WORDS],
) -> Option<(usize, Result<usize, TooManyWords>)> {
    let (mut marks, mut end) = (0u64, None);
    for b in 0..8 {
        let v = u64::from_le_bytes(*text.get(at + 8 * b..)?.first_chunk::<8>()?);
        marks |= pack(low_bytes(v) | zero_bytes(v ^ (ONES * u64::from(b'/')))) << (8 * b);
        let newline = zero_bytes(v ^ (ONES * u64::from(b'\n')));
        if newline != 0 {
            end = Some(8 * b + (newline.trailing_zeros() / 8) as usize);
            break;
        }
    }
    let end = end?;
    marks &= !(u64::MAX << end);
    let mut seps = marks;
    while seps != 0 {
        if CLASS[usize::from(text[at + seps.trailing_zeros() as usize])] != SPACE {
            return None;
        }
        seps &= seps - 1;
    }
    // The end is below 64: a word's run stops there at the latest.
    let mut word_bytes = !(marks | (u64::MAX << end));
    let mut count = 0;
    let mut too_many = false;
    while word_bytes != 0 {
        let start = word_bytes.trailing_zeros();
        let len = (!(word_bytes >> start)).trailing_zeros();
        let from = at + start as usize;
        match words.get_mut(count) {
            Some(w) => *w = &text[from..from + len as usize],
            None => too_many = true,
        }
        count += 1;
        word_bytes &= !(((1u64 << len) - 1) << start);
    }
    Some((at + end, if too_many { Err(TooManyWords) } else { Ok(count) }))
}

/// The first byte from `i` on that may end a word (ASCII 0x20 and below,
/// or `/`), or the end of `text`: eight bytes at a time, as a word of
/// a schedule is mostly letters and digits.
#[inline(always)]
pub(super) fn stop(text: &[u8], mut i: usize) -> usize {
    while let Some(&block) = text.get(i..).and_then(|t| t.first_chunk::<8>()) {
        let v = u64::from_le_bytes(block);
        let marks = low_bytes(v) | zero_bytes(v ^ (ONES * u64::from(b'/')));
        if marks != 0 {
            return i + (marks.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    text[i..]
        .iter()
        .position(|&c| c <= b' ' || c == b'/')
        .map_or(text.len(), |n| i + n)
}

/// `input` in chunks of whole lines, read into one buffer: each chunk
/// ends with the last `\n` read (the last chunk with all that is left).
/// A line longer than the buffer grows it.
pub struct Chunks<R> {
    input: R,
    buf: Vec<u8>,
    /// Bytes read into `buf`.
    filled: usize,
    /// Where the bytes not yet handed out begin.
    rest: usize,
}

impl<R: std::io::Read> Chunks<R> {
    pub fn new(input: R) -> Chunks<R> {
        Chunks {
            input,
            buf: vec![0; CHUNK],
            filled: 0,
            rest: 0,
        }
    }

    /// The next chunk; `None` at the end of the input.
    pub fn next(&mut self) -> std::io::Result<Option<&[u8]>> {
        self.buf.copy_within(self.rest..self.filled, 0);
        self.filled -= self.rest;
        self.rest = 0;
        loop {
            if self.filled == self.buf.len() {
                self.buf.resize(self.buf.len() * 2, 0);
            }
            let n = match self.input.read(&mut self.buf[self.filled..]) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            let old = self.filled;
            self.filled += n;
            if n == 0 {
                self.rest = self.filled;
                return Ok((self.filled > 0).then_some(&self.buf[..self.filled]));
            }
            if let Some(last) = memchr::memrchr(b'\n', &self.buf[old..self.filled]) {
                self.rest = old + last + 1;
                return Ok(Some(&self.buf[..self.rest]));
            }
        }
    }
}

/// The size of a read: large enough that a read's cost vanishes, small
/// beside a schedule's arrays.
const CHUNK: usize = 1 << 20;

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    /// Every line of `text` as its words (or `None` for too many).
    fn split(text: &str) -> Vec<Option<Vec<&str>>> {
        let (mut lines, mut at, mut out) = (Lines::new(), 0, Vec::new());
        let mut words = [&[][..]; MAX_WORDS];
        while let Some(n) = lines.next(text.as_bytes(), &mut at, &mut words) {
            out.push(n.ok().map(|n| {
                words[..n]
                    .iter()
                    .map(|w| std::str::from_utf8(w).unwrap())
                    .collect()
            }));
        }
        assert_eq!(lines.line, out.len());
        out
    }

    #[test]
    fn words_lines_and_comments() {
        fn w<'a>(v: &[&'a str]) -> Option<Vec<&'a str>> {
            Some(v.to_vec())
        }
        assert_eq!(
            split("l1: send 8b  to\t3 tag 0\r\n\n  }"),
            [
                w(&["l1:", "send", "8b", "to", "3", "tag", "0"]),
                w(&[]),
                w(&["}"])
            ]
        );
        // `//` to the line's end, `/* */` anywhere and over lines, each
        // line still a line; a lone `/` is part of a word.
        assert_eq!(
            split("rank 0 { /* a\n still\n comment */ l: calc 1// done\na/b c/*x*/d /\n"),
            [
                w(&["rank", "0", "{"]),
                w(&[]),
                w(&["l:", "calc", "1"]),
                w(&["a/b", "c", "d", "/"])
            ]
        );
        assert_eq!(split("/* open * / */ x"), [w(&["x"])]);
        // Words longer than 8 bytes, ending at each place of a block, and
        // control bytes that are not spaces.
        let long = "abcdefghijklmnopqrstuvwxyz0123456789";
        for n in 1..long.len() {
            let word = &long[..n];
            assert_eq!(
                split(&format!("{word} {word}/{word}\x0b{word}\t{word}")),
                [w(&[word, &format!("{word}/{word}\x0b{word}"), word])]
            );
            assert_eq!(split(&format!("{word}//x\n{word}/*")), [w(&[word]), w(&[word])]);
        }
        assert_eq!(
            split("a b c d e f g h i j k l\na b c d e f g h i j k l m\n")[1],
            None
        );
    }

    /// The plain path gives what the careful one gives, on lines of every
    /// length around its 64 bytes, with every kind of byte, or leaves the
    /// line to it.
    #[test]
    fn plain_lines_split_as_careful_ones() {
        let mut rng = fastrand::Rng::with_seed(7);
        let alphabet = b"ab09:_-   \t\r\x0c\x0b/*\x80";
        let (mut plain, mut careful) = (0, 0);
        for _ in 0..20_000 {
            let n = rng.usize(0..80);
            let mut line: Vec<u8> = (0..n)
                .map(|_| match rng.u8(0..8) {
                    0 => alphabet[rng.usize(..alphabet.len())],
                    1 => b' ',
                    _ => b'a' + rng.u8(0..26),
                })
                .collect();
            line.extend_from_slice(
                b"\nnext line with more than 64 bytes to read past the first line's end\n",
            );
            let mut words = [&[][..]; MAX_WORDS];
            let fast = plain_line(&line, 0, &mut words).map(|(end, r)| (end, r.map(|c| words[..c].to_vec())));
            // The careful path alone: a comment open makes `next` skip the
            // plain one, so split after a comment that closes at once.
            let mut shifted = b"/**/".to_vec();
            shifted.extend_from_slice(&line);
            let (mut lines, mut at, mut words2) = (Lines::new(), 0, [&[][..]; MAX_WORDS]);
            let slow = lines.next(&shifted, &mut at, &mut words2).unwrap();
            let slow = slow.map(|c| words2[..c].to_vec());
            match fast {
                Some((end, got)) => {
                    plain += 1;
                    assert_eq!(end, n, "{line:?}");
                    assert_eq!(at, n + 5);
                    assert_eq!(got, slow, "{line:?}");
                }
                None => careful += 1,
            }
        }
        // Both paths were taken, often.
        assert!(plain > 2_000 && careful > 2_000, "{plain} {careful}");
    }

    #[test]
    fn chunks_end_at_lines_whatever_the_reads() {
        // A reader that hands out 3 bytes at a time, and lines longer
        // than the first buffer.
        struct Drip<'a>(&'a [u8]);
        impl Read for Drip<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = self.0.len().min(buf.len()).min(3);
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let long = "x".repeat(3 * CHUNK);
        let text = format!("ab\ncd\n{long}\nlast");
        let (mut got, mut chunks) = (Vec::new(), Chunks::new(Drip(text.as_bytes())));
        while let Some(c) = chunks.next().unwrap() {
            assert!(c.ends_with(b"\n") || c == b"last", "{:?}", &c[..c.len().min(9)]);
            got.extend_from_slice(c);
        }
        assert_eq!(got, text.as_bytes());
        // A reading error is the caller's error.
        struct Broken;
        impl Read for Broken {
            fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("disk on fire"))
            }
        }
        let e = Chunks::new(Broken).next().unwrap_err();
        assert_eq!(e.to_string(), "disk on fire");
    }
}
