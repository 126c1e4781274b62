//! The two binary layouts of the service and global descriptors.
//!
//! LLNL PnMPI's `service.h` sizes the name fields 30 bytes and the
//! signature 20; its compiled modules (`status`, `requests`, `datatype`,
//! ...) fill and read descriptors of exactly that layout. Our `pnmpi.h`
//! allows names of 255 bytes and signatures of 63, a larger layout. The
//! plain `PNMPI_Service_*` symbols take LLNL's layout, so LLNL's binaries
//! run unchanged; `pnmpi.h` binds its declarations to the `..._Wide`
//! symbols (an `__asm__` label), so modules built against it get the
//! larger one. Which layout a call uses is fixed by the symbol the module
//! linked, never guessed from memory.

use super::{NAME_MAX, SIG_MAX};
use std::ffi::{c_char, c_int, c_void};

/// LLNL's `PNMPI_SERVICE_NAMELEN`, terminating NUL included.
pub const LLNL_NAME: usize = 30;
/// LLNL's `PNMPI_SERVICE_SIGLEN`, terminating NUL included.
pub const LLNL_SIG: usize = 20;

/// `PNMPI_Service_descriptor_t` with `N`-byte names and `S`-byte signatures.
#[repr(C)]
pub struct ServiceDescriptor<const N: usize, const S: usize> {
    pub name: [c_char; N],
    pub sig: [c_char; S],
    pub fct: Option<unsafe extern "C" fn() -> c_int>,
}

/// `PNMPI_Global_descriptor_t` with `N`-byte names (the address union is
/// one pointer).
#[repr(C)]
pub struct GlobalDescriptor<const N: usize> {
    pub name: [c_char; N],
    pub sig: c_char,
    pub addr: *mut c_void,
}

/// The service descriptor of LLNL's compiled modules.
pub type LlnlService = ServiceDescriptor<LLNL_NAME, LLNL_SIG>;
/// The service descriptor of modules built against our `pnmpi.h`.
pub type WideService = ServiceDescriptor<NAME_MAX, SIG_MAX>;
/// The global descriptor of LLNL's compiled modules.
pub type LlnlGlobal = GlobalDescriptor<LLNL_NAME>;
/// The global descriptor of modules built against our `pnmpi.h`.
pub type WideGlobal = GlobalDescriptor<NAME_MAX>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    /// The offsets a C compiler gives LLNL's structs on x86-64 and our
    /// `pnmpi.h`'s: the function pointer after the padded arrays.
    #[test]
    fn layouts_match_the_c_headers() {
        assert_eq!(offset_of!(LlnlService, fct), 56);
        assert_eq!(size_of::<LlnlService>(), 64);
        assert_eq!(offset_of!(LlnlGlobal, sig), 30);
        assert_eq!(offset_of!(LlnlGlobal, addr), 32);
        assert_eq!(offset_of!(WideService, fct), 320);
        assert_eq!(offset_of!(WideGlobal, addr), 264);
    }
}
