//! A merged trace read a piece at a time, per stream: opening it reads
//! the header, the communicator and clock tables and the position of
//! every `STREAM` chunk (seeking past the payloads); events are then
//! decoded on demand from a small piece of each stream's current chunk.
//!
//! Memory is bounded whatever the trace's length: each stream holds a
//! piece of [`BUDGET`] divided by the streams (between [`MIN_PIECE`] and
//! [`MAX_PIECE`] bytes, more only for an event larger than that) and a
//! compact decoder state, so that a replay of a million ranks, or of a
//! hundred thousand ranks with a million events each, fits a node. The
//! pieces are read through one shared read-ahead window
//! (`read_ahead::ReadAhead`), which serves thousands of streams per read when they
//! advance together. A chunk's CRC is checked over its whole payload when
//! the stream reaches it, before any of its events is handed out (one
//! more read of the chunk, usually from the window), so that no event of a
//! damaged chunk is ever replayed. A stream's piece and decoder are freed
//! at its end.

use crate::container::FileKind;
use crate::error::{Error, Malformed, Result};
use crate::frame::{check_crc, crc_mismatch, next_frame, open_prologue, truncation, ChunkAt, Frame, Step};
use crate::pnt_index::{self, Footer};
use crate::read_ahead::ReadAhead;
use crate::rma::{parse_wins, Win, CHUNK_WINS};
use crate::sites::{parse_merged_sites, Site, CHUNK_MERGED_SITES};
use crate::trace::{
    parse_clocks, parse_comms, parse_header, ChunkDecoder, Comm, Decoding, Event, RankClock, StreamHead,
    CHUNK_CLOCKS, CHUNK_COMMS, CHUNK_STREAM,
};
use crate::varint::Cursor;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

/// A stream in the file's index: 12 bytes, all that the reader keeps
/// of a stream before it reads it (a process of a parallel replay keeps
/// its own ranks' only, [`MergedReader::keep`]).
#[derive(Clone, Copy, Debug)]
struct Head {
    rank: u32,
    thread: u32,
    /// Its chunks are `MergedReader::chunks[first_chunk..]`, up to the
    /// next stream's first.
    first_chunk: u32,
}

/// One stream's reading state: small, since a replay holds one per
/// stream; made when the first stream is read, for the streams kept.
#[derive(Default)]
struct StreamState {
    /// The next of its chunks to load, from 0.
    next_chunk: u32,
    /// Events left in the loaded chunk.
    left: u32,
    /// Where the next event starts in `buf`.
    pos: u32,
    /// The payload offset of `buf[0]` in the loaded chunk.
    buf_at: u32,
    /// The loaded chunk's payload bytes.
    len: u32,
    /// The file offset of its payload.
    payload: u64,
    /// A piece of the loaded chunk's payload.
    buf: Vec<u8>,
    decoder: Option<ChunkDecoder>,
}

/// The memory that all streams' pieces share, bytes (and a tracer
/// folder's windows: [`crate::folder::WINDOW_BUDGET`]).
pub const BUDGET: usize = 64 << 20;

/// The smallest piece a stream reads, bytes: a few events.
pub const MIN_PIECE: usize = 64;

/// The largest piece a stream reads, bytes.
pub const MAX_PIECE: usize = 64 << 10;

/// A stream whose piece has fewer bytes than this left reads more before
/// its next event (most events take fewer).
const REFILL: usize = 24;

/// A merged trace (`.pnt`) streamed from disk.
pub struct MergedReader {
    file: File,
    name: String,
    /// Size of `MPI_COMM_WORLD`.
    pub world_size: u32,
    /// The MPI the trace was recorded with.
    pub mpi: String,
    /// Routine names; events index them.
    pub routines: Vec<String>,
    /// The communicator table (ids from 2).
    pub comms: Vec<Comm>,
    /// Per rank clock alignment.
    pub clocks: Vec<RankClock>,
    /// Call sites (empty when the trace records none).
    pub sites: Vec<Site>,
    /// One-sided windows (empty when the trace has none).
    pub wins: Vec<Win>,
    /// Whether events come without their sites ([`MergedReader::skip_sites`]).
    skip_sites: bool,
    /// The streams kept ([`MergedReader::keep`]: the streams from
    /// `first` on; all of them unless told).
    heads: Vec<Head>,
    /// Their reading state, made when one is first read (empty before).
    streams: Vec<StreamState>,
    /// The index of `heads[0]` among all the file's streams.
    first: usize,
    /// Every chunk of `streams`, by stream then file order.
    chunks: Vec<ChunkAt>,
    /// The file's index and the chunks of the kept streams in it, until
    /// their places are read (when a stream is first read): a file with
    /// an index (`pnt_index`) is opened without walking its chunks.
    footer: Option<(Footer, std::ops::Range<u64>)>,
    window: ReadAhead,
    /// The bytes of a stream's piece (see [`BUDGET`]).
    piece: usize,
    len: u64,
    /// Events in the indexed chunks (their heads' counts).
    events: u64,
    /// Set when the file ends inside a chunk.
    pub truncated: Option<Error>,
}

impl MergedReader {
    /// Opens `path` and indexes its chunks.
    pub fn open(path: &Path) -> Result<MergedReader> {
        let name = path.display().to_string();
        let mut o = open_prologue(path, &name)?;
        if o.kind != FileKind::Merged {
            return Err(Malformed::new(
                9,
                "a rank file, not a merged trace: merge it first, or give the folder",
            )
            .in_file(&name));
        }
        let (world_size, mpi, routines) =
            parse_header(&mut Cursor::new(&o.header, o.header_at)).map_err(|e| e.in_file(&name))?;
        let mut t = MergedReader {
            file: o.file,
            name,
            world_size,
            mpi,
            routines,
            comms: Vec::new(),
            clocks: Vec::new(),
            sites: Vec::new(),
            wins: Vec::new(),
            skip_sites: false,
            heads: Vec::new(),
            streams: Vec::new(),
            first: 0,
            chunks: Vec::new(),
            footer: None,
            window: ReadAhead::default(),
            piece: MAX_PIECE,
            len: o.len,
            events: 0,
            truncated: None,
        };
        let mut found = Vec::new();
        let footer = pnt_index::footer(&t.file, t.len).map_err(|e| Error::io(&t.name, e))?;
        if let Some(f) = footer {
            t.index(&mut o.reader, o.len, &mut found, true)?;
            t.indexed(f)?;
            return Ok(t);
        }
        t.index(&mut o.reader, o.len, &mut found, false)?;
        // By stream, each stream's chunks in file order (the sort is stable).
        found.sort_by_key(|&(stream, _)| stream);
        let mut at = 0;
        for (i, s) in t.heads.iter_mut().enumerate() {
            s.first_chunk = at as u32;
            at += found[at..]
                .iter()
                .take_while(|&&(st, _)| st as usize == i)
                .count();
        }
        t.chunks = found.into_iter().map(|(_, c)| c).collect();
        t.piece = (BUDGET / t.heads.len().max(1)).clamp(MIN_PIECE, MAX_PIECE);
        Ok(t)
    }

    /// Takes the streams from the file's index `f`, whose chunks' places
    /// are read when a stream is first read.
    fn indexed(&mut self, f: Footer) -> Result<()> {
        let heads = f.heads(&self.file).map_err(|e| Error::io(&self.name, e))?;
        let mut last = 0;
        for (i, &(_, _, first)) in heads.iter().enumerate() {
            if first < last || u64::from(first) > f.chunks {
                return Err(Malformed::new(
                    self.len,
                    format!("its index is damaged (stream {i}'s first chunk {first}): merge the trace again"),
                )
                .in_file(&self.name));
            }
            last = first;
        }
        self.heads = heads
            .into_iter()
            .map(|(rank, thread, first_chunk)| Head {
                rank,
                thread,
                first_chunk,
            })
            .collect();
        self.events = f.events;
        self.footer = Some((f, 0..f.chunks));
        self.piece = (BUDGET / self.heads.len().max(1)).clamp(MIN_PIECE, MAX_PIECE);
        Ok(())
    }

    /// Walks the chunk frames, reading the small tables and each stream
    /// chunk's head only; the stream chunks go to `found`, with their
    /// stream, in file order. With `tables_only`, it stops at the first
    /// stream chunk.
    fn index(
        &mut self,
        r: &mut BufReader<File>,
        len: u64,
        found: &mut Vec<(u32, ChunkAt)>,
        tables_only: bool,
    ) -> Result<()> {
        let name = self.name.clone();
        let io = |e| Error::io(&name, e);
        loop {
            let Frame { ty, at } = match next_frame(r, len).map_err(io)? {
                Step::Chunk(f) => f,
                Step::End => return Ok(()),
                Step::Truncated(frame) => return self.truncate(frame, len),
            };
            let (payload, size) = (at.payload, at.len());
            match ty {
                // An index the file's end does not lead to (damaged, or
                // not the last chunk) is checked, then walked past.
                pnt_index::CHUNK_INDEX => {
                    let mut data = vec![0u8; size];
                    r.read_exact(&mut data).map_err(io)?;
                    check_crc(&data, at.crc, at.frame, ty, &name)?;
                }
                CHUNK_COMMS | CHUNK_CLOCKS | CHUNK_MERGED_SITES | CHUNK_WINS => {
                    let mut data = vec![0u8; size];
                    r.read_exact(&mut data).map_err(io)?;
                    check_crc(&data, at.crc, at.frame, ty, &name)?;
                    let mut c = Cursor::new(&data, payload);
                    match ty {
                        CHUNK_COMMS => parse_comms(&mut c, &mut self.comms),
                        CHUNK_CLOCKS => parse_clocks(&mut c, &mut self.clocks),
                        CHUNK_WINS => parse_wins(&mut c, &mut self.wins),
                        _ => parse_merged_sites(&mut c, &mut self.sites),
                    }
                    .map_err(|e| e.in_file(&name))?;
                }
                CHUNK_STREAM if tables_only => return Ok(()),
                CHUNK_STREAM => {
                    let mut data = vec![0u8; size.min(64)];
                    r.read_exact(&mut data).map_err(io)?;
                    // Only the head's first fields: the rest of the chunk
                    // is not read now (its event count is checked on load).
                    let mut c = Cursor::new(&data, payload);
                    let ids = (|| Ok::<_, Malformed>((c.u32()?, c.u32()?, c.u32()?)))();
                    let (index, rank, thread) = ids.map_err(|e| e.in_file(&name))?;
                    // Then base and first request, and the event count: a
                    // count that does not parse is a damaged chunk, which
                    // its CRC reports when it is read.
                    let count = (|| Ok::<_, Malformed>((c.u64()?, c.u32()?, c.u64()?).2))();
                    self.events += count.unwrap_or(0);
                    let i = index as usize;
                    if i > self.heads.len() {
                        return Err(Malformed::new(
                            payload,
                            format!("stream {i} before stream {}", self.heads.len()),
                        )
                        .in_file(&name));
                    }
                    if i == self.heads.len() {
                        self.heads.push(Head {
                            rank,
                            thread,
                            first_chunk: 0,
                        });
                    }
                    let s = &self.heads[i];
                    if (s.rank, s.thread) != (rank, thread) {
                        return Err(
                            Malformed::new(payload, format!("stream {i} changes rank or thread"))
                                .in_file(&name),
                        );
                    }
                    found.push((index, at));
                    r.seek_relative((size - data.len()) as i64).map_err(io)?;
                }
                _ => r.seek_relative(size as i64).map_err(io)?,
            }
        }
    }

    fn truncate(&mut self, frame: u64, len: u64) -> Result<()> {
        self.truncated = Some(truncation(frame, len).in_file(&self.name));
        Ok(())
    }

    /// The streams: (rank, thread), in stream order.
    pub fn streams(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.heads.iter().map(|s| (s.rank, s.thread))
    }

    /// Events in the file's complete chunks, as their heads count them.
    pub fn event_count(&self) -> u64 {
        self.events
    }

    /// Keeps the reading state of streams `range` only: a process of a
    /// parallel replay reads its own ranks' streams, and its memory
    /// follows them, not the file's (176 bytes a stream and its chunks'
    /// places). The streams keep their indices; [`streams`](Self::streams)
    /// lists the kept ones from then on, and reading any other is an
    /// error.
    pub fn keep(&mut self, range: std::ops::Range<usize>) {
        let n = self.first + self.heads.len();
        let (start, end) = (range.start.clamp(self.first, n), range.end.clamp(self.first, n));
        let (start, end) = (start - self.first, end.max(start) - self.first);
        let total = match &self.footer {
            Some((_, r)) => (r.end - r.start) as usize,
            None => self.chunks.len(),
        };
        let chunk_at = |i: usize| self.heads.get(i).map_or(total, |s| s.first_chunk as usize);
        let (c0, c1) = (chunk_at(start), chunk_at(end));
        match &mut self.footer {
            Some((_, r)) => *r = r.start + c0 as u64..r.start + c1 as u64,
            None => self.chunks = self.chunks[c0..c1].to_vec(),
        }
        let mut kept: Vec<Head> = self.heads.drain(start..end).collect();
        for s in &mut kept {
            s.first_chunk -= c0 as u32;
        }
        self.heads = kept;
        if !self.streams.is_empty() {
            self.streams = self.streams.drain(start..end).collect();
        }
        self.first += start;
        self.piece = (BUDGET / self.heads.len().max(1)).clamp(MIN_PIECE, MAX_PIECE);
    }

    /// The place of stream `i` in `streams`, or the error of reading a
    /// stream not kept. Always inlined: every event read asks it, and
    /// the compiler's own choice varies with how the crate is split.
    #[inline(always)]
    fn kept(&mut self, i: usize) -> Result<usize> {
        let k = i
            .checked_sub(self.first)
            .filter(|&k| k < self.heads.len())
            .ok_or_else(|| {
                Malformed::new(
                    0,
                    format!("stream {i} was not kept for reading (MergedReader::keep)"),
                )
                .in_file(&self.name)
            })?;
        if self.streams.len() < self.heads.len() {
            if let Some((f, range)) = self.footer.take() {
                self.chunks = f
                    .places(&self.file, range)
                    .map_err(|e| Error::io(&self.name, e))?;
            }
            self.streams.resize_with(self.heads.len(), StreamState::default);
        }
        Ok(k)
    }

    /// Starts stream `i` over from its first event.
    pub fn restart(&mut self, i: usize) -> Result<()> {
        let k = self.kept(i)?;
        let s = &mut self.streams[k];
        s.next_chunk = 0;
        s.left = 0;
        Ok(())
    }

    /// The chunks of stream `i`.
    fn chunks_of(&self, i: usize) -> &[ChunkAt] {
        let end = self
            .heads
            .get(i + 1)
            .map_or(self.chunks.len(), |s| s.first_chunk as usize);
        &self.chunks[self.heads[i].first_chunk as usize..end]
    }

    /// The next event of stream `i`, `None` at its end.
    pub fn next(&mut self, i: usize) -> Result<Option<Event>> {
        let mut ev = Event::default();
        Ok(self.next_into(i, &mut ev)?.then_some(ev))
    }

    /// Events from now on come without their call sites
    /// ([`V::Site`](crate::fields::V::Site) none), for a reader that does
    /// not use them (a replay): their values are skipped, and the value
    /// history keeps no site (its slots stay as narrow as the other
    /// fields need).
    pub fn skip_sites(&mut self) {
        self.skip_sites = true;
    }

    /// The next event of stream `i` into `ev` (reusing its memory);
    /// `false` at the stream's end.
    pub fn next_into(&mut self, i: usize, ev: &mut Event) -> Result<bool> {
        let i = self.kept(i)?;
        while self.streams[i].left == 0 {
            if !self.next_chunk(i)? {
                return Ok(false);
            }
        }
        let s = &self.streams[i];
        if s.buf.len() - (s.pos as usize) < REFILL {
            self.read_more(i, 0)?;
        }
        let how = Decoding {
            routines: u32::try_from(self.routines.len()).unwrap_or(u32::MAX),
            sites: !self.skip_sites,
        };
        loop {
            let s = &mut self.streams[i];
            let Some(decoder) = s.decoder.as_mut() else {
                return Ok(false);
            };
            let pos = s.pos as usize;
            let mut c = Cursor::new(&s.buf[pos..], s.payload + u64::from(s.buf_at) + pos as u64);
            let saved = decoder.mark();
            match decoder.decode_into(&mut c, ev, how) {
                Ok(()) => {
                    s.pos = (s.buf.len() - c.remaining()) as u32;
                    s.left -= 1;
                    break;
                }
                // The piece ends inside the event: read the rest of it.
                Err(_) if s.buf_at as usize + s.buf.len() < s.len as usize => {
                    decoder.reset(saved);
                    let more = s.buf.len() - pos;
                    self.read_more(i, more)?;
                }
                Err(e) => return Err(e.in_file(&self.name)),
            }
        }
        let s = &self.streams[i];
        let used = s.buf_at + s.pos;
        if s.left == 0 && used != s.len {
            return Err(Malformed::new(
                s.payload + u64::from(used),
                "unexpected bytes at the end of a chunk",
            )
            .in_file(&self.name));
        }
        Ok(true)
    }

    /// Reads more of stream `i`'s chunk into its piece: the bytes used
    /// are dropped, and the piece filled to its size, or with at least
    /// `extra` more bytes than it holds (twice what it holds, for an event
    /// larger than a piece).
    fn read_more(&mut self, i: usize, extra: usize) -> Result<()> {
        let piece = self.piece;
        let s = &mut self.streams[i];
        let pos = s.pos as usize;
        s.buf.drain(..pos);
        s.buf_at += pos as u32;
        s.pos = 0;
        let held = s.buf.len();
        let fetched = s.buf_at as usize + held;
        let n = piece
            .max(held + extra.max(held))
            .saturating_sub(held)
            .min(s.len as usize - fetched);
        if n == 0 {
            return Ok(());
        }
        if s.buf.capacity() > 2 * piece && held + n <= piece {
            // Back to a piece's memory after a large event.
            s.buf.shrink_to(piece);
        }
        let offset = s.payload + fetched as u64;
        let mut buf = std::mem::take(&mut s.buf);
        buf.resize(held + n, 0);
        let read = self.window.read(&self.file, self.len, offset, &mut buf[held..]);
        self.streams[i].buf = buf;
        read.map_err(|e| Error::io(&self.name, e))
    }

    /// Checks the CRC of chunk `at`.
    fn check_chunk(&mut self, at: ChunkAt) -> Result<()> {
        let crc = self
            .window
            .crc(&self.file, self.len, at.payload, at.len())
            .map_err(|e| Error::io(&self.name, e))?;
        if crc == at.crc {
            Ok(())
        } else {
            Err(crc_mismatch(at.frame, CHUNK_STREAM, at.len(), &self.name))
        }
    }

    /// Loads stream `i`'s next chunk: checks its CRC, reads its first
    /// piece and its head; `false` (its memory freed) at the stream's end.
    fn next_chunk(&mut self, i: usize) -> Result<bool> {
        let Some(&at) = self.chunks_of(i).get(self.streams[i].next_chunk as usize) else {
            let s = &mut self.streams[i];
            (s.buf, s.decoder) = (Vec::new(), None);
            return Ok(false);
        };
        self.check_chunk(at)?;
        let len = at.len;
        let s = &mut self.streams[i];
        s.next_chunk += 1;
        (s.buf_at, s.pos, s.left) = (0, 0, 0);
        (s.len, s.payload) = (len, at.payload);
        s.buf.clear();
        // The head takes at most 50 bytes.
        self.read_more(i, 64)?;
        let s = &mut self.streams[i];
        let mut c = Cursor::new(&s.buf, at.payload);
        let head = StreamHead::parse(&mut c, at.len() - s.buf.len()).map_err(|e| e.in_file(&self.name))?;
        let own = &self.heads[i];
        if (head.index as usize, head.rank, head.thread) != (self.first + i, own.rank, own.thread) {
            return Err(Malformed::new(
                at.payload,
                format!(
                    "the chunk here belongs to stream {} (rank {}), not to stream {} (rank {}): the file's index is damaged; merge the trace again",
                    head.index,
                    head.rank,
                    self.first + i,
                    own.rank
                ),
            )
            .in_file(&self.name));
        }
        s.pos = (s.buf.len() - c.remaining()) as u32;
        s.left = u32::try_from(head.count)
            .map_err(|_| Malformed::new(at.payload, "chunk event count beyond 4 GiB").in_file(&self.name))?;
        match s.decoder.as_mut() {
            Some(d) => d.restart(&head),
            None => s.decoder = Some(ChunkDecoder::new(&head)),
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streaming_gives_the_same_events_as_reading_whole() {
        let t = crate::trace::tests::sample();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.pnt");
        t.save(&p, &|_| {}).unwrap();
        let mut r = MergedReader::open(&p).unwrap();
        assert_eq!(r.routines, t.routines);
        assert_eq!(r.comms, t.comms);
        assert_eq!(r.clocks, t.clocks);
        let streams: Vec<(u32, u32)> = r.streams().collect();
        assert_eq!(
            streams,
            t.streams.iter().map(|s| (s.rank, s.thread)).collect::<Vec<_>>()
        );
        for (i, s) in t.streams.iter().enumerate() {
            let mut got = Vec::new();
            while let Some(e) = r.next(i).unwrap() {
                got.push(e);
            }
            assert_eq!(got, s.events, "stream {i}");
        }
    }

    /// Where the index chunk of merged trace `data` starts (the stream
    /// chunks end there).
    fn index_at(data: &[u8]) -> usize {
        let n = data.len();
        assert_eq!(&data[n - 8..], b"pntindex", "the file ends with its index");
        u64::from_le_bytes(data[n - 16..n - 8].try_into().unwrap()) as usize
    }

    /// A file without its index (an older one) is read by the walk,
    /// alike; a damaged index is refused or leads to the damaged chunk,
    /// never to another stream's events.
    #[test]
    fn the_index_and_the_walk_read_alike_and_a_damaged_index_is_refused() {
        let (t, dir, p) = mixed_file();
        let data = std::fs::read(&p).unwrap();
        let at = index_at(&data);
        let bare = dir.path().join("bare.pnt");
        std::fs::write(&bare, &data[..at]).unwrap();
        let mut ev = Event::default();
        for path in [&p, &bare] {
            let mut r = MergedReader::open(path).unwrap();
            assert_eq!(r.footer.is_some(), path == &p);
            assert_eq!(
                r.event_count(),
                t.streams.iter().map(|s| s.events.len() as u64).sum::<u64>()
            );
            for (i, s) in t.streams.iter().enumerate() {
                let mut got = Vec::new();
                while r.next_into(i, &mut ev).unwrap() {
                    got.push(ev.clone());
                }
                assert!(got == s.events, "stream {i} of {}", path.display());
            }
        }
        // Stream 1's first chunk place swapped for stream 2's: its head
        // says whose it is.
        let f = pnt_index::footer(&std::fs::File::open(&p).unwrap(), data.len() as u64)
            .unwrap()
            .unwrap();
        let heads = f.heads(&std::fs::File::open(&p).unwrap()).unwrap();
        let places = f.heads_at as usize + 12 * heads.len();
        let (one, two) = (heads[1].2 as usize, heads[2].2 as usize);
        let mut swapped = data.clone();
        let place = |i: usize| places + 16 * i..places + 16 * (i + 1);
        swapped[place(one)].copy_from_slice(&data[place(two)]);
        let bad = dir.path().join("swapped.pnt");
        std::fs::write(&bad, &swapped).unwrap();
        let mut r = MergedReader::open(&bad).unwrap();
        let e = r.next(1).unwrap_err().to_string();
        assert!(
            e.contains("belongs to stream 2") && e.contains("index is damaged"),
            "{e}"
        );
        // Heads out of order: refused at the open.
        let mut disordered = data.clone();
        let first = f.heads_at as usize + 12 * 3 + 8;
        disordered[first..first + 4].copy_from_slice(&0u32.to_le_bytes());
        let bad = dir.path().join("disordered.pnt");
        std::fs::write(&bad, &disordered).unwrap();
        let e = MergedReader::open(&bad).err().unwrap().to_string();
        assert!(e.contains("index is damaged") && e.contains("stream 3"), "{e}");
    }

    /// Streams of small events and of events larger than a piece (long
    /// completion lists with statuses), one stream over two chunks.
    fn mixed() -> crate::trace::Trace {
        use crate::fields::{COMM_WORLD, V};
        use crate::trace::{Done, ReqRef, Stream};
        let mut t = crate::trace::tests::sample();
        let mut rng = fastrand::Rng::with_seed(7);
        let mut rnd = move |n: u64| rng.u64(..n);
        t.streams = (0..4u32)
            .map(|rank| {
                let n = if rank == 0 { 70_000 } else { 3_000 };
                let (mut now, mut reqs) = (0u64, 0u32);
                let events = (0..n)
                    .map(|_| {
                        now += 1 + rnd(1000);
                        let mut ev = Event {
                            start: now,
                            end: now + rnd(50),
                            first_req: reqs,
                            ..Event::default()
                        };
                        if reqs > 0 && rnd(4) == 0 {
                            ev.routine = 2;
                            let k = 1 + rnd(u64::from(reqs.min(40))) as u32;
                            ev.done = (reqs - k..reqs)
                                .map(|index| Done {
                                    req: Some(ReqRef { stream: rank, index }),
                                    status: Some((rnd(4) as i64, rnd(1 << 30) as i64)),
                                })
                                .collect();
                        } else {
                            ev.routine = 1;
                            ev.set(V::Peer, Some(rnd(4) as i64));
                            ev.set(V::Tag, Some(rnd(3) as i64));
                            ev.set(V::Comm, Some(COMM_WORLD));
                            ev.set(V::Bytes, Some(rnd(1 << 40) as i64));
                            ev.set(V::Req, Some(1));
                            reqs += 1;
                        }
                        now = ev.end;
                        ev
                    })
                    .collect();
                Stream {
                    rank,
                    thread: 0,
                    events,
                }
            })
            .collect();
        t.world_size = 4;
        t
    }

    /// [`mixed`] saved in a fresh folder, and its path.
    fn mixed_file() -> (crate::trace::Trace, tempfile::TempDir, std::path::PathBuf) {
        let t = mixed();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.pnt");
        t.save(&p, &|_| {}).unwrap();
        (t, dir, p)
    }

    /// A reader that keeps some streams (a process of a parallel replay)
    /// holds their state and chunks only, reads them as a whole reader
    /// does, and refuses the others; streams spanning chunks included.
    #[test]
    fn kept_streams_read_alike_and_the_others_are_refused() {
        let (t, _dir, p) = mixed_file();
        for (start, end) in [(0, 2), (1, 3), (3, 4), (2, 2)] {
            let mut r = MergedReader::open(&p).unwrap();
            let all_chunks = r.footer.as_ref().map(|(f, _)| f.chunks as usize).unwrap();
            assert!(r.chunks.is_empty(), "the index's places wait for a read");
            r.keep(start..end);
            assert_eq!(r.streams().count(), end - start);
            if end > start {
                r.restart(start).unwrap();
                assert!(r.chunks.len() < all_chunks);
            }
            let mut ev = Event::default();
            for i in start..end {
                let mut got = Vec::new();
                while r.next_into(i, &mut ev).unwrap() {
                    got.push(ev.clone());
                }
                assert!(got == t.streams[i].events, "stream {i} of {start}..{end}");
            }
            for i in (0..start).chain(end..t.streams.len()) {
                let e = r.next_into(i, &mut ev).unwrap_err().to_string();
                assert!(e.contains(&format!("stream {i} was not kept")), "{e}");
            }
        }
    }

    #[test]
    fn small_pieces_in_any_order_give_the_same_events() {
        let (t, _dir, p) = mixed_file();
        let mut r = MergedReader::open(&p).unwrap();
        r.restart(0).unwrap();
        assert!(r.chunks_of(0).len() > 1, "stream 0 spans chunks");
        r.piece = MIN_PIECE;
        let mut got: Vec<Vec<Event>> = vec![Vec::new(); t.streams.len()];
        let mut rng = fastrand::Rng::with_seed(3);
        let mut open: Vec<usize> = (0..t.streams.len()).collect();
        let mut ev = Event::default();
        while !open.is_empty() {
            let x = rng.u64(..);
            let k = (x >> 33) as usize % open.len();
            if r.next_into(open[k], &mut ev).unwrap() {
                got[open[k]].push(ev.clone());
            } else {
                open.swap_remove(k);
            }
            // A piece each, not a chunk (stream 0's first is about 600 KB):
            // more only while an event larger than a piece is read.
            let held: usize = r.streams.iter().map(|s| s.buf.capacity()).sum();
            assert!(held <= 4 * 1024, "{held} bytes of pieces");
        }
        for (i, s) in t.streams.iter().enumerate() {
            assert!(got[i] == s.events, "stream {i}");
            // Each stream's piece was freed at its end.
            assert_eq!(r.streams[i].buf.capacity(), 0);
        }
        // A stream read again from its start gives the same events.
        r.restart(1).unwrap();
        let mut again = Vec::new();
        while r.next_into(1, &mut ev).unwrap() {
            again.push(ev.clone());
        }
        assert!(again == t.streams[1].events);
    }

    #[test]
    fn a_damaged_chunk_is_reported_before_any_of_its_events() {
        let (_, _dir, p) = mixed_file();
        let mut data = std::fs::read(&p).unwrap();
        // A byte of the last stream's last chunk, just before the index.
        let n = index_at(&data);
        data[n - 10] ^= 0x55;
        std::fs::write(&p, &data).unwrap();
        let mut r = MergedReader::open(&p).unwrap();
        r.piece = MIN_PIECE;
        let e = r.next(3).unwrap_err().to_string();
        assert!(e.contains("m.pnt") && e.contains("CRC mismatch"), "{e}");
    }

    #[test]
    fn corrupt_and_truncated_files_name_the_offset() {
        let t = crate::trace::tests::sample();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.pnt");
        t.save(&p, &|_| {}).unwrap();
        let mut data = std::fs::read(&p).unwrap();
        // Truncated: the last chunk is cut, the ones before it stream.
        let cut = dir.path().join("cut.pnt");
        std::fs::write(&cut, &data[..data.len() - 3]).unwrap();
        let r = MergedReader::open(&cut).unwrap();
        let e = r.truncated.as_ref().unwrap().to_string();
        assert!(e.contains("cut.pnt") && e.contains("truncated chunk"), "{e}");
        // A flipped byte in the last stream chunk: its CRC fails when read.
        let n = index_at(&data);
        data[n - 2] ^= 0xff;
        let bad = dir.path().join("bad.pnt");
        std::fs::write(&bad, &data).unwrap();
        let mut r = MergedReader::open(&bad).unwrap();
        let last = t.streams.len() - 1;
        let e = loop {
            match r.next(last) {
                Ok(Some(_)) => continue,
                Ok(None) => panic!("the corruption went unseen"),
                Err(e) => break e.to_string(),
            }
        };
        assert!(e.contains("bad.pnt") && e.contains("CRC mismatch"), "{e}");
        // Not a trace at all.
        let junk = dir.path().join("junk.pnt");
        std::fs::write(&junk, b"hello, world").unwrap();
        let e = MergedReader::open(&junk).err().unwrap().to_string();
        assert!(e.contains("junk.pnt") && e.contains("bad magic"), "{e}");
    }
}
