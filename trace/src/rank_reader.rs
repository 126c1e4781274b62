//! A rank file streamed from disk: opening it reads the header and walks
//! the chunk frames, keeping the clock measurements, the `END` chunk and
//! where each thread's `EVENTS` chunks are (seeking past their payloads);
//! records are then decoded on demand, per thread, from a window of one
//! chunk, of [`WINDOW`] bytes or fewer (see [`RankReader::set_window`]),
//! larger only while one record does not fit. Memory grows with the
//! threads, not with the file: a rank file larger than memory can be
//! merged or replayed.
//!
//! A chunk's CRC covers its whole payload, which the tracer writes in
//! buffers of megabytes; this reader checks it when it reads the chunk's
//! last window. An error inside a chunk is reported as a CRC mismatch if
//! the CRC fails, so damage reads as it does from [`RankFile::parse`] —
//! but the records before the damage have been handed out by then.
//!
//! [`RankFile::parse`]: crate::rank::RankFile::parse

use crate::container::FileKind;
use crate::counts::CountsHistory;
use crate::error::{Error, Malformed, Result};
use crate::frame::{
    check_crc, crc_in_steps, crc_mismatch, next_frame, open_prologue, truncation, ChunkAt, Frame, Step,
};
use crate::merge::RecordSource;
use crate::rank::{
    ClockPair, EventsPrefix, RankHeader, RawDecoder, RawRecord, Sync, CHUNK_END, CHUNK_EVENTS, CHUNK_SYNC,
};
use crate::repeats::Repeats;
use crate::sites::{parse_rank_sites, Site, CHUNK_SITES};
use crate::varint::Cursor;
use std::fs::File;
use std::io::{BufReader, Read};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Bytes of a chunk read at a time, at most (more when one record is
/// larger): a rank file on its own is read in windows of this size.
pub const WINDOW: usize = 64 << 10;

/// The smallest window [`RankReader::set_window`] sets: a few records
/// (an event takes about 4 to 40 bytes), so that a reader of many files
/// at once still reads each in pieces worth a system call.
pub const MIN_WINDOW: usize = 512;

/// Bytes read from an `EVENTS` chunk while indexing: its prefix and its
/// first record's routine and gap (at most 45 + 15).
const PEEK: usize = 96;

/// The chunk of a thread being read.
struct Loaded {
    at: ChunkAt,
    /// Offset in the payload of `buf[0]`.
    win: usize,
    /// Position in `buf`.
    pos: usize,
    /// Payload bytes read so far.
    loaded: usize,
    crc: crc32fast::Hasher,
    /// Records left.
    left: usize,
    dec: RawDecoder,
    counts: CountsHistory,
    repeats: Repeats,
}

/// One thread's records.
struct ThreadStream {
    id: u32,
    chunks: Vec<ChunkAt>,
    /// The trace clock at its first record's entry.
    first_start: Option<u64>,
    next_chunk: usize,
    /// (Boxed: a stream not being read, as most of a folder's are while
    /// it is merged, keeps no room for its decoding tables.)
    chunk: Option<Box<Loaded>>,
    buf: Vec<u8>,
    /// The next record, once decoded (see `has_head`).
    head: RawRecord,
    has_head: bool,
}

impl ThreadStream {
    /// A stream at its start.
    fn new(id: u32, chunks: Vec<ChunkAt>, first_start: Option<u64>) -> ThreadStream {
        ThreadStream {
            id,
            chunks,
            first_start,
            next_chunk: 0,
            chunk: None,
            buf: Vec::new(),
            head: RawRecord::default(),
            has_head: false,
        }
    }
}

/// A rank file read one window at a time.
pub struct RankReader {
    name: String,
    path: PathBuf,
    file: Option<File>,
    /// Its header.
    pub header: RankHeader,
    /// Every calibration pair (header, chunks, syncs), in file order.
    pub pairs: Vec<ClockPair>,
    /// Its clock-offset measurements.
    pub syncs: Vec<Sync>,
    /// The event total of the `END` chunk, if the tracer finished cleanly.
    pub end: Option<u64>,
    /// Set when the file ends inside a chunk.
    pub truncated: Option<Malformed>,
    /// Its call sites: (the rank's id, site), from its `SITES` chunks.
    pub sites: Vec<(u32, Site)>,
    /// The file's size in bytes.
    pub size: u64,
    /// Its format version.
    version: u8,
    /// Records in its complete `EVENTS` chunks, from their counts.
    pub records: u64,
    streams: Vec<ThreadStream>,
    /// Bytes of a chunk read at a time.
    window: usize,
}

impl RankReader {
    /// Opens the rank file at `path` and indexes its chunks.
    pub fn open(path: &Path) -> Result<RankReader> {
        let name = path.display().to_string();
        let mut o = open_prologue(path, &name)?;
        if o.kind != FileKind::Rank {
            return Err(Malformed::new(9, "a merged trace, not a rank file").in_file(&name));
        }
        let header =
            RankHeader::decode(&mut Cursor::new(&o.header, o.header_at)).map_err(|e| e.in_file(&name))?;
        // The version byte, which the prologue checked.
        let mut version = [0u8];
        o.file
            .read_exact_at(&mut version, 8)
            .map_err(|e| Error::io(&name, e))?;
        let mut rf = RankReader {
            pairs: vec![header.start],
            header,
            file: Some(o.file),
            path: path.to_owned(),
            syncs: Vec::new(),
            end: None,
            truncated: None,
            sites: Vec::new(),
            size: o.len,
            version: version[0],
            records: 0,
            streams: Vec::new(),
            window: WINDOW,
            name,
        };
        rf.index(&mut o.reader)?;
        rf.streams.shrink_to_fit();
        Ok(rf)
    }

    fn index(&mut self, r: &mut BufReader<File>) -> Result<()> {
        let name = self.name.clone();
        let io = |e| Error::io(&name, e);
        loop {
            let Frame { ty, at } = match next_frame(r, self.size).map_err(io)? {
                Step::Chunk(f) => f,
                Step::End => return Ok(()),
                Step::Truncated(frame) => {
                    self.truncated = Some(truncation(frame, self.size));
                    return Ok(());
                }
            };
            match ty {
                CHUNK_EVENTS => {
                    let mut data = vec![0u8; at.len().min(PEEK)];
                    r.read_exact(&mut data).map_err(io)?;
                    self.events_chunk(at, &data)?;
                    r.seek_relative((at.len() - data.len()) as i64).map_err(io)?;
                }
                CHUNK_SYNC | CHUNK_END | CHUNK_SITES => {
                    let mut data = vec![0u8; at.len()];
                    r.read_exact(&mut data).map_err(io)?;
                    check_crc(&data, at.crc, at.frame, ty, &name)?;
                    let mut c = Cursor::new(&data, at.payload);
                    let parsed = match ty {
                        CHUNK_SYNC => Sync::parse(&mut c).map(|s| {
                            self.pairs.push(s.pair);
                            self.syncs.push(s);
                        }),
                        CHUNK_SITES => parse_rank_sites(&mut c, &mut self.sites),
                        _ => c.u64().map(|n| self.end = Some(n)),
                    };
                    parsed
                        .and_then(|()| match c.is_empty() {
                            true => Ok(()),
                            false => Err(c.error("unexpected bytes at the end of a chunk")),
                        })
                        .map_err(|e| e.in_file(&name))?;
                }
                // Later versions may add chunk types; this reader skips them.
                _ => r.seek_relative(at.len() as i64).map_err(io)?,
            }
        }
    }

    /// Indexes the `EVENTS` chunk at `at`, whose first bytes are `data`.
    fn events_chunk(&mut self, at: ChunkAt, data: &[u8]) -> Result<()> {
        let mut c = Cursor::new(data, at.payload);
        let prefix = match EventsPrefix::parse(&mut c) {
            Ok(p) => p,
            Err(e) => return Err(self.damaged(at, e)),
        };
        let events_len = at.len() - (data.len() - c.remaining());
        let count = match prefix.count(events_len) {
            Ok(n) => n,
            Err(e) => return Err(self.damaged(at, e)),
        };
        self.pairs.push(prefix.pair);
        self.records += count as u64;
        let i = match self.streams.iter().position(|s| s.id == prefix.stream) {
            Some(i) => i,
            None => {
                self.streams
                    .push(ThreadStream::new(prefix.stream, Vec::new(), None));
                self.streams.len() - 1
            }
        };
        self.streams[i].chunks.push(at);
        if self.streams[i].first_start.is_none() && count > 0 {
            // The first record's start.
            match RawDecoder::new(prefix.base, self.version).first_gap(&mut c) {
                Ok(gap) => self.streams[i].first_start = Some(prefix.base.wrapping_add(gap)),
                Err(e) => return Err(self.damaged(at, e)),
            }
        }
        Ok(())
    }

    /// The error for bad data `e` in the chunk at `at`: a CRC mismatch if
    /// its payload fails its CRC, else `e`.
    fn damaged(&self, at: ChunkAt, e: Malformed) -> Error {
        match crc_in_steps(at.payload, at.len(), WINDOW, |buf, offset| {
            self.read_at(buf, offset)
        }) {
            Err(io) => io,
            Ok(crc) if crc != at.crc => crc_mismatch(at.frame, CHUNK_EVENTS, at.len(), &self.name),
            Ok(_) => e.in_file(&self.name),
        }
    }

    fn read_at(&self, buf: &mut [u8], offset: u64) -> Result<()> {
        let io = |e| Error::io(&self.name, e);
        match &self.file {
            Some(f) => f.read_exact_at(buf, offset).map_err(io),
            None => File::open(&self.path)
                .and_then(|f| f.read_exact_at(buf, offset))
                .map_err(io),
        }
    }

    /// The file, as named in messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Closes the file: later reads open it again each time, so that a
    /// folder of thousands of ranks does not hold thousands of files open.
    pub fn close(&mut self) {
        self.file = None;
    }

    /// The thread streams' ids (thread index on the rank), in the order
    /// they first appear in the file; a stream's place here is its slot.
    pub fn threads(&self) -> Vec<u32> {
        self.streams.iter().map(|s| s.id).collect()
    }

    /// The trace clock at the entry of each stream's first record, by slot
    /// (`None` for a stream without records).
    pub fn first_starts(&self) -> impl Iterator<Item = Option<u64>> + '_ {
        self.streams.iter().map(|s| s.first_start)
    }

    /// Sets the bytes of a chunk read at a time, per thread, to `bytes`
    /// within [`MIN_WINDOW`] and [`WINDOW`]: a reader of many rank files at
    /// once shares a budget between them. A record larger than the window
    /// is still read whole (the window grows while it is read).
    pub fn set_window(&mut self, bytes: usize) {
        self.window = bytes.clamp(MIN_WINDOW, WINDOW);
    }

    /// Bytes held for reading records, in all: the thread streams'
    /// windows (their capacity).
    pub fn buffered(&self) -> usize {
        self.streams.iter().map(|s| s.buf.capacity()).sum()
    }

    /// Whether the file holds any record.
    pub fn has_records(&self) -> bool {
        self.records > 0
    }

    /// Goes back to every stream's first record.
    pub fn rewind(&mut self) {
        for s in &mut self.streams {
            s.next_chunk = 0;
            s.chunk = None;
            s.has_head = false;
        }
    }

    /// A second reader of the same file, at its start (the index is
    /// copied, not read again).
    pub fn try_clone(&self) -> Result<RankReader> {
        let file = match &self.file {
            Some(f) => Some(f.try_clone().map_err(|e| Error::io(&self.name, e))?),
            None => None,
        };
        Ok(RankReader {
            name: self.name.clone(),
            path: self.path.clone(),
            file,
            header: self.header.clone(),
            pairs: self.pairs.clone(),
            syncs: self.syncs.clone(),
            end: self.end,
            truncated: self.truncated.clone(),
            sites: self.sites.clone(),
            size: self.size,
            version: self.version,
            records: self.records,
            window: self.window,
            streams: self
                .streams
                .iter()
                .map(|s| ThreadStream::new(s.id, s.chunks.clone(), s.first_start))
                .collect(),
        })
    }

    /// The next record of stream `slot` into `r`; `false` at its end.
    pub fn next_into(&mut self, slot: usize, r: &mut RawRecord) -> Result<bool> {
        if !self.fill(slot)? {
            return Ok(false);
        }
        let s = &mut self.streams[slot];
        std::mem::swap(r, &mut s.head);
        s.has_head = false;
        Ok(true)
    }

    /// Decodes stream `slot`'s next record into its head, unless there is
    /// one already; `false` at the stream's end.
    fn fill(&mut self, slot: usize) -> Result<bool> {
        let routines = self.header.routines.len();
        loop {
            let s = &self.streams[slot];
            if s.has_head {
                return Ok(true);
            }
            match &s.chunk {
                Some(ch) if ch.left > 0 => {}
                Some(ch) => {
                    // Every record read: the payload must be used up.
                    let (at, used) = (ch.at, ch.win + ch.pos);
                    if used != at.len() {
                        let e = Malformed::new(
                            at.payload + used as u64,
                            "unexpected bytes at the end of a chunk",
                        );
                        return Err(self.damaged(at, e));
                    }
                    self.streams[slot].chunk = None;
                    continue;
                }
                None => {
                    let Some(&at) = s.chunks.get(s.next_chunk) else {
                        // The stream's end: its memory goes until it is
                        // read again.
                        let s = &mut self.streams[slot];
                        s.buf = Vec::new();
                        s.head = RawRecord::default();
                        return Ok(false);
                    };
                    self.streams[slot].next_chunk += 1;
                    self.load(slot, at)?;
                    continue;
                }
            }
            // Decode one record; a window that ends inside it is extended.
            loop {
                let s = &mut self.streams[slot];
                let Some(ch) = s.chunk.as_mut() else {
                    return Ok(false);
                };
                let saved = ch.dec;
                let origin = ch.at.payload + (ch.win + ch.pos) as u64;
                let mut c = Cursor::new(&s.buf[ch.pos..], origin);
                match ch
                    .dec
                    .event_into(&mut c, routines, &mut s.head, &mut ch.counts, &mut ch.repeats)
                {
                    Ok(()) => {
                        ch.pos = s.buf.len() - c.remaining();
                        ch.left -= 1;
                        s.has_head = true;
                        break;
                    }
                    Err(e) if ch.loaded == ch.at.len() => {
                        // The whole chunk is here and passed its CRC.
                        return Err(e.in_file(&self.name));
                    }
                    Err(_) => {
                        ch.dec = saved;
                        self.extend(slot)?;
                    }
                }
            }
        }
    }

    /// Starts reading stream `slot`'s chunk at `at`: its first window and
    /// its prefix.
    fn load(&mut self, slot: usize, at: ChunkAt) -> Result<()> {
        let s = &mut self.streams[slot];
        let mut buf = std::mem::take(&mut s.buf);
        let n = self.window.min(at.len());
        buf.clear();
        // A window grown for a large record goes back to its size.
        buf.shrink_to(n);
        buf.resize(n, 0);
        let read = self.read_at(&mut buf, at.payload);
        let s = &mut self.streams[slot];
        s.buf = buf;
        read?;
        let mut crc = crc32fast::Hasher::new();
        crc.update(&s.buf);
        let loaded = s.buf.len();
        if loaded == at.len() && crc.clone().finalize() != at.crc {
            return Err(crc_mismatch(at.frame, CHUNK_EVENTS, at.len(), &self.name));
        }
        let mut c = Cursor::new(&s.buf, at.payload);
        let parsed = EventsPrefix::parse(&mut c).and_then(|p| {
            let used = s.buf.len() - c.remaining();
            p.count(at.len() - used).map(|n| (p, n, used))
        });
        let (prefix, count, used) = match parsed {
            Ok(x) => x,
            Err(e) => return Err(self.damaged(at, e)),
        };
        s.chunk = Some(Box::new(Loaded {
            at,
            win: 0,
            pos: used,
            loaded,
            crc,
            left: count,
            dec: RawDecoder::new(prefix.base, self.version),
            counts: CountsHistory::default(),
            repeats: Repeats::default(),
        }));
        Ok(())
    }

    /// Reads more of stream `slot`'s chunk: drops the bytes used and fills
    /// the window; a record of more than half the window, not yet whole,
    /// doubles what is held instead (so that every read brings at least
    /// half a window, and a record of any size is read whole).
    fn extend(&mut self, slot: usize) -> Result<()> {
        let window = self.window;
        let s = &mut self.streams[slot];
        let Some(ch) = s.chunk.as_mut() else {
            return Ok(());
        };
        s.buf.drain(..ch.pos);
        ch.win += ch.pos;
        ch.pos = 0;
        let left = s.buf.len();
        if left <= window / 2 {
            // A window grown for a large record goes back to its size.
            s.buf.shrink_to(window);
        }
        let n = (window.saturating_sub(left))
            .max(left)
            .min(ch.at.len() - ch.loaded);
        let old = s.buf.len();
        s.buf.resize(old + n, 0);
        let (at, offset) = (ch.at, ch.at.payload + ch.loaded as u64);
        let mut buf = std::mem::take(&mut s.buf);
        let read = self.read_at(&mut buf[old..], offset);
        let s = &mut self.streams[slot];
        s.buf = buf;
        read?;
        let Some(ch) = s.chunk.as_mut() else {
            return Ok(());
        };
        ch.crc.update(&s.buf[old..]);
        ch.loaded += n;
        if ch.loaded == at.len() && ch.crc.clone().finalize() != at.crc {
            return Err(crc_mismatch(at.frame, CHUNK_EVENTS, at.len(), &self.name));
        }
        Ok(())
    }
}

impl RecordSource for RankReader {
    fn slots(&self) -> usize {
        self.streams.len()
    }

    fn peek(&mut self, slot: usize) -> Result<Option<&RawRecord>> {
        Ok(if self.fill(slot)? {
            Some(&self.streams[slot].head)
        } else {
            None
        })
    }

    fn advance(&mut self, slot: usize) {
        self.streams[slot].has_head = false;
    }
}
