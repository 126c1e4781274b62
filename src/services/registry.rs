//! What modules have registered: names, services and globals, by module.
//! Registration happens in hooks and wrappers, never on the hot path, so a
//! mutex is fine here.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void};

/// A function a module offers, with the signature it was registered with.
pub struct Service {
    pub name: String,
    pub sig: String,
    pub fct: Option<unsafe extern "C" fn() -> c_int>,
}

/// A variable a module offers.
pub struct Global {
    pub name: String,
    pub sig: c_char,
    pub addr: *mut c_void,
}

/// Registrations of one module.
#[derive(Default)]
pub struct Entry {
    pub name: Option<String>,
    pub services: Vec<Service>,
    pub globals: Vec<Global>,
}

/// Registrations by module index.
#[derive(Default)]
pub struct Registry {
    pub by_module: HashMap<usize, Entry>,
}

// SAFETY: the registry only stores the addresses modules hand it; it never
// dereferences them, and every access is behind REGISTRY's mutex.
unsafe impl Send for Registry {}

/// The process's registrations.
pub static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

/// Runs `f` on module `index`'s entry, creating it if needed.
pub fn with_entry<T>(index: usize, f: impl FnOnce(&mut Entry) -> T) -> T {
    let mut guard = REGISTRY.lock();
    f(guard
        .get_or_insert_with(Registry::default)
        .by_module
        .entry(index)
        .or_default())
}

/// Runs `f` on module `index`'s entry if it has one.
pub fn read_entry<T>(index: usize, f: impl FnOnce(Option<&Entry>) -> T) -> T {
    let guard = REGISTRY.lock();
    f(guard.as_ref().and_then(|r| r.by_module.get(&index)))
}

/// The module that registered `name` with `PNMPI_Service_RegisterModule`.
pub fn module_by_registered_name(name: &str) -> Option<usize> {
    let guard = REGISTRY.lock();
    guard
        .as_ref()?
        .by_module
        .iter()
        .find(|(_, e)| e.name.as_deref() == Some(name))
        .map(|(&i, _)| i)
}
