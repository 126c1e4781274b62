//! The shared read-ahead of a merged trace: one window of the file that
//! the streams' small reads are served from.
//!
//! A replay reads every stream a piece at a time (see
//! [`MergedReader`](crate::stream::MergedReader)). When the streams
//! advance together, as the ranks of a bulk-synchronous program do, the
//! pieces they ask for next lie close together in the file, and one read
//! of [`WINDOW`] bytes serves thousands of them. When they do not (a few
//! streams far apart, or streams taken in random order), reloading the
//! window for every piece would read a megabyte for a few dozen bytes: the
//! window then steps aside and the pieces are read alone, and it is tried
//! again now and then, as the kernel's own read-ahead does.

use std::fs::File;
use std::os::unix::fs::FileExt;

/// Bytes that one load of the window reads.
pub(crate) const WINDOW: usize = 1 << 20;

/// A window that served fewer reads than this before the next miss was
/// not worth its load: misses are then read alone.
const WORTH: u32 = 16;

/// After this many misses read alone, the window is loaded again, in
/// case the reads have become close again.
const PROBE: u32 = 64;

/// The window: `data` is the file from offset `at`.
pub(crate) struct ReadAhead {
    at: u64,
    data: Vec<u8>,
    /// Reads served since the window was last loaded.
    hits: u32,
    /// Misses read alone since then.
    alone: u32,
    /// Whether the last load served at least [`WORTH`] reads.
    worth: bool,
}

impl Default for ReadAhead {
    fn default() -> ReadAhead {
        ReadAhead {
            at: 0,
            data: Vec::new(),
            hits: 0,
            alone: 0,
            worth: true,
        }
    }
}

impl ReadAhead {
    /// Fills `dst` from `file` (of `len` bytes) at `offset`: from the
    /// window when it holds those bytes, else by loading the window there
    /// or, while loads are not paying off, by reading them alone. A read
    /// of a quarter window or more is always read alone.
    pub(crate) fn read(&mut self, file: &File, len: u64, offset: u64, dst: &mut [u8]) -> std::io::Result<()> {
        if self.holds(offset, dst.len()) {
            let from = (offset - self.at) as usize;
            dst.copy_from_slice(&self.data[from..from + dst.len()]);
            self.hits += 1;
            return Ok(());
        }
        if dst.len() >= WINDOW / 4 || !(self.worth || self.hits >= WORTH || self.alone >= PROBE) {
            self.alone += 1;
            return file.read_exact_at(dst, offset);
        }
        self.worth = self.hits >= WORTH;
        self.load(file, len, offset, dst.len())?;
        dst.copy_from_slice(&self.data[..dst.len()]);
        Ok(())
    }

    /// Whether the window holds the `n` bytes at `offset`.
    fn holds(&self, offset: u64, n: usize) -> bool {
        offset >= self.at && offset + n as u64 <= self.at + self.data.len() as u64
    }

    /// Loads the window at `offset`: a window's bytes, at least `min`.
    fn load(&mut self, file: &File, len: u64, offset: u64, min: usize) -> std::io::Result<()> {
        let n = (len.saturating_sub(offset)).min(WINDOW as u64) as usize;
        self.data.resize(n.max(min), 0);
        self.at = offset;
        (self.hits, self.alone) = (1, 0);
        file.read_exact_at(&mut self.data, offset)
            .inspect_err(|_| self.data.clear())
    }

    /// The CRC-32 of `n` bytes of `file` at `offset`: hashed in the window
    /// (loaded there if it does not hold them) when they fit a quarter of
    /// it, else read a window at a time.
    pub(crate) fn crc(&mut self, file: &File, len: u64, offset: u64, n: usize) -> std::io::Result<u32> {
        if n < WINDOW / 4 {
            if !self.holds(offset, n) {
                self.load(file, len, offset, n)?;
            }
            let from = (offset - self.at) as usize;
            return Ok(crc32fast::hash(&self.data[from..from + n]));
        }
        crate::frame::crc_in_steps(offset, n, WINDOW, |buf, at| file.read_exact_at(buf, at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file(n: usize) -> (File, Vec<u8>) {
        let data: Vec<u8> = (0..n).map(|i| (i * 7 + i / 251) as u8).collect();
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&data).unwrap();
        (f, data)
    }

    #[test]
    fn every_read_gives_the_files_bytes_in_any_order() {
        let (f, data) = file(3 * WINDOW + 123);
        let len = data.len() as u64;
        let mut ra = ReadAhead::default();
        let mut rng = fastrand::Rng::with_seed(99);
        for step in 0..20_000 {
            let x = rng.u64(..);
            // Close reads for a while, then scattered ones, then close again.
            let scattered = (5_000..12_000).contains(&step);
            let at = if scattered {
                (x >> 20) % (len - 300)
            } else {
                (step as u64 * 97) % (len - 300)
            };
            let n = 1 + (x >> 50) as usize % 256;
            let mut got = vec![0u8; n];
            ra.read(&f, len, at, &mut got).unwrap();
            assert_eq!(got, data[at as usize..at as usize + n], "step {step}");
        }
        // A read past the end is an error, not short data.
        let mut got = vec![0u8; 10];
        assert!(ra.read(&f, len, len - 5, &mut got).is_err());
    }

    #[test]
    fn scattered_reads_stop_loading_the_window() {
        let (f, data) = file(64 * WINDOW);
        let len = data.len() as u64;
        let mut ra = ReadAhead::default();
        let mut loads = 0;
        let mut got = [0u8; 32];
        for i in 0..1000u64 {
            let at = (i * 7919 * 4099) % (len - 32);
            let before = ra.at;
            ra.read(&f, len, at, &mut got).unwrap();
            loads += usize::from(ra.at != before);
        }
        // One load in PROBE misses at most, not one per read.
        assert!(loads <= 1000 / PROBE as usize + 2, "{loads} loads");
    }
}
