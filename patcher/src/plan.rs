//! Decides which bytes to change so that a tool's PMPI imports become XMPI imports, and refuses
//! when a change would also alter a string that must stay as it is.

use std::collections::BTreeMap;

use crate::elf::DynImage;
use crate::error::PatchError;
use crate::inventory::{renamed, EntryPoints, Inventory};

/// Which Fortran-style `pmpi_*` imports to rename. C imports are always renamed; Fortran entry
/// points are optional in libpnmpi, so with a library at hand only those it defines are renamed.
#[derive(Debug, Clone, Copy)]
pub enum FortranPolicy<'e> {
    RenameAll,
    RenameIfDefinedIn(&'e EntryPoints),
}

/// One import that the plan renames.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rename {
    /// Index in `.dynsym`.
    pub index: usize,
    pub from: String,
    pub to: String,
    /// The `.gnu.version` value replaced by 1 (global), when the import required a version.
    pub dropped_version: Option<u16>,
}

/// A single-byte, same-length edit of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ByteEdit {
    pub offset: usize,
    pub old: u8,
    pub new: u8,
}

/// Everything a patch will do, computed before any byte is touched.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub renames: Vec<Rename>,
    /// Fortran imports left as they are because libpnmpi has no matching entry point.
    pub fortran_kept: Vec<String>,
    /// Whether Fortran imports were renamed without knowing that libpnmpi defines them.
    pub fortran_unchecked: bool,
    /// Sorted by offset, one per changed byte.
    pub edits: Vec<ByteEdit>,
}

impl Plan {
    pub fn new(image: &DynImage, inventory: &Inventory, fortran: FortranPolicy) -> Result<Plan, PatchError> {
        if inventory.pmpi.is_empty() && inventory.fortran_pmpi.is_empty() && inventory.xmpi.is_empty() {
            return Err(PatchError::NotPmpiTool {
                defines_pmpi: inventory.defines_pmpi,
            });
        }
        let mut plan = Plan::default();
        for symbol in inventory.pmpi.iter().chain(&inventory.fortran_pmpi) {
            let Some(to) = renamed(&symbol.name.text) else {
                continue;
            };
            if let FortranPolicy::RenameIfDefinedIn(library) = fortran {
                if to.starts_with("xmpi_") && !library.defines(&to) {
                    plan.fortran_kept.push(symbol.name.text.clone());
                    continue;
                }
            } else if to.starts_with("xmpi_") {
                plan.fortran_unchecked = true;
            }
            // Both names are ASCII-prefixed ("PMPI_" or "pmpi_"), so byte 0 is that letter.
            plan.edits.push(ByteEdit {
                offset: symbol.name.offset,
                old: symbol.name.text.as_bytes()[0],
                new: to.as_bytes()[0],
            });
            let versym = image.versyms.as_ref().map(|v| v[symbol.index]);
            let dropped_version = versym.filter(|v| v.value & 0x7fff > 1).map(|v| {
                let [old_lo, old_hi] = v.value.to_le_bytes();
                let [new_lo, new_hi] = 1u16.to_le_bytes();
                plan.edits.extend(
                    [(v.offset, old_lo, new_lo), (v.offset + 1, old_hi, new_hi)]
                        .into_iter()
                        .filter(|(_, old, new)| old != new)
                        .map(|(offset, old, new)| ByteEdit { offset, old, new }),
                );
                v.value
            });
            plan.renames.push(Rename {
                index: symbol.index,
                from: symbol.name.text.clone(),
                to,
                dropped_version,
            });
        }
        plan.edits.sort();
        plan.edits.dedup();
        if plan.renames.is_empty() && inventory.xmpi.is_empty() {
            if let FortranPolicy::RenameIfDefinedIn(library) = fortran {
                return Err(PatchError::MissingEntryPoints {
                    library: library.library.clone(),
                    missing: plan.fortran_kept.iter().filter_map(|n| renamed(n)).collect(),
                });
            }
        }
        plan.check_no_shared_strings(image)?;
        Ok(plan)
    }

    /// Nothing to change: the tool is already patched.
    pub fn is_noop(&self) -> bool {
        self.edits.is_empty()
    }

    /// Linkers store a name that is the tail of another name only once (`MPI_Send` inside
    /// `PMPI_Send`). Changing the first byte of an import is safe only if no string that must
    /// keep its bytes - another symbol, a library name, a version name - contains that byte.
    fn check_no_shared_strings(&self, image: &DynImage) -> Result<(), PatchError> {
        let renamed_at: BTreeMap<usize, &str> = self
            .renames
            .iter()
            .map(|r| (image.symbols[r.index].name.offset, r.from.as_str()))
            .collect();
        let own_first_byte = |index: usize| {
            self.renames
                .iter()
                .find(|r| r.index == index)
                .map(|_| image.symbols[index].name.offset)
        };
        let symbols = image.symbols.iter().map(|s| {
            let role = if s.defined { "defined symbol" } else { "import" };
            (
                format!("{role} {}", s.name.text),
                &s.name,
                own_first_byte(s.index),
            )
        });
        let others = image
            .other_strings
            .iter()
            .map(|(what, s)| (format!("{what} \"{}\"", s.text), s, None));
        for (other, string, allowed) in symbols.chain(others) {
            let span = string.offset..string.offset + string.len;
            if let Some((&offset, import)) = renamed_at.range(span).find(|(&o, _)| Some(o) != allowed) {
                return Err(PatchError::SharedString {
                    import: import.to_string(),
                    other,
                    offset,
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_elf::{build, typical_tool, Spec, Strings, Sym};

    fn plan_for(bytes: &[u8], fortran: FortranPolicy) -> Result<Plan, PatchError> {
        let image = DynImage::parse(bytes).unwrap();
        Plan::new(&image, &Inventory::of(&image), fortran)
    }

    #[test]
    fn renames_first_byte_only_even_when_a_wrapper_is_its_tail() {
        let (bytes, layout) = typical_tool();
        let plan = plan_for(&bytes, FortranPolicy::RenameAll).unwrap();
        let renamed: Vec<_> = plan
            .renames
            .iter()
            .map(|r| (r.from.as_str(), r.to.as_str()))
            .collect();
        assert_eq!(
            renamed,
            [("PMPI_Send", "XMPI_Send"), ("PMPI_Comm_rank", "XMPI_Comm_rank")]
        );
        let first = ByteEdit {
            offset: layout.dynstr + 1,
            old: b'P',
            new: b'X',
        };
        assert_eq!(plan.edits[0], first);
        assert_eq!(plan.edits.len(), 2);
    }

    /// Plans a tool importing the name at `import` next to `other`; returns the refusal and
    /// the file offset of `import`'s first byte.
    fn clash(other: Sym, needed: Vec<u32>, s: Strings, import: u32) -> (PatchError, usize) {
        let (bytes, layout) = build(&Spec {
            dynstr: s.0,
            syms: vec![Sym::import(import), other],
            needed,
        });
        let err = plan_for(&bytes, FortranPolicy::RenameAll).unwrap_err();
        (err, layout.dynstr + import as usize)
    }

    /// The string a [`PatchError::SharedString`] says the import shares its bytes with.
    fn shared_with(err: &PatchError) -> &str {
        match err {
            PatchError::SharedString { other, .. } => other,
            _ => panic!("{err:?}"),
        }
    }

    #[test]
    fn refuses_when_another_symbol_starts_at_the_changed_byte() {
        let mut s = Strings::new();
        let at = s.add("PMPI_Send");
        let (err, first_byte) = clash(Sym::export(at), vec![], s, at);
        let PatchError::SharedString { import, other, .. } = &err else {
            panic!("{err:?}");
        };
        assert_eq!(
            (import.as_str(), other.as_str()),
            ("PMPI_Send", "defined symbol PMPI_Send")
        );
        assert_eq!(err.offset(), Some(first_byte));
    }

    #[test]
    fn refuses_when_the_changed_byte_is_inside_another_string() {
        let mut s = Strings::new();
        let at = s.add("tool_PMPI_Send");
        let (err, _) = clash(Sym::export(at), vec![], s, at + 5);
        assert_eq!(shared_with(&err), "defined symbol tool_PMPI_Send");

        let mut s = Strings::new();
        let at = s.add("libPMPI_Send");
        let unrelated = s.add("MPI_Recv");
        let (err, _) = clash(Sym::export(unrelated), vec![at], s, at + 3);
        assert_eq!(shared_with(&err), "DT_NEEDED \"libPMPI_Send\"");
    }

    #[test]
    fn refuses_an_import_whose_name_holds_another_renamed_import() {
        let mut s = Strings::new();
        let at = s.add("PMPI_XPMPI_Send");
        let (err, first_byte) = clash(Sym::import(at + 6), vec![], s, at);
        assert!(
            matches!(&err, PatchError::SharedString { import, .. } if import == "PMPI_Send"),
            "{err:?}"
        );
        assert_eq!(err.offset(), Some(first_byte + 6));
    }

    #[test]
    fn drops_version_requirement_of_renamed_imports_only() {
        let mut s = Strings::new();
        let send = s.add("PMPI_Send");
        let memset = s.add("memset");
        let (bytes, layout) = build(&Spec {
            dynstr: s.0,
            syms: vec![
                Sym {
                    versym: 2,
                    ..Sym::import(send)
                },
                Sym {
                    versym: 3,
                    ..Sym::import(memset)
                },
            ],
            needed: vec![],
        });
        let plan = plan_for(&bytes, FortranPolicy::RenameAll).unwrap();
        assert_eq!(plan.renames[0].dropped_version, Some(2));
        let versym_edit = ByteEdit {
            offset: layout.versym + 2,
            old: 2,
            new: 1,
        };
        assert_eq!(
            plan.edits,
            [
                ByteEdit {
                    offset: layout.dynstr + 1,
                    old: b'P',
                    new: b'X'
                },
                versym_edit
            ]
        );
    }

    fn fortran_tool() -> Vec<u8> {
        let mut s = Strings::new();
        let c = s.add("PMPI_Send");
        let f = s.add("pmpi_send_");
        let f2 = s.add("pmpi_recv_");
        build(&Spec {
            dynstr: s.0,
            syms: vec![Sym::import(c), Sym::import(f), Sym::import(f2)],
            needed: vec![],
        })
        .0
    }

    fn library(names: &[&str]) -> EntryPoints {
        let mut s = Strings::new();
        let syms = names.iter().map(|n| Sym::export(s.add(n))).collect();
        let (bytes, _) = build(&Spec {
            dynstr: s.0,
            syms,
            needed: vec![],
        });
        EntryPoints::of("libpnmpi.so".into(), &DynImage::parse(&bytes).unwrap())
    }

    #[test]
    fn fortran_imports_follow_the_library_when_one_is_given() {
        let bytes = fortran_tool();
        let all = plan_for(&bytes, FortranPolicy::RenameAll).unwrap();
        assert_eq!(all.renames.len(), 3);
        assert!(all.fortran_unchecked);

        let lib = library(&["XMPI_Send", "xmpi_send_"]);
        let some = plan_for(&bytes, FortranPolicy::RenameIfDefinedIn(&lib)).unwrap();
        let to: Vec<_> = some.renames.iter().map(|r| r.to.as_str()).collect();
        assert_eq!(to, ["XMPI_Send", "xmpi_send_"]);
        assert_eq!(some.fortran_kept, ["pmpi_recv_"]);
        assert!(!some.fortran_unchecked);
    }

    #[test]
    fn fortran_only_tool_without_any_entry_point_is_missing_not_noop() {
        let mut s = Strings::new();
        let f = s.add("pmpi_send_");
        let (bytes, _) = build(&Spec {
            dynstr: s.0,
            syms: vec![Sym::import(f)],
            needed: vec![],
        });
        let lib = library(&["XMPI_Send"]);
        let err = plan_for(&bytes, FortranPolicy::RenameIfDefinedIn(&lib)).unwrap_err();
        let PatchError::MissingEntryPoints { missing, .. } = err else {
            panic!("{err:?}");
        };
        assert_eq!(missing, ["xmpi_send_"]);
    }

    #[test]
    fn tools_without_pmpi_imports_are_refused_and_patched_ones_are_noops() {
        let mut s = Strings::new();
        let a = s.add("MPI_Send");
        let b = s.add("PMPI_Recv");
        let (bytes, _) = build(&Spec {
            dynstr: s.0,
            syms: vec![Sym::export(a), Sym::export(b)],
            needed: vec![],
        });
        let err = plan_for(&bytes, FortranPolicy::RenameAll).unwrap_err();
        assert!(matches!(err, PatchError::NotPmpiTool { defines_pmpi: true }));
        assert!(err.to_string().contains("statically linked"));

        let mut s = Strings::new();
        let x = s.add("XMPI_Send");
        let (bytes, _) = build(&Spec {
            dynstr: s.0,
            syms: vec![Sym::import(x)],
            needed: vec![],
        });
        assert!(plan_for(&bytes, FortranPolicy::RenameAll).unwrap().is_noop());
    }
}
