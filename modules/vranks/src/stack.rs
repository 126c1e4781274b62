//! The virtual ranks' stacks, carved out of large reserved chunks.
//!
//! One `mmap` per stack with its own guard page would cost two memory
//! maps per rank, and Linux allows 65,530 per process
//! (`vm.max_map_count`): 32,765 ranks at most. So stacks come from chunks
//! of up to 1 GiB (`MAP_NORESERVE`: address space only, pages are
//! committed when first touched), and a guard page (`PROT_NONE` by
//! `mprotect`, which splits the chunk's map) is made at the low end of
//! each stack only while the whole run's maps stay under half the limit.
//! Above that, a rank's stack pointer is checked against its limit at
//! every switch instead ([`Pool::guarded`] says which), which catches an
//! overflow that is still in progress when the rank next calls MPI, not
//! one that returned before it. A fault in a guard page is reported by
//! the overflow handler (`overflow`), naming the rank.

use corosensei::stack::{Stack, StackPointer};
use std::io;

/// The page size the guard pages and sizes are rounded to.
pub const PAGE: usize = 4096;

/// The largest chunk reserved at once.
const CHUNK_BYTES: usize = 1 << 30;

/// Stacks smaller than this are refused: the layer's own frames and the
/// MPI library's, inside a call, need about this much.
pub const MIN_STACK: usize = 64 * 1024;

/// Where stacks come from.
pub struct Pool {
    /// Usable bytes per stack (without its guard page).
    size: usize,
    /// Whether each stack has a guard page below it.
    guarded: bool,
    /// Stacks per chunk.
    per_chunk: usize,
    /// The next unused slot in the current chunk, and that chunk's base.
    next: usize,
    base: usize,
    /// Stacks given back by ranks that finished.
    free: Vec<VStack>,
}

/// One rank's stack: `[limit, base)`, growing down from `base`.
pub struct VStack {
    base: usize,
    limit: usize,
}

impl VStack {
    /// The lowest usable address.
    pub fn limit(&self) -> usize {
        self.limit
    }
}

// SAFETY: `base` and `limit` bound a mapped, writable region of the
// process that nothing else uses while this stack is live, aligned to a
// page (so to STACK_ALIGNMENT).
unsafe impl Stack for VStack {
    fn base(&self) -> StackPointer {
        StackPointer::new(self.base).expect("a mapped stack is not at address 0")
    }
    fn limit(&self) -> StackPointer {
        StackPointer::new(self.limit).expect("a mapped stack is not at address 0")
    }
}

impl Pool {
    /// A pool of stacks of `size` bytes (rounded up to pages) for `ranks`
    /// ranks, with guard pages if the map count allows.
    pub fn new(size: usize, ranks: usize) -> Pool {
        let size = size.div_ceil(PAGE) * PAGE;
        let slot = size + PAGE;
        let max_maps = std::fs::read_to_string("/proc/sys/vm/max_map_count")
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok())
            .unwrap_or(65530);
        Pool {
            size,
            guarded: ranks.saturating_mul(2) < max_maps / 2,
            per_chunk: (CHUNK_BYTES / slot).max(1),
            next: usize::MAX,
            base: 0,
            free: Vec::new(),
        }
    }

    /// Whether stacks have guard pages (else the switch checks the
    /// stack pointer).
    pub fn guarded(&self) -> bool {
        self.guarded
    }

    /// Usable bytes per stack.
    pub fn size(&self) -> usize {
        self.size
    }

    /// A stack, reused or carved from the current chunk.
    pub fn take(&mut self) -> io::Result<VStack> {
        if let Some(s) = self.free.pop() {
            return Ok(s);
        }
        let slot = self.size + PAGE;
        if self.next >= self.per_chunk {
            let len = slot * self.per_chunk;
            // SAFETY: a fresh anonymous private mapping; no existing memory
            // is touched.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                    -1,
                    0,
                )
            };
            if p == libc::MAP_FAILED {
                return Err(io::Error::last_os_error());
            }
            self.base = p as usize;
            self.next = 0;
        }
        let low = self.base + self.next * slot;
        self.next += 1;
        if self.guarded {
            // SAFETY: `low` is the first page of this slot, inside the chunk
            // just mapped, and no stack uses it.
            if unsafe { libc::mprotect(low as *mut libc::c_void, PAGE, libc::PROT_NONE) } != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(VStack {
            base: low + slot,
            limit: low + PAGE,
        })
    }

    /// Takes back the stack of a rank that finished.
    pub fn give(&mut self, s: VStack) {
        self.free.push(s);
    }
}
