//! Everything libpnmpi needs from a module's file, read once per file
//! (private copies share it): which `PMPI_` routines it imports (to catch
//! an unpatched PMPI tool), which `MPI_X` and hooks it defines, where its
//! `XMPI_X` GOT slots are (for direct binding), and its segments.
//!
//! Reading the dynamic symbols from the file, rather than asking `dlsym`
//! for every routine name, keeps loading linear in the number of modules.

use goblin::elf::program_header::{PT_GNU_RELRO, PT_LOAD};
use goblin::elf::section_header::SHN_UNDEF;
use goblin::elf::Elf;
use once_cell::sync::Lazy;
use pnmpi_mpi_sys::ROUTINE_NAMES;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

/// A range of the file's virtual addresses, before relocation by the
/// load base.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub start: u64,
    pub len: u64,
}

impl Span {
    pub fn end(self) -> u64 {
        self.start + self.len
    }
}

/// What a module's file says about it.
#[derive(Debug, Default)]
pub struct FileInfo {
    /// Names (without prefix) of the `PMPI_` routines it imports.
    pub pmpi_imports: BTreeSet<String>,
    /// Defined dynamic symbols (wrappers, hooks, `PNMPI_ModuleName`) by
    /// their value.
    pub defined: HashMap<String, u64>,
    /// `(routine id, slot address)` of every GOT slot that holds `XMPI_X`
    /// (PLT and `GLOB_DAT` relocations).
    pub xmpi_slots: Vec<(usize, u64)>,
    /// `XMPI_` references through any other relocation (a function pointer
    /// stored in data), which direct binding cannot follow.
    pub unbindable: BTreeSet<String>,
    /// Does it call `PNMPI_Service_ChangeStack`?
    pub changes_stack: bool,
    /// Its `PT_LOAD` segments in memory.
    pub segments: Vec<Span>,
    /// The part the loader makes read-only after relocation.
    pub relro: Option<Span>,
    /// Bytes of the file the loader reads: a private copy needs no more.
    pub loaded_bytes: u64,
}

/// Routine ids by `XMPI_` name.
static XMPI_IDS: Lazy<HashMap<String, usize>> = Lazy::new(|| {
    ROUTINE_NAMES
        .iter()
        .enumerate()
        .map(|(id, name)| (format!("X{name}"), id))
        .collect()
});

/// Relocation types that fill a GOT slot with a function's address.
#[cfg(target_arch = "x86_64")]
const SLOT_RELOCATIONS: [u32; 2] = [
    goblin::elf::reloc::R_X86_64_JUMP_SLOT,
    goblin::elf::reloc::R_X86_64_GLOB_DAT,
];
#[cfg(target_arch = "aarch64")]
const SLOT_RELOCATIONS: [u32; 2] = [
    goblin::elf::reloc::R_AARCH64_JUMP_SLOT,
    goblin::elf::reloc::R_AARCH64_GLOB_DAT,
];
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const SLOT_RELOCATIONS: [u32; 0] = [];

/// Reads `path`.
pub fn read(path: &Path) -> Result<FileInfo, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read it: {e}"))?;
    let elf = Elf::parse(&bytes).map_err(|e| format!("cannot parse it as ELF: {e}"))?;
    let name_of = |sym: usize| -> Option<&str> {
        let s = elf.dynsyms.get(sym)?;
        elf.dynstrtab.get_at(s.st_name)
    };
    let mut info = FileInfo::default();
    for s in elf.dynsyms.iter() {
        let Some(name) = elf.dynstrtab.get_at(s.st_name) else {
            continue;
        };
        if s.st_shndx == SHN_UNDEF as usize {
            if let Some(routine) = name.strip_prefix("PMPI_") {
                info.pmpi_imports.insert(routine.to_string());
            }
            info.changes_stack |= name == "PNMPI_Service_ChangeStack";
        } else {
            info.defined.insert(name.to_string(), s.st_value);
        }
    }
    for r in elf
        .pltrelocs
        .iter()
        .chain(elf.dynrelas.iter())
        .chain(elf.dynrels.iter())
    {
        let Some(id) = name_of(r.r_sym).and_then(|n| XMPI_IDS.get(n)) else {
            continue;
        };
        if SLOT_RELOCATIONS.contains(&r.r_type) {
            info.xmpi_slots.push((*id, r.r_offset));
        } else {
            info.unbindable.insert(format!("X{}", ROUTINE_NAMES[*id]));
        }
    }
    for ph in &elf.program_headers {
        let span = Span {
            start: ph.p_vaddr,
            len: ph.p_memsz,
        };
        match ph.p_type {
            PT_LOAD => info.segments.push(span),
            PT_GNU_RELRO => info.relro = Some(span),
            _ => {}
        }
        info.loaded_bytes = info.loaded_bytes.max(ph.p_offset + ph.p_filesz);
    }
    let headers = elf.header.e_phoff + u64::from(elf.header.e_phnum) * u64::from(elf.header.e_phentsize);
    info.loaded_bytes = info.loaded_bytes.max(headers);
    Ok(info)
}
