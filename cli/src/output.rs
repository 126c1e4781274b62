//! Output files of the commands, written whole or not at all.

use anyhow::{Context, Result};
use std::path::Path;

/// Writes `bytes` to `path` through `path.part`, renamed once complete, so
/// that an interrupted command never leaves a half-written file under the
/// name a user or another tool opens.
pub fn write_atomic(path: &Path, bytes: impl AsRef<[u8]>) -> Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".part");
    std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", path.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

/// Writes `value` as pretty JSON to `path` as [`write_atomic`] does,
/// streamed: a report of a million ranks is written without a copy of its
/// text in memory (a quarter of a gigabyte at the end of a replay).
pub fn write_json_atomic(path: &Path, value: &impl serde::Serialize) -> Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".part");
    let write = || -> Result<()> {
        let mut w = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        serde_json::to_writer_pretty(&mut w, value)?;
        std::io::Write::flush(&mut w)?;
        Ok(())
    };
    write().with_context(|| format!("cannot write {}", path.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

/// This process's peak resident memory, bytes (`getrusage`'s
/// `ru_maxrss`), 0 where it cannot be read.
pub fn peak_rss_bytes() -> u64 {
    let mut u = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the rusage it is given; a zeroed one is valid.
    let ok = unsafe { libc::getrusage(libc::RUSAGE_SELF, u.as_mut_ptr()) } == 0;
    if !ok {
        return 0;
    }
    // SAFETY: initialised (zeroed, then filled by getrusage).
    let u = unsafe { u.assume_init() };
    u64::try_from(u.ru_maxrss).unwrap_or(0) * 1024
}
