//! Table rows of the text report, written cell by cell into the report's
//! `String`: each value's text is padded to its width with one copy of
//! spaces and pushed, without `core::fmt` (its `{:<w}` and `{:>w}` pad a
//! cell one `write_char` at a time, and each `write!` walks its format
//! string). The text is the same as theirs.

use pnmpi_sdk::fixed::Fixed;

const SPACES: &str = "                                                                ";

/// A value of a cell: hands its text (what `{}` writes) to a closure.
pub trait Cell {
    fn with_text<R>(&self, f: impl FnOnce(&str) -> R) -> R;
}

impl Cell for Fixed {
    fn with_text<R>(&self, f: impl FnOnce(&str) -> R) -> R {
        Fixed::with_text(*self, f)
    }
}

impl Cell for str {
    fn with_text<R>(&self, f: impl FnOnce(&str) -> R) -> R {
        f(self)
    }
}

impl Cell for String {
    fn with_text<R>(&self, f: impl FnOnce(&str) -> R) -> R {
        f(self)
    }
}

impl<T: Cell + ?Sized> Cell for &T {
    fn with_text<R>(&self, f: impl FnOnce(&str) -> R) -> R {
        (**self).with_text(f)
    }
}

/// Integers through `itoa`, which writes what `{}` writes.
macro_rules! integer_cells {
    ($($t:ty),*) => {
        $(impl Cell for $t {
            fn with_text<R>(&self, f: impl FnOnce(&str) -> R) -> R {
                f(itoa::Buffer::new().format(*self))
            }
        })*
    };
}

integer_cells!(i32, u32, u64, usize);

/// The characters `{:w}` counts in `text`.
fn width_of(text: &str) -> usize {
    if text.is_ascii() {
        text.len()
    } else {
        text.chars().count()
    }
}

/// `{:>width}` of `value`, pushed.
pub fn push_right(t: &mut String, value: impl Cell, width: usize) {
    value.with_text(|text| {
        push_spaces(t, width.saturating_sub(width_of(text)));
        t.push_str(text);
    });
}

/// `{:<width}` of `value`, pushed.
pub fn push_left(t: &mut String, value: impl Cell, width: usize) {
    value.with_text(|text| {
        t.push_str(text);
        push_spaces(t, width.saturating_sub(width_of(text)));
    });
}

/// One row being written: cells are separated by one space.
pub struct Row<'a> {
    t: &'a mut String,
    cells: usize,
}

impl<'a> Row<'a> {
    pub fn new(t: &'a mut String) -> Row<'a> {
        Row { t, cells: 0 }
    }

    /// Separates the next cell from the last.
    fn next(&mut self) {
        if self.cells > 0 {
            self.t.push(' ');
        }
        self.cells += 1;
    }

    /// `{:<width}`.
    pub fn left(mut self, value: impl Cell, width: usize) -> Self {
        self.next();
        push_left(self.t, value, width);
        self
    }

    /// `{:>width}`.
    pub fn right(mut self, value: impl Cell, width: usize) -> Self {
        self.next();
        push_right(self.t, value, width);
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

/// `n` spaces, pushed.
pub fn push_spaces(t: &mut String, mut n: usize) {
    while n > 0 {
        let k = n.min(SPACES.len());
        t.push_str(&SPACES[..k]);
        n -= k;
    }
}
