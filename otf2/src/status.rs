//! libotf2's error codes and messages as this crate's errors, each naming
//! the archive and what libotf2 said. libotf2 reports an error twice: as
//! the code a call returns, and as a formatted message passed to its error
//! callback (printed on stderr by default). The callback here keeps the
//! thread's messages instead, so that they reach the user once, in the
//! error that names the file.

use crate::ffi;
use pnmpi_trace::Error;
use std::cell::RefCell;
use std::ffi::CStr;
use std::os::raw::{c_char, c_void};
use std::sync::Once;

thread_local! {
    /// libotf2's messages on this thread since they were last taken.
    static LAST: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Receives libotf2's error messages (instead of its default printing).
unsafe extern "C" fn on_error(
    _user: *mut c_void,
    _file: *const c_char,
    _line: u64,
    _function: *const c_char,
    code: ffi::OTF2_ErrorCode,
    format: *const c_char,
    va: *mut ffi::__va_list_tag,
) -> ffi::OTF2_ErrorCode {
    let mut buf = [0 as c_char; 1024];
    // SAFETY: libotf2 passes a printf format and its matching va_list;
    // vsnprintf writes at most buf.len() bytes, NUL-terminated.
    let n = unsafe { ffi::vsnprintf(buf.as_mut_ptr(), buf.len() as _, format, va) };
    if n >= 0 {
        // SAFETY: vsnprintf NUL-terminated the buffer.
        let text = unsafe { CStr::from_ptr(buf.as_ptr()) }
            .to_string_lossy()
            .into_owned();
        // A failure is reported at each level it crosses, innermost first:
        // keep them all, the innermost says what is wrong.
        LAST.with(|l| {
            let mut l = l.borrow_mut();
            if !l.is_empty() {
                l.push_str("; ");
            }
            l.push_str(&text);
        });
    }
    code
}

/// Routes libotf2's messages to [`on_error`], once per process.
pub(crate) fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: registers a function with the callback's exact signature;
        // it uses no user data.
        unsafe { ffi::OTF2_Error_RegisterCallback(Some(on_error), std::ptr::null_mut()) };
        take_message();
    });
}

/// Takes (and clears) libotf2's messages on this thread.
pub(crate) fn take_message() -> String {
    LAST.with(|l| std::mem::take(&mut *l.borrow_mut()))
}

/// The name and description libotf2 gives `code`.
fn describe(code: ffi::OTF2_ErrorCode) -> String {
    let text = |p: *const c_char| {
        if p.is_null() {
            String::new()
        } else {
            // SAFETY: libotf2 returns static NUL-terminated strings.
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    };
    // SAFETY: both accept any code and return a static string (or NULL).
    let (name, desc) = unsafe {
        (
            ffi::OTF2_Error_GetName(code),
            ffi::OTF2_Error_GetDescription(code),
        )
    };
    format!("{} ({})", text(name), text(desc))
}

/// The error of a failed libotf2 call: `file`, what was being done, the
/// error code's name and description, and libotf2's own message.
pub(crate) fn error(file: &str, doing: &str, code: Option<ffi::OTF2_ErrorCode>) -> Error {
    let said = take_message();
    let mut text = format!("{file}: {doing}: libotf2");
    if let Some(code) = code {
        text.push_str(&format!(" error {}", describe(code)));
    }
    if !said.is_empty() {
        text.push_str(&format!(": {said}"));
    }
    Error::Invalid(text)
}

/// `Ok` if `code` is `OTF2_SUCCESS`, else [`error`].
pub(crate) fn check(code: ffi::OTF2_ErrorCode, file: &str, doing: &str) -> Result<(), Error> {
    if code == ffi::OTF2_SUCCESS {
        Ok(())
    } else {
        Err(error(file, doing, Some(code)))
    }
}
