//! Reads a module file's dynamic symbols to catch an unpatched PMPI tool:
//! one that defines `MPI_X` and calls `PMPI_X` itself would send every call
//! it wraps straight into MPI, past all the modules below it.

use std::collections::BTreeSet;
use std::path::Path;

/// Names (without prefix) of the `PMPI_` routines `path` imports.
pub fn pmpi_imports(path: &Path) -> Result<BTreeSet<String>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read it: {e}"))?;
    let elf = goblin::elf::Elf::parse(&bytes).map_err(|e| format!("cannot parse it as ELF: {e}"))?;
    Ok(elf
        .dynsyms
        .iter()
        .filter(|s| s.st_shndx == goblin::elf::section_header::SHN_UNDEF as usize)
        .filter_map(|s| {
            elf.dynstrtab
                .get_at(s.st_name)?
                .strip_prefix("PMPI_")
                .map(str::to_string)
        })
        .collect())
}
