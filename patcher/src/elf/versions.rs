//! Version names in `DT_VERNEED` and `DT_VERDEF` also live in `.dynstr`, so the overlap check
//! must know where they are even when section headers are stripped.

use goblin::container::Ctx;
use goblin::elf::dynamic::{self, Dynamic};
use goblin::elf::section_header::{SectionHeader, SHT_GNU_VERDEF, SHT_GNU_VERNEED};
use goblin::elf::symver::{VerdefSection, VerneedSection};

use super::dynstr::{DynStr, DynString};
use super::validate::{corrupt, table_offset};
use crate::error::PatchError;

/// A section header that makes goblin read a version table (`DT_VERNEED` or `DT_VERDEF`) from
/// the dynamic segment's view, so stripped section headers do not hide version names from the
/// overlap check. `None` when the object has no such table.
fn version_table(
    dynamic: &Dynamic,
    (tag, count_tag, name): (u64, u64, &str),
    offset: u64,
    sh_type: u32,
    file_len: usize,
) -> Result<Option<(usize, SectionHeader)>, PatchError> {
    let Some(start) = table_offset(dynamic, tag, name, offset)? else {
        return Ok(None);
    };
    if start >= file_len {
        return Err(corrupt(format!("{name} lies beyond the end of the file"), start));
    }
    let count = dynamic
        .dyns
        .iter()
        .find(|d| d.d_tag == count_tag)
        .map_or(0, |d| d.d_val);
    let shdr = SectionHeader {
        sh_type,
        sh_offset: start as u64,
        sh_size: (file_len - start) as u64,
        sh_info: u32::try_from(count).unwrap_or(u32::MAX),
        ..SectionHeader::default()
    };
    Ok(Some((start, shdr)))
}

/// The file and version names of `DT_VERNEED` and the version names of `DT_VERDEF`.
pub(super) fn version_strings(
    bytes: &[u8],
    dynamic: &Dynamic,
    verneed: u64,
    verdef: u64,
    ctx: Ctx,
    dynstr: &DynStr,
) -> Result<Vec<(String, DynString)>, PatchError> {
    let mut found = Vec::new();
    let needs = (dynamic::DT_VERNEED, dynamic::DT_VERNEEDNUM, "DT_VERNEED");
    if let Some((start, shdr)) = version_table(dynamic, needs, verneed, SHT_GNU_VERNEED, bytes.len())? {
        let section =
            VerneedSection::parse(bytes, &[shdr], ctx).map_err(|e| corrupt(e.to_string(), start))?;
        for need in section.iter().flatten() {
            found.push((
                "version file".into(),
                dynstr.string_at(need.vn_file, "DT_VERNEED file", start)?,
            ));
            for aux in &need {
                found.push((
                    "version name".into(),
                    dynstr.string_at(aux.vna_name, "DT_VERNEED version", start)?,
                ));
            }
        }
    }
    let defs = (dynamic::DT_VERDEF, dynamic::DT_VERDEFNUM, "DT_VERDEF");
    if let Some((start, shdr)) = version_table(dynamic, defs, verdef, SHT_GNU_VERDEF, bytes.len())? {
        let section = VerdefSection::parse(bytes, &[shdr], ctx).map_err(|e| corrupt(e.to_string(), start))?;
        for def in section.iter().flatten() {
            for aux in &def {
                found.push((
                    "version definition".into(),
                    dynstr.string_at(aux.vda_name, "DT_VERDEF name", start)?,
                ));
            }
        }
    }
    Ok(found)
}
