//! [`wrap!`](crate::wrap!): wrappers whose C signatures come from the
//! routine table, so that they always match the application's calls.

/// Defines wrappers of MPI routines.
///
/// ```ignore
/// pnmpi_sdk::wrap! {
///     /// Counts the sends.
///     fn MPI_Send(_buf, _count, _datatype, _dest, _tag, _comm) {
///         SENDS.fetch_add(1, Relaxed);
///         next!()
///     }
/// }
/// ```
///
/// Each `fn` names an `MPI_` routine and gives a name to each of its
/// arguments, in order; the types and the return type are the routine
/// table's, i.e. those of this MPI's `mpi.h`. It becomes
/// `#[no_mangle] unsafe extern "C" fn MPI_X`, which libpnmpi finds in the
/// module and puts in the routine's chain. In the body:
///
/// - `next!()` calls `XMPI_X` with this call's own arguments, unchanged,
///   and returns its result: the next layer below this module.
/// - `next_in!(stack)` calls `XMPI_X_NewStack` instead: the same call, at
///   the top of another stack (a [`services::Stack`](crate::services::Stack)).
/// - the argument names are copies of the C arguments (raw pointers and
///   handles); [`next`](crate::next) uses them safely, e.g.
///   `next::type_size(datatype)`. Prefix unused ones with `_`.
///
/// The body must return the routine's result, normally the one `next!()`
/// returned. It is safe code; it runs in [`guard`](crate::hooks::guard),
/// so a panic aborts the process instead of unwinding into C.
///
/// A routine this MPI does not have is a compile error, and so is a wrong
/// number of argument names:
///
/// ```compile_fail,E0425
/// pnmpi_sdk::wrap! {
///     fn MPI_Sned(_buf, _count, _datatype, _dest, _tag, _comm) {
///         next!()
///     }
/// }
/// ```
///
/// ```compile_fail,E0080
/// pnmpi_sdk::wrap! {
///     fn MPI_Barrier(_comm, _extra) {
///         next!()
///     }
/// }
/// ```
///
/// `MPI_Pcontrol` is variadic in C; its wrapper gets the level only, which
/// is all pnmpi passes down.
#[macro_export]
macro_rules! wrap {
    ($($(#[$attr:meta])* fn $name:ident ($($arg:ident),* $(,)?) $body:block)*) => {
        $( $crate::__wrap_select! { required [$] ($(#[$attr])*) $name ($($arg),*) $body } )*
    };
}

/// [`wrap!`] for routines that only some MPIs have (MPI 4's large-count
/// `_c` routines: MPICH 4 has them, Open MPI 4.1 not): a wrapper is
/// defined where the MPI has the routine, and nothing, without an error,
/// where it has not. The body is not compiled then, so it may name the
/// routine's `XMPI_` entry.
#[macro_export]
macro_rules! wrap_optional {
    ($($(#[$attr:meta])* fn $name:ident ($($arg:ident),* $(,)?) $body:block)*) => {
        $( $crate::__wrap_select! { optional [$] ($(#[$attr])*) $name ($($arg),*) $body } )*
    };
}

/// Names a routine's table entry, so that a routine this MPI lacks stops
/// the build (`required`), or nothing (`optional`).
#[doc(hidden)]
#[macro_export]
macro_rules! __wrap_guard {
    (required $name:ident) => {
        let _ = $crate::raw::routine::$name;
    };
    (optional $name:ident) => {};
}

/// Finds `$name` in the routine table and hands its signature to
/// [`__wrap_fn!`] (`$need`: see [`__wrap_guard!`]). `$d` is a `$` token,
/// for the metavariables of the selecting macro it defines.
#[doc(hidden)]
#[macro_export]
macro_rules! __wrap_select {
    ($need:ident [$d:tt] ($($attr:tt)*) $name:ident ($($arg:ident),*) $body:block) => {
        const _: () = {
            $crate::__wrap_guard!($need $name);

            macro_rules! __pnmpi_select {
                ($d id:literal, $name, $d pmpi:ident, $d xmpi:ident, $d newstack:ident,
                 $d kind:ident ($d ($d a:ident : $d t:ty),*) -> $d r:ty) => {
                    $crate::__wrap_fn! {
                        [$d] ($($attr)*) $name, $d xmpi, $d newstack,
                        ($d ($d a : $d t),*) -> $d r, ($($arg),*) $body
                    }
                };
                ($d ($d other:tt)*) => {};
            }

            $crate::sys::for_each_routine!(__pnmpi_select);
        };
    };
}

/// Defines one wrapper from its table signature.
#[doc(hidden)]
#[macro_export]
macro_rules! __wrap_fn {
    ([$d:tt] ($($attr:tt)*) $name:ident, $xmpi:ident, $newstack:ident,
     ($($a:ident : $t:ty),*) -> $r:ty, ($($arg:ident),*) $body:block) => {
        const _: () = assert!(
            <[&str]>::len(&[$(stringify!($arg)),*]) == <[&str]>::len(&[$(stringify!($a)),*]),
            concat!(
                "pnmpi_sdk::wrap!: give one name to each argument of ", stringify!($name), ", in order: (",
                stringify!($($t),*), ")"
            )
        );

        $($attr)*
        ///
        /// # Safety
        /// Called by libpnmpi with the arguments of the MPI routine it is
        /// named after.
        #[no_mangle]
        #[allow(non_snake_case)]
        #[deny(unsafe_op_in_unsafe_fn)]
        pub unsafe extern "C" fn $name($($a: $t),*) -> $r {
            let ($($arg,)*) = ($($a,)*);

            #[allow(unused_macros)]
            macro_rules! next {
                () => {
                    // SAFETY: this call's own arguments, unchanged, to the
                    // next layer's entry point of the same C signature.
                    unsafe { $crate::raw::$xmpi($($a),*) }
                };
            }

            #[allow(unused_macros)]
            macro_rules! next_in {
                ($d stack:expr) => {
                    // SAFETY: as for next!(), with a handle that only
                    // services::stack_by_name makes.
                    unsafe {
                        $crate::raw::$newstack($crate::services::Stack::handle($d stack), $($a),*)
                    }
                };
            }

            $crate::hooks::guard(concat!("the ", stringify!($name), " wrapper"), move || -> $r { $body })
        }
    };
}
