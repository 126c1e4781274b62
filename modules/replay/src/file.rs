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
use std::path::{Path, PathBuf};

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

/// A record file being written: bytes gathered in `buf`, written to
/// `part` in blocks, and `part` renamed to `done` once complete, so that
/// a run that stops early leaves a prefix that reads, never a
/// half-written final file. The main record and the compute record
/// both stream this way.
pub struct Stream {
    sink: Option<Sink>,
    compress: bool,
    /// The file while it is written.
    pub part: PathBuf,
    done: PathBuf,
    /// Bytes not written yet.
    pub buf: Vec<u8>,
    /// Bytes written so far; the file's size on disk once finished.
    pub bytes: u64,
}

impl Stream {
    /// A stream whose first bytes are `header`; the file is created at
    /// its first block, or by [`Stream::create`].
    pub fn new(part: PathBuf, done: PathBuf, compress: bool, header: Vec<u8>) -> Stream {
        Stream {
            sink: None,
            compress,
            part,
            done,
            buf: header,
            bytes: 0,
        }
    }

    /// Creates (truncates) the file now, if not yet.
    pub fn create(&mut self) -> io::Result<()> {
        if self.sink.is_none() {
            self.sink = Some(Sink::create(&self.part, self.compress)?);
        }
        Ok(())
    }

    /// Writes the buffer as a block once it holds `at` bytes or more (0:
    /// whatever it holds). The buffer is emptied even when the write
    /// fails: the record is then incomplete, and the error says so.
    pub fn flush_at(&mut self, at: usize) -> io::Result<()> {
        if self.buf.is_empty() || self.buf.len() < at {
            return Ok(());
        }
        self.create()?;
        let written = match &mut self.sink {
            Some(sink) => sink.block(&self.buf),
            None => Ok(()),
        };
        if written.is_ok() {
            self.bytes += self.buf.len() as u64;
        }
        self.buf.clear();
        written
    }

    /// Writes what is left and ends the file; `complete`: renames it to
    /// its final name. Returns where it is.
    pub fn finish(&mut self, complete: bool) -> io::Result<PathBuf> {
        self.flush_at(0)?;
        if let Some(sink) = self.sink.take() {
            self.bytes = sink.finish()?;
        }
        if complete {
            std::fs::rename(&self.part, &self.done)?;
            Ok(self.done.clone())
        } else {
            Ok(self.part.clone())
        }
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
    fn a_stream_is_renamed_only_when_complete() {
        let dir = tempfile::tempdir().unwrap();
        let (part, done) = (dir.path().join("r.part"), dir.path().join("r"));
        let mut s = Stream::new(part.clone(), done.clone(), true, b"head ".to_vec());
        s.buf.extend_from_slice(b"body");
        s.flush_at(100).unwrap();
        assert!(!part.exists(), "a block below its size is not written");
        s.flush_at(0).unwrap();
        assert_eq!(s.finish(false).unwrap(), part);
        assert!(!done.exists());
        let mut s = Stream::new(part.clone(), done.clone(), true, b"head ".to_vec());
        s.buf.extend_from_slice(b"body");
        assert_eq!(s.finish(true).unwrap(), done);
        assert!(!part.exists());
        let data = std::fs::read(&done).unwrap();
        assert_eq!(s.bytes, data.len() as u64);
        assert_eq!(decompress(data).unwrap(), (b"head body".to_vec(), false));
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
