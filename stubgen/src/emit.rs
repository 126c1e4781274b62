//! Writes the routine table as Rust source: the names, and a
//! `for_each_routine!` macro that hands each routine's signature to a
//! caller-supplied macro. libpnmpi builds its stubs from it, modules build
//! their wrappers from it, so every crate agrees on ids and types.

use crate::parse::Routine;
use std::collections::BTreeSet;
use std::fmt::Write;

/// Rust source for the routine table of `routines`, for `flavor`, and the
/// list of the routines `mpi.h` declares but the library does not export
/// (`unexported`, `MPI_` names without the prefix).
pub fn table(routines: &[Routine], unexported: &[&str], flavor: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "/// Calls `$m! {{ XMPI_X }}` once per routine `mpi.h` declares but the MPI library does not \
         export:\n/// libpnmpi defines each as a stub that fails, so that a module compiled against \
         `mpi.h` that\n/// wraps it still loads.\n#[macro_export]\nmacro_rules! for_each_unexported {{\n    \
         ($m:ident) => {{"
    );
    for name in unexported {
        let _ = writeln!(out, "        $m! {{ XMPI_{name} }}");
    }
    let _ = writeln!(out, "    }};\n}}");
    let n = routines.len();
    let _ = writeln!(out, "/// The MPI this table was generated from.");
    let _ = writeln!(out, "pub const FLAVOR: &str = {flavor:?};");
    let _ = writeln!(
        out,
        "/// How many routines libpnmpi intercepts; ids run from 0 to this."
    );
    let _ = writeln!(out, "pub const ROUTINE_COUNT: usize = {n};");
    let _ = writeln!(out, "/// `MPI_` names by routine id.");
    let _ = writeln!(out, "pub static ROUTINE_NAMES: [&str; {n}] = [");
    for r in routines {
        let _ = writeln!(out, "    {:?},", r.mpi_name());
    }
    let _ = writeln!(out, "];");
    let _ = writeln!(
        out,
        "/// Calls `$m! {{ id, MPI_X, PMPI_X, XMPI_X, XMPI_X_NewStack, fixed|variadic (a0: T0, ...) -> R }}` \
         once per routine."
    );
    let _ = writeln!(
        out,
        "#[macro_export]\nmacro_rules! for_each_routine {{\n    ($m:ident) => {{"
    );
    for (id, r) in routines.iter().enumerate() {
        let params: Vec<String> = r
            .params
            .iter()
            .enumerate()
            .map(|(i, t)| format!("a{i}: {t}"))
            .collect();
        let kind = if r.variadic { "variadic" } else { "fixed" };
        let _ = writeln!(
            out,
            "        $m! {{ {id}, MPI_{n}, PMPI_{n}, XMPI_{n}, XMPI_{n}_NewStack, {kind} ({}) -> {} }}",
            params.join(", "),
            r.ret,
            n = r.name
        );
    }
    let _ = writeln!(out, "    }};\n}}");
    let pairs: String = routines
        .iter()
        .map(|r| format!("            (MPI_{n}, PMPI_{n}),\n", n = r.name))
        .collect();
    let _ = writeln!(
        out,
        "/// Calls `$m! {{ (MPI_X, PMPI_X), ... }}` once with every routine in id order, \
         for tables indexed by routine id.\n\
         #[macro_export]\nmacro_rules! all_routines {{\n    ($m:ident) => {{\n        $m! {{\n\
         {pairs}        }}\n    }};\n}}"
    );
    out
}

/// C header declaring every `XMPI_` entry point for module authors. Each
/// takes the type of its `PMPI_` twin from the native `mpi.h`, so the header
/// needs only the routine names and always matches the MPI it was built for.
/// The `hidden` ones, which `mpi.h` declares only when a module defines
/// [`crate::bind::COMPAT`] as 0, are declared under the same condition.
pub fn xmpi_header(routines: &[Routine], hidden: &BTreeSet<String>, flavor: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "/* XMPI_ entry points of libpnmpi, generated for {flavor}.");
    let _ = writeln!(
        out,
        " * A module's wrapper calls XMPI_X to reach the next layer of the chain. */"
    );
    let _ = writeln!(
        out,
        "#ifndef PNMPI_XMPI_H\n#define PNMPI_XMPI_H\n#include <mpi.h>"
    );
    let _ = writeln!(out, "#ifdef __cplusplus\nextern \"C\" {{\n#endif");
    // Taking the type of a deprecated PMPI_ routine is not a use of it.
    let _ = writeln!(out, "#pragma GCC diagnostic push");
    let _ = writeln!(
        out,
        "#pragma GCC diagnostic ignored \"-Wdeprecated-declarations\""
    );
    let (compat, plain): (Vec<&Routine>, Vec<&Routine>) =
        routines.iter().partition(|r| hidden.contains(&r.name));
    for r in plain {
        let _ = writeln!(out, "__typeof__(PMPI_{n}) XMPI_{n};", n = r.name);
    }
    if !compat.is_empty() {
        let c = crate::bind::COMPAT;
        let _ = writeln!(out, "#if defined({c}) && !{c}");
        for r in compat {
            let _ = writeln!(out, "__typeof__(PMPI_{n}) XMPI_{n};", n = r.name);
        }
        let _ = writeln!(out, "#endif");
    }
    let _ = writeln!(out, "#pragma GCC diagnostic pop");
    let _ = writeln!(out, "#ifdef __cplusplus\n}}\n#endif\n#endif");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_declares_each_entry_point_by_its_pmpi_type() {
        let rs = vec![Routine {
            name: "Send".into(),
            params: vec![],
            ret: "i32".into(),
            variadic: false,
        }];
        let h = xmpi_header(&rs, &BTreeSet::new(), "mpich");
        assert!(h.contains("__typeof__(PMPI_Send) XMPI_Send;"));
        assert!(h.contains("#include <mpi.h>"));
        assert!(!h.contains("#if defined"));
    }

    #[test]
    fn routines_mpi_h_hides_are_declared_only_where_it_shows_them() {
        let r = |name: &str| Routine {
            name: name.into(),
            params: vec![],
            ret: "i32".into(),
            variadic: false,
        };
        let hidden = BTreeSet::from(["Address".to_string()]);
        let h = xmpi_header(&[r("Address"), r("Send")], &hidden, "openmpi");
        let guard = h
            .find("#if defined(OMPI_OMIT_MPI1_COMPAT_DECLS) && !OMPI_OMIT_MPI1_COMPAT_DECLS")
            .expect("a guard");
        let address = h.find("XMPI_Address;").expect("Address");
        let send = h.find("XMPI_Send;").expect("Send");
        assert!(send < guard && guard < address, "{h}");
    }

    #[test]
    fn table_lists_ids_in_order_and_marks_variadic() {
        let rs = vec![
            Routine {
                name: "Pcontrol".into(),
                params: vec!["i32".into()],
                ret: "i32".into(),
                variadic: true,
            },
            Routine {
                name: "Wtime".into(),
                params: vec![],
                ret: "f64".into(),
                variadic: false,
            },
        ];
        let t = table(&rs, &["Status_f082f"], "openmpi");
        assert!(t.contains("pub const ROUTINE_COUNT: usize = 2;"));
        assert!(
            t.contains("$m! { 0, MPI_Pcontrol, PMPI_Pcontrol, XMPI_Pcontrol, XMPI_Pcontrol_NewStack, variadic (a0: i32) -> i32 }")
        );
        assert!(
            t.contains("$m! { 1, MPI_Wtime, PMPI_Wtime, XMPI_Wtime, XMPI_Wtime_NewStack, fixed () -> f64 }")
        );
        assert!(t.contains("(MPI_Pcontrol, PMPI_Pcontrol),\n            (MPI_Wtime, PMPI_Wtime),"));
        assert!(t.contains("$m! { XMPI_Status_f082f }"));
        // The generated source must be valid Rust.
        syn::parse_file(&t).unwrap();
    }
}
