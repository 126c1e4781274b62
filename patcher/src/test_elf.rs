//! Builds small synthetic ELF64 x86-64 shared objects for unit tests. Real linkers decide for
//! themselves where `.dynstr` strings go; these let a test place an import's name inside any
//! other string to exercise the overlap rules.

/// A dynamic symbol whose name starts at `name_at` in `.dynstr`.
pub struct Sym {
    pub name_at: u32,
    pub defined: bool,
    pub versym: u16,
}

impl Sym {
    pub fn import(name_at: u32) -> Sym {
        Sym {
            name_at,
            defined: false,
            versym: 1,
        }
    }

    pub fn export(name_at: u32) -> Sym {
        Sym {
            name_at,
            defined: true,
            versym: 1,
        }
    }
}

/// `.dynstr` under construction: offset 0 holds the empty string, as in real objects.
pub struct Strings(pub Vec<u8>);

impl Strings {
    pub fn new() -> Strings {
        Strings(vec![0])
    }

    /// Appends `s` and returns its offset.
    pub fn add(&mut self, s: &str) -> u32 {
        let at = self.0.len() as u32;
        self.0.extend_from_slice(s.as_bytes());
        self.0.push(0);
        at
    }
}

/// What goes into the object.
pub struct Spec {
    pub dynstr: Vec<u8>,
    /// Symbols after the null symbol at index 0.
    pub syms: Vec<Sym>,
    /// `.dynstr` offsets of `DT_NEEDED` entries.
    pub needed: Vec<u32>,
}

/// File offsets of the parts of a built object, for tests that corrupt one of them.
pub struct Layout {
    pub dynstr: usize,
    pub dynsym: usize,
    pub versym: usize,
}

fn pad8(out: &mut Vec<u8>) {
    while !out.len().is_multiple_of(8) {
        out.push(0);
    }
}

/// Writes little-endian `bytes` (from `to_le_bytes`) at `at`.
fn put(out: &mut [u8], at: usize, bytes: &[u8]) {
    out[at..at + bytes.len()].copy_from_slice(bytes);
}

/// Lays out header, two program headers (PT_LOAD over the whole file at vaddr 0, PT_DYNAMIC),
/// `.dynstr`, `.dynsym`, `.gnu.version`, a SysV hash (so goblin can count symbols without
/// section headers) and the dynamic section.
pub fn build(spec: &Spec) -> (Vec<u8>, Layout) {
    let count = spec.syms.len() + 1;
    let mut out = vec![0u8; 64 + 2 * 56];
    let dynstr = out.len();
    out.extend_from_slice(&spec.dynstr);
    pad8(&mut out);
    let dynsym = out.len();
    out.resize(dynsym + 24 * count, 0);
    for (i, sym) in spec.syms.iter().enumerate() {
        let at = dynsym + 24 * (i + 1);
        put(&mut out, at, &u32::to_le_bytes(sym.name_at));
        out[at + 4] = 0x12; // STB_GLOBAL, STT_FUNC
        put(
            &mut out,
            at + 6,
            &u16::to_le_bytes(if sym.defined { 9 } else { 0 }),
        );
    }
    let versym = out.len();
    out.resize(versym + 2 * count, 0);
    for (i, sym) in spec.syms.iter().enumerate() {
        put(&mut out, versym + 2 * (i + 1), &u16::to_le_bytes(sym.versym));
    }
    pad8(&mut out);
    let hash = out.len();
    out.resize(hash + 4 * (3 + count), 0);
    put(&mut out, hash, &u32::to_le_bytes(1));
    put(&mut out, hash + 4, &u32::to_le_bytes(count as u32));
    pad8(&mut out);
    let dynamic = out.len();
    let mut dyns: Vec<(u64, u64)> = spec.needed.iter().map(|&n| (1, u64::from(n))).collect();
    dyns.extend([
        (4, hash as u64),
        (5, dynstr as u64),
        (6, dynsym as u64),
        (10, spec.dynstr.len() as u64),
        (11, 24),
        (0x6fff_fff0, versym as u64),
        (0, 0),
    ]);
    for (tag, val) in dyns {
        out.extend_from_slice(&tag.to_le_bytes());
        out.extend_from_slice(&val.to_le_bytes());
    }
    let total = out.len() as u64;

    out[..4].copy_from_slice(b"\x7fELF");
    out[4] = 2; // ELFCLASS64
    out[5] = 1; // little-endian
    out[6] = 1; // EV_CURRENT
    put(&mut out, 16, &u16::to_le_bytes(3)); // ET_DYN
    put(&mut out, 18, &u16::to_le_bytes(62)); // EM_X86_64
    put(&mut out, 20, &u32::to_le_bytes(1));
    put(&mut out, 32, &u64::to_le_bytes(64)); // e_phoff
    put(&mut out, 52, &u16::to_le_bytes(64)); // e_ehsize
    put(&mut out, 54, &u16::to_le_bytes(56)); // e_phentsize
    put(&mut out, 56, &u16::to_le_bytes(2)); // e_phnum
    put(&mut out, 58, &u16::to_le_bytes(64)); // e_shentsize
    let phdrs = [(1u32, 0u64, total), (2, dynamic as u64, total - dynamic as u64)];
    for (i, (p_type, offset, size)) in phdrs.into_iter().enumerate() {
        let at = 64 + 56 * i;
        put(&mut out, at, &u32::to_le_bytes(p_type));
        put(&mut out, at + 4, &u32::to_le_bytes(6)); // PF_R | PF_W
        put(&mut out, at + 8, &u64::to_le_bytes(offset));
        put(&mut out, at + 16, &u64::to_le_bytes(offset));
        put(&mut out, at + 24, &u64::to_le_bytes(offset));
        put(&mut out, at + 32, &u64::to_le_bytes(size));
        put(&mut out, at + 40, &u64::to_le_bytes(size));
        put(&mut out, at + 48, &u64::to_le_bytes(8));
    }
    (
        out,
        Layout {
            dynstr,
            dynsym,
            versym,
        },
    )
}

/// A typical tool: `PMPI_Send` imported, `MPI_Send` defined as its tail, `PMPI_Comm_rank`
/// imported, and `libmpi.so.40` needed.
pub fn typical_tool() -> (Vec<u8>, Layout) {
    let mut s = Strings::new();
    let pmpi_send = s.add("PMPI_Send");
    let rank = s.add("PMPI_Comm_rank");
    let needed = s.add("libmpi.so.40");
    build(&Spec {
        dynstr: s.0,
        syms: vec![
            Sym::import(pmpi_send),
            Sym::export(pmpi_send + 1),
            Sym::import(rank),
        ],
        needed: vec![needed],
    })
}
