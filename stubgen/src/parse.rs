//! Reads bindgen's output back as a list of routines with their parameter
//! and return types.

use crate::error::{Error, Result};
use std::path::Path;
use syn::visit_mut::VisitMut;

/// One MPI routine, named without its `PMPI_` prefix (`Send`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Routine {
    pub name: String,
    /// Parameter types as Rust source, with bindgen's own types qualified
    /// by the prefix given to [`routines`] so that they resolve anywhere.
    pub params: Vec<String>,
    /// Return type as Rust source; `()` for `void`.
    pub ret: String,
    /// `MPI_Pcontrol` takes `...`; callers forward only the fixed part.
    pub variadic: bool,
}

impl Routine {
    /// The name an application calls.
    pub fn mpi_name(&self) -> String {
        format!("MPI_{}", self.name)
    }
}

const PRIMITIVES: &[&str] = &[
    "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize", "f32", "f64",
    "bool", "char",
];

/// Prefixes single-segment type paths (bindgen's own type names) with a
/// module path.
struct Qualify<'a>(&'a syn::Path);

impl VisitMut for Qualify<'_> {
    fn visit_type_path_mut(&mut self, tp: &mut syn::TypePath) {
        syn::visit_mut::visit_type_path_mut(self, tp);
        let path = &mut tp.path;
        if tp.qself.is_none() && path.leading_colon.is_none() && path.segments.len() == 1 {
            let ident = path.segments[0].ident.to_string();
            if !PRIMITIVES.contains(&ident.as_str()) {
                let mut qualified = self.0.clone();
                qualified.segments.extend(path.segments.iter().cloned());
                *path = qualified;
            }
        }
    }
}

fn tokens(ty: &syn::Type) -> String {
    quote::ToTokens::to_token_stream(ty).to_string()
}

/// Extracts every `PMPI_` function declared in `code` (bindgen output),
/// sorted by name so that routine ids are stable across builds.
pub fn routines(code: &str, header: &Path, type_prefix: &str) -> Result<Vec<Routine>> {
    let parse_err = |detail: String| Error::Parse {
        header: header.to_path_buf(),
        detail,
    };
    let file = syn::parse_file(code).map_err(|e| parse_err(e.to_string()))?;
    let prefix: syn::Path =
        syn::parse_str(type_prefix).map_err(|e| parse_err(format!("prefix {type_prefix}: {e}")))?;
    let mut qualify = Qualify(&prefix);
    let mut out = Vec::new();
    for item in &file.items {
        let syn::Item::ForeignMod(block) = item else {
            continue;
        };
        for foreign in &block.items {
            let syn::ForeignItem::Fn(f) = foreign else {
                continue;
            };
            let Some(name) = f.sig.ident.to_string().strip_prefix("PMPI_").map(str::to_string) else {
                continue;
            };
            let mut params = Vec::new();
            for input in &f.sig.inputs {
                let syn::FnArg::Typed(arg) = input else {
                    return Err(parse_err(format!("PMPI_{name} has a receiver")));
                };
                let mut ty = (*arg.ty).clone();
                qualify.visit_type_mut(&mut ty);
                params.push(tokens(&ty));
            }
            let ret = match &f.sig.output {
                syn::ReturnType::Default => "()".to_string(),
                syn::ReturnType::Type(_, ty) => {
                    let mut ty = (**ty).clone();
                    qualify.visit_type_mut(&mut ty);
                    tokens(&ty)
                }
            };
            out.push(Routine {
                name,
                params,
                ret,
                variadic: f.sig.variadic.is_some(),
            });
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out.dedup_by(|a, b| a.name == b.name);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CODE: &str = r#"
        pub type MPI_Comm = *mut ompi_communicator_t;
        extern "C" {
            pub fn PMPI_Send(buf: *const ::std::os::raw::c_void, count: ::std::os::raw::c_int, comm: MPI_Comm) -> ::std::os::raw::c_int;
            pub fn PMPI_Pcontrol(level: ::std::os::raw::c_int, ...) -> ::std::os::raw::c_int;
            pub fn PMPI_Wtime() -> f64;
            pub fn not_mpi(x: i32);
        }
    "#;

    #[test]
    fn qualifies_bindgen_types_and_keeps_std_paths() {
        let r = routines(CODE, Path::new("x.h"), "crate::ffi").unwrap();
        let names: Vec<_> = r.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["Pcontrol", "Send", "Wtime"]);
        let send = &r[1];
        assert_eq!(send.params[2].replace(' ', ""), "crate::ffi::MPI_Comm");
        assert_eq!(send.params[0].replace(' ', ""), "*const::std::os::raw::c_void");
        assert!(r[0].variadic);
        assert_eq!(r[2].ret, "f64");
        assert!(r[2].params.is_empty());
    }
}
