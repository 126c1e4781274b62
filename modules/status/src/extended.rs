//! The extended status array that the `status` module passes down in
//! place of the application's: `count` ordinary `MPI_Status`es, then one
//! block of `extension` bytes per status, the layout of LLNL PnMPI's
//! `STATUS_STORAGE_ARRAY` (block `i` at `count * sizeof(MPI_Status) +
//! i * extension`). Each status is marked (`MPI_ERROR` = [`MARK`]) so that
//! the modules below know the blocks are there.

use pnmpi_sdk::constants;
use pnmpi_sdk::llnl::STATUS_MARK as MARK;
use pnmpi_sdk::sys::ffi::MPI_Status;
use std::mem::size_of;

/// Statuses small enough are kept on the stack (in 8-byte words).
const INLINE_WORDS: usize = 64;

/// An extended status array, on the stack when it fits.
pub struct Extended {
    inline: [u64; INLINE_WORDS],
    heap: Vec<u64>,
    count: usize,
}

impl Extended {
    /// `count` marked statuses, each followed (after all of them) by
    /// `extension` zeroed bytes.
    pub fn new(count: usize, extension: usize) -> Extended {
        let bytes = count * (size_of::<MPI_Status>() + extension);
        let words = bytes.div_ceil(8).max(1);
        let mut ext = Extended {
            inline: [0; INLINE_WORDS],
            heap: if words > INLINE_WORDS {
                vec![0; words]
            } else {
                Vec::new()
            },
            count,
        };
        for i in 0..count {
            // SAFETY: i < count statuses fit in the zeroed, 8-byte aligned
            // buffer, and MPI_Status is plain integers.
            unsafe { (*ext.as_mut_ptr().add(i)).MPI_ERROR = MARK };
        }
        ext
    }

    /// The array to pass down in place of the application's.
    pub fn as_mut_ptr(&mut self) -> *mut MPI_Status {
        if self.heap.is_empty() {
            self.inline.as_mut_ptr().cast()
        } else {
            self.heap.as_mut_ptr().cast()
        }
    }

    /// Copies the first `n` statuses (at most all) into the application's
    /// array `user`, unless it is `MPI_STATUS(ES)_IGNORE`. A status whose
    /// `MPI_ERROR` MPI left marked gets the application's own value back,
    /// as MPI would have left it.
    ///
    /// # Safety
    /// `user` is an ignore constant or holds at least `n` statuses.
    pub unsafe fn copy_out(&mut self, user: *mut MPI_Status, n: usize) {
        if user.is_null() || user == constants::STATUS_IGNORE() || user == constants::STATUSES_IGNORE() {
            return;
        }
        let src = self.as_mut_ptr();
        for i in 0..n.min(self.count) {
            // SAFETY: i < n statuses in both arrays, by the contract and
            // by construction.
            unsafe {
                let mut status = *src.add(i);
                if status.MPI_ERROR == MARK {
                    status.MPI_ERROR = (*user.add(i)).MPI_ERROR;
                }
                *user.add(i) = status;
            }
        }
    }
}
