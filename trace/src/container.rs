//! The container shared by rank files and merged traces: a prologue
//! (magic, version, kind, a CRC-checked header) followed by chunks, each a
//! type byte, a varint length, a CRC-32 of the payload and the payload.
//!
//! Chunks are the unit of crash safety: the tracer writes a whole chunk at
//! a time, so a run that dies leaves every chunk written before intact, and
//! a copy cut short ends in one incomplete chunk, which [`parse`] reports
//! instead of failing.

use crate::error::Malformed;
use crate::varint::{self, Cursor};

/// The first 8 bytes of every trace file.
pub const MAGIC: [u8; 8] = *b"PNMPITRC";
/// The newest format version, which this crate writes for rank files: 2
/// added per-peer counts ([`crate::fields::COUNTS`]), 3 the packed times
/// and repeated arguments of rank files' events
/// ([`crate::rank::RawEncoder`]), 4 call sites ([`crate::sites`]), 5
/// one-sided communication ([`crate::rma`]).
pub const VERSION: u8 = 5;

/// The version this crate writes for merged traces: version 3 left them
/// unchanged, version 4 of the rank files is version 3 of merged traces
/// (call sites, [`crate::fields::SITE`]), version 5 of the rank files
/// version 4 of merged traces (one-sided communication, [`crate::rma`]).
pub const MERGED_VERSION: u8 = 4;

/// The oldest version this crate reads. A version 1 file is a version 2
/// file without per-peer counts, so one reader reads both.
pub const OLDEST: u8 = 1;

/// The version this crate writes for files of `kind`.
pub fn version_of(kind: FileKind) -> u8 {
    match kind {
        FileKind::Rank => VERSION,
        FileKind::Merged => MERGED_VERSION,
    }
}

/// Whether this crate reads format `version`.
pub fn readable(version: u8) -> bool {
    (OLDEST..=VERSION).contains(&version)
}

/// What a file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// One rank's events as the tracer wrote them (`rank-NNNNN.pnr`).
    Rank = 1,
    /// The consolidated trace of a whole run (`.pnt`).
    Merged = 2,
}

/// The prologue of a file of `kind` with the given header body.
pub fn prologue(kind: FileKind, header: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(header.len() + 24);
    out.extend_from_slice(&MAGIC);
    out.push(version_of(kind));
    out.push(kind as u8);
    varint::push(&mut out, header.len() as u64);
    out.extend_from_slice(header);
    out.extend_from_slice(&crc32fast::hash(header).to_le_bytes());
    out
}

/// The frame (type, length, CRC) of a chunk whose payload is the
/// concatenation of `parts`; the payload itself follows it in the file.
pub fn frame(chunk_type: u8, parts: &[&[u8]]) -> Vec<u8> {
    let mut crc = crc32fast::Hasher::new();
    let mut len = 0usize;
    for p in parts {
        crc.update(p);
        len += p.len();
    }
    let mut out = Vec::with_capacity(16);
    out.push(chunk_type);
    varint::push(&mut out, len as u64);
    out.extend_from_slice(&crc.finalize().to_le_bytes());
    out
}

/// Appends a whole chunk to `out`.
pub fn push_chunk(out: &mut Vec<u8>, chunk_type: u8, payload: &[u8]) {
    out.extend_from_slice(&frame(chunk_type, &[payload]));
    out.extend_from_slice(payload);
}

/// One chunk of a parsed file.
pub struct Chunk<'a> {
    /// Its type byte.
    pub chunk_type: u8,
    /// The file offset of its type byte.
    pub offset: u64,
    /// Its payload.
    pub payload: Cursor<'a>,
}

/// A parsed file: its header and its complete chunks.
pub struct Container<'a> {
    /// Its format version.
    pub version: u8,
    /// What the file holds.
    pub kind: FileKind,
    /// The header body.
    pub header: Cursor<'a>,
    /// Every complete chunk, in file order.
    pub chunks: Vec<Chunk<'a>>,
    /// Set when the file ends inside a chunk: where and how.
    pub truncated: Option<Malformed>,
}

/// Splits `data` into header and chunks, checking every CRC. A file that
/// ends inside its last chunk is not an error (see [`Container::truncated`]);
/// a bad magic, version or CRC is.
pub fn parse(data: &[u8]) -> Result<Container<'_>, Malformed> {
    let mut c = Cursor::new(data, 0);
    let magic = c
        .bytes(MAGIC.len())
        .map_err(|_| Malformed::new(0, "too short to be a pnmpi trace"))?;
    if magic != MAGIC {
        return Err(Malformed::new(0, "not a pnmpi trace (bad magic)"));
    }
    let version = c.u8()?;
    if !readable(version) {
        return Err(Malformed::new(
            8,
            format!("format version {version}; this reader knows versions {OLDEST} to {VERSION}"),
        ));
    }
    let kind = match c.u8()? {
        1 => FileKind::Rank,
        2 => FileKind::Merged,
        k => return Err(Malformed::new(9, format!("unknown file kind {k}"))),
    };
    let header_len = c.count(1)?;
    let header_at = c.offset();
    let header = c.bytes(header_len)?;
    let crc_at = c.offset();
    let crc = u32::from_le_bytes(c.bytes(4)?.try_into().expect("4 bytes"));
    if crc != crc32fast::hash(header) {
        return Err(Malformed::new(crc_at, "header CRC mismatch"));
    }
    let mut chunks = Vec::new();
    let mut truncated = None;
    while !c.is_empty() {
        let offset = c.offset();
        match chunk(&mut c) {
            Ok(Some(chunk)) => chunks.push(chunk),
            Ok(None) => {
                truncated = Some(Malformed::new(
                    offset,
                    format!(
                        "truncated chunk ({} bytes left in the file); the chunks before it are intact",
                        data.len() as u64 - offset
                    ),
                ));
                break;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(Container {
        version,
        kind,
        header: Cursor::new(header, header_at),
        chunks,
        truncated,
    })
}

/// The next chunk, or `None` if the data ends inside it.
fn chunk<'a>(c: &mut Cursor<'a>) -> Result<Option<Chunk<'a>>, Malformed> {
    let offset = c.offset();
    let Ok(chunk_type) = c.u8() else {
        return Ok(None);
    };
    let len = match c.u64() {
        Ok(len) => len,
        Err(_) if c.is_empty() => return Ok(None),
        Err(e) => return Err(e),
    };
    let Ok(crc) = c.bytes(4) else {
        return Ok(None);
    };
    let crc = u32::from_le_bytes(crc.try_into().expect("4 bytes"));
    let payload_at = c.offset();
    let fits = usize::try_from(len).ok().filter(|&n| n <= c.remaining());
    let Some(len) = fits else {
        return Ok(None);
    };
    let payload = c.bytes(len)?;
    if crc32fast::hash(payload) != crc {
        return Err(Malformed::new(
            offset,
            format!("chunk CRC mismatch (type {chunk_type}, {len} bytes)"),
        ));
    }
    Ok(Some(Chunk {
        chunk_type,
        offset,
        payload: Cursor::new(payload, payload_at),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let mut out = prologue(FileKind::Merged, b"head");
        push_chunk(&mut out, 7, b"first");
        push_chunk(&mut out, 8, b"second chunk");
        out
    }

    #[test]
    fn chunks_round_trip() {
        let data = sample();
        let c = parse(&data).unwrap();
        assert_eq!(c.kind, FileKind::Merged);
        assert_eq!(c.header.remaining(), 4);
        let types: Vec<u8> = c.chunks.iter().map(|c| c.chunk_type).collect();
        assert_eq!(types, [7, 8]);
        assert!(c.truncated.is_none());
    }

    #[test]
    fn a_cut_file_keeps_its_complete_chunks() {
        let data = sample();
        for cut in (data.len() - 12)..data.len() {
            let c = parse(&data[..cut]).unwrap();
            assert_eq!(c.chunks.len(), 1, "cut at {cut}");
            let t = c.truncated.expect("reported");
            assert!(t.what.contains("truncated"));
        }
    }

    #[test]
    fn a_flipped_bit_is_an_error_with_its_offset() {
        let mut data = sample();
        let last = data.len() - 1;
        data[last] ^= 1;
        let e = parse(&data).err().expect("CRC mismatch");
        assert!(e.what.contains("CRC"), "{e}");
        data[3] = b'x';
        assert_eq!(parse(&data).err().unwrap().offset, 0);
    }
}
