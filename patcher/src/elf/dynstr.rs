//! The strings of `.dynstr`, each read with its file offset and checked
//! to end inside the table.

use super::validate::corrupt;
use crate::error::PatchError;

/// A NUL-terminated string in `.dynstr`, located in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DynString {
    /// The bytes before the NUL, shown lossily when not UTF-8.
    pub text: String,
    /// File offset of the first byte.
    pub offset: usize,
    /// Length in bytes, without the NUL.
    pub len: usize,
}

/// Where `.dynstr` lies in the file.
pub(crate) struct DynStr<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) start: usize,
    pub(super) size: usize,
}

impl DynStr<'_> {
    /// Reads the string at `index`; `what` and `at` describe the reference for error messages.
    pub(crate) fn string_at(&self, index: usize, what: &str, at: usize) -> Result<DynString, PatchError> {
        if index >= self.size {
            return Err(corrupt(
                format!(
                    "{what} points at .dynstr index 0x{index:x}, beyond its size 0x{:x}",
                    self.size
                ),
                at,
            ));
        }
        let offset = self.start + index;
        let table = &self.bytes[offset..self.start + self.size];
        let len = table.iter().position(|&b| b == 0).ok_or_else(|| {
            corrupt(
                format!("{what} names a string that runs past the end of .dynstr"),
                offset,
            )
        })?;
        Ok(DynString {
            text: String::from_utf8_lossy(&table[..len]).into_owned(),
            offset,
            len,
        })
    }
}
