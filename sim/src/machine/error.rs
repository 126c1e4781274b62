//! A bad machine file: the file, the line when there is one, what is
//! wrong and what to do; and the translation of TOML's errors into it.

use std::fmt;

/// A bad machine file: where and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineError {
    /// The file, as the user named it.
    pub file: String,
    /// 1-based line, when the error has a place.
    pub line: Option<usize>,
    /// What is wrong and what to do.
    pub what: String,
}

impl fmt::Display for MachineError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{l}: {}", self.file, self.what),
            None => write!(f, "{}: {}", self.file, self.what),
        }
    }
}

impl std::error::Error for MachineError {}

/// Turns a TOML deserialization error into the file, line and message.
pub(super) fn toml_error(file: &str, source: &str, e: &toml::de::Error) -> MachineError {
    let start = e.span().map(|s| s.start.min(source.len()));
    let line = start.map(|s| source[..s].matches('\n').count() + 1);
    // The span points at the bad value (or its table); the message names
    // the unknown or missing key when that is the fault. A bad value's
    // key is what stands before `=` on its line.
    let key = start.and_then(|s| {
        let line_start = source[..s].rfind('\n').map_or(0, |i| i + 1);
        let (k, _) = source[line_start..s].split_once('=')?;
        let k = k.trim();
        (!k.is_empty() && !k.starts_with('{') && !k.contains(' ')).then(|| k.to_owned())
    });
    let what = e.message().trim();
    MachineError {
        file: file.to_owned(),
        line,
        what: match key {
            Some(k) if !what.contains(&format!("`{k}`")) => format!("{k}: {what}"),
            _ => what.to_owned(),
        },
    }
}
