//! A loaded object's dynamic symbol table, searched the way the dynamic
//! loader searches it: through its GNU (or SysV) hash table, so that
//! finding the `MPI_X` a module defines costs a few probes per routine
//! rather than a pass over every symbol.

use crate::image::Image;
use crate::layout::Tables;
use goblin::container::Ctx;
use goblin::elf::section_header::SHN_UNDEF;
use goblin::elf::sym::Sym;
use scroll::ctx::SizeWith;
use scroll::Pread;

/// The hash function of `DT_GNU_HASH` tables (djb2); `const`, so that
/// the routine table's hashes are computed when libpnmpi is compiled.
pub const fn gnu_hash(name: &[u8]) -> u32 {
    let mut hash = 5381u32;
    let mut at = 0;
    while at < name.len() {
        hash = hash.wrapping_mul(33).wrapping_add(name[at] as u32);
        at += 1;
    }
    hash
}

/// The hash function of SysV `DT_HASH` tables.
fn sysv_hash(name: &[u8]) -> u32 {
    name.iter().fold(0u32, |h, &c| {
        let h = (h << 4).wrapping_add(u32::from(c));
        (h ^ ((h & 0xf000_0000) >> 24)) & 0x0fff_ffff
    })
}

enum Hash<'a> {
    Gnu {
        table: &'a [u8],
        buckets: usize,
        first: usize,
        bloom_words: usize,
        shift: u32,
    },
    Sysv {
        table: &'a [u8],
        buckets: usize,
    },
}

/// The dynamic symbols of one loaded object.
pub struct DynSymbols<'a> {
    ctx: Ctx,
    symbols: &'a [u8],
    strings: &'a [u8],
    hash: Hash<'a>,
}

impl<'a> DynSymbols<'a> {
    /// The symbol table `tables` names, in `image`.
    pub fn new(image: &Image<'a>, tables: &Tables, ctx: Ctx) -> Result<DynSymbols<'a>, String> {
        let (gnu, sysv) = (tables.gnu_hash, tables.hash);
        let at = gnu.or(sysv).ok_or("it has no symbol hash table")?;
        let table = image
            .from(at)
            .ok_or_else(|| format!("its symbol hash table at {at:#x} lies outside its readable segments"))?;
        let word = |i: usize| word(table, i, ctx);
        let hash = if gnu.is_some() {
            Hash::Gnu {
                table,
                buckets: word(0)?,
                first: word(1)?,
                bloom_words: word(2)?,
                shift: word(3)? as u32,
            }
        } else {
            Hash::Sysv {
                table,
                buckets: word(0)?,
            }
        };
        let strings = image
            .from(tables.strtab.0)
            .and_then(|s| s.get(..tables.strtab.1 as usize))
            .ok_or("its dynamic string table lies outside its readable segments")?;
        let symbols = image
            .from(tables.symtab)
            .ok_or("its dynamic symbol table lies outside its readable segments")?;
        Ok(DynSymbols {
            ctx,
            symbols,
            strings,
            hash,
        })
    }

    /// Symbol `index`.
    pub fn get(&self, index: usize) -> Option<Sym> {
        self.symbols
            .pread_with(index * Sym::size_with(&self.ctx), self.ctx)
            .ok()
    }

    /// The string table from the name of symbol `index` on (its name, its
    /// NUL, and what follows), if the object imports that symbol (it is
    /// undefined here). Reads only the two fields it needs: the loader
    /// layer calls it for every relocation of a module.
    pub fn import_name(&self, index: usize) -> Option<&'a [u8]> {
        let (name, shndx) = self.name_and_section(index)?;
        if usize::from(shndx) != SHN_UNDEF as usize {
            return None;
        }
        self.strings.get(name as usize..)
    }

    /// Symbol `index`'s name offset and section index, read by hand (a
    /// whole `Sym` through `scroll` costs several times more, and lookups
    /// test a symbol or two for each of some 450 routines a module).
    fn name_and_section(&self, index: usize) -> Option<(u32, u16)> {
        let wide = self.ctx.container.is_big();
        let (size, shndx_at) = if wide { (24, 6) } else { (16, 14) };
        let at = index.checked_mul(size)?;
        let entry = self.symbols.get(at..at + size)?;
        let name: [u8; 4] = entry[..4].try_into().ok()?;
        let shndx: [u8; 2] = entry[shndx_at..shndx_at + 2].try_into().ok()?;
        Some(if self.ctx.le.is_little() {
            (u32::from_le_bytes(name), u16::from_le_bytes(shndx))
        } else {
            (u32::from_be_bytes(name), u16::from_be_bytes(shndx))
        })
    }

    /// Calls `f(index, hash)` for each symbol of the GNU hash table, in
    /// index order, `hash` its `gnu_hash` but the lowest bit (which ends a
    /// chain); `false` without a GNU hash table. Going once through the
    /// chains, whose words are the symbols' hashes, finds the routines a
    /// module defines without hashing or probing for each routine.
    pub fn for_each_hashed(&self, mut f: impl FnMut(usize, u32)) -> bool {
        let Hash::Gnu {
            table,
            buckets,
            first,
            bloom_words,
            ..
        } = self.hash
        else {
            return false;
        };
        let bits = if self.ctx.container.is_big() { 64 } else { 32 };
        let bucket_at = 4 + bloom_words * bits / 32;
        let chain_at = bucket_at + buckets;
        // The last chain starts at the largest bucket's index and ends at
        // the first word with the low bit set.
        let last = (0..buckets)
            .filter_map(|b| word(table, bucket_at + b, self.ctx).ok())
            .filter(|&start| start != 0)
            .max();
        let Some(last) = last.filter(|&last| last >= first) else {
            // Every bucket empty: no symbol is hashed.
            return true;
        };
        // The chain's words read in one pass, their byte order settled once.
        let chain = table.get(chain_at * 4..).unwrap_or_default();
        let little = self.ctx.le.is_little();
        for (index, w) in (first..).zip(chain.chunks_exact(4)) {
            let w = w.try_into().unwrap_or_default();
            let h = if little {
                u32::from_le_bytes(w)
            } else {
                u32::from_be_bytes(w)
            };
            f(index, h & !1);
            if index >= last && h & 1 != 0 {
                break;
            }
        }
        true
    }

    /// The value of symbol `index` if it is defined here and named `name`.
    pub fn defined_value(&self, index: usize, name: &[u8]) -> Option<u64> {
        self.defines(index, name)?;
        let wide = self.ctx.container.is_big();
        let (size, value_at, value_len) = if wide { (24, 8, 8) } else { (16, 4, 4) };
        let entry = self.symbols.get(index * size..index * size + size)?;
        let bytes = &entry[value_at..value_at + value_len];
        let little = self.ctx.le.is_little();
        Some(match (wide, little) {
            (true, true) => u64::from_le_bytes(bytes.try_into().ok()?),
            (true, false) => u64::from_be_bytes(bytes.try_into().ok()?),
            (false, true) => u64::from(u32::from_le_bytes(bytes.try_into().ok()?)),
            (false, false) => u64::from(u32::from_be_bytes(bytes.try_into().ok()?)),
        })
    }

    /// `Some` if symbol `index` is defined here and named `name`.
    fn defines(&self, index: usize, name: &[u8]) -> Option<()> {
        let (at, shndx) = self.name_and_section(index)?;
        (usize::from(shndx) != SHN_UNDEF as usize && self.named(at, name)).then_some(())
    }

    /// Is the string at `offset` of the string table `name`?
    fn named(&self, offset: u32, name: &[u8]) -> bool {
        let at = self.strings.get(offset as usize..).unwrap_or_default();
        at.len() > name.len() && at[name.len()] == 0 && at[..name.len()] == *name
    }

    /// The value of the symbol `name` the object defines; `gnu` is
    /// `gnu_hash(name)`, given so that callers can hash once for many
    /// objects.
    pub fn lookup(&self, name: &[u8], gnu: u32) -> Option<u64> {
        self.lookup_symbol(name, gnu).map(|s| s.st_value)
    }

    /// The symbol `name` the object defines, with its size and type.
    pub fn lookup_symbol(&self, name: &[u8], gnu: u32) -> Option<Sym> {
        let defined = |index: usize| {
            self.defines(index, name)?;
            self.get(index)
        };
        let word = |table: &[u8], i: usize| word(table, i, self.ctx).ok();
        match self.hash {
            Hash::Gnu {
                table,
                buckets,
                first,
                bloom_words,
                shift,
            } => {
                if buckets == 0 || bloom_words == 0 {
                    return None;
                }
                let bits = if self.ctx.container.is_big() { 64 } else { 32 };
                let bloom_at = 16 + (gnu as usize / bits % bloom_words) * bits / 8;
                let bloom: u64 = if bits == 64 {
                    table.pread_with(bloom_at, self.ctx.le).ok()?
                } else {
                    u64::from(table.pread_with::<u32>(bloom_at, self.ctx.le).ok()?)
                };
                let (one, two) = (gnu as usize % bits, (gnu >> shift) as usize % bits);
                if bloom >> one & bloom >> two & 1 == 0 {
                    return None;
                }
                let bucket_at = 4 + bloom_words * bits / 32;
                let mut index = word(table, bucket_at + gnu as usize % buckets)?;
                if index < first {
                    return None;
                }
                let chain_at = bucket_at + buckets;
                loop {
                    let h = word(table, chain_at + index - first)? as u32;
                    if h | 1 == gnu | 1 {
                        if let Some(value) = defined(index) {
                            return Some(value);
                        }
                    }
                    if h & 1 != 0 {
                        return None;
                    }
                    index += 1;
                }
            }
            Hash::Sysv { table, buckets } => {
                if buckets == 0 {
                    return None;
                }
                let chains = word(table, 1)?;
                let mut index = word(table, 2 + sysv_hash(name) as usize % buckets)?;
                let mut steps = 0;
                while index != 0 && steps < chains {
                    if let Some(value) = defined(index) {
                        return Some(value);
                    }
                    index = word(table, 2 + buckets + index)?;
                    steps += 1;
                }
                None
            }
        }
    }
}

/// The `i`th 32-bit word of a hash table.
fn word(table: &[u8], i: usize, ctx: Ctx) -> Result<usize, String> {
    table
        .pread_with::<u32>(i * 4, ctx.le)
        .map(|w| w as usize)
        .map_err(|_| format!("its symbol hash table is cut short at word {i}"))
}
