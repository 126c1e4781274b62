//! The index at the end of a merged trace (`.pnt`): every stream's rank,
//! thread and first chunk, and every stream chunk's place, in records of
//! a fixed width, so that a process of a parallel replay reads the table
//! of streams and then only its own streams' chunk places, two reads in
//! all, where walking the file's chunk frames costs a read per chunk of
//! every rank (a quarter of a million at 262,144 ranks, on every
//! process). It is written last, as a chunk of its own, which readers
//! that do not know it skip; its payload ends with its frame's offset and
//! a tag, so that a reader finds it from the file's end. A file without
//! it (older, or cut short) is indexed by the walk.
//!
//! Payload, little-endian: streams `S`, chunks `C` and events (`u64`
//! each); `S` heads (rank, thread, first chunk: `u32` each); `C` chunk
//! places (frame offset `u64`, payload bytes and CRC `u32`: the payload
//! follows the frame's type, length and CRC); the frame's offset (`u64`)
//! and [`TAG`]. A place read from it
//! is checked when its chunk is loaded (the chunk's CRC and head).

use crate::frame::ChunkAt;
use std::fs::File;
use std::os::unix::fs::FileExt;

/// The index chunk's type.
pub const CHUNK_INDEX: u8 = 21;

/// The last 8 bytes of a file that ends with an index.
const TAG: &[u8; 8] = b"pntindex";

const COUNTS: u64 = 24;
const HEAD: u64 = 12;
const PLACE: u64 = 16;
const TRAILER: u64 = 16;

/// A stream's entry: its rank, thread and first chunk.
pub(crate) type IndexHead = (u32, u32, u32);

/// The index as a merged trace is written.
#[derive(Default)]
pub(crate) struct IndexWriter {
    heads: Vec<IndexHead>,
    places: Vec<ChunkAt>,
    events: u64,
}

impl IndexWriter {
    /// Stream `index` (`rank`, `thread`) has a chunk at `at` of `events`
    /// events; streams come in order, each one's chunks in file order.
    pub(crate) fn chunk(&mut self, index: u32, rank: u32, thread: u32, at: ChunkAt, events: u64) {
        if index as usize == self.heads.len() {
            self.heads.push((rank, thread, self.places.len() as u32));
        }
        self.places.push(at);
        self.events += events;
    }

    /// The index chunk, whole, to be written at file offset `frame`.
    pub(crate) fn finish(&self, frame: u64) -> Vec<u8> {
        let mut p = Vec::with_capacity(
            (COUNTS + HEAD * self.heads.len() as u64 + PLACE * self.places.len() as u64 + TRAILER) as usize,
        );
        for v in [self.heads.len() as u64, self.places.len() as u64, self.events] {
            p.extend_from_slice(&v.to_le_bytes());
        }
        for &(rank, thread, first) in &self.heads {
            for v in [rank, thread, first] {
                p.extend_from_slice(&v.to_le_bytes());
            }
        }
        for c in &self.places {
            p.extend_from_slice(&c.frame.to_le_bytes());
            p.extend_from_slice(&c.len.to_le_bytes());
            p.extend_from_slice(&c.crc.to_le_bytes());
        }
        p.extend_from_slice(&frame.to_le_bytes());
        p.extend_from_slice(TAG);
        let mut out = crate::container::frame(CHUNK_INDEX, &[&p]);
        out.extend_from_slice(&p);
        out
    }
}

/// Where a file's index is, and its counts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Footer {
    pub streams: u64,
    pub chunks: u64,
    pub events: u64,
    /// File offset of the heads.
    pub heads_at: u64,
}

fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(b[i..i + 4].try_into().unwrap_or_default())
}

fn u64_at(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or_default())
}

/// The index of `file` (`len` bytes), if it ends with one whose frame
/// and counts agree with its place: a file that does not is indexed by
/// the walk, which checks every frame.
pub(crate) fn footer(file: &File, len: u64) -> std::io::Result<Option<Footer>> {
    if len < TRAILER + COUNTS {
        return Ok(None);
    }
    let mut trailer = [0u8; TRAILER as usize];
    file.read_exact_at(&mut trailer, len - TRAILER)?;
    if &trailer[8..] != TAG {
        return Ok(None);
    }
    let frame = u64_at(&trailer, 0);
    // The frame: type, payload length (varint), CRC; then the counts.
    let mut head = [0u8; 15 + COUNTS as usize];
    let n = head.len().min(len.saturating_sub(frame) as usize);
    if frame >= len || n < 7 {
        return Ok(None);
    }
    file.read_exact_at(&mut head[..n], frame)?;
    if head[0] != CHUNK_INDEX {
        return Ok(None);
    }
    let mut c = crate::varint::Cursor::new(&head[1..n], frame + 1);
    let Ok(size) = c.u64() else {
        return Ok(None);
    };
    let payload = frame + 1 + (n - 1 - c.remaining()) as u64 + 4;
    if payload + COUNTS > len || payload + size != len {
        return Ok(None);
    }
    let mut counts = [0u8; COUNTS as usize];
    file.read_exact_at(&mut counts, payload)?;
    let (streams, chunks, events) = (u64_at(&counts, 0), u64_at(&counts, 8), u64_at(&counts, 16));
    let want = streams
        .checked_mul(HEAD)
        .and_then(|h| chunks.checked_mul(PLACE).and_then(|c| c.checked_add(h)))
        .and_then(|b| b.checked_add(COUNTS + TRAILER));
    if want != Some(size) {
        return Ok(None);
    }
    Ok(Some(Footer {
        streams,
        chunks,
        events,
        heads_at: payload + COUNTS,
    }))
}

impl Footer {
    /// Every stream's head, in one read.
    pub(crate) fn heads(&self, file: &File) -> std::io::Result<Vec<IndexHead>> {
        let mut b = vec![0u8; (self.streams * HEAD) as usize];
        file.read_exact_at(&mut b, self.heads_at)?;
        Ok(b.chunks_exact(HEAD as usize)
            .map(|h| (u32_at(h, 0), u32_at(h, 4), u32_at(h, 8)))
            .collect())
    }

    /// The places of chunks `range` (by their number in the file's
    /// stream order), in one read.
    pub(crate) fn places(&self, file: &File, range: std::ops::Range<u64>) -> std::io::Result<Vec<ChunkAt>> {
        let at = self.heads_at + self.streams * HEAD + range.start * PLACE;
        let mut b = vec![0u8; (range.end.saturating_sub(range.start) * PLACE) as usize];
        file.read_exact_at(&mut b, at)?;
        Ok(b.chunks_exact(PLACE as usize)
            .map(|p| {
                let (frame, len) = (u64_at(p, 0), u32_at(p, 8));
                ChunkAt {
                    frame,
                    payload: frame + 1 + crate::varint::len(u64::from(len)) as u64 + 4,
                    len,
                    crc: u32_at(p, 12),
                }
            })
            .collect())
    }
}
