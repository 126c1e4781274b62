//! Table rows of the text report, written cell by cell into the report's
//! `String`: each value is written as it is, then padded to its width with
//! one copy of spaces, where `core::fmt`'s `{:<w}` and `{:>w}` pad a cell
//! one `write_char` at a time. The text is the same as theirs.

use std::fmt::{Display, Write as _};

const SPACES: &str = "                                                                ";

/// One row being written: cells are separated by one space.
pub struct Row<'a> {
    t: &'a mut String,
    cells: usize,
}

impl<'a> Row<'a> {
    pub fn new(t: &'a mut String) -> Row<'a> {
        Row { t, cells: 0 }
    }

    /// Writes `value` as the next cell; returns where it starts and how
    /// many spaces it lacks to fill `width`.
    fn cell(&mut self, value: impl Display, width: usize) -> (usize, usize) {
        if self.cells > 0 {
            self.t.push(' ');
        }
        self.cells += 1;
        let from = self.t.len();
        let _ = write!(self.t, "{value}");
        let written = &self.t[from..];
        let chars = if written.is_ascii() {
            written.len()
        } else {
            written.chars().count()
        };
        (from, width.saturating_sub(chars))
    }

    /// `{:<width}`.
    pub fn left(mut self, value: impl Display, width: usize) -> Self {
        let (_, pad) = self.cell(value, width);
        push_spaces(self.t, pad);
        self
    }

    /// `{:>width}`.
    pub fn right(mut self, value: impl Display, width: usize) -> Self {
        let (from, mut pad) = self.cell(value, width);
        while pad > 0 {
            let k = pad.min(SPACES.len());
            self.t.insert_str(from, &SPACES[..k]);
            pad -= k;
        }
        self
    }

    /// Text after the last cell, as it is (no separator).
    pub fn then(self, text: &str) -> Self {
        self.t.push_str(text);
        self
    }

    /// Ends the row.
    pub fn end(self) {
        self.t.push('\n');
    }
}

fn push_spaces(t: &mut String, mut n: usize) {
    while n > 0 {
        let k = n.min(SPACES.len());
        t.push_str(&SPACES[..k]);
        n -= k;
    }
}
