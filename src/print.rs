//! LLNL PnMPI's print API (`pnmpi_print_debug`, `pnmpi_print_warning`,
//! `pnmpi_print_error`, from `pnmpi/debug_io.h`), which LLNL's own compiled
//! modules import (`metrics-counter`, `limit-threading`): without it they
//! fail to load on an undefined symbol.
//!
//! The functions are C-variadic, which stable Rust cannot define: each is
//! a naked trampoline that jumps, registers untouched, to its C twin in
//! `src/print.c`, which formats the message and hands it to
//! [`pnmpi_llnl_emit`] here. (A C function linked into this cdylib would
//! not be exported; a `#[no_mangle]` Rust item is.) The rank, the write
//! and the stop are the SDK's, which every module prints through
//! (`pnmpi_sdk::say`); the format is LLNL's.

use pnmpi_sdk::say;
use std::ffi::{c_char, c_int, CStr};

/// Defines the exported trampoline `$name`, which jumps to `$c`.
#[cfg(target_arch = "x86_64")]
macro_rules! trampolines {
    ($($name:ident => $c:ident),*) => {
        extern "C" {
            $(fn $c();)*
        }
        $(
            #[doc = concat!("LLNL's `", stringify!($name), "`: the caller's arguments, untouched, to `src/print.c`.")]
            #[unsafe(naked)]
            #[no_mangle]
            pub unsafe extern "C" fn $name() {
                core::arch::naked_asm!("jmp {c}", c = sym $c)
            }
        )*
    };
}

#[cfg(target_arch = "x86_64")]
trampolines!(
    pnmpi_print_debug => pnmpi_c_print_debug,
    pnmpi_print_warning => pnmpi_c_print_warning,
    pnmpi_print_error => pnmpi_c_print_error
);

/// What a message is.
const DEBUG: c_int = 0;
const ERROR: c_int = 2;

/// Whether a debug message of `level` is printed: its bit is set in
/// `PNMPI_DBGLEVEL`, and `PNMPI_DBGNODE`, if set, names this rank.
fn debug_wanted(level: c_int, rank: Option<c_int>) -> bool {
    let mask: c_int = std::env::var("PNMPI_DBGLEVEL")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    if mask & level == 0 {
        return false;
    }
    match (
        std::env::var("PNMPI_DBGNODE")
            .ok()
            .and_then(|v| v.trim().parse::<c_int>().ok()),
        rank,
    ) {
        (Some(node), Some(rank)) => node == rank,
        _ => true,
    }
}

/// The line as LLNL prints it: once MPI runs with more than one rank,
/// prefixed with the rank, right-aligned to the widest rank's digits.
fn with_rank(text: &str, state: Option<(c_int, c_int)>) -> String {
    match state {
        Some((rank, size)) if size > 1 => {
            let width = (size - 1).to_string().len();
            format!("{rank:>width$}: {text}")
        }
        _ => text.to_string(),
    }
}

/// Prints a message of `src/print.c` (`kind` 0 debug of `level`, 1
/// warning, 2 error) to standard error; an error then stops the run
/// (`MPI_Abort` while MPI runs, else `exit(1)`), as LLNL's does.
///
/// # Safety
/// `text` is a C string.
#[no_mangle]
pub unsafe extern "C" fn pnmpi_llnl_emit(kind: c_int, level: c_int, text: *const c_char) {
    let text = if text.is_null() {
        String::new()
    } else {
        // SAFETY: the caller's contract: a C string.
        unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned()
    };
    let state = say::mpi_rank();
    if kind == DEBUG && !debug_wanted(level, state.map(|s| s.0)) {
        return;
    }
    say::write_line(&with_rank(&text, state));
    if kind == ERROR {
        // Aborting MPI while it runs is what LLNL's error does.
        say::stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_carry_the_rank_once_mpi_runs_with_more_than_one() {
        assert_eq!(with_rank("w\n", None), "w\n");
        assert_eq!(with_rank("w\n", Some((0, 1))), "w\n");
        assert_eq!(with_rank("w\n", Some((3, 16))), " 3: w\n");
        assert_eq!(with_rank("w\n", Some((12, 16))), "12: w\n");
    }
}
