//! LLNL PnMPI's status codes, with the same values, so existing modules'
//! checks keep working.

use std::ffi::{c_char, CStr};

pub type Status = i32;
pub const SUCCESS: Status = 0;
pub const FAILURE: Status = -1;
pub const NOMODULE: Status = -3;
pub const NOSERVICE: Status = -4;
pub const NOGLOBAL: Status = -5;
pub const SIGNATURE: Status = -6;
pub const NOARG: Status = -7;
pub const NOSTACK: Status = -8;

/// The text for a status code, as a C string that lives forever.
pub fn describe(status: Status) -> &'static CStr {
    match status {
        SUCCESS => c"success",
        FAILURE => c"failure (a name longer than the documented limit, or a null argument)",
        -2 => c"out of memory",
        NOMODULE => c"no such module",
        NOSERVICE => c"no such service",
        NOGLOBAL => c"no such global",
        SIGNATURE => c"the signature does not match the registered one",
        NOARG => c"no such argument",
        NOSTACK => c"no such stack",
        s if s == i32::from(i8::MIN) => c"not implemented",
        _ => c"unknown status",
    }
}

/// Reads a C string argument, refusing null and names over `limit` bytes
/// (which could not have been registered).
///
/// # Safety
/// `text` is null or points to a NUL-terminated string.
pub unsafe fn name<'a>(text: *const c_char, limit: usize) -> Result<&'a str, Status> {
    if text.is_null() {
        return Err(FAILURE);
    }
    // SAFETY: non-null and NUL-terminated by the caller's contract.
    let s = unsafe { CStr::from_ptr(text) }.to_str().map_err(|_| FAILURE)?;
    if s.len() >= limit {
        return Err(FAILURE);
    }
    Ok(s)
}
