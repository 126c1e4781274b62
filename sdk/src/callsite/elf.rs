//! What the dynamic loader knows about an address: its object, and
//! whether it lies in a given exported function of that object.

use std::ffi::{c_int, c_void, CStr};

/// `RTLD_DL_SYMENT` of `<dlfcn.h>`: `dladdr1` also returns the ELF symbol.
const RTLD_DL_SYMENT: c_int = 1;

/// What `dladdr1` says about an address.
pub(super) struct Place {
    /// The base of the object holding it, 0 if none.
    base: usize,
    /// Whether it lies inside that object's exported function `name`.
    pub(super) in_function: Option<&'static CStr>,
}

pub(super) fn place(addr: usize) -> Place {
    // SAFETY: Dl_info is plain data; all zeroes is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let mut sym: *mut libc::Elf64_Sym = std::ptr::null_mut();
    // SAFETY: `info` and `sym` are local out-parameters; dladdr1 only reads
    // the loader's tables.
    let found = unsafe {
        libc::dladdr1(
            addr as *const c_void,
            &mut info,
            (&mut sym as *mut *mut libc::Elf64_Sym).cast(),
            RTLD_DL_SYMENT,
        )
    };
    if found == 0 {
        return Place {
            base: 0,
            in_function: None,
        };
    }
    let mut in_function = None;
    if !info.dli_sname.is_null() && !sym.is_null() {
        // SAFETY: dladdr1 set `sym` to the symbol's ELF entry, which lives as
        // long as the object.
        let size = unsafe { (*sym).st_size } as usize;
        let start = info.dli_saddr as usize;
        if addr >= start && addr < start + size {
            // SAFETY: a NUL-terminated name in the object's string table,
            // which stays mapped while the object is loaded (modules are
            // never unloaded during the run).
            in_function = Some(unsafe { CStr::from_ptr(info.dli_sname) });
        }
    }
    Place {
        base: info.dli_fbase as usize,
        in_function,
    }
}

/// glibc's `struct dl_find_object` (`<dlfcn.h>`, glibc 2.35).
#[repr(C)]
struct DlFindObject {
    flags: u64,
    map_start: *mut c_void,
    map_end: *mut c_void,
    link_map: *mut c_void,
    eh_frame: *mut c_void,
    reserved: [u64; 7],
}

/// `_dl_find_object`, if this glibc has it (2.35 and later).
type FindObject = unsafe extern "C" fn(*mut c_void, *mut DlFindObject) -> c_int;

fn find_object() -> Option<FindObject> {
    static FIND: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let f = *FIND.get_or_init(|| {
        // SAFETY: a lookup of a NUL-terminated name in the global scope.
        unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"_dl_find_object".as_ptr()) as usize }
    });
    // SAFETY: a non-null `_dl_find_object` has this signature (dlfcn.h).
    (f != 0).then(|| unsafe { std::mem::transmute::<usize, FindObject>(f) })
}

/// The public head of glibc's `struct link_map` (`<link.h>`).
#[repr(C)]
struct LinkMap {
    /// The load bias.
    addr: usize,
    _name: *const std::ffi::c_char,
    /// The object's dynamic section.
    dynamic: *const Dyn,
}

/// `Elf64_Dyn`.
#[repr(C)]
struct Dyn {
    tag: i64,
    val: u64,
}

const DT_NULL: i64 = 0;
const DT_STRTAB: i64 = 5;
const DT_SYMTAB: i64 = 6;
const DT_GNU_HASH: i64 = 0x6fff_fef5;

/// The GNU hash of a symbol name (the ELF `DT_GNU_HASH` function).
fn gnu_hash(name: &[u8]) -> u32 {
    name.iter()
        .fold(5381u32, |h, &c| h.wrapping_mul(33).wrapping_add(u32::from(c)))
}

/// Whether `pc` lies in the function `name` that the object holding `pc`
/// defines itself, looked up in that object's GNU hash table (a few
/// probes); None if this glibc or object cannot say (no
/// `_dl_find_object`, no `DT_GNU_HASH`), for [`place`] to answer instead:
/// `dladdr` scans every symbol of the object.
pub(super) fn in_own_function(pc: usize, name: &[u8]) -> Option<bool> {
    let find = find_object()?;
    // SAFETY: DlFindObject is plain data; all zeroes is a valid value.
    let mut found: DlFindObject = unsafe { std::mem::zeroed() };
    // SAFETY: a local out-parameter; the loader's tables are only read.
    if unsafe { find(pc as *mut c_void, &mut found) } != 0 || found.link_map.is_null() {
        return None;
    }
    // SAFETY: `_dl_find_object` returned the object's `link_map`, whose
    // public head is `LinkMap`; its dynamic section ends with DT_NULL, and
    // the tables it names stay mapped while the object is loaded (objects
    // are never unloaded during the run). glibc has relocated the table
    // addresses by the load bias, except in a read-only dynamic section,
    // whose addresses are then below the bias.
    unsafe {
        let map = &*found.link_map.cast::<LinkMap>();
        let bias = map.addr;
        let at = |v: u64| {
            if (v as usize) < bias {
                v as usize + bias
            } else {
                v as usize
            }
        };
        let (mut hash, mut symtab, mut strtab) = (0, 0, 0);
        let mut d = map.dynamic;
        while !d.is_null() && (*d).tag != DT_NULL {
            match (*d).tag {
                DT_GNU_HASH => hash = at((*d).val),
                DT_SYMTAB => symtab = at((*d).val),
                DT_STRTAB => strtab = at((*d).val),
                _ => {}
            }
            d = d.add(1);
        }
        if hash == 0 || symtab == 0 || strtab == 0 {
            return None;
        }
        // nbuckets, symoffset, bloom words (64-bit), bloom shift, then the
        // bloom filter, the buckets and the chains.
        let table = hash as *const u32;
        let (nbuckets, symoffset, bloom) = (*table, *table.add(1), *table.add(2) as usize);
        if nbuckets == 0 {
            return Some(false);
        }
        let buckets = table.add(4 + 2 * bloom);
        let chains = buckets.add(nbuckets as usize);
        let h = gnu_hash(name);
        let mut i = *buckets.add((h % nbuckets) as usize);
        if i < symoffset {
            return Some(false);
        }
        loop {
            let link = *chains.add((i - symoffset) as usize);
            if link | 1 == h | 1 {
                let sym = &*(symtab as *const libc::Elf64_Sym).add(i as usize);
                let sym_name = CStr::from_ptr((strtab + sym.st_name as usize) as *const std::ffi::c_char);
                if sym_name.to_bytes() == name {
                    let start = bias + sym.st_value as usize;
                    return Some(sym.st_shndx != 0 && pc >= start && pc < start + sym.st_size as usize);
                }
            }
            if link & 1 != 0 {
                return Some(false);
            }
            i += 1;
        }
    }
}

/// The object holding `addr` (the start of its mapping, as `dladdr`'s
/// `dli_fbase`), or 0. `_dl_find_object` answers from the loader's sorted
/// table of objects; `dladdr` also searches the object's symbols, every
/// one of them (about 0.4 M instructions in LAMMPS's library, for each of
/// the dozens of frames a new call site's walk looks at).
pub fn object_base(addr: usize) -> usize {
    if let Some(find) = find_object() {
        // SAFETY: DlFindObject is plain data; all zeroes is a valid value.
        let mut found: DlFindObject = unsafe { std::mem::zeroed() };
        // SAFETY: `found` is a local out-parameter; `_dl_find_object` only
        // reads the loader's tables and takes no lock.
        if unsafe { find(addr as *mut c_void, &mut found) } == 0 {
            return found.map_start as usize;
        }
        return 0;
    }
    place(addr).base
}

/// Load bases of the loaded objects whose file name starts with one of
/// `prefixes`.
pub fn loaded_bases(prefixes: &[&str]) -> Vec<usize> {
    unsafe extern "C" fn collect(info: *mut libc::dl_phdr_info, _: usize, data: *mut c_void) -> c_int {
        // SAFETY: the loader passes a valid `info` whose name, if not null,
        // is a C string; `data` is the pair below.
        unsafe {
            let (prefixes, bases) = &mut *data.cast::<(&[&str], Vec<usize>)>();
            let name = (*info).dlpi_name;
            if !name.is_null() {
                // Bytes, not text: the prefixes are ASCII, and checking
                // every loaded path's UTF-8 cost more than the match.
                let path = CStr::from_ptr(name).to_bytes();
                let file = memchr::memrchr(b'/', path).map_or(path, |slash| &path[slash + 1..]);
                if prefixes.iter().any(|p| file.starts_with(p.as_bytes())) {
                    bases.push((*info).dlpi_addr as usize);
                }
            }
        }
        0
    }
    let mut found: (&[&str], Vec<usize>) = (prefixes, Vec::new());
    // SAFETY: the callback only reads `info` and pushes to `found`.
    unsafe { libc::dl_iterate_phdr(Some(collect), (&raw mut found).cast()) };
    found.1
}
