//! The few bytes of a module's file that say where everything else is: the
//! ELF header, the program headers and the dynamic section. Everything
//! they point to (symbol tables, relocations) is read later from the
//! loaded image, which the dynamic loader has just read anyway; section
//! headers and debug information are never read.

use goblin::container::{Container, Ctx};
use goblin::elf::dynamic::{self, Dyn};
use goblin::elf::header::{self, Header};
use goblin::elf::program_header::{PF_R, PT_DYNAMIC, PT_GNU_RELRO, PT_LOAD};
use goblin::elf::{Elf, ProgramHeader};
use scroll::Pread;
use std::fs::File;
use std::os::unix::fs::FileExt;
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

/// A `PT_LOAD` segment.
#[derive(Clone, Copy, Debug)]
pub struct Segment {
    /// Where it is in memory (`p_vaddr`, `p_memsz`).
    pub memory: Span,
    /// How many of its bytes come from the file (`p_filesz`).
    pub file_len: u64,
    /// Is it mapped readable?
    pub readable: bool,
}

/// `(address, size)` of a table the dynamic section names.
pub type Table = (u64, u64);

/// Where the dynamic section says the dynamic linking tables are.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tables {
    pub symtab: u64,
    pub strtab: Table,
    pub rela: Table,
    pub rel: Table,
    pub jmprel: Table,
    /// Are the PLT relocations `RELA` (else `REL`)?
    pub plt_is_rela: bool,
    /// How many `RELATIVE` relocations (no symbol) lead the `RELA` and the
    /// `REL` table (`DT_RELACOUNT`, `DT_RELCOUNT`): most of a module's,
    /// skipped unread.
    pub rela_relative: u64,
    pub rel_relative: u64,
    pub gnu_hash: Option<u64>,
    pub hash: Option<u64>,
    /// Was it linked to be bound at load (`-z now`: `DF_BIND_NOW`,
    /// `DF_1_NOW` or `DT_BIND_NOW`)? Else it was linked for lazy binding,
    /// and libpnmpi opens it so (see the loader's `open`).
    pub bind_now: bool,
}

/// What the headers of a module's file say.
#[derive(Clone, Debug)]
pub struct Layout {
    /// Word size and byte order.
    pub ctx: Ctx,
    pub segments: Vec<Segment>,
    /// The part the loader makes read-only after relocation.
    pub relro: Option<Span>,
    pub tables: Tables,
    /// Bytes of the file the loader reads: a private copy needs no more.
    pub loaded_bytes: u64,
}

/// Reads the headers and the dynamic section of `path`.
pub fn read(path: &Path) -> Result<Layout, String> {
    let file = File::open(path).map_err(|e| format!("cannot read it: {e}"))?;
    let size = file.metadata().map_err(|e| format!("cannot read it: {e}"))?.len();
    let read_at = |offset: u64, len: u64, what: &str| -> Result<Vec<u8>, String> {
        let end = offset.saturating_add(len);
        if end > size {
            return Err(format!(
                "it is cut short: its {what} need {end} bytes, but the file has {size}"
            ));
        }
        let mut bytes = vec![0; len as usize];
        file.read_exact_at(&mut bytes, offset)
            .map_err(|e| format!("cannot read it: {e}"))?;
        Ok(bytes)
    };
    let ident = read_at(
        0,
        header::header64::SIZEOF_EHDR.min(size as usize) as u64,
        "ELF header",
    )?;
    let header = Elf::parse_header(&ident).map_err(|e| format!("cannot parse it as ELF: {e}"))?;
    let ctx = context(&header)?;
    let phdrs_len = u64::from(header.e_phnum) * u64::from(header.e_phentsize);
    let phdrs = read_at(header.e_phoff, phdrs_len, "program headers")?;
    let phdrs = ProgramHeader::parse(&phdrs, 0, header.e_phnum as usize, ctx)
        .map_err(|e| format!("cannot parse its program headers: {e}"))?;
    let mut layout = Layout {
        ctx,
        segments: Vec::new(),
        relro: None,
        tables: Tables::default(),
        loaded_bytes: header.e_phoff + phdrs_len,
    };
    let mut dynamic = None;
    for ph in &phdrs {
        let memory = Span {
            start: ph.p_vaddr,
            len: ph.p_memsz,
        };
        match ph.p_type {
            PT_LOAD => layout.segments.push(Segment {
                memory,
                file_len: ph.p_filesz,
                readable: ph.p_flags & PF_R != 0,
            }),
            PT_GNU_RELRO => layout.relro = Some(memory),
            PT_DYNAMIC => dynamic = Some((ph.p_offset, ph.p_filesz)),
            _ => {}
        }
        layout.loaded_bytes = layout.loaded_bytes.max(ph.p_offset + ph.p_filesz);
    }
    if layout.loaded_bytes > size {
        return Err(format!(
            "it is cut short: its segments need {} bytes, but the file has {size}",
            layout.loaded_bytes
        ));
    }
    let (offset, len) = dynamic.ok_or("it has no dynamic section, so it is not a shared library")?;
    layout.tables = tables(&read_at(offset, len, "dynamic section")?, ctx)?;
    Ok(layout)
}

/// The dynamic section's table addresses, up to its `DT_NULL`.
fn tables(bytes: &[u8], ctx: Ctx) -> Result<Tables, String> {
    let mut t = Tables::default();
    let mut offset = 0;
    while offset < bytes.len() {
        let d: Dyn = bytes
            .gread_with(&mut offset, ctx)
            .map_err(|e| format!("cannot parse its dynamic section: {e}"))?;
        match d.d_tag {
            dynamic::DT_NULL => break,
            dynamic::DT_SYMTAB => t.symtab = d.d_val,
            dynamic::DT_STRTAB => t.strtab.0 = d.d_val,
            dynamic::DT_STRSZ => t.strtab.1 = d.d_val,
            dynamic::DT_RELA => t.rela.0 = d.d_val,
            dynamic::DT_RELASZ => t.rela.1 = d.d_val,
            dynamic::DT_REL => t.rel.0 = d.d_val,
            dynamic::DT_RELSZ => t.rel.1 = d.d_val,
            dynamic::DT_JMPREL => t.jmprel.0 = d.d_val,
            dynamic::DT_PLTRELSZ => t.jmprel.1 = d.d_val,
            dynamic::DT_PLTREL => t.plt_is_rela = d.d_val == dynamic::DT_RELA,
            dynamic::DT_GNU_HASH => t.gnu_hash = Some(d.d_val),
            dynamic::DT_HASH => t.hash = Some(d.d_val),
            dynamic::DT_RELACOUNT => t.rela_relative = d.d_val,
            dynamic::DT_RELCOUNT => t.rel_relative = d.d_val,
            dynamic::DT_BIND_NOW => t.bind_now = true,
            dynamic::DT_FLAGS => t.bind_now |= d.d_val & dynamic::DF_BIND_NOW != 0,
            dynamic::DT_FLAGS_1 => t.bind_now |= d.d_val & dynamic::DF_1_NOW != 0,
            _ => {}
        }
    }
    Ok(t)
}

/// The word size and byte order `header` declares.
fn context(header: &Header) -> Result<Ctx, String> {
    let container = match header.e_ident[header::EI_CLASS] {
        header::ELFCLASS64 => Container::Big,
        header::ELFCLASS32 => Container::Little,
        class => return Err(format!("cannot parse it as ELF: unknown ELF class {class}")),
    };
    let little = header.e_ident[header::EI_DATA] == header::ELFDATA2LSB;
    Ok(Ctx::new(container, scroll::Endian::from(little)))
}
