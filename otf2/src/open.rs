//! Which trace is at a path, answered once for every reader: `pnmpi trace`,
//! `pnmpi trace analyze` and `pnmpi sim replay` open their input here.
//! This crate is the lowest that knows every form read with timestamps:
//! a tracer folder and a merged `.pnt` (`pnmpi-trace`), and OTF2 archives.

use crate::import::{is_otf2, Otf2Trace};
use pnmpi_trace::container::MAGIC;
use pnmpi_trace::folder::FolderReader;
use pnmpi_trace::stream::MergedReader;
use pnmpi_trace::{Error, Result};
use std::io::Read;
use std::path::Path;

/// A trace opened for streaming, in the form it was found in.
pub enum Opened {
    /// An OTF2 archive: its `.otf2` anchor file, or the folder holding
    /// `traces.otf2` (Score-P's included).
    Otf2(Otf2Trace),
    /// A tracer's output folder, its rank files merged as they are read.
    Folder(FolderReader),
    /// A merged trace (`.pnt`).
    Merged(MergedReader),
}

/// Opens the trace at `path`, whichever of the forms of [`Opened`] it
/// has; `Ok(None)` for a file of none of them (a SimGrid trace, which has
/// no timestamps, or no trace at all), which the caller names.
pub fn open(path: &Path) -> Result<Option<Opened>> {
    if is_otf2(path) {
        return Otf2Trace::open(path).map(|t| Some(Opened::Otf2(t)));
    }
    if path.is_dir() {
        return FolderReader::open(path).map(|f| Some(Opened::Folder(f)));
    }
    let mut head = Vec::with_capacity(MAGIC.len());
    std::fs::File::open(path)
        .and_then(|f| f.take(MAGIC.len() as u64).read_to_end(&mut head))
        .map_err(|e| Error::io(path.display(), e))?;
    if head != MAGIC {
        return Ok(None);
    }
    MergedReader::open(path).map(|r| Some(Opened::Merged(r)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_form_is_told_from_the_others() {
        let dir = tempfile::tempdir().unwrap();
        let other = dir.path().join("index.txt");
        std::fs::write(&other, "rank0.txt\n").unwrap();
        assert!(open(&other).unwrap().is_none());
        let folder = dir.path().join("run");
        std::fs::create_dir(&folder).unwrap();
        // A folder without rank files is a folder still: its reader says why
        // it cannot be read.
        assert!(open(&folder).is_err());
        let missing = dir.path().join("absent.pnt");
        let e = open(&missing).err().unwrap().to_string();
        assert!(e.contains("absent.pnt"), "{e}");
        let bad = dir.path().join("bad.pnt");
        std::fs::write(&bad, b"PNMPITRC\x09\x02").unwrap();
        assert!(open(&bad).is_err());
    }
}
