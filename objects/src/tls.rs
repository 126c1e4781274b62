//! The calling thread's thread-local storage, per loaded object: where
//! each object's block (its `PT_TLS` image, `.tdata` and `.tbss`) lies for
//! this thread. libvranks privatizes the application's blocks per
//! virtual rank, since all its ranks run on one thread.

use std::ffi::{c_int, c_void, CStr, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// One object's TLS block for the calling thread.
pub struct Block {
    /// The object's path (empty for the executable).
    pub path: PathBuf,
    /// The block's address and size.
    pub address: usize,
    pub size: usize,
}

/// The calling thread's TLS block of every loaded object that has one
/// allocated (static TLS: the executable and the libraries loaded with it).
pub fn blocks() -> Vec<Block> {
    unsafe extern "C" fn collect(info: *mut libc::dl_phdr_info, _: usize, data: *mut c_void) -> c_int {
        // SAFETY: the loader passes a valid `info`, whose program headers
        // are `dlpi_phnum` entries at `dlpi_phdr` and whose name, if not
        // null, is a C string; `data` is the vector below.
        unsafe {
            let info = &*info;
            if info.dlpi_tls_data.is_null() || info.dlpi_phdr.is_null() {
                return 0;
            }
            let phdrs = std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum));
            let Some(tls) = phdrs.iter().find(|p| p.p_type == libc::PT_TLS) else {
                return 0;
            };
            let path = if info.dlpi_name.is_null() {
                PathBuf::new()
            } else {
                PathBuf::from(OsStr::from_bytes(CStr::from_ptr(info.dlpi_name).to_bytes()))
            };
            if let Some(found) = data.cast::<Vec<Block>>().as_mut() {
                found.push(Block {
                    path,
                    address: info.dlpi_tls_data as usize,
                    size: tls.p_memsz as usize,
                });
            }
        }
        0
    }
    let mut found: Vec<Block> = Vec::new();
    // SAFETY: the callback only reads `info` and pushes to `found`.
    unsafe { libc::dl_iterate_phdr(Some(collect), (&raw mut found).cast()) };
    found
}
