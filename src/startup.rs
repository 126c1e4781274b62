//! Setting up the chain, once, when the application starts MPI: read the
//! configuration, load the modules, run their hooks, publish the link
//! stacks. Any error stops the process before MPI starts: a user who asked
//! for a tool never silently runs without it.

use crate::config::{self, Config, DEFAULT_STACK};
use crate::dispatch::{self, Table};
use crate::error::Error;
use crate::loader::{self, Module};
use once_cell::sync::OnceCell;
use std::path::{Path, PathBuf};

/// The loaded modules, in configuration order; set once, never dropped.
static MODULES: OnceCell<Vec<Module>> = OnceCell::new();

/// Exit status when the chain cannot be set up.
const EXIT_SETUP_FAILED: i32 = 1;

/// The world rank from the launcher's environment: MPI is not running yet
/// when modules are loaded.
fn launcher_rank() -> Option<u32> {
    ["OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse().ok())
}

fn verbose() -> bool {
    std::env::var("PNMPI_VERBOSE").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Loads the modules unless that was done already. Called by the stubs of
/// the routines that start MPI.
pub fn ensure_loaded() {
    MODULES.get_or_init(|| match std::panic::catch_unwind(setup) {
        Ok(Ok(modules)) => modules,
        Ok(Err(e)) => fail(&e.to_string()),
        Err(_) => fail("internal error while loading modules (see the panic message above)"),
    });
}

fn fail(msg: &str) -> ! {
    let rank = launcher_rank()
        .map(|r| format!(" [rank {r}]"))
        .unwrap_or_default();
    eprintln!("pnmpi{rank}: error: {msg}");
    eprintln!("pnmpi{rank}: stopping before MPI starts");
    std::process::exit(EXIT_SETUP_FAILED)
}

/// The folder installed modules live in: `lib/pnmpi/modules` next to
/// libpnmpi itself.
fn install_module_dir() -> Option<PathBuf> {
    // SAFETY: dladdr only reads the loader's tables for an address in this
    // library; `info` is an out-parameter.
    let path = unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(install_module_dir as *const libc::c_void, &mut info) == 0 || info.dli_fname.is_null()
        {
            return None;
        }
        std::ffi::CStr::from_ptr(info.dli_fname)
            .to_string_lossy()
            .into_owned()
    };
    Some(Path::new(&path).parent()?.join("pnmpi/modules"))
}

fn read_config() -> Result<Config, Error> {
    let conf_env = std::env::var("PNMPI_CONF").ok();
    let cwd = std::env::current_dir().unwrap_or_default();
    let home = std::env::var_os("HOME").map(PathBuf::from);
    match config::find(conf_env.as_deref(), &cwd, home.as_deref())? {
        Some(file) => config::load(&file),
        None => Ok(Config::default()),
    }
}

fn setup() -> Result<Vec<Module>, Error> {
    let config = read_config()?;
    let dirs = loader::search_dirs(
        std::env::var("PNMPI_LIB_PATH").ok().as_deref(),
        install_module_dir(),
    );
    let modules = loader::load(&config, &dirs)?;
    let rank0 = launcher_rank().unwrap_or(0) == 0;
    for m in modules.iter().filter(|m| m.wraps.is_empty()) {
        if rank0 {
            eprintln!(
                "pnmpi: warning: module `{}` ({}) wraps no MPI routine; it is loaded, but no call will pass through it",
                m.spec.name,
                m.path.display()
            );
        }
    }
    for hook in ["PNMPI_RegistrationPoint", "PNMPI_Init"] {
        modules.iter().for_each(|m| m.call_hook(hook));
    }
    let chain: Vec<Vec<(usize, *const ())>> = modules
        .iter()
        .filter(|m| m.spec.stack == DEFAULT_STACK)
        .map(|m| m.wraps.clone())
        .collect();
    dispatch::publish(Table::build(&chain));
    if !modules.is_empty() {
        // SAFETY: registers a plain extern "C" function with no arguments.
        unsafe { libc::atexit(run_exit_hooks) };
    }
    if verbose() && rank0 {
        print_stack(&config, &modules);
    }
    Ok(modules)
}

/// Runs `PNMPI_Fini`, then `PNMPI_UnregistrationPoint`, of every module.
extern "C" fn run_exit_hooks() {
    if let Some(modules) = MODULES.get() {
        for hook in ["PNMPI_Fini", "PNMPI_UnregistrationPoint"] {
            modules.iter().for_each(|m| m.call_hook(hook));
        }
    }
}

fn print_stack(config: &Config, modules: &[Module]) {
    if config.file.as_os_str().is_empty() {
        eprintln!("pnmpi: no configuration found ($PNMPI_CONF, ./.pnmpi-conf, ./pnmpi.toml, ~/.pnmpi-conf); no modules loaded");
        return;
    }
    eprintln!("pnmpi: configuration {}", config.file.display());
    let mut stacks: Vec<&str> = modules.iter().map(|m| m.spec.stack.as_str()).collect();
    stacks.dedup();
    for stack in stacks {
        let members: Vec<&Module> = modules.iter().filter(|m| m.spec.stack == stack).collect();
        eprintln!("pnmpi: stack {stack}: {} module(s)", members.len());
        for (i, m) in members.iter().enumerate() {
            let copy = if m.private_copy { ", private copy" } else { "" };
            eprintln!(
                "pnmpi:   {}. {} {} ({} routines{copy})",
                i + 1,
                m.display_name(),
                m.path.display(),
                m.wraps.len()
            );
        }
    }
}
