//! `XMPI_X` for the routines `mpi.h` declares but the MPI library does not
//! export (MPICH 4.0's four `MPI_Status_*f08*` conversions). A module
//! compiled against `mpi.h` that wraps every routine (LLNL's
//! `metrics-counter`, generated with `wrap.py`) imports them; without a
//! definition it would not load. The application cannot call the routine
//! (libpnmpi exports no `MPI_X` for it), so a module's wrapper of it never
//! runs; if something calls the stub anyway it fails with `MPI_ERR_OTHER`.

// Open MPI exports every routine it declares: there the list is empty.
#[allow(unused_macros)]
macro_rules! unavailable {
    ($xmpi:ident) => {
        /// Fails: this MPI library has no such routine.
        #[no_mangle]
        pub extern "C" fn $xmpi() -> std::ffi::c_int {
            pnmpi_mpi_sys::constants::ERR_OTHER()
        }
    };
}

pnmpi_mpi_sys::for_each_unexported!(unavailable);
