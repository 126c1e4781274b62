//! The libraries a module brings in with it. A module whose wrappers live
//! in a library of its own (a thin module file over a tool's core library)
//! calls `XMPI_X` from that library, whose GOT libpnmpi does not bind: such
//! calls can only be placed in the chain by the dispatcher.

use crate::{image::Image, inspect, layout};
use std::ffi::{c_int, c_void, CStr, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// How many objects the process has loaded so far (`dlpi_adds`).
pub fn loads() -> u64 {
    unsafe extern "C" fn first(info: *mut libc::dl_phdr_info, _: usize, data: *mut c_void) -> c_int {
        // SAFETY: the loader passes a valid `info`; `data` is the `u64`
        // below.
        unsafe { *data.cast::<u64>() = (*info).dlpi_adds };
        1
    }
    let mut adds = 0u64;
    // SAFETY: the callback only reads `info` and writes `adds`.
    unsafe { libc::dl_iterate_phdr(Some(first), (&raw mut adds).cast()) };
    adds
}

/// The libraries loaded after `before` (a [`loads`] count), apart from
/// the module itself (the first of them), that call `XMPI_` routines.
pub fn helpers_calling_xmpi(before: u64) -> Vec<PathBuf> {
    let added = loads().saturating_sub(before);
    if added <= 1 {
        return Vec::new();
    }
    last_loaded(added as usize - 1)
        .into_iter()
        .filter(|&(ref path, base)| calls_xmpi(path, base))
        .map(|(path, _)| path)
        .collect()
}

/// Does the object loaded from `path` at `base` import `XMPI_` routines?
fn calls_xmpi(path: &std::path::Path, base: usize) -> bool {
    let Ok(layout) = layout::read(path) else {
        return false;
    };
    let segments = layout.segments.clone();
    // SAFETY: `base` is where the loader placed `path` (its
    // `dl_iterate_phdr` entry), and libpnmpi never closes the module that
    // brought it in.
    let image = unsafe { Image::new(base, &segments) };
    inspect::read(layout, &image, false).is_ok_and(|i| i.calls_chain())
}

/// Paths and load bases of the `count` objects loaded last.
fn last_loaded(count: usize) -> Vec<(PathBuf, usize)> {
    let mut names = loaded_objects();
    let skip = names.len().saturating_sub(count);
    names.split_off(skip)
}

/// Calls `f(path, load base)` for each loaded object, in load order, as
/// the loader lists them (the program's own path is empty).
fn for_each_loaded<F: FnMut(&[u8], usize)>(mut f: F) {
    unsafe extern "C" fn each<F: FnMut(&[u8], usize)>(
        info: *mut libc::dl_phdr_info,
        _: usize,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: the loader passes a valid `info` whose name, if not null,
        // is a C string; `data` is the closure below, of type `F`.
        unsafe {
            let name = (*info).dlpi_name;
            let path = if name.is_null() {
                &[][..]
            } else {
                CStr::from_ptr(name).to_bytes()
            };
            (*data.cast::<F>())(path, (*info).dlpi_addr as usize);
        }
        0
    }
    // SAFETY: the callback only reads `info` and calls `f`, which outlives
    // the iteration.
    unsafe { libc::dl_iterate_phdr(Some(each::<F>), (&raw mut f).cast()) };
}

/// Path and load base of each loaded object whose file name starts with
/// one of `prefixes`: matched as bytes while the loader lists them, so
/// that only the matches are copied (a process of the MPI has some 50
/// objects loaded).
pub fn loaded_named(prefixes: &[&str]) -> Vec<(PathBuf, usize)> {
    let mut found = Vec::new();
    for_each_loaded(|path, base| {
        let file = memchr::memrchr(b'/', path).map_or(path, |slash| &path[slash + 1..]);
        if prefixes.iter().any(|p| file.starts_with(p.as_bytes())) {
            found.push((PathBuf::from(OsStr::from_bytes(path)), base));
        }
    });
    found
}

/// Paths and load bases of every object of the process, in load order.
pub fn loaded_objects() -> Vec<(PathBuf, usize)> {
    let mut names = Vec::new();
    for_each_loaded(|path, base| names.push((PathBuf::from(OsStr::from_bytes(path)), base)));
    names
}

/// The file and load base of the loaded object that holds `address` (a
/// function of the caller's own library: its folder, or whether another
/// address lies in the same object).
pub fn object_at(address: usize) -> Option<(PathBuf, usize)> {
    // SAFETY: Dl_info is plain data; zeroes are a valid value to fill.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the loader's tables; the out-pointer is
    // valid.
    let found = unsafe { libc::dladdr(address as *const c_void, &mut info) };
    if found == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: the loader's C string naming the object.
    let path = unsafe { CStr::from_ptr(info.dli_fname) };
    Some((
        PathBuf::from(OsStr::from_bytes(path.to_bytes())),
        info.dli_fbase as usize,
    ))
}
