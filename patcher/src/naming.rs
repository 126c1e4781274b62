//! File names for patched tools. PnMPI loads `module NAME` from `NAME.so`, so the default output
//! name must end in `.so` and keep the tool recognisable: `libfoo.so.40` -> `libfoo.pnmpi.so`.

use std::path::{Path, PathBuf};

/// The file name stem before `.so` and any version suffix (`.so.40.30.1`), or the whole name
/// when it has no `.so` part.
fn stem(file_name: &str) -> &str {
    let mut search = 0;
    while let Some(found) = file_name[search..].find(".so") {
        let at = search + found;
        let rest = &file_name[at + 3..];
        let versioned = rest.strip_prefix('.').is_some_and(|v| {
            !v.is_empty()
                && v.split('.')
                    .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
        });
        if at > 0 && (rest.is_empty() || versioned) {
            return &file_name[..at];
        }
        search = at + 3;
    }
    file_name
}

/// Where `pnmpi-patch TOOL` writes by default: `<stem>.pnmpi.so` next to `input`.
pub fn default_output(input: &Path) -> PathBuf {
    let name = input.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    input.with_file_name(format!("{}.pnmpi.so", stem(&name)))
}

/// The `module` name PnMPI needs to load `path`, or `None` when the file name does not end in
/// `.so` and therefore cannot be loaded by name.
pub fn module_name(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_string_lossy();
    name.strip_suffix(".so")
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_output_drops_so_version_and_adds_pnmpi() {
        let cases = [
            ("libtool.so", "libtool.pnmpi.so"),
            ("/usr/lib/libompitrace.so.40", "/usr/lib/libompitrace.pnmpi.so"),
            ("libompitrace.so.40.30.1", "libompitrace.pnmpi.so"),
            ("dir/tool", "dir/tool.pnmpi.so"),
            ("libsolver.so", "libsolver.pnmpi.so"),
            ("libx.so.beta", "libx.so.beta.pnmpi.so"),
            (".so", ".so.pnmpi.so"),
        ];
        for (input, expected) in cases {
            assert_eq!(
                default_output(Path::new(input)),
                PathBuf::from(expected),
                "{input}"
            );
        }
    }

    #[test]
    fn module_name_is_file_name_without_so() {
        assert_eq!(
            module_name(Path::new("/x/libtool.pnmpi.so")).as_deref(),
            Some("libtool.pnmpi")
        );
        assert_eq!(module_name(Path::new("tool.bin")), None);
        assert_eq!(module_name(Path::new(".so")), None);
    }
}
