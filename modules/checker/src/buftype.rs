//! A buffer against the C variable it points into: the data that `count`
//! elements of the datatype span must lie inside the variable
//! (`buffer-size`: 2 N `MPI_INT` on `int buf[N]`), and each basic element
//! must fall on a scalar of its kind and size (`buffer-type`:
//! `MPI_DOUBLE` on an `int`, a struct datatype whose displacements are
//! not the C struct's). What MUST learns from TypeART's instrumented
//! allocations, this reads from the program's debug information
//! (`debuginfo`), for the variables of the calling function and the
//! globals; through a pointer variable whose value is the buffer, the
//! type it points to (sizes are unknown there).
//!
//! The check is made below the call's wrapper (where its arguments are
//! checked) and costs the site's lookup (once per call) and one probe of
//! a table of the checks made; a site without debug information is
//! read once, and on a site with it, each distinct buffer, count and
//! datatype costs a scan of its variables once.

use crate::ctype::{self, CType};
use crate::debuginfo::{Debug, Place, Var};
use crate::report::{self, Class};
use crate::site;
use crate::typemap;
use crate::types;
use parking_lot::Mutex;
use pnmpi_mpi_sys::ROUTINE_NAMES;
use pnmpi_sdk::constants as mpi;
use pnmpi_sdk::sys::combiner::Combiner;
use pnmpi_sdk::sys::ffi::MPI_Datatype;
use pnmpi_sdk::sys::Handle;
use std::collections::HashMap;
use std::ffi::c_void;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

/// Slots of the table of sites known to have no variables to check.
const BARE: usize = 256;
/// Slots of the table of checks made (a power of two).
const DONE: usize = 1024;
/// Elements of the type map laid over the variable, at most.
const MAX_CHECKED: usize = 64;
/// How far above the wrapper's frame the calling function's frame may
/// lie (a bound on the frames between, not on the application's stack).
const MAX_FRAMES: usize = 1 << 16;

/// Sites without variables to check, by return address: most calls of an
/// application built without `-g` leave after one load.
static BARE_SITES: [AtomicUsize; BARE] = [const { AtomicUsize::new(0) }; BARE];

/// Checks made, by [`key`] of their site, buffer, count and datatype, in
/// the slot its top bits give: a call repeated in a loop (a collective's
/// send and receive buffers alike) costs one load after its first, and
/// no lock.
static DONE_KEYS: [AtomicU64; DONE] = [const { AtomicU64::new(0) }; DONE];

/// A nonzero hash of a check's site, buffer, count and datatype.
fn key(ra: usize, buf: usize, count: i64, dt: u64) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    [buf as u64, count as u64, dt]
        .into_iter()
        .fold((ra as u64).wrapping_mul(K), |h, x| {
            (h.rotate_left(23) ^ x).wrapping_mul(K)
        })
        | 1
}

/// A site with variables to check.
struct Site {
    debug: &'static Debug,
    /// The object's load bias.
    bias: usize,
    /// The calling function's variables in scope at the call.
    vars: Vec<Var>,
    /// Offsets from the wrapper's stack pointer to the slot holding the
    /// site's return address and to the calling function's CFA, once
    /// learned by unwinding.
    frame: Option<(usize, usize)>,
}

#[derive(Default)]
struct State {
    objects: HashMap<PathBuf, Option<&'static Debug>>,
    sites: HashMap<usize, Site>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// Checks `count` elements of `dt` at `buf`, an argument of the call in
/// progress, against the variable it points into; reports what does not
/// fit. A report only: the call is legal MPI and is made.
pub fn check(buf: *const c_void, count: i64, dt: MPI_Datatype) {
    // MPI_BOTTOM is NULL: absolute addresses, no variable's.
    if buf.is_null() || count <= 0 || std::ptr::eq(buf, mpi::IN_PLACE()) {
        return;
    }
    let Some((routine, sp, ra)) = site::current() else {
        return;
    };
    let bare = &BARE_SITES[(ra >> 2) % BARE];
    if ra == 0 || bare.load(Relaxed) == ra {
        return;
    }
    let key = key(ra, buf as usize, count, dt.bits());
    let done = &DONE_KEYS[(key >> (64 - DONE.trailing_zeros())) as usize];
    if done.load(Relaxed) == key {
        return;
    }
    let mut guard = STATE.lock();
    let state = guard.get_or_insert_with(State::default);
    let Some(site) = state.site(ra) else {
        bare.store(ra, Relaxed);
        return;
    };
    done.store(key, Relaxed);
    let Some(found) = site.find(buf as usize, sp, ra) else {
        return;
    };
    drop(guard);
    if let Some((check, what)) = compare(&found, buf as usize, count, dt) {
        let call = ROUTINE_NAMES[routine];
        report::report(
            Class::Argument,
            check,
            call,
            &site::name(ra),
            format!("{call}'s buffer: {what}"),
        );
    }
}

impl State {
    /// The site at `ra`, read on its first call; `None` if its object has
    /// no variables to check.
    fn site(&mut self, ra: usize) -> Option<&mut Site> {
        if !self.sites.contains_key(&ra) {
            let (path, bias) = pnmpi_sdk::callsite::object_of(ra - 1)?;
            let debug = *self
                .objects
                .entry(path.clone())
                .or_insert_with(|| Debug::load(&path).map(|d| &*Box::leak(Box::new(d))));
            let debug = debug?;
            let vars = debug.scope((ra - 1 - bias) as u64);
            if vars.is_empty() && !debug.has_globals() {
                return None;
            }
            self.sites.insert(
                ra,
                Site {
                    debug,
                    bias,
                    vars,
                    frame: None,
                },
            );
        }
        self.sites.get_mut(&ra)
    }
}

/// What a buffer points into.
struct Found {
    name: String,
    /// The variable's type, or for a pointer variable the type it points to.
    ty: CType,
    /// The variable's address, `None` through a pointer (a buffer of
    /// unknown length, from its first element; `name` is then `*p`).
    start: Option<usize>,
}

impl Found {
    /// How C names the part at `path` (`.x`, `[3]`): `a[3]`, `p->x`.
    fn access(&self, path: &str) -> String {
        match (self.start.is_none(), path.strip_prefix('.')) {
            (true, Some(member)) => format!("{}->{member}", &self.name[1..]),
            (true, None) => format!("{}{path}", &self.name[1..]),
            (false, _) => format!("{}{path}", self.name),
        }
    }
}

impl Site {
    /// The variable `buf` points into, or the pointer variable whose
    /// value it is.
    fn find(&mut self, buf: usize, sp: usize, ra: usize) -> Option<Found> {
        let cfa = if self.vars.iter().any(|v| matches!(v.place, Place::Frame(_))) {
            self.cfa(sp, ra)
        } else {
            None
        };
        let place = |v: &Var| match v.place {
            Place::Frame(o) => cfa.map(|c| (c as i64 + o) as usize),
            Place::Fixed(a) => Some(a as usize + self.bias),
        };
        let local = self.vars.iter().find_map(|v| {
            let at = place(v)?;
            (buf >= at && buf < at + v.ty.size() as usize).then_some((v, at))
        });
        let global = || {
            let v = self.debug.global_at(buf.checked_sub(self.bias)? as u64)?;
            Some((v, place(v)?))
        };
        if let Some((v, at)) = local.or_else(global) {
            return Some(Found {
                name: v.name.clone(),
                ty: v.ty.clone(),
                start: Some(at),
            });
        }
        self.vars.iter().chain(self.debug.pointers()).find_map(|v| {
            let pointee = v.pointee.as_ref()?;
            let at = place(v)?;
            // SAFETY: a pointer variable of the calling function's frame
            // (whose CFA the unwinder gave, and the return address's slot
            // confirmed) or of the object's data: live, aligned memory.
            let value = unsafe { std::ptr::read_volatile(at as *const usize) };
            (value == buf).then(|| Found {
                name: format!("*{}", v.name),
                ty: pointee.clone(),
                start: None,
            })
        })
    }

    /// The calling function's CFA for a call whose wrapper's stack
    /// pointer is `sp`: learned once by unwinding, then trusted while the
    /// slot it found still holds the site's return address.
    fn cfa(&mut self, sp: usize, ra: usize) -> Option<usize> {
        if let Some((slot, cfa)) = self.frame {
            // SAFETY: `sp + slot` lies between the wrapper's frame and the
            // calling function's, in this thread's live stack (learned so,
            // and the frames between have fixed sizes).
            if unsafe { std::ptr::read_volatile((sp + slot) as *const usize) } == ra {
                return Some(sp + cfa);
            }
        }
        // A frame's `sp` is its stack pointer at its call of the next
        // one in: the calling function's CFA is the `sp` of the frame
        // above it, the one it returns into.
        let (mut at_call, mut cfa) = (None, None);
        backtrace::trace(|frame| {
            if at_call.is_some() {
                cfa = Some(frame.sp() as usize);
                return false;
            }
            if frame.ip() as usize == ra {
                at_call = Some(frame.sp() as usize);
            }
            true
        });
        let cfa = cfa.filter(|&c| c > sp && c - sp < MAX_FRAMES)?;
        let slot = (sp..cfa).step_by(8).find(|&s| {
            // SAFETY: between the wrapper's stack pointer and the calling
            // function's CFA: this thread's live stack.
            unsafe { std::ptr::read_volatile(s as *const usize) == ra }
        })?;
        self.frame = Some((slot - sp, cfa - sp));
        Some(cfa)
    }
}

/// The first misfit of `count` elements of `dt` at `buf` in `found`: the
/// check's name and what is wrong.
fn compare(found: &Found, buf: usize, count: i64, dt: MPI_Datatype) -> Option<(&'static str, String)> {
    let (true_lb, true_extent) = types::extent(dt);
    let extent = types::extent_of(dt);
    let name = match types::name(dt) {
        n if n.is_empty() => "the derived datatype".to_string(),
        n => n,
    };
    let of = || format!("`{}` ({})", found.name, found.ty.describe());
    // Offset of the buffer in the object (through a pointer: its start).
    let base = found.start.map_or(0, |s| (buf - s) as i64);
    if found.start.is_some() {
        let size = found.ty.size() as i64;
        let end = base + true_lb + (count - 1).saturating_mul(extent) + true_extent;
        if size > 0 && true_extent > 0 && (base + true_lb < 0 || end > size) {
            let bytes = (count - 1).saturating_mul(extent) + true_extent;
            let from = if base == 0 {
                String::new()
            } else {
                format!(" from byte {base}, where the buffer starts")
            };
            return Some((
                "buffer-size",
                format!(
                    "{count} x {name} span {}, past the end of {}, which holds {}{from}",
                    plural(bytes),
                    of(),
                    plural(size)
                ),
            ));
        }
    }
    if let Some(left) = left_out(found, base, dt, extent) {
        return Some(("buffer-type", left));
    }
    let elems = typemap::of(dt)?;
    let unit = found.ty.size().max(1) as i64;
    let all = (0..count).flat_map(|i| elems.iter().enumerate().map(move |(j, e)| (i, j, e)));
    for (i, j, e) in all.take(MAX_CHECKED).filter(|(_, _, e)| e.kind != b'x') {
        let at = base + i * extent + e.disp;
        // Through a pointer, the buffer is an array of the pointed-to type.
        let off = if found.start.is_some() {
            at
        } else {
            at.rem_euclid(unit)
        };
        if off < 0 || off as u64 >= found.ty.size() || found.ty.opaque_at(off as u64) {
            continue;
        }
        let there = match found.ty.scalar_at(off as u64) {
            Some((c, path)) if ctype::fits(e.kind, e.size, c, path.contains('.')) => continue,
            Some((c, path)) if path.is_empty() => {
                format!("`{}`, {} {}", found.name, article(c), ctype::scalar_name(c))
            }
            Some((c, path)) => format!(
                "`{}`, {} {}, byte {off} of {}",
                found.access(&path),
                article(c),
                ctype::scalar_name(c),
                of()
            ),
            // MPI_CHAR reads an object's bytes, wherever they are.
            None if e.kind == b'r' => continue,
            None => format!(
                "byte {off} of {}, where no C scalar starts (padding, or the middle of a member)",
                of()
            ),
        };
        let k = i * elems.len() as i64 + j as i64;
        let e_scalar = ctype::Scalar {
            kind: e.kind,
            size: e.size,
        };
        return Some((
            "buffer-type",
            format!(
                "element {k} of {count} x {name} is {} {} ({}) but falls on {there}",
                article(e_scalar),
                ctype::scalar_name(e_scalar),
                plural(e.size as i64),
            ),
        ));
    }
    None
}

/// A struct datatype shorter than the C struct the buffer starts on: a
/// member left out (its elements fit, but the next struct of an array
/// would start inside this one).
fn left_out(found: &Found, base: i64, dt: MPI_Datatype, extent: i64) -> Option<String> {
    let offset = if found.start.is_some() {
        u64::try_from(base).ok()?
    } else {
        0
    };
    let CType::Struct { name, size, members } = found.ty.struct_at(offset)? else {
        return None;
    };
    let (combiner, _) = crate::contents::envelope(dt)?;
    if combiner != Combiner::Struct || extent <= 0 || extent as u64 >= *size {
        return None;
    }
    let missing: Vec<&str> = members
        .iter()
        .filter(|m| m.offset >= extent as u64)
        .map(|m| m.name.as_str())
        .collect();
    Some(format!(
        "the struct datatype spans {} (its extent) on `{}`, a struct {name} of {}: it leaves out {}",
        plural(extent),
        found.name,
        plural(*size as i64),
        if missing.is_empty() {
            "the struct's last bytes".to_string()
        } else {
            format!("`{}`", missing.join("`, `"))
        }
    ))
}

/// `n bytes` (`1 byte`).
fn plural(n: i64) -> String {
    if n == 1 {
        "1 byte".into()
    } else {
        format!("{n} bytes")
    }
}

/// "a" or "an" before a scalar's name.
fn article(s: ctype::Scalar) -> &'static str {
    match ctype::scalar_name(s).as_bytes().first() {
        Some(b'a' | b'e' | b'i' | b'o' | b'u') => "an",
        _ => "a",
    }
}
