//! LLNL PnMPI's module services (`PNMPI_Service_*`, declared in
//! `include/pnmpi.h`), with Rust types: the module's configuration
//! arguments, module and stack handles, and the named services and
//! globals through which modules cooperate.
//!
//! The services know which module is asking from the calling thread's
//! place in the chain, so the `*_self` calls and [`argument`] work inside
//! a wrapper or a hook of the module, not in a thread the module started.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::fmt;
use std::sync::atomic::{AtomicI16, AtomicI32, AtomicI64, AtomicI8, AtomicU32};

/// `PNMPI_SERVICE_NAMELEN`: bytes of a name field, terminating NUL included.
pub const NAME_LEN: usize = 256;
/// `PNMPI_SERVICE_SIGLEN`: bytes of a signature field, NUL included.
pub const SIG_LEN: usize = 64;

/// `PNMPI_Service_Fct_t`: a service's function as registered. Its real
/// signature is the one its `sig` string describes; the user of a service
/// casts it back to that.
pub type ServiceFn = unsafe extern "C" fn() -> c_int;

/// `PNMPI_Service_descriptor_t`, laid out as in `pnmpi.h`; the
/// descriptor calls link the `..._Wide` symbols that take this layout, as
/// `pnmpi.h` binds them (the plain ones take LLNL's smaller layout).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ServiceDescriptor {
    name: [c_char; NAME_LEN],
    sig: [c_char; SIG_LEN],
    fct: Option<ServiceFn>,
}

/// `PNMPI_Global_descriptor_t`, laid out as in `pnmpi.h` (the address
/// union is one pointer).
#[repr(C)]
struct GlobalDescriptor {
    name: [c_char; NAME_LEN],
    sig: c_char,
    addr: *mut c_void,
}

extern "C" {
    fn PNMPI_Service_GetModuleByName(name: *const c_char, handle: *mut c_int) -> c_int;
    fn PNMPI_Service_GetModuleSelf(handle: *mut c_int) -> c_int;
    fn PNMPI_Service_GetStackByName(name: *const c_char, stack: *mut c_int) -> c_int;
    #[link_name = "PNMPI_Service_RegisterService_Wide"]
    fn PNMPI_Service_RegisterService(service: *const ServiceDescriptor) -> c_int;
    #[link_name = "PNMPI_Service_GetServiceByName_Wide"]
    fn PNMPI_Service_GetServiceByName(
        handle: c_int,
        name: *const c_char,
        sig: *const c_char,
        service: *mut ServiceDescriptor,
    ) -> c_int;
    #[link_name = "PNMPI_Service_RegisterGlobal_Wide"]
    fn PNMPI_Service_RegisterGlobal(global: *const GlobalDescriptor) -> c_int;
    #[link_name = "PNMPI_Service_GetGlobalByName_Wide"]
    fn PNMPI_Service_GetGlobalByName(
        handle: c_int,
        name: *const c_char,
        sig: c_char,
        global: *mut GlobalDescriptor,
    ) -> c_int;
    fn PNMPI_Service_GetArgumentSelf(key: *const c_char) -> *const c_char;
    fn PNMPI_Service_GetPcontrolSelf() -> c_int;
    fn PNMPI_Service_strerror(status: c_int) -> *const c_char;
}

/// A failed service call: `PNMPI_status_t` other than `PNMPI_SUCCESS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// `PNMPI_FAILURE`: a bad argument, e.g. a name longer than
    /// [`NAME_LEN`]` - 1` bytes or containing a NUL.
    Failure,
    /// `PNMPI_NOMEM`.
    NoMem,
    /// `PNMPI_NOMODULE`: no such module, or the caller is not a module.
    NoModule,
    /// `PNMPI_NOSERVICE`.
    NoService,
    /// `PNMPI_NOGLOBAL`.
    NoGlobal,
    /// `PNMPI_SIGNATURE`: registered with another signature or type.
    Signature,
    /// `PNMPI_NOARG`.
    NoArg,
    /// `PNMPI_NOSTACK`.
    NoStack,
    /// `PNMPI_NOT_IMPLEMENTED`.
    NotImplemented,
    /// A code `pnmpi.h` does not define.
    Other(i32),
}

impl Error {
    /// The error for a `PNMPI_status_t`, or `Ok` for `PNMPI_SUCCESS`.
    pub fn check(status: i32) -> Result<(), Error> {
        Err(match status {
            0 => return Ok(()),
            -1 => Error::Failure,
            -2 => Error::NoMem,
            -3 => Error::NoModule,
            -4 => Error::NoService,
            -5 => Error::NoGlobal,
            -6 => Error::Signature,
            -7 => Error::NoArg,
            -8 => Error::NoStack,
            s if s == i32::from(i8::MIN) => Error::NotImplemented,
            s => Error::Other(s),
        })
    }

    /// The `PNMPI_status_t` value.
    pub fn code(self) -> i32 {
        match self {
            Error::Failure => -1,
            Error::NoMem => -2,
            Error::NoModule => -3,
            Error::NoService => -4,
            Error::NoGlobal => -5,
            Error::Signature => -6,
            Error::NoArg => -7,
            Error::NoStack => -8,
            Error::NotImplemented => i32::from(i8::MIN),
            Error::Other(s) => s,
        }
    }
}

impl fmt::Display for Error {
    /// libpnmpi's own text for the status, as C modules print it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (PNMPI status {})", strerror(self.code()), self.code())
    }
}

impl std::error::Error for Error {}

/// `PNMPI_Service_strerror`: libpnmpi's text for a status code.
pub fn strerror(status: i32) -> String {
    // SAFETY: takes a plain integer; libpnmpi returns null or a static
    // NUL-terminated string.
    let text = unsafe { PNMPI_Service_strerror(status) };
    if text.is_null() {
        return format!("status {status}");
    }
    // SAFETY: non-null, NUL-terminated and never freed (see above).
    unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned()
}

/// A name as a C string, refused like libpnmpi refuses it: containing a
/// NUL, or too long for a descriptor field of `limit` bytes.
fn c_name(text: &str, limit: usize) -> Result<CString, Error> {
    if text.len() >= limit {
        return Err(Error::Failure);
    }
    CString::new(text).map_err(|_| Error::Failure)
}

/// Copies a checked name into a descriptor field, NUL-padded.
fn fill<const N: usize>(text: &CStr) -> [c_char; N] {
    let mut field = [0; N];
    for (dst, &src) in field.iter_mut().zip(text.to_bytes()) {
        *dst = src as c_char;
    }
    field
}

/// Reads a descriptor field: the bytes up to the first NUL.
fn field_text(field: &[c_char]) -> String {
    let bytes: Vec<u8> = field.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// A module's handle (`PNMPI_modHandle_t`), for looking up what it offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Module(c_int);

impl Module {
    /// The C handle: the module's place in the chain (0 first, i.e. on
    /// top), so a module can tell whether another sits above or below it.
    pub fn handle(self) -> c_int {
        self.0
    }
}

/// A stack's handle, for entering another stack with `next_in!` in a
/// [`crate::wrap!`] wrapper or with `raw::XMPI_X_NewStack`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stack(c_int);

impl Stack {
    /// The C handle, as `XMPI_X_NewStack` takes it.
    pub fn handle(self) -> c_int {
        self.0
    }
}

/// `PNMPI_Service_GetModuleSelf`: the calling module.
pub fn module_self() -> Result<Module, Error> {
    let mut handle = -1;
    // SAFETY: `handle` is a local out-parameter.
    Error::check(unsafe { PNMPI_Service_GetModuleSelf(&mut handle) })?;
    Ok(Module(handle))
}

/// `PNMPI_Service_GetModuleByName`: a module by the name it registered, its
/// `PNMPI_ModuleName`, or its configured name.
pub fn module_by_name(name: &str) -> Result<Module, Error> {
    let name = c_name(name, NAME_LEN)?;
    let mut handle = -1;
    // SAFETY: `name` is NUL-terminated; `handle` is a local out-parameter.
    Error::check(unsafe { PNMPI_Service_GetModuleByName(name.as_ptr(), &mut handle) })?;
    Ok(Module(handle))
}

/// `PNMPI_Service_GetStackByName`: a stack named by a `stack NAME` line.
pub fn stack_by_name(name: &str) -> Result<Stack, Error> {
    let name = c_name(name, NAME_LEN)?;
    let mut handle = -1;
    // SAFETY: `name` is NUL-terminated; `handle` is a local out-parameter.
    Error::check(unsafe { PNMPI_Service_GetStackByName(name.as_ptr(), &mut handle) })?;
    Ok(Stack(handle))
}

/// `PNMPI_Service_GetArgumentSelf`: the value of the calling module's
/// `argument KEY VALUE` line for `key` (the last one, if repeated).
pub fn argument(key: &str) -> Option<String> {
    let key = c_name(key, NAME_LEN).ok()?;
    // SAFETY: `key` is NUL-terminated.
    let value = unsafe { PNMPI_Service_GetArgumentSelf(key.as_ptr()) };
    if value.is_null() {
        return None;
    }
    // SAFETY: non-null: a NUL-terminated string libpnmpi keeps for the
    // life of the process; it is copied at once.
    Some(unsafe { CStr::from_ptr(value) }.to_string_lossy().into_owned())
}

/// `PNMPI_Service_GetPcontrolSelf`: whether `MPI_Pcontrol` reaches the
/// calling module (`pcontrol on|off`, `globalpcontrol`).
pub fn pcontrol_self() -> bool {
    // SAFETY: takes no argument.
    unsafe { PNMPI_Service_GetPcontrolSelf() != 0 }
}

impl ServiceDescriptor {
    /// A descriptor for `fct` offered under `name` with signature `sig`
    /// (a string both sides agree on, e.g. LLNL's `"p"` or `"ii"`).
    pub fn new(name: &str, sig: &str, fct: ServiceFn) -> Result<ServiceDescriptor, Error> {
        Ok(ServiceDescriptor {
            name: fill(&c_name(name, NAME_LEN)?),
            sig: fill(&c_name(sig, SIG_LEN)?),
            fct: Some(fct),
        })
    }

    /// The service's name.
    pub fn name(&self) -> String {
        field_text(&self.name)
    }

    /// The service's signature.
    pub fn sig(&self) -> String {
        field_text(&self.sig)
    }

    /// The function, to be cast to the signature [`Self::sig`] describes.
    pub fn function(&self) -> Option<ServiceFn> {
        self.fct
    }
}

/// `PNMPI_Service_RegisterService`: offers a function to other modules,
/// replacing the calling module's service of the same name.
pub fn register_service(service: &ServiceDescriptor) -> Result<(), Error> {
    // SAFETY: `service` is a complete descriptor with NUL-terminated fields.
    Error::check(unsafe { PNMPI_Service_RegisterService(service) })
}

/// Offers `fct` as the service `name` with signature `sig`: a
/// [`ServiceDescriptor::new`] given to [`register_service`].
pub fn offer(name: &str, sig: &str, fct: ServiceFn) -> Result<(), Error> {
    register_service(&ServiceDescriptor::new(name, sig, fct)?)
}

/// `PNMPI_Service_GetServiceByName`: the service `name` of `module`, if it
/// was registered with signature `sig`.
pub fn service_by_name(module: Module, name: &str, sig: &str) -> Result<ServiceDescriptor, Error> {
    let (name, sig) = (c_name(name, NAME_LEN)?, c_name(sig, SIG_LEN)?);
    let mut out = ServiceDescriptor {
        name: [0; NAME_LEN],
        sig: [0; SIG_LEN],
        fct: None,
    };
    // SAFETY: `name` and `sig` are NUL-terminated; `out` is a local
    // descriptor libpnmpi fills.
    Error::check(unsafe { PNMPI_Service_GetServiceByName(module.0, name.as_ptr(), sig.as_ptr(), &mut out) })?;
    Ok(out)
}

mod sealed {
    /// Only this crate chooses the types a global may have.
    pub trait SealedGlobal {}
}

/// A type a global may have: an atomic integer, because a global is
/// shared between modules (and their threads) by address. Its
/// `pnmpi.h` type letter is [`Global::SIG`]; a C module sees the C type
/// of the same size (`'c'` char, `'s'` short, `'i'` int, `'u'` unsigned,
/// `'l'` long).
pub trait Global: sealed::SealedGlobal + Sync + 'static {
    /// The type letter of `PNMPI_Global_descriptor_t.sig`.
    const SIG: u8;
}

macro_rules! globals {
    ($($t:ty => $sig:literal),*) => {
        $(
            impl sealed::SealedGlobal for $t {}
            impl Global for $t {
                const SIG: u8 = $sig;
            }
        )*
    };
}

globals!(AtomicI8 => b'c', AtomicI16 => b's', AtomicI32 => b'i', AtomicU32 => b'u', AtomicI64 => b'l');

/// `PNMPI_Service_RegisterGlobal`: offers `value` to other modules under
/// `name`. It must live as long as the process, as every module may read
/// it at any time.
pub fn register_global<T: Global>(name: &str, value: &'static T) -> Result<(), Error> {
    let descriptor = GlobalDescriptor {
        name: fill(&c_name(name, NAME_LEN)?),
        sig: T::SIG as c_char,
        addr: std::ptr::from_ref(value).cast_mut().cast(),
    };
    // SAFETY: a complete descriptor; the address is of a static that is
    // only ever accessed atomically.
    Error::check(unsafe { PNMPI_Service_RegisterGlobal(&descriptor) })
}

/// `PNMPI_Service_GetGlobalByName`: the global `name` of `module`, if it
/// was registered with `T`'s type letter.
pub fn global_by_name<T: Global>(module: Module, name: &str) -> Result<&'static T, Error> {
    let name = c_name(name, NAME_LEN)?;
    let mut out = GlobalDescriptor {
        name: [0; NAME_LEN],
        sig: 0,
        addr: std::ptr::null_mut(),
    };
    // SAFETY: `name` is NUL-terminated; `out` is a local descriptor
    // libpnmpi fills.
    Error::check(unsafe {
        PNMPI_Service_GetGlobalByName(module.0, name.as_ptr(), T::SIG as c_char, &mut out)
    })?;
    let addr = out.addr.cast::<T>();
    if addr.is_null() || !addr.is_aligned() {
        return Err(Error::Failure);
    }
    // SAFETY: the owner registered a variable of this type letter, i.e. of
    // T's size, at this non-null, aligned address; modules stay loaded for
    // the life of the process, and T is an atomic, so shared access is sound.
    Ok(unsafe { &*addr })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_maps_to_its_error_and_back() {
        assert_eq!(Error::check(0), Ok(()));
        for code in [-1, -2, -3, -4, -5, -6, -7, -8, -128, -42] {
            let err = Error::check(code).unwrap_err();
            assert_eq!(err.code(), code);
        }
        assert_eq!(Error::check(-7), Err(Error::NoArg));
        assert_eq!(Error::check(-128), Err(Error::NotImplemented));
        assert_eq!(Error::check(-42), Err(Error::Other(-42)));
    }

    /// A registered function; never called in the test.
    unsafe extern "C" fn answer() -> c_int {
        42
    }

    #[test]
    fn descriptors_hold_names_up_to_the_header_limits() {
        let d = ServiceDescriptor::new("counts", "p", answer).unwrap();
        assert_eq!((d.name().as_str(), d.sig().as_str()), ("counts", "p"));
        assert!(d.function().is_some());
        let longest = "n".repeat(NAME_LEN - 1);
        assert_eq!(
            ServiceDescriptor::new(&longest, "p", answer).unwrap().name(),
            longest
        );
        let too_long = "n".repeat(NAME_LEN);
        assert_eq!(
            ServiceDescriptor::new(&too_long, "p", answer).err(),
            Some(Error::Failure)
        );
        let sig_too_long = "i".repeat(SIG_LEN);
        assert_eq!(
            ServiceDescriptor::new("s", &sig_too_long, answer).err(),
            Some(Error::Failure)
        );
        assert_eq!(
            ServiceDescriptor::new("a\0b", "p", answer).err(),
            Some(Error::Failure)
        );
    }

    #[test]
    fn descriptors_have_the_c_layout() {
        use std::mem::{offset_of, size_of};
        assert_eq!(offset_of!(ServiceDescriptor, sig), NAME_LEN);
        assert_eq!(offset_of!(ServiceDescriptor, fct), NAME_LEN + SIG_LEN);
        assert_eq!(
            size_of::<ServiceDescriptor>(),
            NAME_LEN + SIG_LEN + size_of::<usize>()
        );
        assert_eq!(offset_of!(GlobalDescriptor, addr), NAME_LEN + size_of::<usize>());
    }
}
