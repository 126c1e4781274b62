//! Writes GOT slots of a loaded object: the one primitive under direct
//! binding (a module's `XMPI_X` slots) and the Fortran bindings' `PMPI_X`
//! slots (see `fortran`).

use crate::layout::Span;
use std::sync::atomic::{AtomicUsize, Ordering};

fn page_size() -> usize {
    // SAFETY: sysconf only reads a system constant.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size).unwrap_or(4096)
}

/// Stores `target` into each `(slot address, target)` of the object
/// `name`, loaded at `base`, whose read-only-after-relocation span is
/// `relro`. Slots on RELRO pages are written with those pages made
/// writable for the moment of the writes.
///
/// # Safety
/// Every slot address must be a GOT entry of that loaded object (a
/// `JUMP_SLOT` or `GLOB_DAT` relocation names it), and every target a
/// function of the signature its callers expect there.
pub unsafe fn write(
    name: &str,
    base: usize,
    relro: Option<Span>,
    slots: &[(usize, usize)],
) -> Result<(), String> {
    let page = page_size();
    let floor = |address: usize| address & !(page - 1);
    let relro = relro.map(|r| {
        (
            floor(base.wrapping_add(r.start as usize)),
            floor(base.wrapping_add(r.end() as usize)),
        )
    });
    // The RELRO pages holding slots, as one range: RELRO is contiguous and
    // all read-only, so one mprotect each way covers every slot.
    let locked = slots
        .iter()
        .map(|&(slot, _)| floor(slot))
        .filter(|p| relro.is_some_and(|(start, end)| (start..end).contains(p)))
        .fold(None, |range: Option<(usize, usize)>, p| {
            Some(range.map_or((p, p + page), |(lo, hi)| (lo.min(p), hi.max(p + page))))
        });
    let protect = |prot: libc::c_int| -> Result<(), String> {
        let Some((lo, hi)) = locked else {
            return Ok(());
        };
        // SAFETY: `lo .. hi` are whole pages of the object's own RELRO
        // segment, which stays mapped; only their protection changes,
        // between read-only and read-write, so reads never fault.
        if unsafe { libc::mprotect(lo as *mut libc::c_void, hi - lo, prot) } != 0 {
            return Err(format!(
                "cannot change the protection of {name}'s GOT pages at {lo:#x}: {}",
                std::io::Error::last_os_error()
            ));
        }
        Ok(())
    };
    protect(libc::PROT_READ | libc::PROT_WRITE)?;
    for &(slot, target) in slots {
        // SAFETY: by the contract, `slot` is a pointer-aligned GOT entry of
        // the loaded object, writable now; the atomic store lets threads
        // calling through it meanwhile read either the old or the new
        // target, both complete.
        unsafe { AtomicUsize::from_ptr(slot as *mut usize) }.store(target, Ordering::Release);
    }
    protect(libc::PROT_READ)
}
