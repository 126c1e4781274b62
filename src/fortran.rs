//! Fortran applications: the native MPI's Fortran bindings convert
//! Fortran handles, strings and status arrays to C and then call
//! `PMPI_X` directly (all of Open MPI's `libmpi_mpifh`, which its `use mpi`
//! and `use mpi_f08` libraries call in turn, and the `mpi_f08` half of
//! MPICH's `libmpichfort`). Those calls would skip every module, and
//! `MPI_Init` would never load them.
//!
//! When libpnmpi is loaded, before `main`, each such library's `PMPI_X`
//! GOT slots are written with libpnmpi's own `MPI_X`: the call then enters
//! the chain with C handles, exactly as a C application's call does, and
//! `MPI_Init` loads the modules. Two kinds of slot are left alone or
//! filtered, so that modules see only the calls the application made:
//!
//! - handle conversions (`PMPI_Comm_f2c`, `..._c2f`), which every binding
//!   makes on its own behalf, stay native;
//! - routines a binding also calls as a helper of another routine
//!   ([`HELPERS`]: `PMPI_Comm_size` inside `mpi_gatherv`, for example) go
//!   through a filter: into the chain only when the call comes from the
//!   binding of that same routine (by return address, against the
//!   function's symbol range), else straight to MPI.
//!
//! `docs/fortran.md` lists how the helpers were found, and what is not
//! intercepted.

use crate::entry::{self, ByRoutine};
use crate::error::Error;
use pnmpi_mpi_sys::{routine_named, same_bytes, FORTRAN_BINDINGS, ROUTINE_COUNT, ROUTINE_NAMES};
use pnmpi_objects::dynsym::gnu_hash;
use pnmpi_objects::foreign::{self, Foreign};
use pnmpi_objects::got;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Routines that the Fortran bindings of Open MPI 4.1 and MPICH 4.0 also
/// call as helpers inside other routines' bindings (found by
/// disassembling them, see `docs/fortran.md`).
pub const HELPERS: [&str; 9] = [
    "MPI_Comm_size",
    "MPI_Cartdim_get",
    "MPI_Dist_graph_neighbors_count",
    "MPI_Type_free",
    "MPI_Type_commit",
    "MPI_Type_contiguous",
    "MPI_Type_create_hvector",
    "MPI_Comm_spawn",
    "MPI_Comm_spawn_multiple",
];

/// Function ranges a helper filter tells apart, at most.
const RANGES: usize = 32;

/// What one helper's filter shim reads: where a genuine call goes (the
/// chain), where a helper call goes (MPI), and the `[start, end)` ranges
/// of the routine's own binding functions, ended by a zero start.
#[repr(C)]
struct Filter {
    chain: AtomicUsize,
    native: AtomicUsize,
    ranges: [AtomicUsize; 2 * RANGES + 2],
}

static FILTERS: [Filter; HELPERS.len()] = [const {
    Filter {
        chain: AtomicUsize::new(0),
        native: AtomicUsize::new(0),
        ranges: [const { AtomicUsize::new(0) }; 2 * RANGES + 2],
    }
}; HELPERS.len()];

/// Defines the naked filter shim of helper `$k`: the return address goes
/// into the chain if it lies in one of the helper's ranges, else to MPI.
/// It uses only r10 and r11, which carry no argument, and no stack, so it
/// fits the helper's signature.
#[cfg(target_arch = "x86_64")]
macro_rules! filters {
    ($($k:literal => $name:ident),*) => {
        $(
            #[unsafe(naked)]
            unsafe extern "C" fn $name() {
                core::arch::naked_asm!(
                    "mov r11, qword ptr [rsp]",
                    "lea r10, [rip + {filters} + {offset}]",
                    "2:",
                    "add r10, 16",
                    "cmp qword ptr [r10], 0",
                    "je 4f",
                    "cmp r11, qword ptr [r10]",
                    "jb 2b",
                    "cmp r11, qword ptr [r10 + 8]",
                    "jae 2b",
                    "jmp qword ptr [rip + {filters} + {offset}]",
                    "4:",
                    "jmp qword ptr [rip + {filters} + {offset} + 8]",
                    filters = sym FILTERS,
                    offset = const $k * std::mem::size_of::<Filter>(),
                )
            }
        )*
        /// The filter shims, by helper.
        static SHIMS: [unsafe extern "C" fn(); HELPERS.len()] = [$($name),*];
    };
}

#[cfg(target_arch = "x86_64")]
filters!(0 => filter0, 1 => filter1, 2 => filter2, 3 => filter3, 4 => filter4,
         5 => filter5, 6 => filter6, 7 => filter7, 8 => filter8);

/// What was bound, for `PNMPI_VERBOSE`.
#[derive(Default)]
pub struct Bound {
    /// `(library, PMPI_ slots bound into the chain, of which filtered)`.
    pub libraries: Vec<(String, usize, usize)>,
    /// `PMPI` imports that are no routine of `mpi.h`: never intercepted.
    pub unknown: Vec<String>,
}

impl Bound {
    /// One line per library, and the imports nothing can bind.
    pub fn describe(&self) -> String {
        let mut text = String::new();
        for (lib, slots, filtered) in &self.libraries {
            let _ = writeln!(
                text,
                "pnmpi: fortran: {lib}: {slots} PMPI_ slots bound into the chain ({filtered} through a helper filter)"
            );
        }
        if !self.unknown.is_empty() {
            let _ = writeln!(
                text,
                "pnmpi: fortran: not intercepted (no routine of mpi.h): {}",
                self.unknown.join(" ")
            );
        }
        text
    }
}

/// Bytes of the longest name [`binding_name`] spells.
const NAME_BYTES: usize = 64;

/// Names under which a binding library may define one routine's own
/// binding, in [`binding_name`]'s order.
const FORMS: usize = 20;

/// Fortran symbol prefixes, and suffixes after the lower-case name.
const PREFIXES: [&[u8]; 3] = [b"mpi_", b"pmpi_", b"pmpir_"];
const SUFFIXES: [&[u8]; 6] = [
    b"_",
    b"__",
    b"_f08_",
    b"_f08ts_",
    b"_f08_large_",
    b"_f08ts_large_",
];

/// One binding name, spelled when libpnmpi is compiled, and its GNU hash.
struct BindingName {
    bytes: [u8; NAME_BYTES],
    len: usize,
    hash: u32,
}

impl BindingName {
    fn bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// `head`, routine `mpi`'s name (`upper`: all of it in upper case; else
/// without `MPI_`, in lower case), then `tail`.
const fn spell(head: &[u8], mpi: &str, upper: bool, tail: &[u8]) -> BindingName {
    let mpi = mpi.as_bytes();
    let mut bytes = [0; NAME_BYTES];
    let mut len = 0;
    let mut i = 0;
    while i < head.len() {
        bytes[len] = head[i];
        len += 1;
        i += 1;
    }
    i = if upper { 0 } else { "MPI_".len() };
    while i < mpi.len() {
        bytes[len] = if upper {
            mpi[i].to_ascii_uppercase()
        } else {
            mpi[i].to_ascii_lowercase()
        };
        len += 1;
        i += 1;
    }
    i = 0;
    while i < tail.len() {
        bytes[len] = tail[i];
        len += 1;
        i += 1;
    }
    let hash = gnu_hash(bytes.split_at(len).0);
    BindingName { bytes, len, hash }
}

/// Form `form` of the names under which a binding library may define
/// routine `mpi`'s own binding (`MPI_Comm_size`: `ompi_comm_size_f`,
/// `MPI_COMM_SIZE`, `mpi_comm_size_`, `mpi_comm_size_f08_`, ...).
const fn binding_name(mpi: &str, form: usize) -> BindingName {
    match form {
        0 => spell(b"ompi_", mpi, false, b"_f"),
        1 => spell(b"", mpi, true, b""),
        _ => {
            let k = form - 2;
            spell(
                PREFIXES[k / SUFFIXES.len()],
                mpi,
                false,
                SUFFIXES[k % SUFFIXES.len()],
            )
        }
    }
}

/// Every helper's binding names, spelled and hashed when libpnmpi is
/// compiled: this runs for every helper before `main`.
static BINDING_NAMES: [[BindingName; FORMS]; HELPERS.len()] = {
    let mut names = [const { [const { spell(b"", "", false, b"") }; FORMS] }; HELPERS.len()];
    let mut k = 0;
    while k < HELPERS.len() {
        let mut form = 0;
        while form < FORMS {
            names[k][form] = binding_name(HELPERS[k], form);
            form += 1;
        }
        k += 1;
    }
    names
};

/// `ends` at the end of `name`, in a constant.
const fn ends_with(name: &str, ends: &str) -> bool {
    let (a, b) = (name.as_bytes(), ends.as_bytes());
    a.len() >= b.len() && same_bytes(a.split_at(a.len() - b.len()).1, b)
}

/// [`HELPERS`]' routine ids.
static HELPER_IDS: [usize; HELPERS.len()] = {
    let mut ids = [0; HELPERS.len()];
    let mut k = 0;
    while k < HELPERS.len() {
        ids[k] = match routine_named(HELPERS[k]) {
            Some(id) => id,
            None => panic!("a helper is no routine of mpi.h"),
        };
        k += 1;
    }
    ids
};

/// The handle conversions (`MPI_X_f2c`, `MPI_X_c2f`), which the bindings
/// call as functions of the C library, never as a routine: by id.
static CONVERSIONS: [bool; ROUTINE_COUNT] = {
    let mut is = [false; ROUTINE_COUNT];
    let mut id = 0;
    while id < ROUTINE_COUNT {
        is[id] = ends_with(ROUTINE_NAMES[id], "_f2c") || ends_with(ROUTINE_NAMES[id], "_c2f");
        id += 1;
    }
    is
};

/// Where the `PMPI_X` slot of `lib` goes, or None to leave it native.
fn target(
    id: usize,
    lib: &Foreign,
    application: ByRoutine,
    filtered: &mut usize,
) -> Result<Option<usize>, String> {
    if CONVERSIONS[id] {
        return Ok(None);
    }
    let chain = application(id) as usize;
    let Some(k) = HELPER_IDS.iter().position(|&h| h == id) else {
        return Ok(Some(chain));
    };
    let name = ROUTINE_NAMES[id];
    if !cfg!(target_arch = "x86_64") {
        return Ok(Some(chain));
    }
    let filter = &FILTERS[k];
    filter.chain.store(chain, Ordering::Relaxed);
    filter.native.store(entry::native(id) as usize, Ordering::Relaxed);
    // Ranges of earlier libraries stay: one filter serves them all.
    let used = filter
        .ranges
        .iter()
        .position(|r| r.load(Ordering::Relaxed) == 0)
        .unwrap_or(0)
        / 2;
    for (i, (start, end)) in lib
        .functions(BINDING_NAMES[k].iter().map(|n| (n.bytes(), n.hash)))
        .into_iter()
        .enumerate()
    {
        let at = used + i;
        if at == RANGES {
            return Err(format!("{name} has more than {RANGES} binding functions"));
        }
        filter.ranges[2 * at].store(start, Ordering::Relaxed);
        filter.ranges[2 * at + 1].store(end, Ordering::Relaxed);
    }
    *filtered += 1;
    #[cfg(target_arch = "x86_64")]
    return Ok(Some(SHIMS[k] as usize));
    #[cfg(not(target_arch = "x86_64"))]
    unreachable!("helpers are filtered on x86-64 only")
}

/// Binds the `PMPI_X` slots of every loaded Fortran binding library to
/// `application`'s addresses. Runs before `main` (libpnmpi's
/// constructor), when no other thread can be calling through them.
pub fn bind(application: ByRoutine) -> Result<Bound, Error> {
    let fail = |e: String| Error::Setting(format!("cannot intercept the Fortran MPI bindings: {e}"));
    let mut bound = Bound::default();
    for lib in foreign::loaded(FORTRAN_BINDINGS).map_err(fail)? {
        let mut filtered = 0;
        let mut slots = Vec::with_capacity(lib.file.pmpi_slots.len());
        for &(id, vaddr) in &lib.file.pmpi_slots {
            if let Some(target) = target(id, &lib, application, &mut filtered).map_err(fail)? {
                slots.push((lib.address(vaddr), target));
            }
        }
        let name = lib.path.display().to_string();
        // SAFETY: the slots are `PMPI_X` GOT entries of the library (its
        // relocations name them); each target is libpnmpi's `MPI_X` or a
        // filter shim that jumps to `MPI_X` or `PMPI_X`, all of X's C
        // signature.
        unsafe { got::write(&name, lib.base, lib.file.layout.relro, &slots) }.map_err(fail)?;
        bound.libraries.push((name, slots.len(), filtered));
        bound.unknown.extend(lib.file.pmpi_unknown.iter().cloned());
    }
    bound.unknown.sort();
    bound.unknown.dedup();
    Ok(bound)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_helpers_binding_names_are_spelled_and_hashed_when_compiled() {
        let k = HELPERS.iter().position(|&h| h == "MPI_Comm_size").unwrap();
        let names: Vec<String> = BINDING_NAMES[k]
            .iter()
            .map(|n| String::from_utf8_lossy(n.bytes()).into_owned())
            .collect();
        let mut expected = vec!["ompi_comm_size_f".to_string(), "MPI_COMM_SIZE".to_string()];
        for prefix in ["mpi_", "pmpi_", "pmpir_"] {
            for suffix in ["_", "__", "_f08_", "_f08ts_", "_f08_large_", "_f08ts_large_"] {
                expected.push(format!("{prefix}comm_size{suffix}"));
            }
        }
        assert_eq!(names, expected);
        for n in BINDING_NAMES.iter().flatten() {
            assert_eq!(n.hash, gnu_hash(n.bytes()));
        }
    }

    #[test]
    fn helpers_and_handle_conversions_are_known_by_id() {
        for (k, &id) in HELPER_IDS.iter().enumerate() {
            assert_eq!(ROUTINE_NAMES[id], HELPERS[k]);
        }
        for (id, name) in ROUTINE_NAMES.iter().enumerate() {
            assert_eq!(
                CONVERSIONS[id],
                name.ends_with("_f2c") || name.ends_with("_c2f"),
                "{name}"
            );
        }
        assert!(CONVERSIONS.iter().any(|&c| c));
    }
}
