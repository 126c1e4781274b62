//! Fortran programs. The native MPI's Fortran bindings convert Fortran
//! handles, strings and status arrays to C, then call `PMPI_X` (all of
//! Open MPI's `libmpi_mpifh`, which its `use mpi` and `use mpi_f08`
//! libraries call in turn, and the `mpi_f08` part of MPICH's
//! `libmpichfort`; MPICH's `mpif.h` and `use mpi` call `MPI_X`, which
//! this layer defines anyway). Called natively, those `PMPI_X` would act
//! on the process as if it were one rank, with handles the native MPI
//! never made.
//!
//! So before the ranks start, each such library's `PMPI_X` GOT slots are
//! written with this layer's `MPI_X`, for every routine it defines, as
//! libpnmpi binds them into its chain (`pnmpi_objects`): the helpers a
//! binding calls inside another routine's (`PMPI_Comm_size` inside
//! `mpi_gatherv`) go to the virtual ranks too, since the handles they
//! get are virtual. The handle conversions the bindings make
//! (`PMPI_Comm_f2c`, `..._c2f`, and the group, request and window ones) are this
//! layer's: a virtual object's Fortran handle is [`FORTRAN_TAG`] plus
//! its index, above every handle Open MPI's Fortran tables hand out;
//! other handles convert natively. Under MPICH, whose Fortran handles
//! are its C handles, the conversions are the identity.

#![allow(non_snake_case)]

use crate::handles::{self, Kind};
use pnmpi_mpi_sys::{ffi, Handle, FORTRAN_BINDINGS, ROUTINE_NAMES};
use std::ffi::{c_int, c_void, CString};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The Fortran handles of virtual objects: this bit and the index.
const FORTRAN_TAG: c_int = 0x4000_0000;

/// The native conversions, by [`Kind`] (`f2c`, `c2f`), if the MPI library
/// defines them as functions (Open MPI; MPICH has macros).
static NATIVE: [[AtomicUsize; 2]; 4] = [const { [const { AtomicUsize::new(0) }; 2] }; 4];

const KINDS: [(Kind, &str); 4] = [
    (Kind::Comm, "Comm"),
    (Kind::Group, "Group"),
    (Kind::Request, "Request"),
    (Kind::Win, "Win"),
];

fn slot(kind: Kind) -> usize {
    kind as usize - 1
}

/// `symbol`'s address in the process, if something defines it.
fn lookup(symbol: &str, handle: *mut c_void) -> Option<usize> {
    let name = CString::new(symbol).ok()?;
    // SAFETY: dlsym with a valid C string and a loader handle.
    let p = unsafe { libc::dlsym(handle, name.as_ptr()) };
    (!p.is_null()).then_some(p as usize)
}

/// The base address of the object holding `address`.
fn object_of(address: usize) -> Option<usize> {
    pnmpi_objects::deps::object_at(address).map(|(_, base)| base)
}

/// This layer's own `MPI_X` for routine `name`, if it defines one (else
/// the slot stays native: datatypes, operations and the like).
fn own(name: &str) -> Option<usize> {
    let me = object_of(own as fn(&str) -> Option<usize> as usize)?;
    let f = lookup(name, libc::RTLD_DEFAULT)?;
    (object_of(f) == Some(me)).then_some(f)
}

/// Binds every loaded Fortran binding library's `PMPI_X` slots to the
/// virtual ranks. Returns the libraries bound and their slots. Runs
/// before the ranks start, when nothing calls through those slots.
pub fn bind() -> Result<Vec<(String, usize)>, String> {
    for (kind, name) in KINDS {
        for (k, way) in ["f2c", "c2f"].iter().enumerate() {
            let native = lookup(&format!("PMPI_{name}_{way}"), libc::RTLD_NEXT).unwrap_or(0);
            NATIVE[slot(kind)][k].store(native, Ordering::Relaxed);
        }
    }
    let mut bound = Vec::new();
    for lib in pnmpi_objects::foreign::loaded(FORTRAN_BINDINGS)? {
        let slots: Vec<(usize, usize)> = lib
            .file
            .pmpi_slots
            .iter()
            .filter_map(|&(id, vaddr)| Some((lib.address(vaddr), own(ROUTINE_NAMES[id])?)))
            .collect();
        let name = lib.path.display().to_string();
        // SAFETY: the slots are `PMPI_X` GOT entries of the library (its
        // relocations name them); each target is this layer's `MPI_X`, of
        // X's C signature.
        unsafe { pnmpi_objects::got::write(&name, lib.base, lib.file.layout.relro, &slots) }?;
        bound.push((name, slots.len()));
    }
    Ok(bound)
}

/// A Fortran handle to C: a virtual object's, or the native conversion.
fn f2c<H: Handle>(kind: Kind, f: c_int) -> H {
    match NATIVE[slot(kind)][0].load(Ordering::Relaxed) {
        0 => H::from_bits(f as u32 as u64),
        _ if f >= FORTRAN_TAG => crate::api::handle(kind, (f - FORTRAN_TAG) as usize),
        native => {
            // SAFETY: the native `PMPI_X_f2c`, found by `bind`, of this
            // signature.
            let native: unsafe extern "C" fn(c_int) -> H = unsafe { std::mem::transmute(native) };
            // SAFETY: any integer is a valid argument.
            unsafe { native(f) }
        }
    }
}

/// A C handle to Fortran: a virtual object's, or the native conversion.
fn c2f<H: Handle>(kind: Kind, h: H) -> c_int {
    match (
        NATIVE[slot(kind)][1].load(Ordering::Relaxed),
        handles::index(kind, h),
    ) {
        (0, _) => h.bits() as c_int,
        (_, Some(i)) => FORTRAN_TAG + i as c_int,
        (native, None) => {
            // SAFETY: the native `PMPI_X_c2f`, found by `bind`, of this
            // signature.
            let native: unsafe extern "C" fn(H) -> c_int = unsafe { std::mem::transmute(native) };
            // SAFETY: a handle the native MPI made (not a virtual one).
            unsafe { native(h) }
        }
    }
}

/// Defines `MPI_X_f2c` and `MPI_X_c2f` for a kind of virtual object.
macro_rules! conversions {
    ($($kind:ident: $f2c:ident, $c2f:ident, $handle:ty;)*) => {$(
        /// The Fortran-to-C conversion, virtual objects included.
        #[no_mangle]
        pub extern "C" fn $f2c(f: c_int) -> $handle {
            f2c(Kind::$kind, f)
        }

        /// The C-to-Fortran conversion, virtual objects included.
        #[no_mangle]
        pub extern "C" fn $c2f(h: $handle) -> c_int {
            c2f(Kind::$kind, h)
        }
    )*};
}

conversions! {
    Comm: MPI_Comm_f2c, MPI_Comm_c2f, ffi::MPI_Comm;
    Group: MPI_Group_f2c, MPI_Group_c2f, ffi::MPI_Group;
    Request: MPI_Request_f2c, MPI_Request_c2f, ffi::MPI_Request;
    Win: MPI_Win_f2c, MPI_Win_c2f, ffi::MPI_Win;
}
