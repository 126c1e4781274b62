//! Checks that decide whether bytes are a shared object we can edit, and that every table the
//! dynamic loader reads lies inside the file. goblin may accept a corrupt file and hand out
//! offsets into garbage; the patch writes at these offsets, so each is checked here first.

use goblin::elf::dynamic::Dynamic;
use goblin::elf::header::{self, machine_to_str};
use goblin::elf::program_header::{ProgramHeader, PT_LOAD};
use goblin::elf::Elf;

use crate::error::PatchError;

/// Machines whose shared objects we have reasoned about (little-endian only).
const SUPPORTED_MACHINES: [u16; 5] = [
    header::EM_X86_64,
    header::EM_AARCH64,
    header::EM_RISCV,
    header::EM_386,
    header::EM_ARM,
];

/// A corruption found at a known file offset.
pub(super) fn corrupt(what: String, offset: usize) -> PatchError {
    PatchError::Corrupt {
        what,
        offset: Some(offset),
    }
}

/// Rejects inputs that are plainly not a shared object before goblin sees them, so the message
/// can say what the file is instead of repeating a parser error.
pub(super) fn check_magic(bytes: &[u8]) -> Result<(), PatchError> {
    if bytes.starts_with(b"!<arch>\n") {
        return Err(PatchError::StaticArchive);
    }
    if !bytes.starts_with(b"\x7fELF") {
        let head = &bytes[..bytes.len().min(4)];
        let found = if head.is_empty() {
            "nothing (the file is empty)".to_string()
        } else {
            let hex: Vec<String> = head.iter().map(|b| format!("{b:02x}")).collect();
            format!("{} ({:?})", hex.join(" "), String::from_utf8_lossy(head))
        };
        return Err(PatchError::NotElf { found });
    }
    Ok(())
}

pub(super) fn check_kind(elf: &Elf) -> Result<(), PatchError> {
    let machine = machine_to_str(elf.header.e_machine);
    if !elf.little_endian {
        return Err(PatchError::Unsupported {
            what: format!("big-endian {machine} objects are not supported"),
        });
    }
    if !SUPPORTED_MACHINES.contains(&elf.header.e_machine) {
        return Err(PatchError::Unsupported {
            what: format!("machine {machine} ({}) is not supported", elf.header.e_machine),
        });
    }
    match elf.header.e_type {
        header::ET_DYN => Ok(()),
        header::ET_REL => Err(PatchError::ObjectFile),
        header::ET_EXEC => Err(PatchError::NotSharedObject {
            kind: "an executable (ET_EXEC)".into(),
        }),
        other => Err(PatchError::NotSharedObject {
            kind: format!("an ELF file of type {}", header::et_to_str(other)),
        }),
    }
}

/// Checks that `len` bytes at file offset `start` exist and are part of a loadable segment's file
/// image, which is where the dynamic loader reads tables from.
pub(super) fn check_loaded(
    phdrs: &[ProgramHeader],
    file_len: usize,
    start: usize,
    len: usize,
    what: &str,
) -> Result<(), PatchError> {
    let end = start.checked_add(len).filter(|&end| end <= file_len);
    let Some(end) = end else {
        return Err(corrupt(
            format!("{what} (0x{len:x} bytes) runs past the end of the file (0x{file_len:x} bytes)"),
            start,
        ));
    };
    let in_segment = phdrs.iter().any(|ph| {
        let seg_start = ph.p_offset;
        let seg_end = ph.p_offset.saturating_add(ph.p_filesz);
        ph.p_type == PT_LOAD && seg_start <= start as u64 && end as u64 <= seg_end
    });
    if in_segment {
        Ok(())
    } else {
        Err(corrupt(
            format!("{what} is not inside the file image of any loadable segment"),
            start,
        ))
    }
}

/// The file offset goblin computed for a dynamic table, or an error if the tag is present but its
/// address maps to no segment (goblin reports that as offset 0, which is always the ELF header).
pub(super) fn table_offset(
    dynamic: &Dynamic,
    tag: u64,
    name: &str,
    offset: u64,
) -> Result<Option<usize>, PatchError> {
    match dynamic.dyns.iter().find(|d| d.d_tag == tag) {
        None => Ok(None),
        Some(d) if offset == 0 => Err(PatchError::Corrupt {
            what: format!("{name} address 0x{:x} lies in no loadable segment", d.d_val),
            offset: None,
        }),
        Some(_) => usize::try_from(offset)
            .map(Some)
            .map_err(|_| PatchError::Corrupt {
                what: format!("{name} offset 0x{offset:x} does not fit in memory"),
                offset: None,
            }),
    }
}
