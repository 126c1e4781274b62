//! The slow path: a walk of the stack from a wrapper to its call site,
//! which also learns the route for the fast path.

use super::elf::{in_own_function, loaded_bases, object_base, place};
use std::sync::OnceLock;

/// Frames a walk looks at: the module's, libpnmpi's and a few modules'.
const MAX_FRAMES: usize = 64;
/// Frames a first walk looks at, enough for a call from the application
/// or through a module or two: each frame costs the unwinder about a
/// microsecond, and a deep application has far more than 64 of them. A
/// walk that runs out before the site looks again at [`MAX_FRAMES`].
const FIRST_FRAMES: usize = 16;
/// Frames of one module searched for its MPI_X wrapper: a wrapper, and
/// the closures and guards a module's SDK may put inside it.
const MAX_OWN_FRAMES: usize = 8;

/// The objects whose frames lie between the application and a wrapper,
/// by load address: the walk to a call site skips them.
struct Objects {
    libpnmpi: usize,
    /// The module this crate is linked into: its wrapper's frames.
    module: usize,
    /// The MPI's Fortran binding libraries (`libmpi_mpifh`,
    /// `libmpichfort`, ...): a Fortran application's call reaches the
    /// chain from there, and its site is the Fortran frame above.
    fortran: Vec<usize>,
}

impl Objects {
    /// Whether frames of the object at `base` only carry a call from the
    /// application's site to the wrapper: libpnmpi and the Fortran
    /// bindings.
    fn carries(&self, base: usize) -> bool {
        base == self.libpnmpi || self.fortran.contains(&base)
    }
}

/// This process's libpnmpi, the calling module and the Fortran bindings.
fn objects() -> &'static Objects {
    static OBJECTS: OnceLock<Objects> = OnceLock::new();
    OBJECTS.get_or_init(|| Objects {
        libpnmpi: object_base(crate::raw::XMPI_Comm_rank as *const () as usize),
        module: object_base(objects as *const () as usize),
        fortran: loaded_bases(pnmpi_mpi_sys::FORTRAN_BINDINGS),
    })
}

/// A route into a wrapper, as offsets from its stack pointer: its own
/// return address, and either where the site's return address lies when
/// that return address comes back (`ra`), or `direct`: the return address
/// is the site.
#[derive(Clone, Copy)]
pub(super) struct Route {
    pub(super) own: usize,
    pub(super) ra: usize,
    pub(super) site: usize,
    pub(super) direct: bool,
}

/// What a walk found: the route to learn and the site, each if any.
pub(super) struct Walk {
    pub(super) route: Option<Route>,
    pub(super) site: Option<usize>,
}

/// A frame as the unwinder reports it while walking.
#[derive(Clone, Copy, Default)]
struct Frame {
    /// Where the frame's function resumes: for all but the innermost, a
    /// return address, held in the slot just below the caller's `sp`.
    ip: usize,
    /// The frame's stack pointer at its call (libgcc's `_Unwind_GetCFA`
    /// during a backtrace is the callee's CFA, i.e. this).
    sp: usize,
}

/// Walks from the wrapper whose stack pointer is `sp` to the call site.
pub(super) fn walk(sp: usize, routine: usize) -> Walk {
    match walk_up_to(sp, routine, FIRST_FRAMES) {
        (walk, false) => walk,
        (_, true) => walk_up_to(sp, routine, MAX_FRAMES).0,
    }
}

/// [`walk`] over the innermost `limit` frames (at most [`MAX_FRAMES`]);
/// true if it found no site and there were more frames to look at.
fn walk_up_to(sp: usize, routine: usize, limit: usize) -> (Walk, bool) {
    let mut frames = [Frame::default(); MAX_FRAMES];
    let limit = limit.min(MAX_FRAMES);
    let mut n = 0;
    // SAFETY: on Linux the unwinder is libgcc's _Unwind_Backtrace, which is
    // thread-safe; the callback only copies two words.
    unsafe {
        backtrace::trace_unsynchronized(|f| {
            frames[n] = Frame {
                ip: f.ip() as usize,
                sp: f.sp() as usize,
            };
            n += 1;
            n < limit
        })
    };
    let frames = &frames[..n];
    let none = (
        Walk {
            route: None,
            site: None,
        },
        n == limit,
    );
    let bases = objects();
    // Every frame but the innermost holds a return address; ip - 1 lies in
    // the call instruction, and so in the caller's object and function.
    let object = |j: usize| object_base(frames[j].ip - 1);
    // The wrapper's physical frame is the first whose stack pointer is not
    // below the one it read; the frames before it are this walk's own and
    // the unwinder's.
    let Some(mut j) = frames.iter().position(|f| f.sp >= sp) else {
        return none;
    };
    while j < n && object(j) == bases.module {
        j += 1;
    }
    if j >= n {
        return none;
    }
    // The return address into frame j lies just below frame j's stack pointer.
    let own = frames[j].sp - 8 - sp;
    let ra = frames[j].ip;
    let name = pnmpi_mpi_sys::ROUTINE_NAMES[routine].as_bytes();
    loop {
        while j < n && bases.carries(object(j)) {
            j += 1;
        }
        if j >= n {
            return none;
        }
        // The frames of the object the call came from. If one of its
        // innermost few is that object's own MPI_X wrapper, the object only
        // forwarded the call: go on to its caller. Otherwise its innermost
        // frame is the site.
        let first = j;
        let base = object(j);
        let mut forwards = false;
        while base != 0 && j < n && j - first < MAX_OWN_FRAMES && object(j) == base {
            let pc = frames[j].ip - 1;
            forwards |= in_own_function(pc, name)
                .unwrap_or_else(|| place(pc).in_function.is_some_and(|f| f.to_bytes() == name));
            j += 1;
        }
        if !forwards {
            // The route to this site from the wrapper: the site is the
            // wrapper's own return address (direct), or lies at a fixed
            // offset whenever the wrapper returns to `ra` (through
            // libpnmpi or a module above, whose frames have fixed sizes).
            let site = frames[first].sp - 8 - sp;
            let walk = Walk {
                route: Some(Route {
                    own,
                    ra,
                    site,
                    direct: site == own,
                }),
                site: Some(frames[first].ip),
            };
            return (walk, false);
        }
        while j < n && object(j) == base {
            j += 1;
        }
    }
}
