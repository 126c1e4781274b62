//! A merged trace read one chunk at a time, per stream: opening it reads
//! the header, the communicator and clock tables and the position of
//! every `STREAM` chunk (seeking past the payloads); events are then
//! decoded on demand from one loaded chunk per stream. Memory grows with
//! the streams (one chunk each, at most 65,536 events of a few bytes),
//! not with the trace: a replay of a trace larger than memory works.

use crate::container::{readable, Kind, MAGIC};
use crate::error::{Error, Malformed, Result};
use crate::trace::{
    parse_clocks, parse_comms, parse_header, ChunkDecoder, Comm, Event, RankClock, StreamHead, CHUNK_CLOCKS,
    CHUNK_COMMS, CHUNK_STREAM,
};
use crate::varint::Cursor;
use std::fs::File;
use std::io::{BufReader, Read, Seek};
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Where a chunk's payload is.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ChunkAt {
    /// File offset of the chunk's type byte (for messages).
    pub frame: u64,
    /// File offset of its payload.
    pub payload: u64,
    /// Payload bytes.
    pub len: usize,
    /// The payload's CRC.
    pub crc: u32,
}

/// One stream's reading state.
struct StreamState {
    rank: u32,
    thread: u32,
    chunks: Vec<ChunkAt>,
    next_chunk: usize,
    buf: Vec<u8>,
    pos: usize,
    origin: u64,
    left: usize,
    decoder: Option<ChunkDecoder>,
}

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
    streams: Vec<StreamState>,
    /// Events in the indexed chunks (their heads' counts).
    events: u64,
    /// Set when the file ends inside a chunk.
    pub truncated: Option<Error>,
}

/// Reads a varint from `r`; `None` at a clean end of file.
pub(crate) fn read_varint(r: &mut impl Read) -> std::io::Result<Option<u64>> {
    let mut v = 0u64;
    for i in 0..10 {
        let mut b = [0u8];
        if r.read(&mut b)? == 0 {
            return if i == 0 {
                Ok(None)
            } else {
                Err(std::io::ErrorKind::UnexpectedEof.into())
            };
        }
        v |= u64::from(b[0] & 0x7f) << (7 * i);
        if b[0] & 0x80 == 0 {
            return Ok(Some(v));
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        "varint too long",
    ))
}

/// A chunk's frame, as read while walking a file's chunks.
#[derive(Clone, Copy)]
pub(crate) struct Frame {
    /// The chunk type.
    pub ty: u8,
    /// The payload's place.
    pub at: ChunkAt,
}

/// What [`next_frame`] found.
pub(crate) enum Step {
    /// A chunk whose payload lies within the file; the reader is at its
    /// payload.
    Chunk(Frame),
    /// The end of the file, between chunks.
    End,
    /// The file ends inside the chunk at this offset.
    Truncated(u64),
}

/// Reads the next chunk frame of a file of `len` bytes.
pub(crate) fn next_frame(r: &mut BufReader<File>, len: u64) -> std::io::Result<Step> {
    let frame = r.stream_position()?;
    let mut ty = [0u8];
    if r.read(&mut ty)? == 0 {
        return Ok(Step::End);
    }
    let mut crc = [0u8; 4];
    let size = match read_varint(r) {
        Ok(Some(n)) if r.read_exact(&mut crc).is_ok() => n,
        _ => return Ok(Step::Truncated(frame)),
    };
    let payload = r.stream_position()?;
    if payload.saturating_add(size) > len {
        return Ok(Step::Truncated(frame));
    }
    Ok(Step::Chunk(Frame {
        ty: ty[0],
        at: ChunkAt {
            frame,
            payload,
            len: size as usize,
            crc: u32::from_le_bytes(crc),
        },
    }))
}

/// The report of a file that ends inside the chunk at `frame`.
pub(crate) fn truncation(frame: u64, len: u64) -> Malformed {
    Malformed::new(
        frame,
        format!(
            "truncated chunk ({} bytes left in the file); the chunks before it are intact",
            len - frame
        ),
    )
}

/// An open trace file: a buffered reader at its first chunk, its length,
/// kind and header body (CRC-checked), which starts at `header_at`.
pub(crate) struct Opened {
    pub file: File,
    pub reader: BufReader<File>,
    pub len: u64,
    pub kind: Kind,
    pub header: Vec<u8>,
    pub header_at: u64,
}

/// Opens `path` and reads its prologue; `name` is the file in messages.
pub(crate) fn open_prologue(path: &Path, name: &str) -> Result<Opened> {
    let io = |e| Error::io(name, e);
    let file = File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    let mut r = BufReader::with_capacity(1 << 16, file.try_clone().map_err(io)?);
    let bad = |at: u64, what: &str| Malformed::new(at, what.to_owned()).in_file(name);
    let mut head = [0u8; 10];
    r.read_exact(&mut head)
        .map_err(|_| bad(0, "too short to be a pnmpi trace"))?;
    if head[..8] != MAGIC {
        return Err(bad(0, "not a pnmpi trace (bad magic)"));
    }
    if !readable(head[8]) {
        return Err(bad(8, "unknown format version"));
    }
    let kind = match head[9] {
        1 => Kind::Rank,
        2 => Kind::Merged,
        _ => return Err(bad(9, "unknown file kind")),
    };
    let header_len = read_varint(&mut r)
        .ok()
        .flatten()
        .ok_or_else(|| bad(10, "truncated header"))? as usize;
    let header_at = r.stream_position().map_err(io)?;
    if header_at.saturating_add(header_len as u64) > len {
        return Err(bad(header_at, "truncated header"));
    }
    let mut header = vec![0u8; header_len];
    let mut crc = [0u8; 4];
    r.read_exact(&mut header)
        .and_then(|_| r.read_exact(&mut crc))
        .map_err(|_| bad(header_at, "truncated header"))?;
    if u32::from_le_bytes(crc) != crc32fast::hash(&header) {
        return Err(bad(header_at + header_len as u64, "header CRC mismatch"));
    }
    Ok(Opened {
        file,
        reader: r,
        len,
        kind,
        header,
        header_at,
    })
}

impl MergedReader {
    /// Opens `path` and indexes its chunks.
    pub fn open(path: &Path) -> Result<MergedReader> {
        let name = path.display().to_string();
        let mut o = open_prologue(path, &name)?;
        if o.kind != Kind::Merged {
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
            streams: Vec::new(),
            events: 0,
            truncated: None,
        };
        t.index(&mut o.reader, o.len)?;
        Ok(t)
    }

    /// Walks the chunk frames, reading the small tables and each stream
    /// chunk's head only.
    fn index(&mut self, r: &mut BufReader<File>, len: u64) -> Result<()> {
        let name = self.name.clone();
        let io = |e| Error::io(&name, e);
        loop {
            let Frame { ty, at } = match next_frame(r, len).map_err(io)? {
                Step::Chunk(f) => f,
                Step::End => return Ok(()),
                Step::Truncated(frame) => return self.truncate(frame, len),
            };
            let (payload, size) = (at.payload, at.len);
            match ty {
                CHUNK_COMMS | CHUNK_CLOCKS => {
                    let mut data = vec![0u8; size];
                    r.read_exact(&mut data).map_err(io)?;
                    check_crc(&data, at.crc, at.frame, ty, &name)?;
                    let mut c = Cursor::new(&data, payload);
                    if ty == CHUNK_COMMS {
                        parse_comms(&mut c, &mut self.comms)
                    } else {
                        parse_clocks(&mut c, &mut self.clocks)
                    }
                    .map_err(|e| e.in_file(&name))?;
                }
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
                    if i > self.streams.len() {
                        return Err(Malformed::new(
                            payload,
                            format!("stream {i} before stream {}", self.streams.len()),
                        )
                        .in_file(&name));
                    }
                    if i == self.streams.len() {
                        self.streams.push(StreamState {
                            rank,
                            thread,
                            chunks: Vec::new(),
                            next_chunk: 0,
                            buf: Vec::new(),
                            pos: 0,
                            origin: 0,
                            left: 0,
                            decoder: None,
                        });
                    }
                    let s = &mut self.streams[i];
                    if (s.rank, s.thread) != (rank, thread) {
                        return Err(
                            Malformed::new(payload, format!("stream {i} changes rank or thread"))
                                .in_file(&name),
                        );
                    }
                    s.chunks.push(at);
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
        self.streams.iter().map(|s| (s.rank, s.thread))
    }

    /// Events in the file's complete chunks, as their heads count them.
    pub fn event_count(&self) -> u64 {
        self.events
    }

    /// Starts stream `i` over from its first event.
    pub fn restart(&mut self, i: usize) {
        let s = &mut self.streams[i];
        s.next_chunk = 0;
        s.left = 0;
        s.decoder = None;
    }

    /// The next event of stream `i`, `None` at its end.
    pub fn next(&mut self, i: usize) -> Result<Option<Event>> {
        let mut ev = Event::default();
        Ok(self.next_into(i, &mut ev)?.then_some(ev))
    }

    /// The next event of stream `i` into `ev` (reusing its memory);
    /// `false` at the stream's end.
    pub fn next_into(&mut self, i: usize, ev: &mut Event) -> Result<bool> {
        let routines = self.routines.len();
        let s = &mut self.streams[i];
        while s.left == 0 {
            let Some(&at) = s.chunks.get(s.next_chunk) else {
                return Ok(false);
            };
            s.next_chunk += 1;
            s.buf.resize(at.len, 0);
            self.file
                .read_exact_at(&mut s.buf, at.payload)
                .map_err(|e| Error::io(&self.name, e))?;
            check_crc(&s.buf, at.crc, at.frame, CHUNK_STREAM, &self.name)?;
            let mut c = Cursor::new(&s.buf, at.payload);
            let head = StreamHead::parse(&mut c).map_err(|e| e.in_file(&self.name))?;
            s.pos = at.len - c.remaining();
            s.origin = at.payload;
            s.left = head.count;
            s.decoder = Some(ChunkDecoder::new(routines, &head));
        }
        let mut c = Cursor::new(&s.buf[s.pos..], s.origin + s.pos as u64);
        let Some(decoder) = s.decoder.as_mut() else {
            return Ok(false);
        };
        decoder
            .decode_into(&mut c, ev)
            .map_err(|e| e.in_file(&self.name))?;
        s.pos = s.buf.len() - c.remaining();
        s.left -= 1;
        if s.left == 0 && s.pos != s.buf.len() {
            return Err(
                Malformed::new(s.origin + s.pos as u64, "unexpected bytes at the end of a chunk")
                    .in_file(&self.name),
            );
        }
        Ok(true)
    }
}

pub(crate) fn check_crc(data: &[u8], crc: u32, frame: u64, ty: u8, name: &str) -> Result<()> {
    if crc32fast::hash(data) == crc {
        Ok(())
    } else {
        Err(crc_mismatch(frame, ty, data.len(), name))
    }
}

/// The error of a chunk (at `frame`, of type `ty`, `len` payload bytes)
/// whose payload does not match its CRC.
pub(crate) fn crc_mismatch(frame: u64, ty: u8, len: usize, name: &str) -> Error {
    Malformed::new(frame, format!("chunk CRC mismatch (type {ty}, {len} bytes)")).in_file(name)
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
        let n = data.len();
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
