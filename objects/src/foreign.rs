//! Libraries the process loaded before libpnmpi started, whose own GOT
//! libpnmpi rewrites: the native MPI's Fortran bindings, which call
//! `PMPI_X` directly (Open MPI's `libmpi_mpifh`, MPICH's `mpi_f08` part of
//! `libmpichfort`) and so would skip every module (see `fortran`).

use crate::deps::loaded_named;
use crate::dynsym::DynSymbols;
use crate::image::Image;
use crate::inspect::{self, FileInfo};
use crate::layout;
use goblin::elf::sym::STT_FUNC;
use std::path::PathBuf;

/// A loaded library and what its file says.
pub struct Foreign {
    pub path: PathBuf,
    /// Where its file's address 0 is in memory.
    pub base: usize,
    pub file: FileInfo,
}

impl Foreign {
    /// The in-memory address of the file's virtual address `vaddr`.
    pub fn address(&self, vaddr: u64) -> usize {
        self.base.wrapping_add(vaddr as usize)
    }

    /// `[start, end)` in memory of each function among `names` (each with
    /// its `gnu_hash`) that the library defines (aliases of one function
    /// give one range).
    pub fn functions<'n>(&self, names: impl Iterator<Item = (&'n [u8], u32)>) -> Vec<(usize, usize)> {
        let layout = &self.file.layout;
        // SAFETY: `base` is where the loader placed this library (its
        // `dl_iterate_phdr` entry); a library the process linked at start
        // is never unloaded.
        let image = unsafe { Image::new(self.base, &layout.segments) };
        let Ok(symbols) = DynSymbols::new(&image, &layout.tables, layout.ctx) else {
            return Vec::new();
        };
        let mut ranges: Vec<(usize, usize)> = names
            .filter_map(|(name, hash)| symbols.lookup_symbol(name, hash))
            .filter(|s| s.st_type() == STT_FUNC && s.st_size > 0)
            .map(|s| (self.address(s.st_value), self.address(s.st_value + s.st_size)))
            .collect();
        ranges.sort_unstable();
        ranges.dedup();
        ranges
    }
}

/// Every loaded library whose file name starts with one of `prefixes`,
/// with its dynamic linking tables read.
pub fn loaded(prefixes: &[&str]) -> Result<Vec<Foreign>, String> {
    let mut found = Vec::new();
    for (path, base) in loaded_named(prefixes) {
        let fail = |e: String| format!("{}: {e}", path.display());
        let layout = layout::read(&path).map_err(fail)?;
        let segments = layout.segments.clone();
        // SAFETY: as in `functions`.
        let image = unsafe { Image::new(base, &segments) };
        let file = inspect::read(layout, &image, false).map_err(fail)?;
        found.push(Foreign { path, base, file });
    }
    Ok(found)
}
