//! Everything libpnmpi needs from a module's dynamic linking tables, read
//! once per file (private copies share it): which `PMPI_` routines it
//! imports (to catch an unpatched PMPI tool), which `MPI_X` and hooks it
//! defines, and where its `XMPI_X` GOT slots are (for direct binding).
//!
//! The tables are read from the loaded image (see `image`), so loading 100
//! modules costs what their symbol tables cost, not what their files weigh.

use super::image::Image;
use super::layout::{Layout, Table, Tables};
use goblin::container::Ctx;
use goblin::elf::section_header::SHN_UNDEF;
use goblin::elf::{RelocSection, Symtab};
use once_cell::sync::Lazy;
use pnmpi_mpi_sys::ROUTINE_NAMES;
use rustc_hash::FxHashMap;
use scroll::ctx::SizeWith;
use scroll::Pread;
use std::collections::{BTreeSet, HashMap};
use std::ffi::CStr;

/// What a module's file says about it.
#[derive(Debug)]
pub struct FileInfo {
    /// Routine ids of the `PMPI_` routines it imports.
    pub pmpi_imports: BTreeSet<usize>,
    /// `(routine id, value)` of every `MPI_X` wrapper it defines, by id.
    pub wraps: Vec<(usize, u64)>,
    /// Its other defined dynamic symbols (hooks, `PNMPI_ModuleName`) by
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
    /// Where its segments are, from its headers.
    pub layout: Layout,
}

impl FileInfo {
    /// The value of the symbol `name` if the file defines it.
    pub fn symbol(&self, name: &str) -> Option<u64> {
        match routine_id(name.as_bytes().strip_prefix(b"MPI_")) {
            Some(id) => self.wraps.iter().find(|&&(w, _)| w == id).map(|&(_, v)| v),
            None => self.defined.get(name).copied(),
        }
    }
}

/// Routine ids by name without the `MPI_` prefix, so that one lookup
/// serves `MPI_X`, `PMPI_X` and `XMPI_X`. Fx hashing: every symbol of
/// every module is looked up, and these keys are not attacker-chosen.
static ROUTINE_IDS: Lazy<FxHashMap<&'static [u8], usize>> = Lazy::new(|| {
    ROUTINE_NAMES
        .iter()
        .enumerate()
        .map(|(id, name)| (&name.as_bytes()["MPI_".len()..], id))
        .collect()
});

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
    let table = |(vaddr, len): Table, what: &str| -> Result<&[u8], String> {
        image
            .from(vaddr)
            .and_then(|b| b.get(..len as usize))
            .ok_or_else(|| {
                format!("its {what} at {vaddr:#x} ({len} bytes) lie outside its readable segments")
            })
    };
    let relocations = |at: Table, is_rela: bool| -> Result<RelocSection, String> {
        if at.1 == 0 {
            return Ok(RelocSection::default());
        }
        RelocSection::parse(table(at, "relocations")?, 0, at.1 as usize, is_rela, ctx)
            .map_err(|e| format!("cannot parse its relocations: {e}"))
    };
    let relocations = [
        relocations(t.jmprel, t.plt_is_rela)?,
        relocations(t.rela, true)?,
        relocations(t.rel, false)?,
    ];
    let referenced = relocations
        .iter()
        .flat_map(|s| s.iter())
        .map(|r| r.r_sym + 1)
        .max();
    let count = symbol_count(image, &t, ctx)?.max(referenced.unwrap_or(0));
    let symbol_size = goblin::elf::sym::Sym::size_with(&ctx) as u64;
    let symbols = table((t.symtab, count as u64 * symbol_size), "dynamic symbols")?;
    let symbols = Symtab::parse(symbols, 0, count, ctx)
        .map_err(|e| format!("cannot parse its dynamic symbols: {e}"))?;
    let strtab = table(t.strtab, "dynamic strings")?;
    let name_at = |offset: usize| -> &[u8] {
        strtab
            .get(offset..)
            .and_then(|s| CStr::from_bytes_until_nul(s).ok())
            .map_or(&[], CStr::to_bytes)
    };
    let mut info = FileInfo {
        pmpi_imports: BTreeSet::new(),
        wraps: Vec::new(),
        defined: HashMap::new(),
        xmpi_slots: Vec::new(),
        unbindable: BTreeSet::new(),
        changes_stack: false,
        layout,
    };
    // The routine each symbol index imports as `XMPI_X`, for the relocations.
    let mut xmpi_of_symbol = vec![None; count];
    for (index, s) in symbols.iter().enumerate() {
        let name = name_at(s.st_name);
        if s.st_shndx == SHN_UNDEF as usize {
            if let Some(id) = routine_id(name.strip_prefix(b"PMPI_")) {
                info.pmpi_imports.insert(id);
            }
            xmpi_of_symbol[index] = routine_id(name.strip_prefix(b"XMPI_"));
            info.changes_stack |= name == b"PNMPI_Service_ChangeStack";
        } else if let Some(id) = routine_id(name.strip_prefix(b"MPI_")) {
            info.wraps.push((id, s.st_value));
        } else if let Ok(name) = std::str::from_utf8(name) {
            if !name.is_empty() {
                info.defined.insert(name.to_string(), s.st_value);
            }
        }
    }
    // In routine order, once each, as the chain expects.
    info.wraps.sort_unstable();
    info.wraps.dedup_by_key(|&mut (id, _)| id);
    for r in relocations.iter().flat_map(|s| s.iter()) {
        let Some(id) = xmpi_of_symbol.get(r.r_sym).copied().flatten() else {
            continue;
        };
        if SLOT_RELOCATIONS.contains(&r.r_type) {
            info.xmpi_slots.push((id, r.r_offset));
        } else {
            info.unbindable.insert(format!("X{}", ROUTINE_NAMES[id]));
        }
    }
    Ok(info)
}

/// How many dynamic symbols there are: the dynamic section gives no count,
/// so, as the dynamic loader does, it comes from the symbol hash table.
/// In a GNU hash table, the symbol with the largest bucket index starts
/// the last chain, and a chain ends at a hash value with its low bit set.
fn symbol_count(image: &Image, t: &Tables, ctx: Ctx) -> Result<usize, String> {
    let Some((vaddr, bytes)) = t
        .gnu_hash
        .or(t.hash)
        .map(|v| (v, image.from(v).unwrap_or_default()))
    else {
        return Ok(0);
    };
    let word = |offset: usize| -> Result<usize, String> {
        bytes
            .pread_with::<u32>(offset, ctx.le)
            .map(|w| w as usize)
            .map_err(|_| format!("its symbol hash table at {vaddr:#x} is cut short at byte {offset}"))
    };
    if t.gnu_hash.is_none() {
        // A SysV hash table's second word is the number of symbols.
        return word(4);
    }
    let (buckets, first, bloom_words) = (word(0)?, word(4)?, word(8)?);
    let bloom_word = if ctx.container.is_big() { 8 } else { 4 };
    let bucket_at = 16 + bloom_words * bloom_word;
    let mut last = 0;
    for b in 0..buckets {
        last = last.max(word(bucket_at + 4 * b)?);
    }
    if last < first {
        return Ok(first);
    }
    let chain_at = bucket_at + 4 * buckets;
    while word(chain_at + 4 * (last - first))? & 1 == 0 {
        last += 1;
    }
    Ok(last + 1)
}
