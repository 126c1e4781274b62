//! The functions libotf2 calls while reading: global definitions into
//! [`Defs`], events into the location's [`Assembler`]. Each catches panics
//! (none should happen) so that none crosses into C.

use crate::defs::{CommDef, GroupDef, LocationDef, RegionDef};
use crate::ffi;
use crate::user::{on_defs, on_events, Attrs, Code, Loc};
use std::ffi::CStr;
use std::os::raw::{c_char, c_void};

unsafe extern "C" fn string(user: *mut c_void, id: u32, s: *const c_char) -> Code {
    let text = if s.is_null() {
        String::new()
    } else {
        // SAFETY: libotf2 passes a NUL-terminated string, valid during the call.
        unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
    };
    on_defs(user, |d| {
        d.strings.insert(id, text);
    })
}

unsafe extern "C" fn clock(user: *mut c_void, resolution: u64, offset: u64, _len: u64, _real: u64) -> Code {
    on_defs(user, |d| {
        d.resolution = resolution;
        d.offset = offset;
    })
}

unsafe extern "C" fn location_group(
    user: *mut c_void,
    id: u32,
    _name: u32,
    ty: ffi::OTF2_LocationGroupType,
    _parent: u32,
    _creator: u32,
) -> Code {
    on_defs(user, |d| d.location_groups.push((id, ty)))
}

unsafe extern "C" fn location(
    user: *mut c_void,
    id: u64,
    _name: u32,
    ty: ffi::OTF2_LocationType,
    events: u64,
    group: u32,
) -> Code {
    on_defs(user, |d| {
        d.locations.push(LocationDef {
            id,
            ty,
            events,
            group,
        })
    })
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn region(
    user: *mut c_void,
    id: u32,
    name: u32,
    _canonical: u32,
    _description: u32,
    _role: ffi::OTF2_RegionRole,
    paradigm: ffi::OTF2_Paradigm,
    _flags: ffi::OTF2_RegionFlag,
    _file: u32,
    _begin: u32,
    _end: u32,
) -> Code {
    on_defs(user, |d| {
        d.regions.insert(id, RegionDef { name, paradigm });
    })
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn group(
    user: *mut c_void,
    id: u32,
    _name: u32,
    ty: ffi::OTF2_GroupType,
    paradigm: ffi::OTF2_Paradigm,
    _flags: ffi::OTF2_GroupFlag,
    n: u32,
    members: *const u64,
) -> Code {
    let members = if members.is_null() || n == 0 {
        Vec::new()
    } else {
        // SAFETY: libotf2 passes `n` members, valid during the call.
        unsafe { std::slice::from_raw_parts(members, n as usize) }.to_vec()
    };
    on_defs(user, |d| {
        d.groups.insert(
            id,
            GroupDef {
                ty,
                paradigm,
                members,
            },
        );
    })
}

unsafe extern "C" fn comm(
    user: *mut c_void,
    id: u32,
    name: u32,
    group: u32,
    parent: u32,
    _flags: ffi::OTF2_CommFlag,
) -> Code {
    on_defs(user, |d| {
        d.comms.push(CommDef {
            id,
            name,
            group,
            parent,
        })
    })
}

unsafe extern "C" fn intercomm(
    user: *mut c_void,
    _id: u32,
    _name: u32,
    _a: u32,
    _b: u32,
    _common: u32,
    _f: ffi::OTF2_CommFlag,
) -> Code {
    on_defs(user, |d| d.intercomms += 1)
}

/// The global definition callbacks (the caller deletes the set).
pub(crate) fn global_defs() -> *mut ffi::OTF2_GlobalDefReaderCallbacks {
    // SAFETY: a new set, filled with functions of the exact signatures.
    unsafe {
        let c = ffi::OTF2_GlobalDefReaderCallbacks_New();
        if !c.is_null() {
            ffi::OTF2_GlobalDefReaderCallbacks_SetStringCallback(c, Some(string));
            ffi::OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(c, Some(clock));
            ffi::OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(c, Some(location_group));
            ffi::OTF2_GlobalDefReaderCallbacks_SetLocationCallback(c, Some(location));
            ffi::OTF2_GlobalDefReaderCallbacks_SetRegionCallback(c, Some(region));
            ffi::OTF2_GlobalDefReaderCallbacks_SetGroupCallback(c, Some(group));
            ffi::OTF2_GlobalDefReaderCallbacks_SetCommCallback(c, Some(comm));
            ffi::OTF2_GlobalDefReaderCallbacks_SetInterCommCallback(c, Some(intercomm));
            crate::rma_import::register_defs(c);
        }
        c
    }
}

unsafe extern "C" fn enter(_l: Loc, t: u64, _p: u64, user: *mut c_void, _a: Attrs, region: u32) -> Code {
    on_events(user, |a| a.enter(t, region))
}

unsafe extern "C" fn leave(_l: Loc, t: u64, _p: u64, user: *mut c_void, _a: Attrs, _region: u32) -> Code {
    on_events(user, |a| a.leave(t))
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn send(
    _l: Loc,
    _t: u64,
    _p: u64,
    user: *mut c_void,
    _a: Attrs,
    to: u32,
    comm: u32,
    tag: u32,
    len: u64,
) -> Code {
    on_events(user, |a| a.send(to, comm, tag, len, None))
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn isend(
    _l: Loc,
    _t: u64,
    _p: u64,
    user: *mut c_void,
    _a: Attrs,
    to: u32,
    comm: u32,
    tag: u32,
    len: u64,
    req: u64,
) -> Code {
    on_events(user, |a| a.send(to, comm, tag, len, Some(req)))
}

unsafe extern "C" fn isend_complete(
    _l: Loc,
    _t: u64,
    _p: u64,
    user: *mut c_void,
    _a: Attrs,
    req: u64,
) -> Code {
    on_events(user, |a| a.complete(req))
}

unsafe extern "C" fn irecv_request(
    _l: Loc,
    _t: u64,
    _p: u64,
    user: *mut c_void,
    _a: Attrs,
    req: u64,
) -> Code {
    on_events(user, |a| a.post(req))
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn recv(
    _l: Loc,
    _t: u64,
    _p: u64,
    user: *mut c_void,
    _a: Attrs,
    from: u32,
    comm: u32,
    tag: u32,
    len: u64,
) -> Code {
    on_events(user, |a| a.recv(from, comm, tag, len, None))
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn irecv(
    _l: Loc,
    _t: u64,
    _p: u64,
    user: *mut c_void,
    _a: Attrs,
    from: u32,
    comm: u32,
    tag: u32,
    len: u64,
    req: u64,
) -> Code {
    on_events(user, |a| a.recv(from, comm, tag, len, Some(req)))
}

unsafe extern "C" fn cancelled(_l: Loc, _t: u64, _p: u64, user: *mut c_void, _a: Attrs, req: u64) -> Code {
    on_events(user, |a| a.complete(req))
}

unsafe extern "C" fn coll_begin(_l: Loc, _t: u64, _p: u64, _user: *mut c_void, _a: Attrs) -> Code {
    ffi::OTF2_CALLBACK_SUCCESS as Code
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn coll_end(
    _l: Loc,
    _t: u64,
    _p: u64,
    user: *mut c_void,
    _a: Attrs,
    _op: ffi::OTF2_CollectiveOp,
    comm: u32,
    root: u32,
    sent: u64,
    recvd: u64,
) -> Code {
    on_events(user, |a| a.collective(comm, root, sent, recvd, None))
}

unsafe extern "C" fn nb_coll_request(
    _l: Loc,
    _t: u64,
    _p: u64,
    user: *mut c_void,
    _a: Attrs,
    req: u64,
) -> Code {
    on_events(user, |a| a.post(req))
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn nb_coll_complete(
    _l: Loc,
    _t: u64,
    _p: u64,
    user: *mut c_void,
    _a: Attrs,
    _op: ffi::OTF2_CollectiveOp,
    comm: u32,
    root: u32,
    sent: u64,
    recvd: u64,
    req: u64,
) -> Code {
    on_events(user, |a| a.collective(comm, root, sent, recvd, Some(req)))
}

unsafe extern "C" fn comm_create(_l: Loc, _t: u64, _p: u64, user: *mut c_void, _a: Attrs, comm: u32) -> Code {
    on_events(user, |a| a.comm_created(comm))
}

/// Records that carry nothing replay needs, read so that they are not
/// counted as unusable: program begin/end and communicator destruction
/// (the definitions give the members).
unsafe extern "C" fn comm_destroy(
    _l: Loc,
    _t: u64,
    _p: u64,
    _user: *mut c_void,
    _a: Attrs,
    _comm: u32,
) -> Code {
    ffi::OTF2_CALLBACK_SUCCESS as Code
}

unsafe extern "C" fn program_begin(
    _l: Loc,
    _t: u64,
    _p: u64,
    _user: *mut c_void,
    _a: Attrs,
    _name: u32,
    _argc: u32,
    _argv: *const u32,
) -> Code {
    ffi::OTF2_CALLBACK_SUCCESS as Code
}

unsafe extern "C" fn program_end(
    _l: Loc,
    _t: u64,
    _p: u64,
    _user: *mut c_void,
    _a: Attrs,
    _status: i64,
) -> Code {
    ffi::OTF2_CALLBACK_SUCCESS as Code
}

/// Fills `c` with the event callbacks: the MPI records (one-sided ones in
/// [`crate::rma_import`]), and a counter for
/// every record replay cannot use ([`crate::unusable`]).
pub(crate) fn events(c: *mut ffi::OTF2_EvtReaderCallbacks) {
    if c.is_null() {
        return;
    }
    // SAFETY: `c` is a live callback set; the functions have the exact
    // signatures libotf2 declares.
    unsafe {
        ffi::OTF2_EvtReaderCallbacks_SetEnterCallback(c, Some(enter));
        ffi::OTF2_EvtReaderCallbacks_SetLeaveCallback(c, Some(leave));
        ffi::OTF2_EvtReaderCallbacks_SetMpiSendCallback(c, Some(send));
        ffi::OTF2_EvtReaderCallbacks_SetMpiIsendCallback(c, Some(isend));
        ffi::OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(c, Some(isend_complete));
        ffi::OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(c, Some(irecv_request));
        ffi::OTF2_EvtReaderCallbacks_SetMpiRecvCallback(c, Some(recv));
        ffi::OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(c, Some(irecv));
        ffi::OTF2_EvtReaderCallbacks_SetMpiRequestCancelledCallback(c, Some(cancelled));
        ffi::OTF2_EvtReaderCallbacks_SetMpiCollectiveBeginCallback(c, Some(coll_begin));
        ffi::OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(c, Some(coll_end));
        ffi::OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveRequestCallback(c, Some(nb_coll_request));
        ffi::OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveCompleteCallback(c, Some(nb_coll_complete));
        ffi::OTF2_EvtReaderCallbacks_SetCommCreateCallback(c, Some(comm_create));
        ffi::OTF2_EvtReaderCallbacks_SetCommDestroyCallback(c, Some(comm_destroy));
        ffi::OTF2_EvtReaderCallbacks_SetProgramBeginCallback(c, Some(program_begin));
        ffi::OTF2_EvtReaderCallbacks_SetProgramEndCallback(c, Some(program_end));
    }
    crate::rma_import::register_events(c);
    crate::unusable::register(c);
}
