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
use goblin::container::Ctx;
use goblin::elf::sym::STB_WEAK;
use pnmpi_mpi_sys::{ROUTINE_COUNT, ROUTINE_NAMES};
use std::collections::BTreeSet;
use std::ffi::CString;

/// What a module's file says about it.
#[derive(Debug)]
pub struct FileInfo {
    /// Routine ids of the `PMPI_` routines it imports.
    pub pmpi_imports: RoutineSet,
    /// `(routine id, slot address)` of every GOT slot that holds `PMPI_X`
    /// (what a Fortran binding library calls; see `fortran`).
    pub pmpi_slots: Vec<(usize, u64)>,
    /// Names of `PMPI` imports that are no routine of the native `mpi.h`
    /// (an MPI's extensions, `PMPIX_...`): nothing can bind them.
    pub pmpi_unknown: BTreeSet<String>,
    /// `(routine id, value)` of every `MPI_X` wrapper it defines, by id
    /// (empty unless [`read`] was asked for them).
    pub wraps: Vec<(usize, u64)>,
    /// `(routine id, slot address)` of every GOT slot that holds `XMPI_X`
    /// (PLT and `GLOB_DAT` relocations).
    pub xmpi_slots: Vec<(usize, u64)>,
    /// `XMPI_` references through any other relocation (a function pointer
    /// stored in data), which direct binding cannot follow.
    pub unbindable: BTreeSet<String>,
    /// Does it call `PNMPI_Service_ChangeStack`?
    pub changes_stack: bool,
    /// In a module's file (when [`read`] was asked for its wrappers) linked
    /// for lazy binding, the functions it imports through
    /// its PLT other than the `XMPI_` routines libpnmpi defines (and weak
    /// ones): what the dynamic loader would have looked up at a `-z now`
    /// load, which the loader checks for itself (see its `open`).
    pub lazy_imports: Vec<CString>,
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

/// A set of routine ids, one bit each: inserting the few hundred `PMPI_`
/// imports of a Fortran binding library costs a store each, not a tree
/// node.
#[derive(Debug, Clone, Default)]
pub struct RoutineSet([u64; ROUTINE_COUNT.div_ceil(64)]);

impl RoutineSet {
    pub fn insert(&mut self, id: usize) {
        self.0[id / 64] |= 1 << (id % 64);
    }

    pub fn contains(&self, id: usize) -> bool {
        self.0.get(id / 64).is_some_and(|w| w >> (id % 64) & 1 != 0)
    }
}

/// Slots of [`ROUTINE_IDS`]: a power of two, over four times the routines.
const ID_SLOTS: usize = (4 * ROUTINE_COUNT).next_power_of_two();

/// Bytes of a name [`suffix_hash`] takes at a time.
const WORD: usize = 8;

/// Mixes one little-endian word of a name (its last one padded with
/// zeros) into `hash`, as FxHash does.
const fn mix(hash: u64, word: u64) -> u64 {
    (hash.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95)
}

/// Folds a [`mix`]ed hash to the 32 bits the tables keep.
const fn fold(hash: u64) -> u32 {
    (hash ^ hash >> 32) as u32
}

/// The hash [`routine_id`] computes of a name's suffix, a word at a time
/// (a name holds no NUL, so its zero padding is not part of another's):
/// for the tables built when libpnmpi is compiled.
const fn suffix_hash(name: &[u8]) -> u32 {
    let mut hash = 0;
    let mut at = 0;
    while at < name.len() {
        let mut word = 0u64;
        let mut i = 0;
        while i < WORD && at + i < name.len() {
            word |= (name[at + i] as u64) << (8 * i);
            i += 1;
        }
        hash = mix(hash, word);
        at += WORD;
    }
    fold(hash)
}

/// [`suffix_hash`] of each routine's name without the `MPI_` prefix, by
/// routine id: one lookup in [`ROUTINE_IDS`] serves `PMPI_X` and
/// `XMPI_X`, hashed in the same pass that finds the name's end.
static SUFFIX_HASHES: [u32; ROUTINE_COUNT] = {
    let mut hashes = [0; ROUTINE_COUNT];
    let mut id = 0;
    while id < ROUTINE_COUNT {
        hashes[id] = suffix_hash(ROUTINE_NAMES[id].as_bytes().split_at("MPI_".len()).1);
        id += 1;
    }
    hashes
};

/// Routine ids by [`SUFFIX_HASHES`] (a match is then checked byte for
/// byte; no two routines' suffixes share a hash, see the tests). An open
/// addressing table of `id + 1` (0: empty), probed linearly from the
/// hash's low bits, built when libpnmpi is compiled: a lookup is a probe
/// or two.
static ROUTINE_IDS: [u16; ID_SLOTS] = {
    let mut slots = [0u16; ID_SLOTS];
    let mut id = 0;
    while id < ROUTINE_COUNT {
        let mut at = SUFFIX_HASHES[id] as usize % ID_SLOTS;
        while slots[at] != 0 {
            at = (at + 1) % ID_SLOTS;
        }
        slots[at] = id as u16 + 1;
        id += 1;
    }
    slots
};

/// `gnu_hash` of every routine's `MPI_X` name, by routine id, to find a
/// module's wrappers in its own hash table.
static ROUTINE_HASHES: [u32; ROUTINE_COUNT] = {
    let mut hashes = [0; ROUTINE_COUNT];
    let mut id = 0;
    while id < ROUTINE_COUNT {
        hashes[id] = gnu_hash(ROUTINE_NAMES[id].as_bytes());
        id += 1;
    }
    hashes
};

/// Slots of [`FULL_IDS`], as for [`ROUTINE_IDS`].
const FULL_SLOTS: usize = ID_SLOTS;

/// Routine ids by [`ROUTINE_HASHES`] but the lowest bit (as a GNU hash
/// chain holds them), `id + 1` in an open addressing table probed
/// linearly; names sharing a hash are told apart byte for byte.
static FULL_IDS: [u16; FULL_SLOTS] = {
    let mut slots = [0u16; FULL_SLOTS];
    let mut id = 0;
    while id < ROUTINE_COUNT {
        let mut at = (ROUTINE_HASHES[id] & !1) as usize % FULL_SLOTS;
        while slots[at] != 0 {
            at = (at + 1) % FULL_SLOTS;
        }
        slots[at] = id as u16 + 1;
        id += 1;
    }
    slots
};

/// `(routine id, value)` of every `MPI_X` wrapper `symbols` defines, by
/// id: one pass over its GNU hash chains (each symbol's hash probed in
/// [`FULL_IDS`]), else a lookup of each routine's name.
fn wrappers_of(symbols: &DynSymbols) -> Vec<(usize, u64)> {
    let mut values: Vec<Option<u64>> = vec![None; ROUTINE_COUNT];
    let hashed = symbols.for_each_hashed(|index, hash| {
        let mut at = hash as usize % FULL_SLOTS;
        while let Some(id) = usize::from(FULL_IDS[at]).checked_sub(1) {
            if ROUTINE_HASHES[id] & !1 == hash && values[id].is_none() {
                if let Some(value) = symbols.defined_value(index, ROUTINE_NAMES[id].as_bytes()) {
                    values[id] = Some(value);
                    return;
                }
            }
            at = (at + 1) % FULL_SLOTS;
        }
    });
    if !hashed {
        return ROUTINE_NAMES
            .iter()
            .zip(ROUTINE_HASHES.iter())
            .enumerate()
            .filter_map(|(id, (name, &hash))| Some((id, symbols.lookup(name.as_bytes(), hash)?)))
            .collect();
    }
    values
        .into_iter()
        .enumerate()
        .filter_map(|(id, value)| Some((id, value?)))
        .collect()
}

/// The routine whose name without `MPI_` begins `rest` and ends at its
/// first NUL (`rest` runs on through the string table). Inlined into the
/// pass over a module's relocations, which calls it for each of some 800
/// names.
#[inline(always)]
fn routine_id(rest: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    let mut hash = 0;
    let mut len = 0;
    loop {
        // The next word, zero-padded past the slice's end (a name read to
        // the end of its table ends there).
        let word = match rest.get(len..len + WORD) {
            Some(w) => u64::from_le_bytes(w.try_into().unwrap_or_default()),
            None => {
                let mut w = [0; WORD];
                let tail = rest.get(len..).unwrap_or_default();
                w[..tail.len()].copy_from_slice(tail);
                u64::from_le_bytes(w)
            }
        };
        // The lowest byte this marks is the word's first zero (higher
        // marks may be false).
        let zeros = word.wrapping_sub(ONES) & !word & HIGHS;
        if zeros == 0 {
            hash = mix(hash, word);
            len += WORD;
            continue;
        }
        let bytes = zeros.trailing_zeros() as usize / 8;
        if bytes > 0 {
            hash = mix(hash, word & (u64::MAX >> (64 - 8 * bytes)));
        }
        len += bytes;
        break;
    }
    let hash = fold(hash);
    let mut at = hash as usize % ID_SLOTS;
    let id = loop {
        let id = usize::from(ROUTINE_IDS[at]).checked_sub(1)?;
        if SUFFIX_HASHES[id] == hash {
            break id;
        }
        at = (at + 1) % ID_SLOTS;
    };
    (ROUTINE_NAMES[id].as_bytes()["MPI_".len()..] == rest[..len]).then_some(id)
}

/// Relocation types that fill a GOT slot with a function's address (the
/// PLT's first).
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

/// One relocation: the slot it fills, its symbol's index and its type.
struct Reloc {
    offset: u64,
    sym: usize,
    kind: u32,
}

/// The relocations of a `REL` or `RELA` table's bytes, decoded by hand: a
/// module has thousands (most of them `RELATIVE`, with no symbol), and
/// only their first two words matter here.
fn relocations(bytes: &[u8], is_rela: bool, ctx: Ctx) -> impl Iterator<Item = Reloc> + '_ {
    let wide = ctx.container.is_big();
    let word = if wide { 8 } else { 4 };
    let size = word * if is_rela { 3 } else { 2 };
    let little = ctx.le.is_little();
    // Fixed-width reads: a copy of a run-time length would call memcpy.
    let read = move |b: &[u8]| -> u64 {
        match (wide, little) {
            (true, true) => u64::from_le_bytes(b[..8].try_into().unwrap_or_default()),
            (true, false) => u64::from_be_bytes(b[..8].try_into().unwrap_or_default()),
            (false, true) => u64::from(u32::from_le_bytes(b[..4].try_into().unwrap_or_default())),
            (false, false) => u64::from(u32::from_be_bytes(b[..4].try_into().unwrap_or_default())),
        }
    };
    bytes.chunks_exact(size).map(move |r| {
        let (offset, info) = (read(&r[..word]), read(&r[word..2 * word]));
        let (sym, kind) = if wide {
            (info >> 32, info as u32)
        } else {
            (info >> 8, (info & 0xff) as u32)
        };
        Reloc {
            offset,
            sym: sym as usize,
            kind,
        }
    })
}

/// `bytes` from `skip` on (none if it has fewer).
fn after(bytes: &[u8], skip: u64) -> &[u8] {
    usize::try_from(skip)
        .ok()
        .and_then(|skip| bytes.get(skip..))
        .unwrap_or_default()
}

/// Reads the tables `layout` names from `image`, the loaded object; with
/// `wrappers`, also which `MPI_X` it defines (a module's wrappers; a
/// Fortran binding library's are not needed).
pub fn read(layout: Layout, image: &Image, wrappers: bool) -> Result<FileInfo, String> {
    let ctx = layout.ctx;
    let t = layout.tables;
    let symbols = DynSymbols::new(image, &t, ctx)?;
    let table = |(vaddr, len): Table| -> Result<&[u8], String> {
        if len == 0 {
            return Ok(&[]);
        }
        image
            .from(vaddr)
            .and_then(|b| b.get(..len as usize))
            .ok_or_else(|| {
                format!("its relocations at {vaddr:#x} ({len} bytes) lie outside its readable segments")
            })
    };
    // The leading `RELATIVE` relocations name no symbol: skipped.
    let word: u64 = if ctx.container.is_big() { 8 } else { 4 };
    let tables = [
        (table(t.jmprel)?, t.plt_is_rela),
        (after(table(t.rela)?, t.rela_relative * 3 * word), true),
        (after(table(t.rel)?, t.rel_relative * 2 * word), false),
    ];
    let wraps = if wrappers {
        wrappers_of(&symbols)
    } else {
        Vec::new()
    };
    // Every import the module uses has a relocation, so one pass over them
    // finds the `XMPI_` slots, the `PMPI_` calls and `ChangeStack`.
    let mut xmpi_slots = Vec::new();
    let mut unbindable = BTreeSet::new();
    let mut pmpi_imports = RoutineSet::default();
    let mut pmpi_slots = Vec::new();
    let mut pmpi_unknown = BTreeSet::new();
    let mut changes_stack = false;
    let mut lazy_imports = Vec::new();
    let relocs = tables
        .iter()
        .flat_map(|&(bytes, is_rela)| relocations(bytes, is_rela, ctx))
        .filter(|r| r.sym != 0);
    for r in relocs {
        let Some(name) = symbols.import_name(r.sym) else {
            continue;
        };
        let slot = SLOT_RELOCATIONS.contains(&r.kind);
        if let Some(rest) = name.strip_prefix(b"XMPI_") {
            if let Some(id) = routine_id(rest) {
                if slot {
                    xmpi_slots.push((id, r.offset));
                } else {
                    unbindable.insert(format!("X{}", ROUTINE_NAMES[id]));
                }
                continue;
            }
        }
        if wrappers && !t.bind_now && SLOT_RELOCATIONS.first() == Some(&r.kind) {
            let weak = symbols.get(r.sym).is_some_and(|s| s.st_bind() == STB_WEAK);
            let end = name.iter().position(|&c| c == 0).unwrap_or(name.len());
            if let (false, Ok(name)) = (weak, CString::new(&name[..end])) {
                lazy_imports.push(name);
            }
        }
        if let Some(rest) = name.strip_prefix(b"PMPI") {
            match rest.strip_prefix(b"_").and_then(routine_id) {
                Some(id) => {
                    pmpi_imports.insert(id);
                    if slot {
                        pmpi_slots.push((id, r.offset));
                    }
                }
                None => {
                    let end = name.iter().position(|&c| c == 0).unwrap_or(name.len());
                    pmpi_unknown.insert(String::from_utf8_lossy(&name[..end]).into_owned());
                }
            }
        } else {
            changes_stack |= name.starts_with(b"PNMPI_Service_ChangeStack\0");
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
        lazy_imports,
        layout,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_routine_has_a_hash_of_its_own() {
        let distinct: BTreeSet<u32> = SUFFIX_HASHES.iter().copied().collect();
        assert_eq!(distinct.len(), ROUTINE_NAMES.len());
        assert!(ROUTINE_COUNT < usize::from(u16::MAX));
        for (id, name) in ROUTINE_NAMES.iter().enumerate() {
            let nul = [&name.as_bytes()["MPI_".len()..], b"\0"].concat();
            assert_eq!(routine_id(&nul), Some(id), "{name}");
        }
    }

    #[test]
    fn a_name_is_found_up_to_its_nul_only() {
        let send = ROUTINE_NAMES.iter().position(|&n| n == "MPI_Send").unwrap();
        assert_eq!(routine_id(b"Send\0Recv\0"), Some(send));
        assert_eq!(routine_id(b"Send"), Some(send));
        assert_eq!(routine_id(b"Sendx\0"), None);
        assert_eq!(routine_id(b"Sen\0"), None);
        // A whole word, then its NUL or the slice's end.
        let dup = ROUTINE_NAMES.iter().position(|&n| n == "MPI_Comm_dup").unwrap();
        assert_eq!(routine_id(b"Comm_dup\0Send\0"), Some(dup));
        assert_eq!(routine_id(b"Comm_dup"), Some(dup));
        assert_eq!(routine_id(b"Comm_du\0"), None);
    }

    #[test]
    fn a_routine_set_holds_what_was_inserted() {
        let mut set = RoutineSet::default();
        set.insert(0);
        set.insert(ROUTINE_COUNT - 1);
        assert!(set.contains(0) && set.contains(ROUTINE_COUNT - 1));
        assert!(!set.contains(1) && !set.contains(ROUTINE_COUNT));
    }
}
