//! Errors. Every decoding error names the file and the byte offset where
//! the data stopped making sense, so that a user can tell a truncated copy
//! from a corrupt one, and a reader never panics on bad input.

use std::fmt;

/// Bad data at a byte offset, before the file name is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    /// Offset from the start of the file.
    pub offset: u64,
    /// What was wrong.
    pub what: String,
}

impl Malformed {
    /// An error at `offset`.
    pub fn new(offset: u64, what: impl Into<String>) -> Malformed {
        Malformed {
            offset,
            what: what.into(),
        }
    }

    /// Names the file.
    pub fn in_file(self, file: &str) -> Error {
        Error::Corrupt {
            file: file.to_owned(),
            offset: self.offset,
            what: self.what,
        }
    }
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "byte {}: {}", self.offset, self.what)
    }
}

/// Any failure of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file could not be read or written.
    #[error("{file}: {error}")]
    Io {
        /// The file.
        file: String,
        /// The system's error (in the message, so not also a `source`).
        error: std::io::Error,
    },
    /// The file's content is not a valid trace.
    #[error("{file}: byte {offset}: {what}")]
    Corrupt {
        /// The file.
        file: String,
        /// Offset from the start of the file.
        offset: u64,
        /// What was wrong.
        what: String,
    },
    /// Valid files that do not belong together, or a request that cannot
    /// be met (e.g. no rank files in a folder).
    #[error("{0}")]
    Invalid(String),
}

impl Error {
    /// An I/O error on `file`.
    pub fn io(file: impl fmt::Display, error: std::io::Error) -> Error {
        Error::Io {
            file: file.to_string(),
            error,
        }
    }
}

/// This crate's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;
