//! A checksum of a buffer's bytes: what a pending operation's buffer held
//! when it was issued, compared when it completes (a send's, a one-sided
//! operation's, a window's memory).

/// A 64-bit checksum of `len` bytes at `start` (FNV-1a over 8-byte words).
///
/// # Safety
/// `start..start + len` is readable memory.
pub unsafe fn checksum(start: usize, len: usize) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let words = len / 8;
    for i in 0..words {
        // SAFETY: inside the caller's readable range; unaligned reads allowed.
        let w = unsafe { std::ptr::read_unaligned((start + 8 * i) as *const u64) };
        h = (h ^ w).wrapping_mul(0x0000_0100_0000_01b3);
    }
    for i in 8 * words..len {
        // SAFETY: as above.
        let b = unsafe { *((start + i) as *const u8) };
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}
