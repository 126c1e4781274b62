//! Loads the configured modules, finds which MPI routines each one wraps,
//! and runs the LLNL-compatible module hooks.

mod open;
mod resolve;

pub use resolve::search_dirs;

use crate::config::{Config, ModuleSpec};
use crate::error::Error;
use open::Object;
use pnmpi_mpi_sys::ROUTINE_NAMES;
use pnmpi_objects::dynsym::{gnu_hash, DynSymbols};
use pnmpi_objects::inspect::{self, FileInfo};
use pnmpi_objects::{deps, layout};
use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A loaded module.
pub struct Module {
    pub spec: ModuleSpec,
    /// The file it was loaded from.
    pub path: PathBuf,
    /// `PNMPI_ModuleName`, if the module exports it.
    pub module_name: Option<String>,
    /// `(routine id, wrapper address)` for every `MPI_X` it defines.
    pub wraps: Vec<(usize, *const ())>,
    /// Loaded from a private copy because the same file was listed before.
    pub private_copy: bool,
    /// Libraries loaded with the module that call `XMPI_` routines
    /// themselves (see `deps`).
    pub helpers_calling_xmpi: Vec<PathBuf>,
    /// `argument KEY VALUE` as C strings, for the services.
    arguments: Vec<(CString, CString)>,
    object: Object,
    file: Arc<FileInfo>,
}

// SAFETY: a Module only holds code and data addresses of a library that
// stays loaded for the life of the process; nothing in it is mutated after
// loading.
unsafe impl Send for Module {}
// SAFETY: as above.
unsafe impl Sync for Module {}

impl Module {
    /// Why binding the module's imports at load failed, if it was then
    /// bound lazily (see `open`).
    pub fn unresolved(&self) -> Option<&str> {
        self.object.unresolved.as_deref()
    }

    /// The module's name for messages: its `PNMPI_ModuleName`, or its
    /// file name without `.so`.
    pub fn display_name(&self) -> String {
        self.module_name.clone().unwrap_or_else(|| self.file_stem())
    }

    /// The file name without `.so` and what follows it.
    pub fn file_stem(&self) -> String {
        let file = self.path.file_name().unwrap_or_default().to_string_lossy();
        file.split(".so").next().unwrap_or_default().to_string()
    }

    /// Does `name` name this module: its `PNMPI_ModuleName`, its file stem
    /// or the name it was configured by?
    pub fn answers_to(&self, name: &str) -> bool {
        self.module_name.as_deref() == Some(name) || self.file_stem() == name || self.spec.name == name
    }

    /// What the module's file says about it (GOT slots, segments).
    pub fn file(&self) -> &FileInfo {
        &self.file
    }

    /// The in-memory address of the module file's virtual address `vaddr`.
    pub fn address(&self, vaddr: u64) -> usize {
        self.object.address(vaddr)
    }

    /// The module's segments as `[start, end)` address ranges.
    pub fn ranges(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.file.layout.segments.iter().map(|s| {
            let span = s.memory;
            (self.address(span.start), self.address(span.end()))
        })
    }

    /// Calls the hook `name` (a `void (*)(void)`) if the module defines
    /// it, and says whether it did.
    pub fn call_hook(&self, name: &str) -> bool {
        let Some(address) = own_symbol(&self.object, &self.file.layout, name).map(|a| a as *const ()) else {
            return false;
        };
        // SAFETY: the PnMPI module API defines every hook as
        // `void NAME(void)`.
        let hook: extern "C" fn() = unsafe { std::mem::transmute(address) };
        hook();
        true
    }

    /// The configured argument `key`, as the C string services hand out.
    pub fn argument(&self, key: &str) -> Option<&CStr> {
        self.arguments
            .iter()
            .rev()
            .find(|(k, _)| k.to_bytes() == key.as_bytes())
            .map(|(_, v)| v.as_c_str())
    }
}

/// The symbol by which a module asks for its `MPI_Wtime` and `MPI_Wtick`
/// wrappers to be called (`PNMPI_WRAPS_CLOCK` in pnmpi.h,
/// `pnmpi_sdk::wraps_clock!` in Rust). LLNL's libpnmpi defines no
/// `MPI_Wtime` or `MPI_Wtick`, so the application's clock reads go straight
/// to MPI and the wrappers its modules' generators write for every routine
/// are never called; a module that has not asked is treated the same way.
/// Modules that really wrap the clock (vtime's virtual clock, the replay's
/// recorded one, the tracer's clock reads) ask.
const CLOCK_OPT_IN: &str = "PNMPI_WrapsClock";

/// Whether routine `id` reads the clock (`MPI_Wtime`, `MPI_Wtick`).
fn is_clock(id: usize) -> bool {
    matches!(ROUTINE_NAMES[id], "MPI_Wtime" | "MPI_Wtick")
}

/// The address of `name` if the module loaded as `object` defines it itself
/// (a `dlsym` on its handle would also search its dependencies).
fn own_symbol(object: &Object, layout: &layout::Layout, name: &str) -> Option<usize> {
    let symbols = DynSymbols::new(&object.image(&layout.segments), &layout.tables, layout.ctx).ok()?;
    let value = symbols.lookup(name.as_bytes(), gnu_hash(name.as_bytes()))?;
    Some(object.address(value))
}

/// Refuses a module that wraps `MPI_X` and calls `PMPI_X` directly, and
/// never calls the chain (`XMPI_`): a PMPI tool that was not patched, which
/// would silently cut the modules below it out of the chain. A module that
/// calls `XMPI_` knows the chain, and its `PMPI_` calls are its own
/// housekeeping, meant to bypass the modules below (`pnmpi_sdk::native`).
fn refuse_unpatched(
    config: &Config,
    spec: &ModuleSpec,
    path: &Path,
    file: &inspect::FileInfo,
    wraps: &[(usize, *const ())],
) -> Result<(), Error> {
    if file.calls_chain() {
        return Ok(());
    }
    let imports = &file.pmpi_imports;
    let bypassed: Vec<&str> = wraps
        .iter()
        .filter(|(id, _)| imports.contains(*id))
        .map(|&(id, _)| &ROUTINE_NAMES[id]["MPI_".len()..])
        .collect();
    if bypassed.is_empty() {
        return Ok(());
    }
    let shown: Vec<String> = bypassed.iter().take(4).map(|n| format!("PMPI_{n}")).collect();
    let more = if bypassed.len() > 4 {
        format!(" and {} more", bypassed.len() - 4)
    } else {
        String::new()
    };
    Err(load_error(
        config,
        spec,
        path,
        format!(
        "it is an unpatched PMPI tool: its wrappers call {}{more} directly, which would skip every module \
         below it. Patch it first: pnmpi-patch {}",
        shown.join(", "),
        path.display()
    ),
    ))
}

fn load_error(config: &Config, spec: &ModuleSpec, path: &Path, reason: String) -> Error {
    Error::Load {
        file: config.file.clone(),
        line: spec.line,
        name: spec.name.clone(),
        path: path.to_path_buf(),
        reason,
    }
}

fn nul_in_argument(config: &Config, spec: &ModuleSpec, key: &str) -> Error {
    Error::Syntax {
        file: config.file.clone(),
        line: spec.line,
        msg: format!("argument `{key}` of module `{}` contains a NUL byte", spec.name),
    }
}

/// The first `len` bytes of `path`: what a private copy needs.
fn mapped_bytes(path: &Path, len: u64) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::with_capacity(len as usize);
    std::fs::File::open(path)
        .and_then(|f| std::io::Read::read_to_end(&mut std::io::Read::take(f, len), &mut bytes))
        .map_err(|e| format!("cannot read it for a private copy: {e}"))?;
    if (bytes.len() as u64) < len {
        return Err(format!("it shrank to {} bytes while being loaded", bytes.len()));
    }
    Ok(bytes)
}

/// A file as the dynamic loader tells files apart: device and inode.
type FileId = (u64, u64);

/// A file loaded before: what it says, and the bytes of its private
/// copies once it is listed again.
type Seen = (Arc<FileInfo>, Option<Vec<u8>>);

/// Loads every module of `config`, in order. Modules of every stack are
/// loaded, so that errors in any of them stop the run.
pub fn load(config: &Config, dirs: &[PathBuf]) -> Result<Vec<Module>, Error> {
    // By device and inode, so that a second path to the same file (a
    // link) also gets a private copy; the copies' bytes are read once.
    let mut seen: HashMap<FileId, Seen> = HashMap::new();
    let mut modules = Vec::with_capacity(config.modules.len());
    for spec in &config.modules {
        let path = resolve::resolve(spec, &config.file, dirs)?;
        let fail = |reason| load_error(config, spec, &path, reason);
        let identity = std::fs::metadata(&path)
            .map(|m| (m.dev(), m.ino()))
            .map_err(|e| fail(format!("cannot read it: {e}")))?;
        let private_copy = seen.contains_key(&identity);
        let (object, file, helpers_calling_xmpi) = match seen.get_mut(&identity) {
            Some((file, copied)) => {
                let bytes = match copied {
                    Some(bytes) => bytes,
                    None => copied.insert(mapped_bytes(&path, file.layout.loaded_bytes).map_err(fail)?),
                };
                let before = deps::loads();
                let lazy = !file.layout.tables.bind_now;
                let mut object = Object::open(&path, Some(bytes), lazy).map_err(fail)?;
                object.check_imports(&path, &file.lazy_imports).map_err(fail)?;
                (object, Arc::clone(file), deps::helpers_calling_xmpi(before))
            }
            None => {
                let layout = layout::read(&path).map_err(fail)?;
                let before = deps::loads();
                let mut object = Object::open(&path, None, !layout.tables.bind_now).map_err(fail)?;
                let helpers = deps::helpers_calling_xmpi(before);
                let segments = layout.segments.clone();
                let file = Arc::new(inspect::read(layout, &object.image(&segments), true).map_err(fail)?);
                object.check_imports(&path, &file.lazy_imports).map_err(fail)?;
                seen.insert(identity, (Arc::clone(&file), None));
                (object, file, helpers)
            }
        };
        let wraps_clock = own_symbol(&object, &file.layout, CLOCK_OPT_IN).is_some();
        let wraps: Vec<(usize, *const ())> = file
            .wraps
            .iter()
            .filter(|&&(id, _)| wraps_clock || !is_clock(id))
            .map(|&(id, vaddr)| (id, object.address(vaddr) as *const ()))
            .collect();
        refuse_unpatched(config, spec, &path, &file, &wraps)?;
        let module_name =
            own_symbol(&object, &file.layout, "PNMPI_ModuleName").and_then(|a| object.string_at(a));
        let arguments = spec
            .arguments
            .iter()
            .map(|(k, v)| {
                let c = |s: &str| CString::new(s).map_err(|_| nul_in_argument(config, spec, k));
                Ok((c(k)?, c(v)?))
            })
            .collect::<Result<_, Error>>()?;
        modules.push(Module {
            spec: spec.clone(),
            path,
            module_name,
            wraps,
            private_copy,
            helpers_calling_xmpi,
            arguments,
            object,
            file,
        });
    }
    Ok(modules)
}
