//! The user data libotf2 hands back to every callback: the definitions
//! being read, or the assembler of the location being read. Each callback
//! runs its work here, where panics are caught (none should happen) so
//! that none crosses into C.

use crate::assembler::Assembler;
use crate::defs::Defs;
use crate::ffi;
use std::os::raw::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// What a callback returns to libotf2: go on, or stop the reading.
pub(crate) type Code = ffi::OTF2_CallbackCode;
/// The location (rank) an event callback is for.
pub(crate) type Loc = ffi::OTF2_LocationRef;
/// An event's attribute list, which no callback here reads.
pub(crate) type Attrs = *mut ffi::OTF2_AttributeList;

/// Runs `f` on the definitions behind `user`.
pub(crate) fn on_defs(user: *mut c_void, f: impl FnOnce(&mut Defs)) -> Code {
    // SAFETY: `Reader::open` registers a live `&mut Defs` as the user data
    // for the duration of the definition reading, the only time this runs.
    let defs = unsafe { &mut *user.cast::<Defs>() };
    match catch_unwind(AssertUnwindSafe(|| f(defs))) {
        Ok(()) => ffi::OTF2_CALLBACK_SUCCESS as Code,
        Err(_) => ffi::OTF2_CALLBACK_ERROR as Code,
    }
}

/// Runs `f` on the assembler behind `user`.
pub(crate) fn on_events(user: *mut c_void, f: impl FnOnce(&mut Assembler)) -> Code {
    // SAFETY: `Reader::read` registers a live `&mut Assembler` as the user
    // data right before each read, the only time this runs.
    let a = unsafe { &mut *user.cast::<Assembler>() };
    match catch_unwind(AssertUnwindSafe(|| f(a))) {
        Ok(()) => ffi::OTF2_CALLBACK_SUCCESS as Code,
        Err(_) => {
            a.fail("internal error while reading an event".into());
            ffi::OTF2_CALLBACK_ERROR as Code
        }
    }
}
