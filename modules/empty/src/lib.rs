//! The "empty" module of the paper's section 5: it wraps every MPI routine
//! and only calls the next layer. It measures the cost of a layer, and
//! tests that every routine passes through a chain intact.
//!
//! Its wrappers come from the same routine table as libpnmpi's stubs, so it
//! always wraps exactly the routines libpnmpi exports.

macro_rules! forward {
    ($id:expr, $mpi:ident, $pmpi:ident, $xmpi:ident, $newstack:ident, $kind:ident ($($a:ident : $t:ty),*) -> $r:ty) => {
        extern "C" {
            fn $xmpi($($a: $t),*) -> $r;
        }

        /// Calls the next layer with the same arguments.
        ///
        /// # Safety
        /// Called by C with the arguments of the MPI routine it is named after.
        #[no_mangle]
        pub unsafe extern "C" fn $mpi($($a: $t),*) -> $r {
            // SAFETY: forwards the caller's arguments unchanged to libpnmpi's
            // entry point of the same signature.
            unsafe { $xmpi($($a),*) }
        }
    };
}

pnmpi_mpi_sys::for_each_routine!(forward);
