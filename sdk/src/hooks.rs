//! The module's name and LLNL PnMPI's hooks, defined with [`crate::module!`],
//! and the panic guard that every hook and wrapper of this crate runs in.
//!
//! libpnmpi calls `PNMPI_RegistrationPoint` and then `PNMPI_Init` of every
//! module once all are loaded, before MPI starts; `PNMPI_Fini` and then
//! `PNMPI_UnregistrationPoint` at exit, after MPI has finished.

use std::ffi::{c_char, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The type of `PNMPI_ModuleName`: a `const char *` that C reads, naming
/// the module in libpnmpi's messages and in
/// [`crate::services::module_by_name`].
#[repr(transparent)]
pub struct ModuleName(*const c_char);

// SAFETY: the pointer is to a string literal, immutable for the life of
// the program.
unsafe impl Sync for ModuleName {}

impl ModuleName {
    /// A name from a NUL-terminated string literal. A NUL inside the name,
    /// or a missing final NUL, stops the build (the static's initializer
    /// is evaluated at compile time).
    pub const fn new(with_nul: &'static str) -> ModuleName {
        match CStr::from_bytes_with_nul(with_nul.as_bytes()) {
            Ok(name) => ModuleName(name.as_ptr()),
            Err(_) => panic!("a module name is one NUL-terminated string without another NUL"),
        }
    }

    /// The name as Rust sees it.
    pub fn as_c_str(&self) -> &'static CStr {
        // SAFETY: made by `new` from a NUL-terminated `'static` string.
        unsafe { CStr::from_ptr(self.0) }
    }
}

/// Runs `body`, the code of a hook or wrapper called from C. A panic must
/// not unwind into C (undefined behaviour) and the chain cannot carry on
/// without the layer that failed: after the panic message, this names
/// `what` and ends the job ([`crate::say::fatal`]).
pub fn guard<R>(what: &str, body: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(value) => value,
        Err(_) => crate::say::fatal("module", format_args!("panic in {what}; ending the job")),
    }
}

/// Defines the module's name and hooks. Every entry is optional; each hook
/// is a closure or function taking nothing and returning `()`:
///
/// ```ignore
/// pnmpi_sdk::module! {
///     name: "sendcount",
///     registration_point: || { /* register services and globals */ },
///     init: || { /* read arguments */ },
///     fini: report,
///     unregistration_point: || {},
/// }
/// ```
///
/// It defines `PNMPI_ModuleName` and `PNMPI_RegistrationPoint`,
/// `PNMPI_Init`, `PNMPI_Fini`, `PNMPI_UnregistrationPoint` as libpnmpi
/// looks them up, each running in [`guard`]. An unknown key is a compile
/// error.
#[macro_export]
macro_rules! module {
    (name: $name:literal $(, $hook:ident : $body:expr)* $(,)?) => {
        /// This module's name, read by libpnmpi.
        #[no_mangle]
        pub static PNMPI_ModuleName: $crate::hooks::ModuleName =
            $crate::hooks::ModuleName::new(concat!($name, "\0"));
        $( $crate::__hook!($hook, $body); )*
    };
    ($($hook:ident : $body:expr),* $(,)?) => {
        $( $crate::__hook!($hook, $body); )*
    };
}

/// Asks libpnmpi to call this module's `MPI_Wtime` and `MPI_Wtick`
/// wrappers. Without it they are never called, as under LLNL's libpnmpi
/// (which defines neither routine, so an application's clock reads go
/// straight to MPI): modules built by LLNL's wrapper generator wrap every
/// routine, the clock included, and expect it untouched. A module whose
/// clock wrappers matter (a virtual clock, a recorded one, a tracer of
/// clock reads) invokes this once:
///
/// ```
/// pnmpi_sdk::wraps_clock!();
/// ```
#[macro_export]
macro_rules! wraps_clock {
    () => {
        /// Read by libpnmpi: call this module's `MPI_Wtime` and `MPI_Wtick`.
        #[no_mangle]
        pub static PNMPI_WrapsClock: ::core::ffi::c_int = 1;
    };
}

/// One hook of [`module!`].
#[doc(hidden)]
#[macro_export]
macro_rules! __hook {
    (registration_point, $body:expr) => {
        $crate::__hook!(@define PNMPI_RegistrationPoint, $body);
    };
    (init, $body:expr) => {
        $crate::__hook!(@define PNMPI_Init, $body);
    };
    (fini, $body:expr) => {
        $crate::__hook!(@define PNMPI_Fini, $body);
    };
    (unregistration_point, $body:expr) => {
        $crate::__hook!(@define PNMPI_UnregistrationPoint, $body);
    };
    (@define $symbol:ident, $body:expr) => {
        #[doc = concat!("The `", stringify!($symbol), "` hook, called by libpnmpi.")]
        #[no_mangle]
        pub extern "C" fn $symbol() {
            let hook: fn() = $body;
            $crate::hooks::guard(concat!("the ", stringify!($symbol), " hook"), hook)
        }
    };
    ($other:ident, $body:expr) => {
        compile_error!(concat!(
            "unknown key `",
            stringify!($other),
            "` in pnmpi_sdk::module!; expected name (first), registration_point, init, fini or \
             unregistration_point"
        ));
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_names_are_c_strings() {
        static NAME: ModuleName = ModuleName::new("sendcount\0");
        assert_eq!(NAME.as_c_str(), c"sendcount");
    }

    #[test]
    fn guard_returns_the_value() {
        assert_eq!(guard("a test", || 7), 7);
    }
}
