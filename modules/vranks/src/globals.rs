//! Private globals, as xSim does it: the executable's writable data
//! (`.data`, `.bss`, Fortran `COMMON` blocks, C statics) is saved into
//! the outgoing rank's copy and restored from the incoming rank's copy at
//! every switch between ranks.
//!
//! The ranges come from the executable's section headers (read from
//! `/proc/self/exe` with goblin), moved by the load address. Left shared:
//! the GOT, `.dynamic`, the init/fini arrays and RELRO data (the loader's
//! and read-only after start), and every object the executable holds by
//! a copy relocation (`R_X86_64_COPY`: `stdout`, `environ`, an MPI
//! library's predefined objects), which belong to libc or MPI, whose
//! state stays shared. The application's own shared libraries and its
//! thread-local storage are not privatized (docs/vtime.md).
//!
//! A rank that has never run uses the image as it was when the ranks
//! started (after the program's constructors), so every rank starts
//! from the same globals; its own copy is made the first time it is
//! switched out.

use goblin::elf::Elf;

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
        let ranges = ranges()?;
        let bytes = ranges.iter().map(|r| r.1).sum();
        let mut pristine = vec![0u8; bytes];
        save(&ranges, &mut pristine);
        Ok(Globals {
            ranges,
            bytes,
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

/// The executable's private ranges, at their run-time addresses.
fn ranges() -> Result<Vec<(usize, usize)>, String> {
    let exe = std::fs::read("/proc/self/exe").map_err(|e| format!("cannot read /proc/self/exe: {e}"))?;
    let elf = Elf::parse(&exe).map_err(|e| format!("cannot parse the executable: {e}"))?;
    let bias = if elf.header.e_type == goblin::elf::header::ET_DYN {
        load_bias()
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
    let copies: Vec<(usize, usize)> = elf
        .dynrelas
        .iter()
        .filter(|r| r.r_type == R_COPY)
        .map(|r| {
            let size = elf.dynsyms.get(r.r_sym).map_or(0, |s| s.st_size as usize);
            (bias + r.r_offset as usize, size)
        })
        .collect();
    Ok(subtract(keep, &copies))
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

/// The executable's load address (a position-independent executable is
/// moved by it).
fn load_bias() -> usize {
    extern "C" fn first(info: *mut libc::dl_phdr_info, _size: usize, out: *mut libc::c_void) -> libc::c_int {
        // SAFETY: the loader passes a valid entry, and `out` is the `usize`
        // given below.
        unsafe { *(out as *mut usize) = (*info).dlpi_addr as usize };
        1
    }
    let mut bias = 0usize;
    // SAFETY: the callback stops at the first object, the executable, and
    // writes only `bias`.
    unsafe { libc::dl_iterate_phdr(Some(first), &mut bias as *mut usize as *mut libc::c_void) };
    bias
}
