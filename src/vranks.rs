//! `PNMPI_VRANKS=N` with a program linked with `-lpnmpi`: virtual ranks
//! need libvranks.so preloaded *before* the program starts (it takes over
//! `__libc_start_main`), so when libpnmpi is loaded with `PNMPI_VRANKS`
//! set and libvranks.so is not preloaded yet, it re-executes the program
//! with libvranks.so (from libpnmpi's own folder) added to `LD_PRELOAD`.
//! `pnmpi run --vranks N` preloads it directly and never gets here.

use std::ffi::CString;
use std::path::PathBuf;

/// Set on the re-executed program, so that it never loops.
const AGAIN: &str = "PNMPI_VRANKS_REEXEC";

/// The folder of this library.
fn own_folder() -> Option<PathBuf> {
    pnmpi_objects::deps::object_at(own_folder as *const () as usize)?
        .0
        .parent()
        .map(PathBuf::from)
}

/// Re-executes the program under libvranks.so if `PNMPI_VRANKS` asks for
/// virtual ranks and it is not preloaded; returns otherwise (or an error
/// to stop on).
pub fn reexec_if_asked() -> Result<(), String> {
    if std::env::var_os("PNMPI_VRANKS").is_none() {
        return Ok(());
    }
    let preload = std::env::var("LD_PRELOAD").unwrap_or_default();
    if preload.contains("libvranks.so") {
        return Ok(());
    }
    if std::env::var_os(AGAIN).is_some() {
        return Err("PNMPI_VRANKS: libvranks.so was not preloaded after re-executing the program".into());
    }
    let lib = own_folder()
        .map(|d| d.join("libvranks.so"))
        .filter(|p| p.is_file())
        .ok_or("PNMPI_VRANKS is set but libvranks.so is not beside libpnmpi.so (build it: cargo build --release -p pnmpi-vranks)")?;
    let cmdline = std::fs::read("/proc/self/cmdline")
        .map_err(|e| format!("PNMPI_VRANKS: cannot read the command line: {e}"))?;
    let args: Vec<CString> = cmdline
        .split(|&b| b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| CString::new(a).expect("split at NUL"))
        .collect();
    let mut argv: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    let joined = if preload.is_empty() {
        lib.display().to_string()
    } else {
        format!("{}:{preload}", lib.display())
    };
    std::env::set_var("LD_PRELOAD", joined);
    std::env::set_var(AGAIN, "1");
    // SAFETY: a NUL-terminated argv of C strings that outlive the call;
    // execv only returns on failure.
    unsafe { libc::execv(c"/proc/self/exe".as_ptr(), argv.as_ptr()) };
    Err(format!(
        "PNMPI_VRANKS: cannot re-execute the program: {}",
        std::io::Error::last_os_error()
    ))
}
