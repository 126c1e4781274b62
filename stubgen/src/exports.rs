//! Reads which `PMPI_` routines the native library really exports: headers
//! declare some that the library lacks, and a stub for those would not link.

use crate::error::{Error, Result};
use std::collections::BTreeSet;
use std::path::Path;

/// Names (without the `PMPI_` prefix) of the defined dynamic `PMPI_` symbols.
pub fn exported_pmpi(library: &Path) -> Result<BTreeSet<String>> {
    let err = |detail: String| Error::Library {
        path: library.to_path_buf(),
        detail,
    };
    let bytes = std::fs::read(library).map_err(|e| err(e.to_string()))?;
    let elf = goblin::elf::Elf::parse(&bytes).map_err(|e| err(e.to_string()))?;
    let mut names = BTreeSet::new();
    for sym in elf.dynsyms.iter() {
        if sym.st_shndx == goblin::elf::section_header::SHN_UNDEF as usize {
            continue;
        }
        if let Some(name) = elf
            .dynstrtab
            .get_at(sym.st_name)
            .and_then(|n| n.strip_prefix("PMPI_"))
        {
            names.insert(name.to_string());
        }
    }
    Ok(names)
}
