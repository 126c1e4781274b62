//! dlopen of one module file, and lookups that only accept symbols the
//! module itself defines (a plain `dlsym` on a handle would also find the
//! `MPI_X` of libpnmpi or libmpi among the module's dependencies).

use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
use std::ffi::{c_void, CStr, CString};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `dladdr1` flag asking for the `link_map` of the object holding an address.
const RTLD_DL_LINKMAP: libc::c_int = 2;

/// A loaded module file, kept open for the life of the process.
pub struct Object {
    library: Library,
    link_map: *mut c_void,
}

impl Object {
    /// Opens `path` with `RTLD_NOW | RTLD_LOCAL`: every import is resolved
    /// now (so a missing one fails here, not mid-run), and the module's own
    /// `MPI_X` definitions stay out of the global scope. With `private`, a
    /// copy of the file is opened instead, so that a module listed twice
    /// gets its own state, as it would if linked twice.
    pub fn open(path: &Path, private: bool) -> Result<Object, String> {
        let library = if private {
            open_private_copy(path)?
        } else {
            open_path(path)?
        };
        let mut link_map: *mut c_void = std::ptr::null_mut();
        let handle = library.into_raw();
        // SAFETY: `handle` is a live dlopen handle; dlinfo writes one pointer.
        let rc = unsafe { libc::dlinfo(handle, libc::RTLD_DI_LINKMAP, (&raw mut link_map).cast()) };
        // SAFETY: `handle` came from `into_raw` just above.
        let library = unsafe { Library::from_raw(handle) };
        if rc != 0 || link_map.is_null() {
            return Err("dlinfo(RTLD_DI_LINKMAP) failed".into());
        }
        Ok(Object { library, link_map })
    }

    /// Address of `name` if this module itself defines it.
    pub fn own_symbol(&self, name: &str) -> Option<*const c_void> {
        let cname = CString::new(name).ok()?;
        // SAFETY: only the address is taken; nothing is called or read here.
        let symbol = unsafe { self.library.get::<*const c_void>(cname.as_bytes_with_nul()) }.ok()?;
        let address = symbol.into_raw() as *const c_void;
        (!address.is_null() && self.defines(address)).then_some(address)
    }

    fn defines(&self, address: *const c_void) -> bool {
        // SAFETY: dladdr1 only inspects the loader's tables; `info` and
        // `owner` are out-parameters of the right types.
        unsafe {
            let mut info: libc::Dl_info = std::mem::zeroed();
            let mut owner: *mut c_void = std::ptr::null_mut();
            let found = libc::dladdr1(address, &mut info, &mut owner, RTLD_DL_LINKMAP);
            found != 0 && owner == self.link_map
        }
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
/// device and inode, so the copy gets a fresh file with a name of its own;
/// the file is removed once loaded (the mapping keeps it alive).
fn open_private_copy(path: &Path) -> Result<Library, String> {
    static COPIES: AtomicUsize = AtomicUsize::new(0);
    let n = COPIES.fetch_add(1, Ordering::Relaxed);
    let base = path.file_name().unwrap_or_default().to_string_lossy();
    let copy = std::env::temp_dir().join(format!("pnmpi-{}-copy{n}-{base}", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&copy)
        .and_then(|mut f| std::io::copy(&mut std::fs::File::open(path)?, &mut f))
        .map_err(|e| format!("cannot make a private copy at {}: {e}", copy.display()))?;
    let opened = open_path(&copy);
    let _ = std::fs::remove_file(&copy);
    opened
}
