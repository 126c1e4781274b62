//! A record file on disk: gzip-compressed (the default) or plain, written
//! in blocks, each flushed so that a crash leaves a prefix that reads.
//!
//! The entries are already delta- and varint-encoded; gzip then folds the
//! repetition of long runs (a loop that makes the same calls each
//! iteration) that varints alone cannot, as LLNL's ReMPI does with zlib.
//! A compressed record is a plain gzip file: `zcat rank-0.rpl` gives the
//! uncompressed one, which the module reads as well.

use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::Path;

/// gzip's first two bytes.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Where a record's bytes go.
pub enum Sink {
    /// The bytes as they are.
    Plain(File),
    /// gzip-compressed.
    Gzip(GzEncoder<File>),
}

impl Sink {
    /// Creates (truncates) `path`.
    pub fn create(path: &Path, compress: bool) -> io::Result<Sink> {
        let file = File::create(path)?;
        Ok(if compress {
            Sink::Gzip(GzEncoder::new(file, Compression::fast()))
        } else {
            Sink::Plain(file)
        })
    }

    /// Appends a block and flushes it to the file: compressed, a sync
    /// flush ends the block on a byte boundary that a reader can stop at.
    pub fn block(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Sink::Plain(f) => f.write_all(bytes),
            Sink::Gzip(g) => g.write_all(bytes).and_then(|()| g.flush()),
        }
    }

    /// Ends the file (gzip's trailer) and returns its size on disk.
    pub fn finish(self) -> io::Result<u64> {
        let file = match self {
            Sink::Plain(mut f) => {
                f.flush()?;
                f
            }
            Sink::Gzip(g) => g.finish()?,
        };
        Ok(file.metadata()?.len())
    }
}

/// The uncompressed bytes of a record file's contents, and whether a
/// compressed one was cut (a crash): then its bytes up to the cut.
pub fn decompress(data: Vec<u8>) -> io::Result<(Vec<u8>, bool)> {
    if !data.starts_with(&GZIP_MAGIC) {
        return Ok((data, false));
    }
    let mut out = Vec::with_capacity(data.len() * 4);
    match GzDecoder::new(&data[..]).read_to_end(&mut out) {
        Ok(_) => Ok((out, false)),
        // `read_to_end` keeps what it decoded before the error.
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok((out, true)),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(compress: bool, blocks: &[&[u8]]) -> (Vec<u8>, u64) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r");
        let mut sink = Sink::create(&path, compress).unwrap();
        for b in blocks {
            sink.block(b).unwrap();
        }
        let size = sink.finish().unwrap();
        (std::fs::read(&path).unwrap(), size)
    }

    #[test]
    fn both_kinds_read_back_whole() {
        let blocks: [&[u8]; 2] = [b"PNMPIRPL\x01\x00", &[7u8; 5000]];
        let whole: Vec<u8> = blocks.concat();
        for compress in [false, true] {
            let (data, size) = written(compress, &blocks);
            assert_eq!(size, data.len() as u64);
            assert_eq!(data.starts_with(&GZIP_MAGIC), compress);
            assert_eq!(decompress(data).unwrap(), (whole.clone(), false));
        }
    }

    #[test]
    fn repetition_compresses() {
        let (data, _) = written(true, &[&[1, 2, 3, 4].repeat(10_000)]);
        assert!(data.len() < 1_000, "{} bytes", data.len());
    }

    #[test]
    fn a_cut_file_reads_up_to_its_last_flushed_block() {
        let (data, _) = written(true, &[b"first block ", b"second block"]);
        // Cut before the trailer and the final empty block: both blocks
        // were sync-flushed, so both read.
        let (out, cut) = decompress(data[..data.len() - 10].to_vec()).unwrap();
        assert!(cut);
        assert_eq!(out, b"first block second block");
        // Cut inside the second block: the first reads.
        let (one, _) = written(true, &[b"first block "]);
        let (out, cut) = decompress(data[..one.len() - 9].to_vec()).unwrap();
        assert!(cut);
        assert!(out.starts_with(b"first block"), "{out:?}");
    }
}
