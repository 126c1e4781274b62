//! dlopen of one module file, and lookups of the symbols the module itself
//! defines, from its file's dynamic symbol table placed at its load base
//! (a plain `dlsym` on a handle would also find the `MPI_X` of libpnmpi or
//! libmpi among the module's dependencies).

use super::inspect::FileInfo;
use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
use std::ffi::{c_void, CStr};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A loaded module file, kept open for the life of the process.
pub struct Object {
    /// Keeps the module mapped.
    _library: Library,
    /// Where the file's address 0 is in memory (`l_addr`).
    base: usize,
    info: Arc<FileInfo>,
}

impl Object {
    /// Opens `path` with `RTLD_NOW | RTLD_LOCAL`: every import is resolved
    /// now (so a missing one fails here, not mid-run), and the module's own
    /// `MPI_X` definitions stay out of the global scope. With `private`, a
    /// copy of the file is opened instead, so that a module listed twice
    /// gets its own state, as it would if linked twice.
    pub fn open(path: &Path, private: bool, info: Arc<FileInfo>) -> Result<Object, String> {
        let library = if private {
            open_private_copy(path, info.loaded_bytes)?
        } else {
            open_path(path)?
        };
        let mut link_map: *mut libc::c_void = std::ptr::null_mut();
        let handle = library.into_raw();
        // SAFETY: `handle` is a live dlopen handle; dlinfo writes one pointer.
        let rc = unsafe { libc::dlinfo(handle, libc::RTLD_DI_LINKMAP, (&raw mut link_map).cast()) };
        // SAFETY: `handle` came from `into_raw` just above.
        let library = unsafe { Library::from_raw(handle) };
        if rc != 0 || link_map.is_null() {
            return Err("dlinfo(RTLD_DI_LINKMAP) failed".into());
        }
        // SAFETY: `l_addr` is the first field of glibc's `struct link_map`,
        // which stays valid while the object is loaded.
        let base = unsafe { *link_map.cast::<usize>() };
        Ok(Object {
            _library: library,
            base,
            info,
        })
    }

    /// What the file says about the module.
    pub fn info(&self) -> &FileInfo {
        &self.info
    }

    /// The in-memory address of the file's virtual address `vaddr`.
    pub fn address(&self, vaddr: u64) -> usize {
        self.base.wrapping_add(vaddr as usize)
    }

    /// Address of `name` if this module itself defines it.
    pub fn own_symbol(&self, name: &str) -> Option<*const c_void> {
        self.info
            .defined
            .get(name)
            .map(|&vaddr| self.address(vaddr) as *const c_void)
    }

    /// The module's segments as `[start, end)` address ranges.
    pub fn ranges(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.info
            .segments
            .iter()
            .map(|s| (self.address(s.start), self.address(s.end())))
    }

    /// Reads a `const char *` variable the module defines (`PNMPI_ModuleName`).
    pub fn own_string(&self, name: &str) -> Option<String> {
        let address = self.own_symbol(name)? as *const *const libc::c_char;
        // SAFETY: the module defines `name` as `const char *`; a null
        // pointer is handled, a non-null one is a C string by contract.
        unsafe {
            let text = *address;
            (!text.is_null()).then(|| CStr::from_ptr(text).to_string_lossy().into_owned())
        }
    }
}

fn open_path(path: &Path) -> Result<Library, String> {
    // SAFETY: loading a module runs its initialisers; that is what the user
    // asked for by listing it.
    unsafe { Library::open(Some(path), RTLD_NOW | RTLD_LOCAL) }.map_err(|e| e.to_string())
}

/// Opens a private copy of `path`. The dynamic loader returns the existing
/// object for a name it has loaded already, and for a file with the same
/// device and inode, so the copy gets a fresh file with a name of its own.
/// Only the `loaded` bytes the loader reads are copied (not the debug
/// information), into memory-backed `/dev/shm` when it allows code, and
/// the file is removed once loaded (the mapping keeps it alive).
fn open_private_copy(path: &Path, loaded: u64) -> Result<Library, String> {
    let base = path.file_name().unwrap_or_default().to_string_lossy();
    static COPIES: AtomicUsize = AtomicUsize::new(0);
    let mut last = String::new();
    for dir in [PathBuf::from("/dev/shm"), std::env::temp_dir()] {
        let n = COPIES.fetch_add(1, Ordering::Relaxed);
        let copy = dir.join(format!("pnmpi-{}-copy{n}-{base}", std::process::id()));
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&copy)
            .and_then(|mut f| {
                let mut source = std::io::Read::take(std::fs::File::open(path)?, loaded);
                std::io::copy(&mut source, &mut f)
            });
        let opened = written
            .map_err(|e| format!("cannot make a private copy at {}: {e}", copy.display()))
            .and_then(|_| open_path(&copy));
        let _ = std::fs::remove_file(&copy);
        match opened {
            Ok(library) => return Ok(library),
            Err(e) => last = e,
        }
    }
    Err(last)
}
