//! dlopen of one module file, and where it was placed: symbols the module
//! itself defines are found from its file's dynamic symbol table at its
//! load base (a plain `dlsym` on a handle would also find the `MPI_X` of
//! libpnmpi or libmpi among the module's dependencies).

use libloading::os::unix::{Library, RTLD_LAZY, RTLD_LOCAL, RTLD_NOW};
use pnmpi_objects::image::Image;
use pnmpi_objects::layout::Segment;
use std::ffi::{CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A loaded module file, kept open for the life of the process.
pub struct Object {
    /// Keeps the module mapped.
    _library: Library,
    /// Its dlopen handle, for [`Object::check_imports`].
    handle: *mut libc::c_void,
    /// Where the file's address 0 is in memory (`l_addr`).
    base: usize,
    /// Why binding every import at load failed, when the module was then
    /// opened with lazy binding ([`open_path`]).
    pub unresolved: Option<String>,
}

impl Object {
    /// Opens `path` with `RTLD_NOW | RTLD_LOCAL`: every import is resolved
    /// now (so a missing one is known here, not mid-run), and the module's own
    /// `MPI_X` definitions stay out of the global scope; a module with
    /// imports nothing defines is then opened as [`open_path`] says. With
    /// `lazy` (the file was linked for lazy binding), it is opened with
    /// `RTLD_LAZY`: the dynamic loader then leaves its PLT slots, among them
    /// the few hundred `XMPI_` ones that direct binding writes anyway, and
    /// [`Object::check_imports`] looks up the others. With `private`, a
    /// copy of the file (`private`: the bytes the loader maps) is opened
    /// instead, so that a module listed twice gets its own state, as it
    /// would if linked twice.
    pub fn open(path: &Path, private: Option<&[u8]>, lazy: bool) -> Result<Object, String> {
        let (library, unresolved) = match private {
            Some(bytes) => open_private_copy(path, bytes, lazy)?,
            None => open_path(path, lazy)?,
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
            handle,
            base,
            unresolved,
        })
    }

    /// Looks up each of `imports` (the PLT imports of a module opened
    /// lazily, but its `XMPI_` routines) as the dynamic loader would have at
    /// a `-z now` load, in the global scope and then the module's own: the
    /// first one defined nowhere stops the load if it names an MPI routine
    /// (a module built against another MPI), else it is kept for the
    /// warning, as [`open_path`] does.
    pub fn check_imports(&mut self, path: &Path, imports: &[CString]) -> Result<(), String> {
        let defined = |name: &CString| {
            // SAFETY: dlsym only reads the loaded objects' symbol tables;
            // `handle` is this module's handle, open while `_library` is,
            // and `name` a C string.
            unsafe {
                !libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()).is_null()
                    || !libc::dlsym(self.handle, name.as_ptr()).is_null()
            }
        };
        let Some(name) = imports.iter().find(|name| !defined(name)) else {
            return Ok(());
        };
        let e = format!("{}: undefined symbol: {}", path.display(), name.to_string_lossy());
        if names_an_mpi_routine(&e) {
            return Err(e);
        }
        self.unresolved = Some(e);
        Ok(())
    }

    /// The loaded object's `segments` (its file's), to read its tables.
    pub fn image<'a>(&self, segments: &'a [Segment]) -> Image<'a> {
        // SAFETY: `base` is where this object was loaded, and libpnmpi
        // never closes a module (the Library is kept for the process).
        unsafe { Image::new(self.base, segments) }
    }

    /// The in-memory address of the file's virtual address `vaddr`.
    pub fn address(&self, vaddr: u64) -> usize {
        self.base.wrapping_add(vaddr as usize)
    }

    /// Reads the `const char *` variable the module defines at `address`
    /// (`PNMPI_ModuleName`).
    pub fn string_at(&self, address: usize) -> Option<String> {
        let address = address as *const *const libc::c_char;
        // SAFETY: the module defines a `const char *` there; a null
        // pointer is handled, a non-null one is a C string by contract.
        unsafe {
            let text = *address;
            (!text.is_null()).then(|| CStr::from_ptr(text).to_string_lossy().into_owned())
        }
    }
}

/// Opens `path` binding every import now; if an import is defined
/// nowhere, opens it again with lazy binding, as `LD_PRELOAD` and LLNL
/// PnMPI do: binary tools ship code paths whose symbols only another
/// build provides (ReMPI's "lite" build imports its CDC encoder's), and
/// they run as long as those paths are not taken. The first failure's
/// text comes back, for a warning.
fn open_path(path: &Path, lazy: bool) -> Result<(Library, Option<String>), String> {
    let binding = if lazy { RTLD_LAZY } else { RTLD_NOW };
    // SAFETY: loading a module runs its initialisers; that is what the user
    // asked for by listing it.
    let now = unsafe { Library::open(Some(path), binding | RTLD_LOCAL) }.map_err(|e| e.to_string());
    match now {
        Ok(library) => Ok((library, None)),
        Err(e) if !lazy && e.contains("undefined symbol") && !names_an_mpi_routine(&e) => {
            // SAFETY: as above; the same file, lazily bound.
            let lazy = unsafe { Library::open(Some(path), RTLD_LAZY | RTLD_LOCAL) };
            lazy.map(|library| (library, Some(e.clone()))).map_err(|_| e)
        }
        Err(e) => Err(e),
    }
}

/// Whether the loader's message names an MPI routine (`XMPI_Send`,
/// `PMPI_Send`, `mpi_send_`...): a module built against another MPI,
/// which must stop the run, not load lazily and fail mid-run.
fn names_an_mpi_routine(dlerror: &str) -> bool {
    let symbol = dlerror.rsplit("undefined symbol: ").next().unwrap_or_default();
    ["MPI_", "XMPI_", "PMPI_", "mpi_", "xmpi_", "pmpi_"]
        .iter()
        .any(|p| symbol.starts_with(p))
}

/// Opens a private copy of `path`, whose mapped part is `bytes`. The
/// dynamic loader returns the existing object for a name it has loaded
/// already, and for a file with the same device and inode, so the copy gets
/// a fresh file with a name of its own. Only the bytes the loader reads are
/// written (not the debug information), into memory-backed `/dev/shm` when
/// it allows code, and the file is removed once loaded (the mapping keeps
/// it alive).
fn open_private_copy(path: &Path, bytes: &[u8], lazy: bool) -> Result<(Library, Option<String>), String> {
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
            .and_then(|mut f| std::io::Write::write_all(&mut f, bytes));
        let opened = written
            .map_err(|e| format!("cannot make a private copy at {}: {e}", copy.display()))
            .and_then(|_| open_path(&copy, lazy));
        let _ = std::fs::remove_file(&copy);
        match opened {
            Ok(library) => return Ok(library),
            Err(e) => last = e,
        }
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::names_an_mpi_routine;

    #[test]
    fn only_mpi_routines_stop_a_lazy_retry() {
        for e in [
            "/m.so: undefined symbol: XMPI_Isendrecv",
            "/m.so: undefined symbol: pmpi_init_",
            "/m.so: undefined symbol: MPI_Foo",
        ] {
            assert!(names_an_mpi_routine(e), "{e}");
        }
        assert!(!names_an_mpi_routine(
            "/m.so: undefined symbol: _Z23rempi_cp_get_pred_ranksPm"
        ));
        assert!(!names_an_mpi_routine("/m.so: undefined symbol: reomp_control"));
    }
}
