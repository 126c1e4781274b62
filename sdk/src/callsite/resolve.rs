//! Naming a call site: the function, file and line of the call
//! instruction (just before the return address) from its object's debug
//! information, read with `addr2line`, and the object and offset.

use std::collections::HashMap;
use std::ffi::{c_int, c_void, CStr, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Where a call site is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Location {
    /// The calling function, demangled, if the object names it.
    pub function: Option<String>,
    /// The source file, if the object has debug information.
    pub file: Option<String>,
    /// The source line, likewise.
    pub line: Option<u32>,
    /// The object's path (the program's for the main executable).
    pub object: String,
    /// The return address's offset in the object.
    pub offset: u64,
}

impl std::fmt::Display for Location {
    /// `file:line (function)`, or `object+0xoffset (function)` without
    /// debug information.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.file, self.line) {
            (Some(file), Some(line)) => write!(f, "{file}:{line}")?,
            _ => write!(f, "{}+{:#x}", self.object, self.offset)?,
        }
        if let Some(function) = &self.function {
            write!(f, " ({function})")?;
        }
        Ok(())
    }
}

/// Resolves sites, reading each object's debug information once.
#[derive(Default)]
pub struct Resolver {
    loaders: HashMap<PathBuf, Option<Debug>>,
}

/// The DWARF reader of [`Fast`]: the mapped file's bytes.
type Slice = addr2line::gimli::EndianSlice<'static, addr2line::gimli::RunTimeEndian>;

/// One object's debug information, read as `addr2line::Loader` reads it
/// when that is all it would do, else by the `Loader` itself.
enum Debug {
    Fast(Box<Fast>),
    Full(Box<addr2line::Loader>),
}

/// An object whose DWARF is in its own file, uncompressed and with no
/// relocations: its sections found in one pass over its section headers
/// (the `Loader` looks each of some 25 DWARF sections up by name, a
/// pass over the headers each, which was half the cost of naming a
/// program's sites), and its functions listed only if a site needs them.
struct Fast {
    // Dropped before `_map`, which they borrow.
    ctx: addr2line::Context<Slice>,
    object: object::File<'static>,
    functions: std::cell::OnceCell<Vec<Function>>,
    path: PathBuf,
    _map: memmap2::Mmap,
}

impl Fast {
    /// The object at `path` read the fast way, or `None` where the
    /// `Loader` does more: split DWARF in a `.dwp` beside it, compressed
    /// or relocated sections.
    fn open(path: &Path) -> Option<Fast> {
        use object::{Object, ObjectSection};
        let file = std::fs::File::open(path).ok()?;
        // SAFETY: the file is mapped read-only and kept mapped as long as
        // everything that borrows it (`_map` is dropped last); an object
        // of the running process is not rewritten under it.
        let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
        // SAFETY: the bytes stay mapped, at the same address, until `_map`
        // is dropped, after `ctx`, `object` and `functions`.
        let bytes: &'static [u8] = unsafe { std::slice::from_raw_parts(map.as_ptr(), map.len()) };
        let object = object::File::parse(bytes).ok()?;
        if object.kind() == object::ObjectKind::Relocatable || dwp_beside(path) {
            return None;
        }
        let endian = if object.is_little_endian() {
            addr2line::gimli::RunTimeEndian::Little
        } else {
            addr2line::gimli::RunTimeEndian::Big
        };
        let mut sections: Vec<(&[u8], &'static [u8])> = Vec::new();
        for section in object.sections() {
            let Ok(name) = section.name_bytes() else {
                continue;
            };
            if name.starts_with(b".zdebug_") {
                return None;
            }
            if name.starts_with(b".debug_") {
                match section.uncompressed_data().ok()? {
                    std::borrow::Cow::Borrowed(data) => sections.push((name, data)),
                    std::borrow::Cow::Owned(_) => return None,
                }
            }
        }
        let found = |name: &str| {
            sections
                .iter()
                .find(|(n, _)| *n == name.as_bytes())
                .map_or(&[][..], |&(_, data)| data)
        };
        let mut dwarf = addr2line::gimli::Dwarf::load(|id| {
            Ok::<_, addr2line::gimli::Error>(Slice::new(found(id.name()), endian))
        })
        .ok()?;
        dwarf.populate_abbreviations_cache(addr2line::gimli::AbbreviationsCacheStrategy::Duplicates);
        let ctx = addr2line::Context::from_dwarf(dwarf).ok()?;
        Some(Fast {
            ctx,
            object,
            functions: std::cell::OnceCell::new(),
            path: path.to_path_buf(),
            _map: map,
        })
    }
}

/// A function symbol: `[start, end)` and its name.
type Function = (u64, u64, &'static str);

/// The function symbols `object` defines (its symbol table's, else its
/// dynamic symbols'), sorted by address: where a site has no DWARF
/// (a program built without `-g`), the symbol holding it names its
/// function. One allocation of the table's size: growing a vector
/// symbol by symbol (as `object`'s `SymbolMap` is built) copied it a
/// dozen times, two thirds of what naming a stripped program's sites
/// cost.
fn functions(object: &object::File<'static>) -> Vec<Function> {
    use object::{Object, ObjectSymbol, ObjectSymbolTable};
    let Some(table) = object.symbol_table().or_else(|| object.dynamic_symbol_table()) else {
        return Vec::new();
    };
    let is_function = |s: &object::Symbol<'static, '_>| {
        s.kind() == object::SymbolKind::Text && s.is_definition() && s.size() > 0
    };
    let mut functions = Vec::with_capacity(table.symbols().filter(is_function).count());
    functions.extend(table.symbols().filter(is_function).filter_map(|s| {
        let name = s.name().ok().filter(|n| !n.is_empty())?;
        Some((s.address(), s.address().saturating_add(s.size()), name))
    }));
    functions.sort_unstable();
    functions
}

/// The name of the function in `functions` (sorted) that holds `probe`.
fn holding(functions: &[Function], probe: u64) -> Option<&'static str> {
    let after = functions.partition_point(|f| f.0 <= probe);
    let &(_, end, name) = functions.get(after.checked_sub(1)?)?;
    (probe < end).then_some(name)
}

/// Whether split DWARF sits beside `path` as a package (`x.dwp`, `x.so.dwp`),
/// which the `Loader` reads.
fn dwp_beside(path: &Path) -> bool {
    let mut dwp = path.as_os_str().to_owned();
    dwp.push(".dwp");
    let mut other = path.to_path_buf();
    other.set_extension("dwp");
    Path::new(&dwp).exists() || other.exists()
}

/// A site's function, file and line: the innermost frame's (where the
/// call is written, inlined or not), the function from the symbol
/// holding it if the frame names none.
type Named = (Option<String>, Option<String>, Option<u32>);

impl Debug {
    fn open(path: &Path) -> Option<Debug> {
        match Fast::open(path) {
            Some(fast) => Some(Debug::Fast(Box::new(fast))),
            None => addr2line::Loader::new(path)
                .ok()
                .map(|l| Debug::Full(Box::new(l))),
        }
    }

    fn name(&mut self, probe: u64) -> Named {
        if let Debug::Fast(fast) = self {
            // Split DWARF (a unit's `.dwo`) is the Loader's to read.
            match fast.ctx.find_frames(probe) {
                addr2line::LookupResult::Output(frames) => {
                    let (mut function, file, line) = match frames.ok().as_mut().map(|f| f.next()) {
                        Some(Ok(Some(frame))) => place(frame),
                        _ => (None, None, None),
                    };
                    if function.is_none() {
                        let functions = fast.functions.get_or_init(|| functions(&fast.object));
                        function = holding(functions, probe)
                            .map(|name| addr2line::demangle_auto(name.into(), None).into_owned());
                    }
                    return (function, file, line);
                }
                addr2line::LookupResult::Load { .. } => {}
            }
            let full = addr2line::Loader::new(&fast.path);
            match full {
                Ok(loader) => *self = Debug::Full(Box::new(loader)),
                Err(_) => return (None, None, None),
            }
        }
        let Debug::Full(loader) = self else {
            return (None, None, None);
        };
        let mut frames = loader.find_frames(probe).ok();
        let (mut function, file, line) = match frames.as_mut().map(|f| f.next()) {
            Some(Ok(Some(frame))) => place(frame),
            _ => (None, None, None),
        };
        if function.is_none() {
            function = loader
                .find_symbol(probe)
                .map(|n| addr2line::demangle_auto(n.into(), None).into_owned());
        }
        (function, file, line)
    }
}

/// The function, file and line of a lookup's first frame: the innermost,
/// where the call is written, inlined or not.
fn place<R: addr2line::gimli::Reader>(frame: addr2line::Frame<'_, R>) -> Named {
    let function = frame
        .function
        .and_then(|f| f.demangle().ok().map(|n| n.into_owned()));
    let file = frame.location.as_ref().and_then(|l| l.file).map(str::to_string);
    let line = frame.location.as_ref().and_then(|l| l.line);
    (function, file, line)
}

impl Resolver {
    /// Names the site whose return address is `ra`. Reads files: call it
    /// when writing a report, not on the hot path.
    pub fn resolve(&mut self, ra: usize) -> Location {
        let pc = ra.saturating_sub(1);
        let (object, bias) = object_of(pc).unwrap_or_default();
        let debug = self
            .loaders
            .entry(object.clone())
            .or_insert_with(|| Debug::open(&object));
        let (function, file, line) = match debug {
            Some(debug) => debug.name((pc - bias) as u64),
            None => (None, None, None),
        };
        Location {
            function,
            file,
            line,
            object: object.display().to_string(),
            offset: ra.saturating_sub(bias) as u64,
        }
    }
}

/// Names one site (see [`Resolver::resolve`]; a `Resolver` is cheaper
/// for many).
pub fn resolve(ra: usize) -> Location {
    Resolver::default().resolve(ra)
}

/// The file and load bias of the object whose segments hold `addr`.
pub fn object_of(addr: usize) -> Option<(PathBuf, usize)> {
    struct Query {
        addr: usize,
        found: Option<(PathBuf, usize)>,
    }
    unsafe extern "C" fn each(info: *mut libc::dl_phdr_info, _size: usize, data: *mut c_void) -> c_int {
        // SAFETY: dl_iterate_phdr passes a valid entry and our `data`, a
        // `Query` that outlives the iteration.
        let (info, query) = unsafe { (&*info, &mut *data.cast::<Query>()) };
        let bias = info.dlpi_addr as usize;
        // SAFETY: the entry's program headers, dlpi_phnum of them.
        let headers = unsafe { std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum)) };
        let inside = headers.iter().any(|h| {
            let start = bias + h.p_vaddr as usize;
            h.p_type == libc::PT_LOAD && query.addr >= start && query.addr < start + h.p_memsz as usize
        });
        if !inside {
            return 0;
        }
        // SAFETY: a NUL-terminated path, or null, from the loader.
        let name = (!info.dlpi_name.is_null()).then(|| unsafe { CStr::from_ptr(info.dlpi_name) });
        let path = match name.map(CStr::to_bytes) {
            Some(bytes) if !bytes.is_empty() => PathBuf::from(OsStr::from_bytes(bytes)),
            // The main program has no name here.
            _ => std::fs::read_link("/proc/self/exe").unwrap_or_default(),
        };
        query.found = Some((path, bias));
        1
    }
    let mut query = Query { addr, found: None };
    // SAFETY: `each` matches the callback type and only touches `query`.
    unsafe { libc::dl_iterate_phdr(Some(each), (&mut query as *mut Query).cast()) };
    query.found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probe_is_named_by_the_function_that_holds_it_only() {
        let functions = [(0x100, 0x140, "a"), (0x140, 0x150, "b"), (0x200, 0x210, "c")];
        assert_eq!(holding(&functions, 0x100), Some("a"));
        assert_eq!(holding(&functions, 0x13f), Some("a"));
        assert_eq!(holding(&functions, 0x140), Some("b"));
        assert_eq!(holding(&functions, 0x150), None, "between b's end and c");
        assert_eq!(holding(&functions, 0xff), None);
        assert_eq!(holding(&functions, 0x20f), Some("c"));
        assert_eq!(holding(&functions, 0x210), None);
    }
}
