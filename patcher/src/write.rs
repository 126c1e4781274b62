//! Writes the patched tool so that the output path holds either the old file or the complete new
//! one, never a half-written shared object that a running job might `dlopen`.

use std::fs::{self, File, Permissions};
use std::io::Write;
use std::path::Path;

use crate::error::PatchError;

/// Writes `bytes` to a temporary file in `path`'s directory, syncs it, then renames it over
/// `path`. `permissions` are applied before the rename (the input's, so an executable tool stays
/// executable).
pub fn write_atomically(path: &Path, bytes: &[u8], permissions: Permissions) -> Result<(), PatchError> {
    if path.is_dir() {
        return Err(PatchError::OutputIsDirectory);
    }
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let mut temp = tempfile::Builder::new()
        .prefix(".pnmpi-patch-")
        .tempfile_in(dir)
        .map_err(PatchError::Write)?;
    temp.write_all(bytes).map_err(PatchError::Write)?;
    temp.as_file()
        .set_permissions(permissions)
        .map_err(PatchError::Write)?;
    temp.as_file().sync_all().map_err(PatchError::Write)?;
    temp.persist(path).map_err(|e| PatchError::Write(e.error))?;
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(PatchError::Write)
}

/// The permission bits to give the output: those of the input file.
pub fn permissions_of(input: &Path) -> Result<Permissions, PatchError> {
    fs::metadata(input)
        .map(|m| m.permissions())
        .map_err(PatchError::Read)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn replaces_file_keeps_mode_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("libtool.pnmpi.so");
        fs::write(&out, b"old").unwrap();
        write_atomically(&out, b"new contents", Permissions::from_mode(0o750)).unwrap();
        assert_eq!(fs::read(&out).unwrap(), b"new contents");
        assert_eq!(fs::metadata(&out).unwrap().permissions().mode() & 0o777, 0o750);
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("libtool.pnmpi.so")]);
    }

    #[test]
    fn refuses_directory_and_missing_parent() {
        let dir = tempfile::tempdir().unwrap();
        let err = write_atomically(dir.path(), b"x", Permissions::from_mode(0o644)).unwrap_err();
        assert!(matches!(err, PatchError::OutputIsDirectory), "{err:?}");
        let err = write_atomically(
            &dir.path().join("no/such/dir/out.so"),
            b"x",
            Permissions::from_mode(0o644),
        )
        .unwrap_err();
        assert!(matches!(err, PatchError::Write(_)), "{err:?}");
    }
}
