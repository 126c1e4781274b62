//! Reads the dynamic-linking view of a shared object: its dynamic symbols and every other string
//! that lives in `.dynstr`, each with a bound-checked file offset.
//!
//! goblin does the parsing; this module re-checks every offset it hands out against the file and
//! the loadable segments, because goblin may accept a corrupt file and return garbage offsets, and
//! the patch writes at exactly these offsets.

mod dynstr;
mod validate;
mod versions;

use goblin::container::{Container, Ctx, Endian};
use goblin::elf::dynamic;
use goblin::elf::header::machine_to_str;
use goblin::elf::section_header::SHT_DYNSYM;
use goblin::elf::{Elf, Symtab};

use crate::error::PatchError;
use dynstr::DynStr;
pub use dynstr::DynString;
use validate::{check_kind, check_loaded, check_magic, corrupt, table_offset};
use versions::version_strings;

/// `DT_AUXILIARY` and `DT_FILTER` name libraries in `.dynstr` but goblin has no constants for them.
const DT_AUXILIARY: u64 = 0x7fff_fffd;
const DT_FILTER: u64 = 0x7fff_ffff;

/// Dynamic tags whose value is an offset into `.dynstr`.
const STRING_TAGS: [(u64, &str); 9] = [
    (dynamic::DT_NEEDED, "DT_NEEDED"),
    (dynamic::DT_SONAME, "DT_SONAME"),
    (dynamic::DT_RPATH, "DT_RPATH"),
    (dynamic::DT_RUNPATH, "DT_RUNPATH"),
    (dynamic::DT_CONFIG, "DT_CONFIG"),
    (dynamic::DT_DEPAUDIT, "DT_DEPAUDIT"),
    (dynamic::DT_AUDIT, "DT_AUDIT"),
    (DT_AUXILIARY, "DT_AUXILIARY"),
    (DT_FILTER, "DT_FILTER"),
];

/// One `.dynsym` entry, reduced to what renaming needs.
#[derive(Debug, Clone)]
pub struct DynSymbol {
    /// Index in `.dynsym`, which is also the index in `.gnu.version`.
    pub index: usize,
    pub name: DynString,
    /// Defined here (`st_shndx != SHN_UNDEF`) rather than imported.
    pub defined: bool,
}

/// A `.gnu.version` entry of one symbol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Versym {
    /// File offset of the 2-byte entry.
    pub offset: usize,
    pub value: u16,
}

/// The dynamic-linking view of a shared object.
#[derive(Debug)]
pub struct DynImage {
    /// "ELF64" or "ELF32".
    pub class: &'static str,
    /// Machine name as goblin spells it, e.g. "X86_64".
    pub machine: &'static str,
    pub symbols: Vec<DynSymbol>,
    /// Every `.dynstr` string that is not a symbol name: library names, search paths, version
    /// names.
    pub other_strings: Vec<(String, DynString)>,
    /// Parallel to `symbols` when the object has a `DT_VERSYM` table.
    pub versyms: Option<Vec<Versym>>,
}

impl DynImage {
    /// Parses `bytes` as a shared object and locates its dynamic strings.
    pub fn parse(bytes: &[u8]) -> Result<DynImage, PatchError> {
        check_magic(bytes)?;
        let elf = Elf::parse(bytes).map_err(|e| PatchError::Corrupt {
            what: e.to_string(),
            offset: None,
        })?;
        check_kind(&elf)?;
        let dynamic = elf.dynamic.as_ref().ok_or_else(|| PatchError::NoDynamicSymbols {
            what: "the file has no PT_DYNAMIC segment".into(),
        })?;
        let phdrs = &elf.program_headers;
        let info = &dynamic.info;
        let ctx = Ctx::new(
            if elf.is_64 {
                Container::Big
            } else {
                Container::Little
            },
            Endian::Little,
        );

        let strtab = table_offset(dynamic, dynamic::DT_STRTAB, "DT_STRTAB", info.strtab as u64)?;
        let symtab = table_offset(dynamic, dynamic::DT_SYMTAB, "DT_SYMTAB", info.symtab as u64)?;
        let (Some(strtab), Some(symtab)) = (strtab, symtab) else {
            return Err(PatchError::NoDynamicSymbols {
                what: "the dynamic section has no DT_SYMTAB or DT_STRTAB".into(),
            });
        };
        check_loaded(phdrs, bytes.len(), strtab, info.strsz, ".dynstr")?;
        let dynstr = DynStr {
            bytes,
            start: strtab,
            size: info.strsz,
        };

        let entsize = if elf.is_64 { 24 } else { 16 };
        let section_count = elf
            .section_headers
            .iter()
            .find(|sh| {
                sh.sh_type == SHT_DYNSYM && sh.sh_offset == symtab as u64 && sh.sh_entsize == entsize as u64
            })
            .map_or(0, |sh| (sh.sh_size / entsize as u64) as usize);
        let count = elf.dynsyms.len().max(section_count);
        check_loaded(
            phdrs,
            bytes.len(),
            symtab,
            count.saturating_mul(entsize),
            ".dynsym",
        )?;
        let syms = Symtab::parse(bytes, symtab, count, ctx).map_err(|e| corrupt(e.to_string(), symtab))?;
        let symbols = syms
            .iter()
            .enumerate()
            .map(|(index, sym)| {
                let at = symtab + index * entsize;
                Ok(DynSymbol {
                    index,
                    name: dynstr.string_at(sym.st_name, &format!("dynamic symbol #{index}"), at)?,
                    defined: sym.st_shndx != 0,
                })
            })
            .collect::<Result<Vec<_>, PatchError>>()?;

        let versyms = match table_offset(dynamic, dynamic::DT_VERSYM, "DT_VERSYM", info.versym)? {
            None => None,
            Some(start) => {
                check_loaded(phdrs, bytes.len(), start, 2 * count, ".gnu.version")?;
                let entries = (0..count).map(|i| {
                    let offset = start + 2 * i;
                    Versym {
                        offset,
                        value: u16::from_le_bytes([bytes[offset], bytes[offset + 1]]),
                    }
                });
                Some(entries.collect())
            }
        };

        let mut other_strings = Vec::new();
        for d in &dynamic.dyns {
            if let Some((_, name)) = STRING_TAGS.iter().find(|(tag, _)| *tag == d.d_tag) {
                let index = usize::try_from(d.d_val).unwrap_or(usize::MAX);
                other_strings.push((name.to_string(), dynstr.string_at(index, name, strtab)?));
            }
        }
        other_strings.extend(version_strings(
            bytes,
            dynamic,
            info.verneed,
            info.verdef,
            ctx,
            &dynstr,
        )?);

        Ok(DynImage {
            class: if elf.is_64 { "ELF64" } else { "ELF32" },
            machine: machine_to_str(elf.header.e_machine),
            symbols,
            other_strings,
            versyms,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_elf::{build, typical_tool, Spec, Strings, Sym};

    #[test]
    fn reads_symbols_names_offsets_and_needed() {
        let (bytes, layout) = typical_tool();
        let image = DynImage::parse(&bytes).unwrap();
        let names: Vec<_> = image
            .symbols
            .iter()
            .map(|s| (s.name.text.as_str(), s.defined))
            .collect();
        assert_eq!(
            names,
            [
                ("", false),
                ("PMPI_Send", false),
                ("MPI_Send", true),
                ("PMPI_Comm_rank", false)
            ]
        );
        assert_eq!(image.symbols[1].name.offset, layout.dynstr + 1);
        assert_eq!(image.symbols[2].name.offset, layout.dynstr + 2);
        assert_eq!(image.other_strings.len(), 1);
        assert_eq!(image.other_strings[0].0, "DT_NEEDED");
        assert_eq!(image.other_strings[0].1.text, "libmpi.so.40");
        let versyms = image.versyms.unwrap();
        assert_eq!(
            versyms[1],
            Versym {
                offset: layout.versym + 2,
                value: 1
            }
        );
        assert_eq!((image.class, image.machine), ("ELF64", "X86_64"));
    }

    fn parse_err(bytes: &[u8]) -> PatchError {
        DynImage::parse(bytes).unwrap_err()
    }

    #[test]
    fn names_what_the_file_is_when_not_elf() {
        let err = parse_err(b"#!/bin/sh\n");
        assert!(err.to_string().contains("23 21 2f 62"), "{err}");
        assert!(matches!(parse_err(b""), PatchError::NotElf { found } if found.contains("empty")));
        assert!(matches!(parse_err(b"!<arch>\nfoo"), PatchError::StaticArchive));
    }

    #[test]
    fn refuses_other_machines_and_kinds_by_name() {
        let (mut bytes, _) = typical_tool();
        bytes[18] = 21; // EM_PPC64
        let err = parse_err(&bytes);
        assert!(
            matches!(&err, PatchError::Unsupported { what } if what.contains("PPC64")),
            "{err}"
        );
        let (mut bytes, _) = typical_tool();
        bytes[16] = 1; // ET_REL
        assert!(matches!(parse_err(&bytes), PatchError::ObjectFile));
        let (mut bytes, _) = typical_tool();
        bytes[16] = 2; // ET_EXEC
        assert!(matches!(parse_err(&bytes), PatchError::NotSharedObject { .. }));
    }

    #[test]
    fn name_outside_dynstr_is_corrupt_with_offset() {
        let (mut bytes, layout) = typical_tool();
        let at = layout.dynsym + 24;
        bytes[at..at + 4].copy_from_slice(&0x1000u32.to_le_bytes());
        let err = parse_err(&bytes);
        assert!(
            matches!(err, PatchError::Corrupt { offset: Some(o), .. } if o == at),
            "{err:?}"
        );
        assert!(err.to_string().contains("dynamic symbol #1"), "{err}");
    }

    #[test]
    fn unterminated_dynstr_is_corrupt() {
        let mut s = Strings::new();
        let at = s.add("PMPI_Send");
        s.0.pop();
        let (bytes, _) = build(&Spec {
            dynstr: s.0,
            syms: vec![Sym::import(at)],
            needed: vec![],
        });
        let err = parse_err(&bytes);
        assert!(err.to_string().contains("runs past the end of .dynstr"), "{err}");
    }

    #[test]
    fn truncated_tables_are_corrupt_not_panics() {
        let (bytes, layout) = typical_tool();
        for len in [
            layout.dynstr + 3,
            layout.dynsym + 30,
            layout.versym + 1,
            bytes.len() - 1,
        ] {
            assert!(DynImage::parse(&bytes[..len]).is_err(), "truncated to {len}");
        }
    }

    #[test]
    fn missing_dynamic_segment_is_reported() {
        let (mut bytes, _) = typical_tool();
        bytes[64 + 56] = 4; // PT_DYNAMIC -> PT_NOTE
        assert!(matches!(parse_err(&bytes), PatchError::NoDynamicSymbols { .. }));
    }
}
