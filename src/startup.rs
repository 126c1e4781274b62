//! Setting up the chain, once, when the application starts MPI: read the
//! configuration, load the modules, run their hooks, publish the link
//! stacks. Any error stops the process before MPI starts: a user who asked
//! for a tool never silently runs without it. Called by the stubs (the
//! layer above), which hand it their own entry points' addresses.

use crate::binding::{self, Binding};
use crate::chain::{self, Chain};
use crate::config::{self, Config};
use crate::entry::ByRoutine;
use crate::error::Error;
use crate::fortran;
use crate::loader::{self, Module};
use once_cell::sync::OnceCell;
use pnmpi_sdk::say;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Once;

/// What libpnmpi bound of the Fortran bindings when it was loaded.
static FORTRAN: OnceCell<fortran::Bound> = OnceCell::new();

/// What runs when the dynamic loader has loaded libpnmpi, before `main`
/// (libpnmpi's constructor, in the stubs): the Fortran bindings' `PMPI_X`
/// calls must reach the chain, at `application`'s `MPI_X`, from their
/// first call, `MPI_Init`.
pub fn at_load(application: ByRoutine) {
    if let Err(e) = crate::vranks::reexec_if_asked() {
        fail(&e);
    }
    match std::panic::catch_unwind(|| fortran::bind(application)) {
        Ok(Ok(bound)) => {
            let _ = FORTRAN.set(bound);
        }
        Ok(Err(e)) => fail(&e.to_string()),
        Err(_) => fail("internal error while binding the Fortran MPI bindings (see the panic message above)"),
    }
}

static STARTED: Once = Once::new();

/// Exit status when the chain cannot be set up.
const EXIT_SETUP_FAILED: i32 = 1;

/// The world rank from the launcher's environment: MPI is not running yet
/// when modules are loaded.
fn launcher_rank() -> Option<i32> {
    ["OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse().ok())
}

fn verbose() -> bool {
    std::env::var("PNMPI_VERBOSE").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Loads the modules unless that was done already. Called by the stubs of
/// the routines that start MPI, with their dispatcher's entries.
pub fn ensure_loaded(dispatcher: ByRoutine) {
    STARTED.call_once(|| match std::panic::catch_unwind(|| setup(dispatcher)) {
        Ok(Ok(())) => {}
        Ok(Err(e)) => fail(&e.to_string()),
        Err(_) => fail("internal error while loading modules (see the panic message above)"),
    });
}

fn fail(msg: &str) -> ! {
    let rank = launcher_rank()
        .map(|r| format!(" [rank {r}]"))
        .unwrap_or_default();
    // One write, then a moment before exiting: a launcher that tears the
    // job down at the first failed rank (MPICH's Hydra under load) may
    // otherwise drop what the ranks wrote before it read their pipes.
    // The rank is the launcher's: MPI does not run yet.
    say::write_line(&format!(
        "pnmpi{rank}: error: {msg}\npnmpi{rank}: stopping before MPI starts\n"
    ));
    std::thread::sleep(std::time::Duration::from_millis(200));
    say::stop_with(EXIT_SETUP_FAILED)
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

fn setup(dispatcher: ByRoutine) -> Result<(), Error> {
    let started = std::time::Instant::now();
    let config = read_config()?;
    // Only a bare module name is searched for; finding the install's own
    // folder (`dladdr`, a scan of libpnmpi's symbols) is left to runs
    // that need it.
    let dirs = if config.modules.iter().any(|m| !m.name.contains('/')) {
        loader::search_dirs(
            std::env::var("PNMPI_LIB_PATH").ok().as_deref(),
            install_module_dir(),
        )
    } else {
        Vec::new()
    };
    let modules = loader::load(&config, &dirs)?;
    let rank = launcher_rank().unwrap_or(0);
    for m in modules.iter().filter(|m| m.wraps.is_empty()) {
        if rank == 0 {
            say::warn(
                say::LIBPNMPI,
                format_args!(
                    "module `{}` ({}) wraps no MPI routine; it is loaded, but no call will pass through it",
                    m.spec.name,
                    m.path.display()
                ),
            );
        }
    }
    for m in modules.iter().filter(|m| m.unresolved().is_some()) {
        if rank == 0 {
            say::warn(
                say::LIBPNMPI,
                format_args!(
                    "module `{}` ({}) imports symbols that no loaded library defines ({}); \
                     it is bound lazily, as LD_PRELOAD would: a call that reaches one stops the process",
                    m.spec.name,
                    m.path.display(),
                    m.unresolved().unwrap_or_default()
                ),
            );
        }
    }
    let any = !modules.is_empty();
    let requested = std::env::var(binding::VARIABLE).ok();
    let binding = Binding::choose(requested.as_deref(), &modules).map_err(Error::Setting)?;
    let chain = chain::install(|| {
        Chain::new(
            modules,
            config.pcontrol_mode,
            binding,
            dispatcher,
            i64::from(rank),
        )
    });
    for hook in ["PNMPI_RegistrationPoint", "PNMPI_Init"] {
        chain.run_hook_everywhere(hook);
    }
    chain.publish().map_err(Error::Bind)?;
    if any {
        // SAFETY: registers a plain extern "C" function with no arguments.
        unsafe { libc::atexit(run_exit_hooks) };
    }
    if verbose() && rank == 0 {
        let mut text = listing(&config, &chain.modules);
        if let Some(bound) = FORTRAN.get() {
            text += &bound.describe();
        }
        match &chain.binding {
            Binding::Direct => {
                let slots: usize = chain.modules.iter().map(|m| m.file().xmpi_slots.len()).sum();
                let _ = writeln!(text, "pnmpi: binding: direct ({slots} XMPI_ slots bound)");
            }
            Binding::Dispatch(reason) => {
                let _ = writeln!(text, "pnmpi: binding: dispatch ({reason})");
            }
        }
        let ms = started.elapsed().as_secs_f64() * 1e3;
        let _ = writeln!(
            text,
            "pnmpi: set up {} modules in {ms:.1} ms",
            chain.modules.len()
        );
        // One write, so that other ranks' output cannot split its lines.
        say::write_line(&text);
    }
    Ok(())
}

/// Runs `PNMPI_Fini`, then `PNMPI_UnregistrationPoint`, of every module.
extern "C" fn run_exit_hooks() {
    if let Some(chain) = chain::loaded() {
        for hook in ["PNMPI_Fini", "PNMPI_UnregistrationPoint"] {
            chain.run_hook_everywhere(hook);
        }
    }
}

/// What `PNMPI_VERBOSE` says about the configuration and its stacks.
fn listing(config: &Config, modules: &[Module]) -> String {
    let mut text = String::new();
    if config.file.as_os_str().is_empty() {
        text.push_str("pnmpi: no configuration found ($PNMPI_CONF, ./.pnmpi-conf, ./pnmpi.toml, ~/.pnmpi-conf); no modules loaded\n");
        return text;
    }
    let _ = writeln!(text, "pnmpi: configuration {}", config.file.display());
    let mut stacks: Vec<&str> = modules.iter().map(|m| m.spec.stack.as_str()).collect();
    stacks.dedup();
    for stack in stacks {
        let members: Vec<&Module> = modules.iter().filter(|m| m.spec.stack == stack).collect();
        let _ = writeln!(text, "pnmpi: stack {stack}: {} module(s)", members.len());
        for (i, m) in members.iter().enumerate() {
            let copy = if m.private_copy { ", private copy" } else { "" };
            let _ = writeln!(
                text,
                "pnmpi:   {}. {} {} ({} routines{copy})",
                i + 1,
                m.display_name(),
                m.path.display(),
                m.wraps.len()
            );
        }
    }
    text
}
