//! How the program's `main` is reached: the C runtime's entry calls
//! `__libc_start_main(main, argc, argv, ...)`, which this preloaded
//! library defines first. It hands glibc's own `__libc_start_main` (found
//! with `dlsym(RTLD_NEXT)`) a `main` of its own, so the program's
//! constructors, `atexit` handlers and `exit` run as usual, once, around
//! the virtual ranks; the program's `main` is then called once per rank,
//! in the rank's context. (Linking a wrapper in with `-Wl,--wrap=main`
//! would need relinking; finding `main` in the symbol table fails on
//! stripped programs. Every glibc program goes through this entry.)
//!
//! An `exit` inside a rank ends that rank only (its context is never
//! resumed); the process exits when every rank is done.

use crate::comm::Blocks;
use crate::dist::Dist;
use crate::engine::{self, Engine};
use crate::globals::Globals;
use crate::sched::MainFn;
use crate::stack::Pool;
use crate::timing::Timing;
use pnmpi_mpi_sys::ffi;
use pnmpi_sdk::say::{self, Level};
use pnmpi_sim::engine::parallel::Exchange;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::{AtomicUsize, Ordering};

/// glibc's `__libc_start_main`.
type StartMain = unsafe extern "C" fn(
    MainFn,
    c_int,
    *mut *mut c_char,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut c_void,
) -> c_int;

/// The program's `main`.
static APP_MAIN: AtomicUsize = AtomicUsize::new(0);

/// The next definition of `name` after this library's.
fn next(name: &CStr) -> *mut c_void {
    // SAFETY: dlsym with a valid C string; RTLD_NEXT looks past us.
    unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) }
}

/// The C runtime's entry into glibc: swaps in [`vranks_main`].
///
/// # Safety
/// Called once by the C runtime's `_start`, with its arguments.
#[no_mangle]
pub unsafe extern "C" fn __libc_start_main(
    main: MainFn,
    argc: c_int,
    argv: *mut *mut c_char,
    init: *mut c_void,
    fini: *mut c_void,
    rtld_fini: *mut c_void,
    stack_end: *mut c_void,
) -> c_int {
    let real = next(c"__libc_start_main");
    if real.is_null() {
        say::unranked("vranks", Level::Error, "glibc's __libc_start_main not found");
        // SAFETY: ending the process.
        unsafe { libc::_exit(127) };
    }
    APP_MAIN.store(main as usize, Ordering::Relaxed);
    // SAFETY: glibc's own entry, with the arguments we were given, and a
    // `main` of the same type.
    unsafe {
        let real: StartMain = std::mem::transmute::<*mut c_void, StartMain>(real);
        real(vranks_main, argc, argv, init, fini, rtld_fini, stack_end)
    }
}

/// `exit` inside a virtual rank ends that rank; elsewhere, the process.
///
/// # Safety
/// As C's `exit`.
#[no_mangle]
pub unsafe extern "C" fn exit(status: c_int) -> ! {
    if engine::running() && crate::overflow::CURRENT.load(Ordering::Relaxed) != usize::MAX {
        engine::exit_rank(status);
    }
    let real = next(c"exit");
    // SAFETY: glibc's exit, which does not return.
    unsafe {
        let real: unsafe extern "C" fn(c_int) -> ! = std::mem::transmute::<*mut c_void, _>(real);
        real(status)
    }
}

/// Stops before any rank runs, saying what is wrong: the job ends with
/// exit code 2 (`MPI_Abort` once the native MPI runs).
fn refuse(what: &str) -> ! {
    say::unranked("vranks", Level::Error, what);
    say::stop_with(2)
}

/// Takes this mode out of the environment, so that processes the run
/// starts (Open MPI's `orted` for a singleton, anything the program
/// spawns) are not virtual-rank runs themselves.
fn forget_environment() {
    std::env::remove_var("PNMPI_VRANKS");
    std::env::remove_var("PNMPI_VRANK_STACK");
    if let Ok(preload) = std::env::var("LD_PRELOAD") {
        let kept: Vec<&str> = preload
            .split([':', ' '])
            .filter(|p| !p.is_empty() && !p.ends_with("libvranks.so"))
            .collect();
        if kept.is_empty() {
            std::env::remove_var("LD_PRELOAD");
        } else {
            std::env::set_var("LD_PRELOAD", kept.join(":"));
        }
    }
}

/// The `main` glibc runs: the virtual ranks.
unsafe extern "C" fn vranks_main(argc: c_int, argv: *mut *mut c_char, envp: *mut *mut c_char) -> c_int {
    // SAFETY: stored by __libc_start_main before glibc calls us.
    let app: MainFn = unsafe { std::mem::transmute::<usize, MainFn>(APP_MAIN.load(Ordering::Relaxed)) };
    if std::env::var_os("PNMPI_VRANKS").is_none() {
        // Preloaded without a rank count: the program runs as it is.
        // SAFETY: the program's main with its own arguments.
        return unsafe { app(argc, argv, envp) };
    }
    let opts = crate::options::read().unwrap_or_else(|e| refuse(&e));
    forget_environment();
    let fortran = crate::fortran::bind().unwrap_or_else(|e| {
        refuse(&format!(
            "cannot bind the MPI's Fortran routines to the virtual ranks: {e}"
        ))
    });
    // SAFETY: the native MPI starts once, for the process.
    unsafe { ffi::PMPI_Init(std::ptr::null_mut(), std::ptr::null_mut()) };
    let world = pnmpi_sim_mpi::Mpi::attach();
    let (me, procs) = (world.me(), world.procs());
    let n = opts.ranks;
    if procs > n {
        refuse(&format!(
            "{procs} processes for {n} virtual ranks: give at least one rank per process (--vranks {procs} or more)"
        ));
    }
    let config = &opts.config;
    let machine = config.machine(n);
    let node_of = machine
        .place(n)
        .unwrap_or_else(|e| refuse(&format!("machine {e}")));
    let model =
        pnmpi_sim::model::build(&config.model, &machine).unwrap_or_else(|e| refuse(&format!("machine {e}")));
    let lookahead = model.lookahead();
    // A model with no lookahead (state that spans ranks, as contention's,
    // or a least latency of 0) cannot be cut into windows: one engine
    // must see every message, so process 0 runs every rank.
    let one_engine = procs > 1 && lookahead <= 0.0;
    let blocks = if one_engine {
        Blocks { n, procs: 1, me: 0 }
    } else {
        Blocks { n, procs, me }
    };
    if one_engine && me == 0 {
        say::unranked(
            "vranks",
            Level::Note,
            pnmpi_sim::engine::one_engine_note(&config.model, procs, &format!("runs all {n} ranks")),
        );
    }
    let dist = (procs > 1 && !one_engine).then(|| Dist::new(world, lookahead));
    let here = if one_engine && me > 0 {
        0
    } else {
        blocks.first(blocks.me + 1) - blocks.first(blocks.me)
    };
    let trace = opts.trace.as_ref().map(|t| {
        crate::trace::Trace::open(t, n, blocks.first(blocks.me), here)
            .unwrap_or_else(|e| refuse(&format!("tracer: {e}")))
    });
    if here == 0 {
        // A process left without ranks (the tracer's folder agreed on
        // above, a collective of every process).
        // It waits for the others without spinning (MPICH's
        // MPI_Finalize would take a core from the engine for the run).
        pnmpi_sim_mpi::Mpi::attach().wait_quietly();
        // SAFETY: the native MPI ends once; no rank ran here.
        unsafe { ffi::PMPI_Finalize() };
        return 0;
    }
    let globals =
        Globals::new(n).unwrap_or_else(|e| refuse(&format!("cannot privatize the program's globals: {e}")));
    let pool = Pool::new(opts.stack, here as usize);
    crate::overflow::install(pool.size());
    if me == 0 {
        let spread = if procs > 1 && !one_engine {
            format!("{procs} processes (blocks of {} to {here} ranks)", n / procs)
        } else {
            "1 process".into()
        };
        say::unranked(
            "vranks",
            Level::Note,
            format_args!(
                "{n} virtual ranks in {spread}; stacks of {} KiB ({}); {} bytes of globals per rank in {} ranges of {}; {}",
                pool.size() / 1024,
                if pool.guarded() { "guard pages" } else { "checked at each switch" },
                globals.bytes(),
                globals.ranges(),
                globals.objects().join(", "),
                opts.source
            ),
        );
        if let Some(t) = &trace {
            say::unranked(
                "vranks",
                Level::Note,
                format_args!(
                    "tracer: one rank file per virtual rank, on the virtual clock, in {} ({} KiB of events buffered per rank)",
                    t.dir().display(),
                    t.buffer() / 1024
                ),
            );
        }
        for (lib, slots) in &fortran {
            say::unranked(
                "vranks",
                Level::Note,
                format_args!("Fortran binding {lib}: {slots} PMPI_ routines bound to the virtual ranks"),
            );
        }
    }
    let wall = std::time::Instant::now();
    let timing = Timing::new(model, machine, node_of, config.cpu_factor);
    let engine = Engine::new(
        n,
        blocks,
        dist,
        app,
        (argc, argv, envp),
        timing,
        globals,
        pool,
        trace,
    );
    let status = engine::run(engine, me == 0);
    let mut e = engine::finish();
    let wall_ns = wall.elapsed().as_nanos() as f64;
    let traced = e.trace_mut().map(|t| (t.close(), t.dir().to_path_buf()));
    crate::report::finish(&mut e, config, wall_ns);
    if let Some((unfinished, dir)) = traced {
        if unfinished > 0 {
            say::unranked(
                "vranks",
                Level::Note,
                format_args!(
                    "tracer: {unfinished} ranks of process {me} did not reach MPI_Finalize; what they recorded stays in their .part files"
                ),
            );
        }
        if me == 0 {
            let dir = dir.display();
            say::unranked(
                "vranks",
                Level::Note,
                format_args!("trace written to {dir}; merge it with: pnmpi trace merge {dir} -o trace.pnt"),
            );
        }
    }
    if procs > 1 {
        pnmpi_sim_mpi::Mpi::attach().wait_quietly();
    }
    // SAFETY: the native MPI ends once, after every rank.
    unsafe { ffi::PMPI_Finalize() };
    status
}
