//! Ending the whole job on an error so that the error is seen.
//!
//! `MPI_Abort` tears the job down at once, and a launcher may drop what
//! the process wrote just before: MPICH's hydra, under load, lost about
//! one error message in thirty (an LLNL module's `PNMPI_Error`, and
//! MPICH's own "Abort(1) on node 0" line with it), because its proxy had
//! not yet read the bytes waiting in the rank's stderr pipe when the abort
//! reached it. So the abort waits, a bounded time, until the launcher has
//! read what this process wrote to a pipe.

use crate::{constants, ffi};
use core::ffi::c_int;

/// How long the launcher gets to read the output: polls of 10 ms.
const POLLS: u32 = 100;

/// Whether `fd` is a pipe that still holds bytes nobody has read (Linux
/// answers `FIONREAD` on either end of a pipe). Terminals and files hold
/// nothing back: false.
fn unread(fd: c_int) -> bool {
    // SAFETY: fstat fills the zeroed struct it is given, ioctl(FIONREAD)
    // one int; on a bad descriptor both fail and nothing is waited for.
    unsafe {
        let mut st: libc::stat = core::mem::zeroed();
        if libc::fstat(fd, &mut st) != 0 || st.st_mode & libc::S_IFMT != libc::S_IFIFO {
            return false;
        }
        let mut n: c_int = 0;
        libc::ioctl(fd, libc::FIONREAD, &mut n) == 0 && n > 0
    }
}

/// Ends the whole job with exit code `code` (`MPI_Abort` on
/// `MPI_COMM_WORLD`, past every tool), once the launcher has read what
/// this process wrote to standard output and error, or after a second.
/// Call it while MPI runs (initialized, not finalized); should the abort
/// return, the process exits with `code`.
pub fn abort_job(code: c_int) -> ! {
    // SAFETY: fflush(NULL) flushes every C output stream; harmless if
    // there is nothing to flush.
    unsafe { libc::fflush(core::ptr::null_mut()) };
    let pause = libc::timespec {
        tv_sec: 0,
        tv_nsec: 10_000_000,
    };
    for _ in 0..POLLS {
        if !unread(libc::STDOUT_FILENO) && !unread(libc::STDERR_FILENO) {
            break;
        }
        // SAFETY: nanosleep reads the timespec; the remainder may be null.
        unsafe { libc::nanosleep(&pause, core::ptr::null_mut()) };
    }
    // SAFETY: the caller runs between MPI_Init and MPI_Finalize, where
    // MPI_Abort on the predefined world communicator is always allowed; it
    // does not return then, and _exit ends the process if it does.
    unsafe {
        ffi::PMPI_Abort(constants::COMM_WORLD(), code);
        libc::_exit(code)
    }
}
