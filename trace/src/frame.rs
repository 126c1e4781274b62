//! The framing both trace files share, a merged trace and a rank file:
//! the prologue (magic, kind, header), then chunks, each a type byte, a
//! payload length, the payload and its CRC-32. The readers of both walk
//! the frames and check the CRCs through these.

use crate::container::{readable, FileKind, MAGIC};
use crate::error::{Error, Malformed, Result};
use std::fs::File;
use std::io::{BufReader, Read, Seek};
use std::path::Path;

/// Where a chunk's payload is.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ChunkAt {
    /// File offset of the chunk's type byte (for messages).
    pub frame: u64,
    /// File offset of its payload.
    pub payload: u64,
    /// Payload bytes: a `u32` (a million streams keep one chunk's place
    /// each), as [`next_frame`] checked.
    pub len: u32,
    /// The payload's CRC.
    pub crc: u32,
}

impl ChunkAt {
    /// Payload bytes.
    pub fn len(&self) -> usize {
        self.len as usize
    }
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
    let size = u32::try_from(size).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("the chunk at offset {frame} claims {size} bytes, beyond the 4 GiB a chunk may hold"),
        )
    })?;
    Ok(Step::Chunk(Frame {
        ty: ty[0],
        at: ChunkAt {
            frame,
            payload,
            len: size,
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
    pub kind: FileKind,
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
        1 => FileKind::Rank,
        2 => FileKind::Merged,
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

/// The CRC-32 of `n` bytes from `offset`, read `step` bytes at a time by
/// `read` (a chunk too large to hold at once).
pub(crate) fn crc_in_steps<E>(
    offset: u64,
    n: usize,
    step: usize,
    mut read: impl FnMut(&mut [u8], u64) -> std::result::Result<(), E>,
) -> std::result::Result<u32, E> {
    let mut crc = crc32fast::Hasher::new();
    let mut buf = vec![0u8; step.min(n)];
    let mut done = 0;
    while done < n {
        let k = buf.len().min(n - done);
        read(&mut buf[..k], offset + done as u64)?;
        crc.update(&buf[..k]);
        done += k;
    }
    Ok(crc.finalize())
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
