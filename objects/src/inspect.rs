//! Everything libpnmpi needs from a module's dynamic linking tables, read
//! once per file (private copies share it): which `PMPI_` routines it
//! imports (to catch an unpatched PMPI tool), which `MPI_X` it defines,
//! and where its `XMPI_X` GOT slots are (for direct binding).
//!
//! The tables are read from the loaded image (see `image`), and the
//! wrappers are found through the module's own symbol hash table (see
//! `dynsym`), so loading 100 modules costs a few probes per routine, not a
//! pass over their files.

use crate::dynsym::{gnu_hash, DynSymbols};
use crate::image::Image;
use crate::layout::{Layout, Table};
use goblin::elf::section_header::SHN_UNDEF;
use goblin::elf::RelocSection;
use once_cell::sync::Lazy;
use pnmpi_mpi_sys::ROUTINE_NAMES;
use rustc_hash::FxHashMap;
use std::collections::BTreeSet;

/// What a module's file says about it.
#[derive(Debug)]
pub struct FileInfo {
    /// Routine ids of the `PMPI_` routines it imports.
    pub pmpi_imports: BTreeSet<usize>,
    /// `(routine id, slot address)` of every GOT slot that holds `PMPI_X`
    /// (what a Fortran binding library calls; see `fortran`).
    pub pmpi_slots: Vec<(usize, u64)>,
    /// Names of `PMPI` imports that are no routine of the native `mpi.h`
    /// (an MPI's extensions, `PMPIX_...`): nothing can bind them.
    pub pmpi_unknown: BTreeSet<String>,
    /// `(routine id, value)` of every `MPI_X` wrapper it defines, by id.
    pub wraps: Vec<(usize, u64)>,
    /// `(routine id, slot address)` of every GOT slot that holds `XMPI_X`
    /// (PLT and `GLOB_DAT` relocations).
    pub xmpi_slots: Vec<(usize, u64)>,
    /// `XMPI_` references through any other relocation (a function pointer
    /// stored in data), which direct binding cannot follow.
    pub unbindable: BTreeSet<String>,
    /// Does it call `PNMPI_Service_ChangeStack`?
    pub changes_stack: bool,
    /// Where its segments and tables are, from its headers.
    pub layout: Layout,
}

impl FileInfo {
    /// Whether it calls the chain (`XMPI_`): a pnmpi module, or a library
    /// of one, rather than a plain PMPI tool.
    pub fn calls_chain(&self) -> bool {
        !self.xmpi_slots.is_empty() || !self.unbindable.is_empty()
    }
}

/// Routine ids by name without the `MPI_` prefix, so that one lookup
/// serves `PMPI_X` and `XMPI_X`. Fx hashing: the keys are short and not
/// chosen by an adversary.
static ROUTINE_IDS: Lazy<FxHashMap<&'static [u8], usize>> = Lazy::new(|| {
    ROUTINE_NAMES
        .iter()
        .enumerate()
        .map(|(id, name)| (&name.as_bytes()["MPI_".len()..], id))
        .collect()
});

/// `gnu_hash` of every routine's `MPI_X` name, by routine id: computed
/// once, used for every module.
static ROUTINE_HASHES: Lazy<Vec<u32>> =
    Lazy::new(|| ROUTINE_NAMES.iter().map(|n| gnu_hash(n.as_bytes())).collect());

fn routine_id(suffix: Option<&[u8]>) -> Option<usize> {
    ROUTINE_IDS.get(suffix?).copied()
}

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

/// Reads the tables `layout` names from `image`, the loaded object.
pub fn read(layout: Layout, image: &Image) -> Result<FileInfo, String> {
    let ctx = layout.ctx;
    let t = layout.tables;
    let symbols = DynSymbols::new(image, &t, ctx)?;
    let relocations = |(vaddr, len): Table, is_rela: bool| -> Result<RelocSection, String> {
        if len == 0 {
            return Ok(RelocSection::default());
        }
        let bytes = image
            .from(vaddr)
            .and_then(|b| b.get(..len as usize))
            .ok_or_else(|| {
                format!("its relocations at {vaddr:#x} ({len} bytes) lie outside its readable segments")
            })?;
        RelocSection::parse(bytes, 0, len as usize, is_rela, ctx)
            .map_err(|e| format!("cannot parse its relocations: {e}"))
    };
    let relocations = [
        relocations(t.jmprel, t.plt_is_rela)?,
        relocations(t.rela, true)?,
        relocations(t.rel, false)?,
    ];
    let wraps = ROUTINE_NAMES
        .iter()
        .zip(ROUTINE_HASHES.iter())
        .enumerate()
        .filter_map(|(id, (name, &hash))| Some((id, symbols.lookup(name.as_bytes(), hash)?)))
        .collect();
    // Every import the module uses has a relocation, so one pass over them
    // finds the `XMPI_` slots, the `PMPI_` calls and `ChangeStack`.
    let mut xmpi_slots = Vec::new();
    let mut unbindable = BTreeSet::new();
    let mut pmpi_imports = BTreeSet::new();
    let mut pmpi_slots = Vec::new();
    let mut pmpi_unknown = BTreeSet::new();
    let mut changes_stack = false;
    for r in relocations.iter().flat_map(|s| s.iter()).filter(|r| r.r_sym != 0) {
        let Some(sym) = symbols.get(r.r_sym).filter(|s| s.st_shndx == SHN_UNDEF as usize) else {
            continue;
        };
        if let Some(id) = routine_id(symbols.name_after(&sym, b"XMPI_")) {
            if SLOT_RELOCATIONS.contains(&r.r_type) {
                xmpi_slots.push((id, r.r_offset));
            } else {
                unbindable.insert(format!("X{}", ROUTINE_NAMES[id]));
            }
        } else if let Some(id) = routine_id(symbols.name_after(&sym, b"PMPI_")) {
            pmpi_imports.insert(id);
            if SLOT_RELOCATIONS.contains(&r.r_type) {
                pmpi_slots.push((id, r.r_offset));
            }
        } else if symbols.name_after(&sym, b"PMPI").is_some() {
            pmpi_unknown.insert(String::from_utf8_lossy(symbols.name(&sym)).into_owned());
        } else {
            changes_stack |= symbols.name_after(&sym, b"PNMPI_Service_ChangeStack") == Some(b"");
        }
    }
    Ok(FileInfo {
        pmpi_imports,
        pmpi_slots,
        pmpi_unknown,
        wraps,
        xmpi_slots,
        unbindable,
        changes_stack,
        layout,
    })
}
