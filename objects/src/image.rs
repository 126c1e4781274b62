//! A loaded object's readable segments as byte slices: the dynamic
//! linking tables are read where the dynamic loader mapped (and has just
//! read) them, with no file I/O and no copy.

use crate::layout::Segment;

/// The readable segments of an object loaded at `base`.
pub struct Image<'a> {
    base: usize,
    segments: &'a [Segment],
}

impl<'a> Image<'a> {
    /// # Safety
    /// `segments` must be the `PT_LOAD` segments of an object loaded at
    /// `base`, and the object must stay loaded (libpnmpi never closes a
    /// module or its libraries) while the slices [`Image::from`] returns
    /// are used.
    pub unsafe fn new(base: usize, segments: &'a [Segment]) -> Image<'a> {
        Image { base, segments }
    }

    /// The bytes from the file's virtual address `vaddr` to the end of the
    /// file-backed part of its segment, if that segment is readable.
    pub fn from(&self, vaddr: u64) -> Option<&'a [u8]> {
        let s = self.segments.iter().find(|s| {
            s.readable && (s.memory.start..s.memory.start.saturating_add(s.file_len)).contains(&vaddr)
        })?;
        let len = (s.memory.start + s.file_len - vaddr) as usize;
        let address = self.base.wrapping_add(vaddr as usize);
        // SAFETY: by `new`'s contract the segment is mapped readable at
        // `base + p_vaddr` for at least `p_filesz` bytes for as long as the
        // slice is used, and `vaddr .. vaddr + len` lies within it. What we
        // read there (symbol, string and relocation tables, hash tables)
        // nobody writes once the object is loaded.
        Some(unsafe { std::slice::from_raw_parts(address as *const u8, len) })
    }
}
