//! Call sites: the application's return address of each MPI call, as
//! mpiP records it, kept per thread in a preallocated table and resolved
//! to function, file and line only at `MPI_Finalize`.
//!
//! A wrapper's own return address is the call site when the application
//! calls it directly (first in the chain under direct binding). Otherwise
//! libpnmpi's entry point and dispatcher, the MPI's Fortran bindings (for
//! a Fortran application), or the modules above it, sit between. The
//! slow path walks the stack with the `backtrace` crate: past this
//! module's frames, past libpnmpi's and the Fortran bindings', past any
//! module that forwards the same routine (a frame inside that module's
//! exported `MPI_X`), to the first other frame.
//!
//! Unwinding costs microseconds, so the walk also *learns the route*: the
//! offset from the wrapper's stack pointer to its own return address, and
//! then either that the return address is the site (direct), or, keyed by
//! that return address (an instruction of libpnmpi or of a module above),
//! the offset to the slot that held the site's return address. Frames have
//! fixed sizes, so on the next call the site is one or two stack loads
//! away, whatever the depth of the application's stack. A site read that
//! way is trusted only if it is already in the table, i.e. a walk has
//! classified it before; anything else walks again.

use crate::state::{Counter, Series};
use std::ffi::{c_int, c_void, CStr};

/// Frames a walk looks at: the profiler's, libpnmpi's and a few modules'.
const MAX_FRAMES: usize = 64;
/// Frames a first walk looks at, enough for a call from the application
/// or through a module or two: each frame costs the unwinder about a
/// microsecond, and a deep application has far more than 64 of them. A
/// walk that runs out before the site looks again at [`MAX_FRAMES`].
const FIRST_FRAMES: usize = 16;
/// Frames of one module searched for its MPI_X wrapper: a wrapper, and
/// the closures and guards a module's SDK may put inside it.
const MAX_OWN_FRAMES: usize = 8;
/// Linear probes before a table counts a site as dropped.
const MAX_PROBES: usize = 16;
/// `RTLD_DL_SYMENT` of `<dlfcn.h>`: `dladdr1` also returns the ELF symbol.
const RTLD_DL_SYMENT: c_int = 1;

/// The stack pointer of the calling function (inlined into it).
#[inline(always)]
pub fn stack_pointer() -> usize {
    let sp: usize;
    #[cfg(target_arch = "x86_64")]
    // SAFETY: copies a register; touches no memory.
    unsafe {
        core::arch::asm!("mov {}, rsp", out(reg) sp, options(nomem, nostack, preserves_flags));
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let anchor = 0u8;
        sp = std::hint::black_box(&anchor) as *const u8 as usize;
    }
    sp
}

/// Reads a word of this thread's stack, above the caller's frame.
///
/// # Safety
/// `addr` must be a mapped, 8-byte aligned address of the calling thread's
/// stack.
#[inline(always)]
unsafe fn read_stack(addr: usize) -> usize {
    // SAFETY: the caller guarantees a readable stack word; a volatile read
    // through an integer address keeps the compiler from reasoning about
    // which Rust object it belongs to.
    unsafe { std::ptr::read_volatile(addr as *const usize) }
}

/// One learned route into a wrapper: its return address into libpnmpi and
/// where the call site's return address then lies.
#[derive(Default)]
struct Way {
    /// The wrapper's return address; 0: not learned.
    ra: Counter,
    /// Offset from the wrapper's stack pointer to the call site's return address.
    site: Counter,
}

/// The routes learned for one routine's wrapper (two, so that a routine
/// reached both from the application and from a module above does not
/// thrash).
#[derive(Default)]
pub struct Routes {
    /// Offset from the wrapper's stack pointer to its own return address; 0: none yet.
    own: Counter,
    /// 1 once a walk found the wrapper's own return address to be the call
    /// site (first in the chain under direct binding: the application
    /// calls the wrapper itself).
    direct: Counter,
    ways: [Way; 2],
    /// Which way the next route replaces.
    next: Counter,
    /// The last site of this routine and its slot in the table: a loop
    /// calls from the same site again and again, and this skips the hash.
    last: Counter,
    last_slot: Counter,
}

impl Routes {
    fn learn(&self, route: Route) {
        self.own.set(route.own as u64);
        if route.direct {
            self.direct.set(1);
            return;
        }
        if let Some(way) = self.ways.iter().find(|w| w.ra.get() == route.ra as u64) {
            way.site.set(route.site as u64);
            return;
        }
        let way = &self.ways[(self.next.get() & 1) as usize];
        way.ra.set(route.ra as u64);
        way.site.set(route.site as u64);
        self.next.add(1);
    }
}

/// One slot of a table: a (routine, return address) pair and its calls.
#[derive(Default)]
pub struct Site {
    /// The call site's return address; 0: free slot.
    ra: Counter,
    routine: Counter,
    /// The calls made from here.
    pub stats: Series,
}

/// A thread's call sites: open addressing, preallocated, never resized
/// (no allocation on the hot path). A call placed at a site is counted
/// there only; its routine's statistics are the sum of its sites'.
pub struct Table {
    slots: Box<[Site]>,
    /// Calls whose site found no slot, or that no walk could place (their
    /// routine counts them instead).
    pub dropped: Counter,
}

impl Table {
    /// A table of `capacity` slots (a power of two).
    pub fn new(capacity: usize) -> Table {
        debug_assert!(capacity.is_power_of_two());
        Table {
            slots: (0..capacity).map(|_| Site::default()).collect(),
            dropped: Counter::default(),
        }
    }

    /// The sites in use: (routine id, return address, stats).
    pub fn sites(&self) -> impl Iterator<Item = (usize, usize, &Series)> {
        self.slots
            .iter()
            .filter(|s| s.ra.get() != 0)
            .map(|s| (s.routine.get() as usize, s.ra.get() as usize, &s.stats))
    }

    /// The slots where (routine, ra) may be, in probing order.
    #[inline(always)]
    fn probe(&self, routine: usize, ra: usize) -> impl Iterator<Item = usize> {
        let mask = self.slots.len() - 1;
        let hash = ((ra as u64) ^ ((routine as u64) << 47)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let start = (hash >> 40) as usize;
        (0..MAX_PROBES.min(self.slots.len())).map(move |i| (start + i) & mask)
    }

    /// The slot of (routine, ra), if a walk has put it in the table.
    #[inline(always)]
    fn find(&self, routine: usize, ra: usize) -> Option<usize> {
        self.lookup::<false>(routine, ra)
    }

    fn find_or_insert(&self, routine: usize, ra: usize) -> Option<usize> {
        self.lookup::<true>(routine, ra)
    }

    /// Probes for (routine, ra); at the first free slot, claims it when
    /// `INSERT`, else stops. None when the probes run out.
    #[inline(always)]
    fn lookup<const INSERT: bool>(&self, routine: usize, ra: usize) -> Option<usize> {
        for i in self.probe(routine, ra) {
            let slot = &self.slots[i];
            let key = slot.ra.get() as usize;
            if key == ra && slot.routine.get() as usize == routine {
                return Some(i);
            }
            if key == 0 {
                if !INSERT {
                    return None;
                }
                slot.routine.set(routine as u64);
                slot.ra.set(ra as u64);
                return Some(i);
            }
        }
        None
    }

    /// Remembers slot `i`, of site `ra`, as the routine's last site.
    #[inline(always)]
    fn hit(&self, routes: &Routes, i: usize, ra: usize) -> usize {
        routes.last.set(ra as u64);
        routes.last_slot.set(i as u64);
        i
    }

    /// Counts one call of `ticks` that moved `bytes` in slot `i` (from
    /// [`Table::locate`]).
    #[inline(always)]
    pub fn count(&self, i: usize, ticks: u64, bytes: u64) {
        self.slots[i].stats.add(ticks, bytes);
    }

    /// The slot of the site of the call of `routine` whose wrapper read
    /// `sp` as its stack pointer; None if it could not be placed. Call it
    /// while that wrapper runs: it reads the wrapper's stack.
    #[inline(always)]
    pub fn locate(&self, routes: &Routes, routine: usize, sp: usize) -> Option<usize> {
        let own = routes.own.get() as usize;
        if own != 0 {
            // SAFETY: `own` was measured by unwinding this routine's wrapper,
            // whose frame has the same size on every call: sp + own is the
            // wrapper's own return-address slot, in this thread's live stack.
            let ra = unsafe { read_stack(sp + own) };
            let site = match routes.ways.iter().find(|w| w.ra.get() as usize == ra) {
                // SAFETY: the call came back through the same instruction
                // (of libpnmpi or of a module above) as when the route was
                // learned, so the same fixed-size frames lie above, and
                // sp + site is the slot that held the call site's return
                // address.
                Some(way) => Some(unsafe { read_stack(sp + way.site.get() as usize) }),
                // Called straight from the site: the return address is it.
                None if routes.direct.get() != 0 => Some(ra),
                None => None,
            };
            // A site read this way counts only if a walk placed it before.
            if let Some(site) = site {
                if site as u64 == routes.last.get() {
                    return Some(routes.last_slot.get() as usize);
                }
                if let Some(i) = self.find(routine, site) {
                    return Some(self.hit(routes, i, site));
                }
            }
        }
        self.locate_slow(routes, routine, sp)
    }

    /// Walks the stack to find the site and learns the route.
    #[cold]
    #[inline(never)]
    fn locate_slow(&self, routes: &Routes, routine: usize, sp: usize) -> Option<usize> {
        let walk = walk(sp, routine);
        if let Some(route) = walk.route {
            routes.learn(route);
        }
        match walk
            .site
            .and_then(|ra| Some((ra, self.find_or_insert(routine, ra)?)))
        {
            Some((ra, i)) => Some(self.hit(routes, i, ra)),
            None => {
                self.dropped.add(1);
                None
            }
        }
    }
}

/// A route into a wrapper, as offsets from its stack pointer: its own
/// return address, and either where the site's return address lies when
/// that return address comes back (`ra`), or `direct`: the return address
/// is the site.
#[derive(Clone, Copy)]
struct Route {
    own: usize,
    ra: usize,
    site: usize,
    direct: bool,
}

struct Walk {
    route: Option<Route>,
    site: Option<usize>,
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

/// What `dladdr1` says about an address.
struct Place {
    /// The base of the object holding it, 0 if none.
    base: usize,
    /// Whether it lies inside that object's exported function `name`.
    in_function: Option<&'static CStr>,
}

fn place(addr: usize) -> Place {
    // SAFETY: Dl_info is plain data; all zeroes is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let mut sym: *mut libc::Elf64_Sym = std::ptr::null_mut();
    // SAFETY: `info` and `sym` are local out-parameters; dladdr1 only reads
    // the loader's tables.
    let found = unsafe {
        libc::dladdr1(
            addr as *const c_void,
            &mut info,
            (&mut sym as *mut *mut libc::Elf64_Sym).cast(),
            RTLD_DL_SYMENT,
        )
    };
    if found == 0 {
        return Place {
            base: 0,
            in_function: None,
        };
    }
    let mut in_function = None;
    if !info.dli_sname.is_null() && !sym.is_null() {
        // SAFETY: dladdr1 set `sym` to the symbol's ELF entry, which lives as
        // long as the object.
        let size = unsafe { (*sym).st_size } as usize;
        let start = info.dli_saddr as usize;
        if addr >= start && addr < start + size {
            // SAFETY: a NUL-terminated name in the object's string table,
            // which stays mapped while the object is loaded (modules are
            // never unloaded during the run).
            in_function = Some(unsafe { CStr::from_ptr(info.dli_sname) });
        }
    }
    Place {
        base: info.dli_fbase as usize,
        in_function,
    }
}

/// glibc's `struct dl_find_object` (`<dlfcn.h>`, glibc 2.35).
#[repr(C)]
struct DlFindObject {
    flags: u64,
    map_start: *mut c_void,
    map_end: *mut c_void,
    link_map: *mut c_void,
    eh_frame: *mut c_void,
    reserved: [u64; 7],
}

/// `_dl_find_object`, if this glibc has it (2.35 and later).
type FindObject = unsafe extern "C" fn(*mut c_void, *mut DlFindObject) -> c_int;

fn find_object() -> Option<FindObject> {
    static FIND: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let f = *FIND.get_or_init(|| {
        // SAFETY: a lookup of a NUL-terminated name in the global scope.
        unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"_dl_find_object".as_ptr()) as usize }
    });
    // SAFETY: a non-null `_dl_find_object` has this signature (dlfcn.h).
    (f != 0).then(|| unsafe { std::mem::transmute::<usize, FindObject>(f) })
}

/// The public head of glibc's `struct link_map` (`<link.h>`).
#[repr(C)]
struct LinkMap {
    /// The load bias.
    addr: usize,
    _name: *const std::ffi::c_char,
    /// The object's dynamic section.
    dynamic: *const Dyn,
}

/// `Elf64_Dyn`.
#[repr(C)]
struct Dyn {
    tag: i64,
    val: u64,
}

const DT_NULL: i64 = 0;
const DT_STRTAB: i64 = 5;
const DT_SYMTAB: i64 = 6;
const DT_GNU_HASH: i64 = 0x6fff_fef5;

/// The GNU hash of a symbol name (the ELF `DT_GNU_HASH` function).
fn gnu_hash(name: &[u8]) -> u32 {
    name.iter()
        .fold(5381u32, |h, &c| h.wrapping_mul(33).wrapping_add(u32::from(c)))
}

/// Whether `pc` lies in the function `name` that the object holding `pc`
/// defines itself, looked up in that object's GNU hash table (a few
/// probes); None if this glibc or object cannot say (no
/// `_dl_find_object`, no `DT_GNU_HASH`), for [`place`] to answer instead:
/// `dladdr` scans every symbol of the object.
fn in_own_function(pc: usize, name: &[u8]) -> Option<bool> {
    let find = find_object()?;
    // SAFETY: DlFindObject is plain data; all zeroes is a valid value.
    let mut found: DlFindObject = unsafe { std::mem::zeroed() };
    // SAFETY: a local out-parameter; the loader's tables are only read.
    if unsafe { find(pc as *mut c_void, &mut found) } != 0 || found.link_map.is_null() {
        return None;
    }
    // SAFETY: `_dl_find_object` returned the object's `link_map`, whose
    // public head is `LinkMap`; its dynamic section ends with DT_NULL, and
    // the tables it names stay mapped while the object is loaded (objects
    // are never unloaded during the run). glibc has relocated the table
    // addresses by the load bias, except in a read-only dynamic section,
    // whose addresses are then below the bias.
    unsafe {
        let map = &*found.link_map.cast::<LinkMap>();
        let bias = map.addr;
        let at = |v: u64| {
            if (v as usize) < bias {
                v as usize + bias
            } else {
                v as usize
            }
        };
        let (mut hash, mut symtab, mut strtab) = (0, 0, 0);
        let mut d = map.dynamic;
        while !d.is_null() && (*d).tag != DT_NULL {
            match (*d).tag {
                DT_GNU_HASH => hash = at((*d).val),
                DT_SYMTAB => symtab = at((*d).val),
                DT_STRTAB => strtab = at((*d).val),
                _ => {}
            }
            d = d.add(1);
        }
        if hash == 0 || symtab == 0 || strtab == 0 {
            return None;
        }
        // nbuckets, symoffset, bloom words (64-bit), bloom shift, then the
        // bloom filter, the buckets and the chains.
        let table = hash as *const u32;
        let (nbuckets, symoffset, bloom) = (*table, *table.add(1), *table.add(2) as usize);
        if nbuckets == 0 {
            return Some(false);
        }
        let buckets = table.add(4 + 2 * bloom);
        let chains = buckets.add(nbuckets as usize);
        let h = gnu_hash(name);
        let mut i = *buckets.add((h % nbuckets) as usize);
        if i < symoffset {
            return Some(false);
        }
        loop {
            let link = *chains.add((i - symoffset) as usize);
            if link | 1 == h | 1 {
                let sym = &*(symtab as *const libc::Elf64_Sym).add(i as usize);
                let sym_name = CStr::from_ptr((strtab + sym.st_name as usize) as *const std::ffi::c_char);
                if sym_name.to_bytes() == name {
                    let start = bias + sym.st_value as usize;
                    return Some(sym.st_shndx != 0 && pc >= start && pc < start + sym.st_size as usize);
                }
            }
            if link & 1 != 0 {
                return Some(false);
            }
            i += 1;
        }
    }
}

/// The object holding `addr` (the start of its mapping, as `dladdr`'s
/// `dli_fbase`), or 0. `_dl_find_object` answers from the loader's sorted
/// table of objects; `dladdr` also searches the object's symbols, every
/// one of them (about 0.4 M instructions in LAMMPS's library, for each of
/// the dozens of frames a new call site's walk looks at).
pub fn object_base(addr: usize) -> usize {
    if let Some(find) = find_object() {
        // SAFETY: DlFindObject is plain data; all zeroes is a valid value.
        let mut found: DlFindObject = unsafe { std::mem::zeroed() };
        // SAFETY: `found` is a local out-parameter; `_dl_find_object` only
        // reads the loader's tables and takes no lock.
        if unsafe { find(addr as *mut c_void, &mut found) } == 0 {
            return found.map_start as usize;
        }
        return 0;
    }
    place(addr).base
}

/// Load bases of the loaded objects whose file name starts with one of
/// `prefixes`.
pub fn loaded_bases(prefixes: &[&str]) -> Vec<usize> {
    unsafe extern "C" fn collect(info: *mut libc::dl_phdr_info, _: usize, data: *mut c_void) -> c_int {
        // SAFETY: the loader passes a valid `info` whose name, if not null,
        // is a C string; `data` is the pair below.
        unsafe {
            let (prefixes, bases) = &mut *data.cast::<(&[&str], Vec<usize>)>();
            let name = (*info).dlpi_name;
            if !name.is_null() {
                let path = CStr::from_ptr(name).to_string_lossy();
                let file = path.rsplit('/').next().unwrap_or_default();
                if prefixes.iter().any(|p| file.starts_with(p)) {
                    bases.push((*info).dlpi_addr as usize);
                }
            }
        }
        0
    }
    let mut found: (&[&str], Vec<usize>) = (prefixes, Vec::new());
    // SAFETY: the callback only reads `info` and pushes to `found`.
    unsafe { libc::dl_iterate_phdr(Some(collect), (&raw mut found).cast()) };
    found.1
}

/// Walks from the wrapper whose stack pointer is `sp` to the call site.
fn walk(sp: usize, routine: usize) -> Walk {
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
    let bases = crate::objects();
    // Every frame but the innermost holds a return address; ip - 1 lies in
    // the call instruction, and so in the caller's object and function.
    let object = |j: usize| object_base(frames[j].ip - 1);
    // The wrapper's physical frame is the first whose stack pointer is not
    // below the one it read; the frames before it are this walk's own and
    // the unwinder's.
    let Some(mut j) = frames.iter().position(|f| f.sp >= sp) else {
        return none;
    };
    while j < n && object(j) == bases.profiler {
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
