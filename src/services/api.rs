//! The exported `PNMPI_Service_*` functions. Every one checks its pointers
//! and handles and answers with a status code; none can unwind into C.

use super::descriptor::{
    GlobalDescriptor, LlnlGlobal, LlnlService, ServiceDescriptor, WideGlobal, WideService,
};
use super::registry::{self, Global, Service};
use super::status::{
    self, Status, FAILURE, NOARG, NOGLOBAL, NOMODULE, NOSERVICE, NOSTACK, SIGNATURE, SUCCESS,
};
use super::NAME_MAX;
use crate::caller::{self, records_caller};
use crate::chain::{self, Chain};
use crate::level;
use std::ffi::{c_char, c_int, CStr};

/// `PNMPI_modHandle_t`: a module's index, or a stack's top level.
type Handle = c_int;

fn chain() -> Result<&'static Chain, Status> {
    chain::loaded().ok_or(NOMODULE)
}

/// The calling module: the one whose hook or wrapper is running, found
/// by where the service returns to (see `chain::caller_level`).
fn current(return_address: usize) -> Result<usize, Status> {
    chain()?
        .module_at(chain::caller_level(return_address))
        .map(|(i, _)| i)
        .ok_or(NOMODULE)
}

fn module(handle: Handle) -> Result<usize, Status> {
    let index = usize::try_from(handle).map_err(|_| NOMODULE)?;
    (index < chain()?.modules.len()).then_some(index).ok_or(NOMODULE)
}

/// Runs `body`, turning its error into the status it carries.
fn answer(body: impl FnOnce() -> Result<(), Status>) -> Status {
    body().err().unwrap_or(SUCCESS)
}

/// Copies `text` into a C char array, NUL-terminated; it always fits, as
/// only names that fit were registered.
fn fill(out: &mut [c_char], text: &str) {
    for (dst, src) in out.iter_mut().zip(text.bytes().chain(std::iter::once(0))) {
        *dst = src as c_char;
    }
}

/// Reads a NUL-terminated name out of a fixed-size descriptor field.
fn field(chars: &[c_char]) -> Result<String, Status> {
    let bytes: Vec<u8> = chars.iter().map(|&c| c as u8).collect();
    let text = CStr::from_bytes_until_nul(&bytes).map_err(|_| FAILURE)?;
    text.to_str().map(str::to_string).map_err(|_| FAILURE)
}

/// Writes through an out-pointer given by C.
fn put<T>(out: *mut T, value: T) -> Result<(), Status> {
    if out.is_null() {
        return Err(FAILURE);
    }
    // SAFETY: non-null, and the caller passes a pointer to a T.
    unsafe { out.write(value) };
    Ok(())
}

records_caller!(
    /// # Safety
    /// `name` is a NUL-terminated string.
    PNMPI_Service_RegisterModule(name: *const c_char) -> Status => register_module
);

unsafe extern "C" fn register_module(name: *const c_char) -> Status {
    let caller = caller::take();
    answer(|| {
        // SAFETY: forwarded from the caller's contract.
        let name = unsafe { status::name(name, NAME_MAX) }?.to_string();
        let me = current(caller)?;
        registry::with_entry(me, |e| e.name = Some(name));
        Ok(())
    })
}

/// # Safety
/// `name` is a NUL-terminated string; `handle` points to writable memory.
#[no_mangle]
pub unsafe extern "C" fn PNMPI_Service_GetModuleByName(name: *const c_char, handle: *mut Handle) -> Status {
    answer(|| {
        // SAFETY: forwarded from the caller's contract.
        let name = unsafe { status::name(name, NAME_MAX) }?;
        let chain = chain()?;
        let index = registry::module_by_registered_name(name)
            .or_else(|| chain.modules.iter().position(|m| m.answers_to(name)))
            .ok_or(NOMODULE)?;
        put(handle, index as Handle)
    })
}

records_caller!(
    /// # Safety
    /// `handle` points to writable memory.
    PNMPI_Service_GetModuleSelf(handle: *mut Handle) -> Status => module_self
);

unsafe extern "C" fn module_self(handle: *mut Handle) -> Status {
    let me = current(caller::take());
    answer(|| put(handle, me? as Handle))
}

/// # Safety
/// `name` is a NUL-terminated string; `handle` points to writable memory.
#[no_mangle]
pub unsafe extern "C" fn PNMPI_Service_GetStackByName(name: *const c_char, handle: *mut Handle) -> Status {
    answer(|| {
        // SAFETY: forwarded from the caller's contract.
        let name = unsafe { status::name(name, NAME_MAX) }?;
        let stack = chain()?.stacks.iter().find(|s| s.name == name).ok_or(NOSTACK)?;
        put(handle, stack.top as Handle)
    })
}

/// Moves the calling thread to the top of `stack`: its next `XMPI_` call
/// enters that stack's first module. Prefer `XMPI_X_NewStack`, which
/// returns to the caller's own position afterwards.
#[no_mangle]
pub extern "C" fn PNMPI_Service_ChangeStack(stack: Handle) -> Status {
    answer(|| {
        let top = u32::try_from(stack).map_err(|_| NOSTACK)?;
        chain()?.stack_with_top(top).ok_or(NOSTACK)?;
        level::set(top);
        Ok(())
    })
}

records_caller!(
    /// Registers a service described in LLNL's layout (30-byte names).
    ///
    /// # Safety
    /// `descriptor` points to a filled `PNMPI_Service_descriptor_t` of
    /// LLNL's `service.h`.
    PNMPI_Service_RegisterService(descriptor: *const LlnlService) -> Status => register_service_llnl
);

records_caller!(
    /// Registers a service described in `pnmpi.h`'s layout.
    ///
    /// # Safety
    /// `descriptor` points to a filled `PNMPI_Service_descriptor_t` of
    /// `pnmpi.h`.
    PNMPI_Service_RegisterService_Wide(descriptor: *const WideService) -> Status => register_service_wide
);

unsafe extern "C" fn register_service_llnl(descriptor: *const LlnlService) -> Status {
    let caller = caller::take();
    // SAFETY: forwarded from the caller's contract.
    unsafe { register_service(caller, descriptor) }
}

unsafe extern "C" fn register_service_wide(descriptor: *const WideService) -> Status {
    let caller = caller::take();
    // SAFETY: forwarded from the caller's contract.
    unsafe { register_service(caller, descriptor) }
}

/// # Safety
/// `descriptor` is null or points to a filled descriptor of this layout.
unsafe fn register_service<const N: usize, const S: usize>(
    caller: usize,
    descriptor: *const ServiceDescriptor<N, S>,
) -> Status {
    answer(|| {
        // SAFETY: null is refused; otherwise the caller's descriptor.
        let d = unsafe { descriptor.as_ref() }.ok_or(FAILURE)?;
        let service = Service {
            name: field(&d.name)?,
            sig: field(&d.sig)?,
            fct: d.fct,
        };
        let me = current(caller)?;
        registry::with_entry(me, |e| {
            e.services.retain(|s| s.name != service.name);
            e.services.push(service);
        });
        Ok(())
    })
}

/// Looks up a service into a descriptor of LLNL's layout.
///
/// # Safety
/// `name` and `sig` are NUL-terminated strings; `out` points to writable
/// memory for a descriptor of LLNL's `service.h`.
#[no_mangle]
pub unsafe extern "C" fn PNMPI_Service_GetServiceByName(
    handle: Handle,
    name: *const c_char,
    sig: *const c_char,
    out: *mut LlnlService,
) -> Status {
    // SAFETY: forwarded from the caller's contract.
    unsafe { service_by_name(handle, name, sig, out) }
}

/// Looks up a service into a descriptor of `pnmpi.h`'s layout.
///
/// # Safety
/// `name` and `sig` are NUL-terminated strings; `out` points to writable
/// memory for a descriptor of `pnmpi.h`.
#[no_mangle]
pub unsafe extern "C" fn PNMPI_Service_GetServiceByName_Wide(
    handle: Handle,
    name: *const c_char,
    sig: *const c_char,
    out: *mut WideService,
) -> Status {
    // SAFETY: forwarded from the caller's contract.
    unsafe { service_by_name(handle, name, sig, out) }
}

/// Names that do not fit the caller's descriptor are refused: they could
/// not have been registered in it.
///
/// # Safety
/// As for the exported lookups.
unsafe fn service_by_name<const N: usize, const S: usize>(
    handle: Handle,
    name: *const c_char,
    sig: *const c_char,
    out: *mut ServiceDescriptor<N, S>,
) -> Status {
    answer(|| {
        // SAFETY: forwarded from the caller's contract.
        let (name, sig) = unsafe { (status::name(name, N)?, status::name(sig, S)?) };
        let index = module(handle)?;
        let (fct, registered_sig) = registry::read_entry(index, |e| {
            let s = e?.services.iter().find(|s| s.name == name)?;
            Some((s.fct, s.sig.clone()))
        })
        .ok_or(NOSERVICE)?;
        if registered_sig != sig {
            return Err(SIGNATURE);
        }
        // SAFETY: null is refused; otherwise the caller's writable descriptor.
        let out = unsafe { out.as_mut() }.ok_or(FAILURE)?;
        fill(&mut out.name, name);
        fill(&mut out.sig, sig);
        out.fct = fct;
        Ok(())
    })
}

records_caller!(
    /// Registers a global described in LLNL's layout (30-byte names).
    ///
    /// # Safety
    /// `descriptor` points to a filled `PNMPI_Global_descriptor_t` of
    /// LLNL's `service.h`.
    PNMPI_Service_RegisterGlobal(descriptor: *const LlnlGlobal) -> Status => register_global_llnl
);

records_caller!(
    /// Registers a global described in `pnmpi.h`'s layout.
    ///
    /// # Safety
    /// `descriptor` points to a filled `PNMPI_Global_descriptor_t` of
    /// `pnmpi.h`.
    PNMPI_Service_RegisterGlobal_Wide(descriptor: *const WideGlobal) -> Status => register_global_wide
);

unsafe extern "C" fn register_global_llnl(descriptor: *const LlnlGlobal) -> Status {
    let caller = caller::take();
    // SAFETY: forwarded from the caller's contract.
    unsafe { register_global(caller, descriptor) }
}

unsafe extern "C" fn register_global_wide(descriptor: *const WideGlobal) -> Status {
    let caller = caller::take();
    // SAFETY: forwarded from the caller's contract.
    unsafe { register_global(caller, descriptor) }
}

/// # Safety
/// `descriptor` is null or points to a filled descriptor of this layout.
unsafe fn register_global<const N: usize>(caller: usize, descriptor: *const GlobalDescriptor<N>) -> Status {
    answer(|| {
        // SAFETY: null is refused; otherwise the caller's descriptor.
        let d = unsafe { descriptor.as_ref() }.ok_or(FAILURE)?;
        let global = Global {
            name: field(&d.name)?,
            sig: d.sig,
            addr: d.addr,
        };
        let me = current(caller)?;
        registry::with_entry(me, |e| {
            e.globals.retain(|g| g.name != global.name);
            e.globals.push(global);
        });
        Ok(())
    })
}

/// Looks up a global into a descriptor of LLNL's layout.
///
/// # Safety
/// `name` is a NUL-terminated string; `out` points to writable memory for
/// a descriptor of LLNL's `service.h`.
#[no_mangle]
pub unsafe extern "C" fn PNMPI_Service_GetGlobalByName(
    handle: Handle,
    name: *const c_char,
    sig: c_char,
    out: *mut LlnlGlobal,
) -> Status {
    // SAFETY: forwarded from the caller's contract.
    unsafe { global_by_name(handle, name, sig, out) }
}

/// Looks up a global into a descriptor of `pnmpi.h`'s layout.
///
/// # Safety
/// `name` is a NUL-terminated string; `out` points to writable memory for
/// a descriptor of `pnmpi.h`.
#[no_mangle]
pub unsafe extern "C" fn PNMPI_Service_GetGlobalByName_Wide(
    handle: Handle,
    name: *const c_char,
    sig: c_char,
    out: *mut WideGlobal,
) -> Status {
    // SAFETY: forwarded from the caller's contract.
    unsafe { global_by_name(handle, name, sig, out) }
}

/// # Safety
/// As for the exported lookups.
unsafe fn global_by_name<const N: usize>(
    handle: Handle,
    name: *const c_char,
    sig: c_char,
    out: *mut GlobalDescriptor<N>,
) -> Status {
    answer(|| {
        // SAFETY: forwarded from the caller's contract.
        let name = unsafe { status::name(name, N) }?;
        let index = module(handle)?;
        let (registered_sig, addr) = registry::read_entry(index, |e| {
            let g = e?.globals.iter().find(|g| g.name == name)?;
            Some((g.sig, g.addr))
        })
        .ok_or(NOGLOBAL)?;
        if registered_sig != sig {
            return Err(SIGNATURE);
        }
        // SAFETY: null is refused; otherwise the caller's writable descriptor.
        let out = unsafe { out.as_mut() }.ok_or(FAILURE)?;
        fill(&mut out.name, name);
        out.sig = sig;
        out.addr = addr;
        Ok(())
    })
}

/// # Safety
/// `key` is a NUL-terminated string; `value` points to writable memory.
#[no_mangle]
pub unsafe extern "C" fn PNMPI_Service_GetArgument(
    handle: Handle,
    key: *const c_char,
    value: *mut *const c_char,
) -> Status {
    answer(|| {
        // SAFETY: forwarded from the caller's contract.
        let key = unsafe { status::name(key, NAME_MAX) }?;
        let index = module(handle)?;
        let found = chain()?.modules[index].argument(key).ok_or(NOARG)?;
        put(value, found.as_ptr())
    })
}

records_caller!(
    /// The calling module's argument `key`, or null.
    ///
    /// # Safety
    /// `key` is a NUL-terminated string.
    PNMPI_Service_GetArgumentSelf(key: *const c_char) -> *const c_char => argument_self
);

unsafe extern "C" fn argument_self(key: *const c_char) -> *const c_char {
    let me = current(caller::take()).map_or(-1, |i| i as Handle);
    let mut value = std::ptr::null();
    // SAFETY: forwarded from the caller's contract; `value` is local.
    let status = unsafe { PNMPI_Service_GetArgument(me, key, &mut value) };
    if status == SUCCESS {
        value
    } else {
        std::ptr::null()
    }
}

/// # Safety
/// `flag` points to writable memory.
#[no_mangle]
pub unsafe extern "C" fn PNMPI_Service_GetPcontrol(handle: Handle, flag: *mut c_int) -> Status {
    answer(|| put(flag, c_int::from(chain()?.gets_pcontrol(module(handle)?))))
}

records_caller!(
    /// Does `MPI_Pcontrol` reach the calling module? 0 outside any module.
    PNMPI_Service_GetPcontrolSelf() -> c_int => pcontrol_self
);

extern "C" fn pcontrol_self() -> c_int {
    match (chain(), current(caller::take())) {
        (Ok(chain), Ok(me)) => c_int::from(chain.gets_pcontrol(me)),
        _ => 0,
    }
}

records_caller!(
    /// Calls `hook` in the next module below the caller, in the caller's
    /// stack, that defines it; that module may recurse in turn.
    ///
    /// # Safety
    /// `hook` is a NUL-terminated string.
    PNMPI_Service_CallHook(hook: *const c_char) -> () => call_hook
);

unsafe extern "C" fn call_hook(hook: *const c_char) {
    let from = chain::caller_level(caller::take());
    // SAFETY: forwarded from the caller's contract.
    if let (Ok(hook), Ok(chain)) = (unsafe { status::name(hook, NAME_MAX) }, chain()) {
        chain.call_hook_below(from, hook);
    }
}

/// Calls `hook` in the first module of `stack` that defines it.
///
/// # Safety
/// `hook` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn PNMPI_Service_CallHook_NewStack(hook: *const c_char, stack: Handle) {
    // SAFETY: forwarded from the caller's contract.
    let hook = unsafe { status::name(hook, NAME_MAX) };
    if let (Ok(hook), Ok(chain), Ok(top)) = (hook, chain(), u32::try_from(stack)) {
        chain.call_hook_below(top, hook);
    }
}

/// The text for a status code.
#[no_mangle]
pub extern "C" fn PNMPI_Service_strerror(status: Status) -> *const c_char {
    status::describe(status).as_ptr()
}
