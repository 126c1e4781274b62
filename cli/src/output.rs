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
