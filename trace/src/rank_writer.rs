//! A rank file written from [`RawEvent`]s by a program other than the
//! `tracer` module: `pnmpi sim synth --folder` (one synthetic rank after
//! another) and the virtual ranks of `pnmpi run --vranks` (thousands of
//! ranks in one process, each with its own file). Both run on a clock
//! that all ranks share, so the file's clock is [`Clock::Monotonic`]
//! nanoseconds with offset 0, and a chunk's clock pair is its own time
//! twice.
//!
//! The writer holds the encoded events of one chunk; the bytes go to the
//! `out` each call is given, so that a process writing many files keeps
//! none of them open between chunks ([`Appender`]).

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
            enc: RawEncoder::new(0),
            buf: Vec::new(),
            len: 0,
            limit: chunk.max(64),
            total: 0,
        }
    }

    /// Writes the file's prologue (`header`) and its opening clock
    /// measurement at time `at` to `out`.
    pub fn start(&self, header: &RankHeader, at: u64, out: &mut impl Write) -> io::Result<()> {
        out.write_all(&header.prologue())?;
        sync(0, at, out)
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

    /// Whether events wait in the buffer.
    pub fn pending(&self) -> bool {
        self.len > 0
    }

    /// Writes the buffered events to `out` as one chunk stamped `at`.
    pub fn flush(&mut self, at: u64, out: &mut impl Write) -> io::Result<()> {
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
        sync(1, at, out)?;
        let mut end = Vec::new();
        container::push_chunk(&mut end, CHUNK_END, &end_payload(self.total));
        out.write_all(&end)
    }
}

/// A `SYNC` chunk at `at` with offset 0: every rank shares the clock.
fn sync(phase: u8, at: u64, out: &mut impl Write) -> io::Result<()> {
    let s = Sync {
        phase,
        pair: ClockPair { tick: at, ns: at },
        offset: 0,
        rtt: 0,
    };
    let mut chunk = Vec::new();
    container::push_chunk(&mut chunk, CHUNK_SYNC, &s.encode());
    out.write_all(&chunk)
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

/// A file opened for appending at its first write and closed when
/// dropped: a process with thousands of rank files open at once would
/// run out of descriptors (1,024 in a default shell).
pub struct Appender<'a> {
    path: &'a Path,
    file: Option<File>,
}

impl<'a> Appender<'a> {
    /// Appends to `path` (created by the first write if missing).
    pub fn new(path: &'a Path) -> Appender<'a> {
        Appender { path, file: None }
    }
}

impl Write for Appender<'_> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.file.is_none() {
            self.file = Some(OpenOptions::new().create(true).append(true).open(self.path)?);
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
