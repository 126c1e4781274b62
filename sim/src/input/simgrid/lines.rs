//! A rank's action file, read a block at a time and split into lines and
//! words in place: no per-line copy, allocation or UTF-8 pass. This is
//! the SimGrid reader's hot loop (docs/performance.md, "Replay: speed and memory").

use std::fs::File;
use std::io::{self, Read};

/// Words of a line kept for parsing; actions have at most 7, but the `v`
/// collectives', which [`Line::word`] finds in the text.
const MAX_WORDS: usize = 8;

/// Bytes of a rank file read at a time (more for a longer line).
pub(super) const BLOCK: usize = 1 << 16;

/// A rank's action file, read a block at a time and split into lines in
/// place: no per-line copy, allocation or UTF-8 pass.
pub(super) struct Lines {
    file: File,
    /// Bytes read; `buf[pos..len]` are not parsed yet.
    buf: Vec<u8>,
    pos: usize,
    len: usize,
    eof: bool,
}

/// Which bytes are ASCII whitespace ([`u8::is_ascii_whitespace`]), by
/// lookup: one load per byte when splitting lines.
const BLANK: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = (b as u8).is_ascii_whitespace();
        b += 1;
    }
    t
};

/// One line of a rank file, split into words.
pub(super) struct Line<'a> {
    /// The line, without its newline.
    pub(super) text: &'a [u8],
    /// Its first [`MAX_WORDS`] words; `len` of them are set.
    words: [&'a [u8]; MAX_WORDS],
    len: usize,
}

impl<'a> Line<'a> {
    /// Splits `text` at ASCII whitespace.
    fn split(text: &'a [u8]) -> Line<'a> {
        let mut words: [&[u8]; MAX_WORDS] = [&[]; MAX_WORDS];
        let mut len = 0;
        let (n, mut i) = (text.len(), 0);
        while len < MAX_WORDS {
            while i < n && BLANK[usize::from(text[i])] {
                i += 1;
            }
            if i == n {
                break;
            }
            let start = i;
            while i < n && !BLANK[usize::from(text[i])] {
                i += 1;
            }
            words[len] = &text[start..i];
            len += 1;
        }
        Line { text, words, len }
    }

    /// The words (at most [`MAX_WORDS`]).
    pub(super) fn words(&self) -> &[&'a [u8]] {
        &self.words[..self.len]
    }

    /// Every word of the line, the kept ones and those after them.
    pub(super) fn all(&self) -> impl Iterator<Item = &'a [u8]> {
        self.text
            .split(|&b| BLANK[usize::from(b)])
            .filter(|w| !w.is_empty())
    }

    /// Word `i`, also beyond [`MAX_WORDS`] (the counts of a `v` action).
    pub(super) fn word(&self, i: usize) -> Option<&'a [u8]> {
        if i < MAX_WORDS {
            self.words().get(i).copied()
        } else {
            self.all().nth(i)
        }
    }

    /// The number of words of the line.
    pub(super) fn count(&self) -> usize {
        if self.len < MAX_WORDS {
            self.len
        } else {
            self.all().count()
        }
    }
}

/// A plain integer of at most 15 digits (exact as a float), the common
/// case of sizes, ranks and tags, without the float parser.
pub(super) fn int(word: &[u8]) -> Option<u64> {
    if word.is_empty() || word.len() > 15 {
        return None;
    }
    let mut v = 0u64;
    for &b in word {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v * 10 + u64::from(d);
    }
    Some(v)
}

impl Lines {
    /// Reads `file` through a buffer of [`BLOCK`] bytes, or of the file's
    /// size when smaller: a replay opens every rank's file at once, and
    /// most are small (zeroing a block for each of 1,024 took 7 % of a
    /// fat-tree replay's instructions).
    pub(super) fn new(file: File) -> Lines {
        let size = file.metadata().map_or(BLOCK as u64, |m| m.len() + 1);
        Lines {
            file,
            buf: vec![0; (size as usize).clamp(64, BLOCK)],
            pos: 0,
            len: 0,
            eof: false,
        }
    }

    /// The next line, split into words, reading more of the file when
    /// the line is not complete in the buffer; `None` at the end of the
    /// file. The last line may lack its newline.
    pub(super) fn next(&mut self) -> io::Result<Option<Line<'_>>> {
        loop {
            let rest = &self.buf[self.pos..self.len];
            let end = match memchr::memchr(b'\n', rest) {
                Some(n) => Some((n, n + 1)),
                None if self.eof && !rest.is_empty() => Some((rest.len(), rest.len())),
                None => None,
            };
            if let Some((end, next)) = end {
                let text = &self.buf[self.pos..self.pos + end];
                self.pos += next;
                return Ok(Some(Line::split(text)));
            }
            if self.eof {
                return Ok(None);
            }
            self.fill()?;
        }
    }

    /// Moves the unparsed bytes to the front and reads more after them,
    /// growing the buffer when one line fills it.
    fn fill(&mut self) -> io::Result<()> {
        self.buf.copy_within(self.pos..self.len, 0);
        self.len -= self.pos;
        self.pos = 0;
        if self.len == self.buf.len() {
            self.buf.resize(self.buf.len() * 2, 0);
        }
        loop {
            match self.file.read(&mut self.buf[self.len..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.len += n;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// A number of a trace line that is not a plain [`int`]: any float.
pub(super) fn number(word: &[u8]) -> Option<f64> {
    std::str::from_utf8(word).ok()?.parse().ok()
}
