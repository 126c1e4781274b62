//! Private globals, as xSim does it: the executable's writable data
//! (`.data`, `.bss`, Fortran `COMMON` blocks, C statics) is saved into
//! the outgoing rank's copy and restored from the incoming rank's copy at
//! every switch between ranks.
//!
//! The ranges come from the section headers (read with goblin) of the
//! executable and of the application's own shared libraries, moved by
//! their load addresses, and from their thread-local storage blocks (all
//! ranks run on one thread). The application's own libraries are those
//! outside the system's library folders (`/lib`, `/usr/lib` and their
//! 32/64-bit and multiarch kin) and outside pnmpi's own folder, plus any
//! whose file name starts with one of `PNMPI_VRANK_PRIVATE`'s
//! colon-separated prefixes. Left shared: the GOT, `.dynamic`, the
//! init/fini arrays and RELRO data (the loader's and read-only after
//! start), and every object the executable holds by a copy relocation
//! (`R_X86_64_COPY`: `stdout`, `environ`, an MPI library's predefined
//! objects), which belong to libc or MPI, whose state stays shared, as
//! does every system library's (docs/vranks.md).
//!
//! A rank that has never run uses the image as it was when the ranks
//! started (after the program's constructors), so every rank starts
//! from the same globals; its own copy is made the first time it is
//! switched out.

use goblin::elf::Elf;
use std::path::{Path, PathBuf};

/// `R_X86_64_COPY`.
const R_COPY: u32 = 5;

/// Sections never privatized: the loader's, or read-only after start.
const SHARED: [&str; 9] = [
    ".got",
    ".got.plt",
    ".dynamic",
    ".init_array",
    ".fini_array",
    ".preinit_array",
    ".data.rel.ro",
    ".tdata",
    ".tbss",
];

/// The privatized ranges and each rank's copy of them.
pub struct Globals {
    /// `(address, length)`, sorted, disjoint.
    ranges: Vec<(usize, usize)>,
    /// Their total length.
    bytes: usize,
    /// The objects they come from (the executable first).
    objects: Vec<String>,
    /// The image when the ranks started.
    pristine: Vec<u8>,
    /// Each rank's copy, made when it is first switched out.
    copies: Vec<Option<Box<[u8]>>>,
    /// The rank whose globals are live.
    live: Option<u32>,
}

impl Globals {
    /// Finds the executable's writable data and takes the starting image,
    /// for `ranks` ranks.
    pub fn new(ranks: u32) -> Result<Globals, String> {
        let (ranges, objects) = ranges()?;
        let bytes = ranges.iter().map(|r| r.1).sum();
        let mut pristine = vec![0u8; bytes];
        save(&ranges, &mut pristine);
        Ok(Globals {
            ranges,
            bytes,
            objects,
            pristine,
            copies: (0..ranks).map(|_| None).collect(),
            live: None,
        })
    }

    /// Bytes privatized per rank.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The privatized ranges, for the start-up message.
    pub fn ranges(&self) -> usize {
        self.ranges.len()
    }

    /// The objects whose data is privatized, for the start-up message.
    pub fn objects(&self) -> &[String] {
        &self.objects
    }

    /// Makes `rank`'s globals live.
    pub fn switch_to(&mut self, rank: u32) {
        if self.live == Some(rank) || self.bytes == 0 {
            return;
        }
        if let Some(old) = self.live {
            let copy =
                self.copies[old as usize].get_or_insert_with(|| vec![0u8; self.bytes].into_boxed_slice());
            save(&self.ranges, copy);
        }
        match &self.copies[rank as usize] {
            Some(copy) => restore(&self.ranges, copy),
            None => restore(&self.ranges, &self.pristine),
        }
        self.live = Some(rank);
    }

    /// Whether any byte of `[lo, hi)` is privatized.
    pub fn overlaps(&self, lo: usize, hi: usize) -> bool {
        self.ranges.iter().any(|&(a, len)| a < hi && lo < a + len)
    }

    /// Runs `f` with `rank`'s globals live, then makes the live rank's
    /// live again: what another rank reads or writes in a privatized
    /// range is `rank`'s copy (a window over a C static). Ranges none of
    /// `[lo, hi)` touches are read and written as they are.
    pub fn as_rank<R>(&mut self, rank: u32, (lo, hi): (usize, usize), f: impl FnOnce() -> R) -> R {
        let live = self.live;
        if live == Some(rank) || !self.overlaps(lo, hi) {
            return f();
        }
        self.switch_to(rank);
        let r = f();
        if let Some(back) = live {
            self.switch_to(back);
        }
        r
    }

    /// Drops the copy of a rank that finished.
    pub fn forget(&mut self, rank: u32) {
        self.copies[rank as usize] = None;
        if self.live == Some(rank) {
            self.live = None;
        }
    }
}

/// Copies the ranges' memory into `into`.
fn save(ranges: &[(usize, usize)], into: &mut [u8]) {
    let mut at = 0;
    for &(addr, len) in ranges {
        // SAFETY: the range lies in the executable's writable, mapped data
        // segment (its section headers, moved by the load address), and
        // `into` holds the ranges' total length.
        unsafe { std::ptr::copy_nonoverlapping(addr as *const u8, into[at..].as_mut_ptr(), len) };
        at += len;
    }
}

/// Copies `from` back into the ranges' memory.
fn restore(ranges: &[(usize, usize)], from: &[u8]) {
    let mut at = 0;
    for &(addr, len) in ranges {
        // SAFETY: as in `save`; the data is the program's own globals,
        // which no code is using across the switch (the switch happens in
        // the scheduler, between ranks).
        unsafe { std::ptr::copy_nonoverlapping(from[at..].as_ptr(), addr as *mut u8, len) };
        at += len;
    }
}

/// An address range: start and length.
type Span = (usize, usize);

/// System library folders: their libraries' state stays shared.
const SYSTEM: [&str; 6] = [
    "/lib/",
    "/lib64/",
    "/lib32/",
    "/usr/lib/",
    "/usr/lib64/",
    "/usr/lib32/",
];

/// Whether the loaded object at `path` is the application's own (not the
/// executable, which always is).
fn own_library(path: &Path, pnmpi: Option<&Path>, extra: &[String]) -> bool {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    if extra
        .iter()
        .any(|p| !p.is_empty() && name.starts_with(p.as_str()))
    {
        return true;
    }
    let text = path.to_string_lossy();
    !text.is_empty()
        && path.is_absolute()
        && !SYSTEM.iter().any(|s| text.starts_with(s))
        && pnmpi.is_none_or(|d| !path.starts_with(d))
}

/// Every private range (the executable's and its own libraries' writable
/// data, and their TLS blocks), at run-time addresses, and the objects.
fn ranges() -> Result<(Vec<Span>, Vec<String>), String> {
    let extra: Vec<String> = std::env::var("PNMPI_VRANK_PRIVATE")
        .unwrap_or_default()
        .split(':')
        .map(String::from)
        .collect();
    let pnmpi = own_folder();
    let mut keep = Vec::new();
    let mut holes = Vec::new();
    let mut objects = Vec::new();
    for (i, (path, base)) in pnmpi_objects::deps::loaded_objects().into_iter().enumerate() {
        let file = if i == 0 {
            PathBuf::from("/proc/self/exe")
        } else if own_library(&path, pnmpi.as_deref(), &extra) {
            path.clone()
        } else {
            continue;
        };
        let (k, h) = object_ranges(&file, base, i == 0)?;
        keep.extend(k);
        holes.extend(h);
        objects.push(if i == 0 {
            "the executable".into()
        } else {
            path.display().to_string()
        });
    }
    for block in pnmpi_objects::tls::blocks() {
        if block.path.as_os_str().is_empty() || own_library(&block.path, pnmpi.as_deref(), &extra) {
            keep.push((block.address, block.size));
        }
    }
    Ok((subtract(keep, &holes), objects))
}

/// The writable data of the ELF file `file` loaded at `base`, and (for
/// the executable) the objects it holds by copy relocation.
type Ranges = (Vec<Span>, Vec<Span>);

fn object_ranges(file: &Path, base: usize, executable: bool) -> Result<Ranges, String> {
    let bytes = std::fs::read(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let elf = Elf::parse(&bytes).map_err(|e| format!("cannot parse {}: {e}", file.display()))?;
    let bias = if elf.header.e_type == goblin::elf::header::ET_DYN {
        base
    } else {
        0
    };
    let mut keep = Vec::new();
    for sh in &elf.section_headers {
        let flags = sh.sh_flags as u32;
        let alloc_write = goblin::elf::section_header::SHF_ALLOC | goblin::elf::section_header::SHF_WRITE;
        if flags & alloc_write != alloc_write || sh.sh_size == 0 {
            continue;
        }
        let name = elf.shdr_strtab.get_at(sh.sh_name).unwrap_or("");
        if SHARED.contains(&name) || flags & goblin::elf::section_header::SHF_TLS != 0 {
            continue;
        }
        keep.push((bias + sh.sh_addr as usize, sh.sh_size as usize));
    }
    let copies: Vec<(usize, usize)> = if executable {
        elf.dynrelas
            .iter()
            .filter(|r| r.r_type == R_COPY)
            .map(|r| {
                let size = elf.dynsyms.get(r.r_sym).map_or(0, |s| s.st_size as usize);
                (bias + r.r_offset as usize, size)
            })
            .collect()
    } else {
        Vec::new()
    };
    Ok((keep, copies))
}

/// The folder of libvranks (pnmpi's libraries, never privatized).
fn own_folder() -> Option<PathBuf> {
    let path = pnmpi_objects::deps::object_at(own_folder as *const () as usize)?.0;
    std::fs::canonicalize(path).ok()?.parent().map(PathBuf::from)
}

/// `keep` without the `holes`, sorted and merged.
fn subtract(mut keep: Vec<(usize, usize)>, holes: &[(usize, usize)]) -> Vec<(usize, usize)> {
    for &(h, hl) in holes {
        let mut next = Vec::with_capacity(keep.len() + 1);
        for (a, l) in keep {
            let (end, hend) = (a + l, h + hl);
            if hend <= a || h >= end {
                next.push((a, l));
                continue;
            }
            if h > a {
                next.push((a, h - a));
            }
            if hend < end {
                next.push((hend, end - hend));
            }
        }
        keep = next;
    }
    keep.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(keep.len());
    for (a, l) in keep {
        match merged.last_mut() {
            Some(last) if last.0 + last.1 == a => last.1 += l,
            _ => merged.push((a, l)),
        }
    }
    merged
}
