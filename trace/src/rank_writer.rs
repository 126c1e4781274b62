//! A rank file written from [`RawEvent`]s by a program other than the
//! `tracer` module: `pnmpi sim synth --folder` (one synthetic rank after
//! another) and the virtual ranks of `pnmpi run --vranks` (thousands of
//! ranks in one process, each with its own file). Both run on a clock
//! that all ranks share, so the file's clock is [`Clock::Monotonic`](crate::rank::Clock::Monotonic)
//! nanoseconds with offset 0, and a chunk's clock pair is its own time
//! twice.
//!
//! The writer holds the file's opening bytes until its first write-out
//! and the encoded events of one chunk; the bytes go to the `out` each
//! call is given, so that a process writing many files keeps none of them
//! open between chunks ([`Appender`]), and a rank that records less than
//! a chunk opens its file once.

use crate::container;
use crate::rank::{
    end_payload, events_chunk_head, ClockPair, RankHeader, RawEncoder, RawEvent, Sync, CHUNK_END, CHUNK_SYNC,
};
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The encoder and the pending chunk of one rank file.
#[derive(Debug)]
pub struct RankWriter {
    /// The prologue and opening clock measurement, until written out.
    head: Vec<u8>,
    enc: RawEncoder,
    /// Encoded events up to `len`; room after it.
    buf: Vec<u8>,
    len: usize,
    /// Bytes of events a chunk holds before it is written out.
    limit: usize,
    /// Events written out in earlier chunks.
    total: u64,
}

impl RankWriter {
    /// A writer whose chunks hold about `chunk` bytes of events. Its
    /// buffer grows as events come, so a rank that records little holds
    /// little.
    pub fn new(chunk: usize) -> RankWriter {
        RankWriter {
            head: Vec::new(),
            enc: RawEncoder::new(0),
            buf: Vec::new(),
            len: 0,
            limit: chunk.max(64),
            total: 0,
        }
    }

    /// Begins the file: its prologue (`header`) and its opening clock
    /// measurement at time `at`, written out with the first chunk.
    pub fn start(&mut self, header: &RankHeader, at: u64) {
        self.head = header.prologue();
        self.head.extend_from_slice(&sync(0, at));
    }

    /// Encodes `ev`; a full chunk goes to `out` first.
    pub fn event(&mut self, ev: &RawEvent<'_>, out: &mut impl Write) -> io::Result<()> {
        let need = ev.max_size();
        if self.len > 0 && self.len + need > self.limit {
            self.flush(ev.start, out)?;
        }
        if self.buf.len() < self.len + need {
            let grown = (self.buf.len() * 2).min(self.limit);
            self.buf.resize((self.len + need).max(grown), 0);
        }
        self.len += self.enc.encode(ev, &mut self.buf[self.len..]);
        Ok(())
    }

    /// Whether bytes wait to be written out.
    pub fn pending(&self) -> bool {
        self.len > 0 || !self.head.is_empty()
    }

    /// Writes what is buffered to `out`: the file's opening bytes, if not
    /// yet written, and the events as one chunk stamped `at`.
    pub fn flush(&mut self, at: u64, out: &mut impl Write) -> io::Result<()> {
        if !self.head.is_empty() {
            out.write_all(&self.head)?;
            self.head = Vec::new();
        }
        if self.len == 0 {
            return Ok(());
        }
        let info = self.enc.finish_chunk();
        self.total += info.count;
        let pair = ClockPair { tick: at, ns: at };
        out.write_all(&events_chunk_head(0, info, pair, &self.buf[..self.len]))?;
        out.write_all(&self.buf[..self.len])?;
        self.len = 0;
        Ok(())
    }

    /// Ends the file at time `at`: the buffered events, the closing clock
    /// measurement, and the `END` chunk that marks a complete file.
    pub fn finish(&mut self, at: u64, out: &mut impl Write) -> io::Result<()> {
        self.flush(at, out)?;
        let mut tail = sync(1, at);
        container::push_chunk(&mut tail, CHUNK_END, &end_payload(self.total));
        out.write_all(&tail)
    }
}

/// A `SYNC` chunk at `at` with offset 0: every rank shares the clock.
fn sync(phase: u8, at: u64) -> Vec<u8> {
    let s = Sync {
        phase,
        pair: ClockPair { tick: at, ns: at },
        offset: 0,
        rtt: 0,
    };
    let mut chunk = Vec::new();
    container::push_chunk(&mut chunk, CHUNK_SYNC, &s.encode());
    chunk
}

/// `rank-NNNNN.pnr` in `dir`: the name the tracer gives rank `r`'s file.
pub fn rank_path(dir: &Path, r: u32) -> PathBuf {
    dir.join(format!("rank-{r:05}.pnr"))
}

/// The name a rank file has while it is written.
pub fn part_path(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".part");
    PathBuf::from(p)
}

/// A file opened at its first write and closed when dropped: a process
/// with thousands of rank files open at once would run out of
/// descriptors (1,024 in a default shell).
pub struct Appender<'a> {
    path: &'a Path,
    /// Whether the first write starts the file anew (else it appends).
    fresh: bool,
    file: Option<File>,
}

impl<'a> Appender<'a> {
    /// Writes to `path`: from its start if `fresh` (created or emptied
    /// by the first write), else appending.
    pub fn new(path: &'a Path, fresh: bool) -> Appender<'a> {
        Appender {
            path,
            fresh,
            file: None,
        }
    }
}

impl Appender<'_> {
    /// Whether a write opened the file.
    pub fn opened(&self) -> bool {
        self.file.is_some()
    }
}

impl Write for Appender<'_> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.file.is_none() {
            let mut open = OpenOptions::new();
            if self.fresh {
                open.write(true).truncate(true);
            } else {
                open.append(true);
            }
            self.file = Some(open.create(true).open(self.path)?);
        }
        self.file.as_mut().expect("opened above").write(data)
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.file {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

/// A new folder `pnmpi-trace-YYYYmmdd-HHMMSS` (UTC) in the working
/// folder, with `-N` added until the name is new: where a trace goes when
/// the user names none. Returns its absolute path.
pub fn fresh_folder() -> io::Result<PathBuf> {
    let (year, month, day, h, m, sec) = crate::civil::utc(crate::civil::now_secs());
    let stamp = format!("pnmpi-trace-{year:04}{month:02}{day:02}-{h:02}{m:02}{sec:02}");
    for n in 1.. {
        let name = if n == 1 {
            stamp.clone()
        } else {
            format!("{stamp}-{n}")
        };
        match std::fs::create_dir(&name) {
            Ok(()) => return std::fs::canonicalize(&name),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    unreachable!("the loop returns")
}
