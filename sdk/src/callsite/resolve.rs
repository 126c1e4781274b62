//! Naming a call site: the function, file and line of the call
//! instruction (just before the return address) from its object's debug
//! information, read with `addr2line`, and the object and offset.

use std::collections::HashMap;
use std::ffi::{c_int, c_void, CStr, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

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
    loaders: HashMap<PathBuf, Option<addr2line::Loader>>,
}

impl Resolver {
    /// Names the site whose return address is `ra`. Reads files: call it
    /// when writing a report, not on the hot path.
    pub fn resolve(&mut self, ra: usize) -> Location {
        let pc = ra.saturating_sub(1);
        let (object, bias) = object_of(pc).unwrap_or_default();
        let (mut function, mut file, mut line) = (None, None, None);
        let loader = self
            .loaders
            .entry(object.clone())
            .or_insert_with(|| addr2line::Loader::new(&object).ok());
        if let Some(loader) = loader {
            let probe = (pc - bias) as u64;
            // The first frame is the innermost: where the call is
            // written, inlined or not.
            let mut frames = loader.find_frames(probe).ok();
            if let Some(Ok(Some(frame))) = frames.as_mut().map(|f| f.next()) {
                function = frame
                    .function
                    .and_then(|f| f.demangle().ok().map(|n| n.into_owned()));
                file = frame.location.as_ref().and_then(|l| l.file).map(str::to_string);
                line = frame.location.as_ref().and_then(|l| l.line);
            }
            if function.is_none() {
                function = loader
                    .find_symbol(probe)
                    .map(|n| addr2line::demangle_auto(n.into(), None).into_owned());
            }
        }
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
