//! Bad configurations and bad modules stop the run before MPI starts, with
//! a message naming the file, the line and the fix. None is skipped.

use crate::common;
use common::*;

/// Runs ring.c with the case's configuration; it must stop before MPI
/// starts. Returns stderr.
fn stopped(case: &Case) -> String {
    case.stopped("ring", &["ring:"])
}

#[test]
fn unknown_command_names_file_and_line() {
    let mut case = Case::new();
    let conf = case.conf("# tools\nmodule seqA\nmodul seqB\n");
    seq("A", &[]);
    let err = stopped(&case);
    let want = format!("{}:3: unknown command `modul`", conf.display());
    assert!(err.contains(&want), "{want}\n{err}");
}

#[test]
fn argument_before_module_is_an_error() {
    let mut case = Case::new();
    let conf = case.conf("argument out dir\n");
    let err = stopped(&case);
    assert!(
        err.contains(&format!("{}:1: `argument` before any `module`", conf.display())),
        "{err}"
    );
}

#[test]
fn missing_module_lists_the_folders_searched() {
    let mut case = Case::new();
    let conf = case.conf("module nosuchtool\n");
    let err = stopped(&case);
    let want = format!(
        "{}:1: module `nosuchtool` not found; tried nosuchtool.so and libnosuchtool.so in: {}",
        conf.display(),
        modules_dir().display()
    );
    assert!(err.contains(&want), "{want}\n{err}");
    assert!(err.contains("PNMPI_LIB_PATH"), "{err}");
}

#[test]
fn unloadable_module_reports_dlerror() {
    module("broken", "broken", &[]);
    let mut case = Case::new();
    case.conf("module broken\n");
    let err = stopped(&case);
    assert!(err.contains("module `broken`"), "{err}");
    assert!(err.contains("cannot be loaded"), "{err}");
    assert!(
        err.contains("undefined symbol: pnmpi_test_symbol_that_does_not_exist"),
        "{err}"
    );
}

/// A module that imports a function nothing defines loads with lazy
/// binding, as under LD_PRELOAD, and rank 0 warns, naming it: ring.c,
/// which never calls the wrapper that needs it, runs; bsp.c, which does,
/// stops with the dynamic loader's error naming the symbol.
#[test]
fn a_module_calling_a_missing_function_loads_lazily_and_warns() {
    module("lazy", "lazy", &[]);
    let mut case = Case::new();
    case.conf("module lazy\n");
    let run = case.mpirun(2, &program("ring", Link::Pnmpi), &[]);
    run.assert_ok();
    assert!(!run.lines("ring:").is_empty(), "{}", run.stdout);
    assert_eq!(
        run.stderr.matches("pnmpi: warning: module `lazy`").count(),
        1,
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("pnmpi_test_function_that_does_not_exist"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("bound lazily"), "{}", run.stderr);
    let run = case.mpirun(2, &program("bsp", Link::Pnmpi), &[]);
    assert!(!run.success(), "{}", run.stdout);
    assert!(
        run.stderr.contains("symbol lookup error")
            && run.stderr.contains("pnmpi_test_function_that_does_not_exist"),
        "{}",
        run.stderr
    );
}

/// A module that calls an MPI routine no library defines was built
/// against another MPI: the load stops and names it, whether the module
/// was linked to be bound at load or lazily (then libpnmpi looks its
/// imports up itself).
#[test]
fn a_module_calling_a_missing_mpi_routine_stops_however_it_was_linked() {
    for (name, flag) in [("lazympinow", "-Wl,-z,now"), ("lazympilazy", "-Wl,-z,lazy")] {
        module_with_flags("lazy", name, &["MISSING_MPI"], &[flag]);
        let mut case = Case::new();
        case.conf(&format!("module {name}\n"));
        let err = stopped(&case);
        assert!(err.contains(&format!("module `{name}`")), "{err}");
        assert!(err.contains("undefined symbol: PMPI_Pnmpi_test_routine"), "{err}");
    }
}

#[test]
fn pnmpi_conf_naming_a_missing_file_is_an_error() {
    let mut case = Case::new();
    case.env("PNMPI_CONF", "/nonexistent/pnmpi.conf");
    let err = stopped(&case);
    assert!(err.contains("/nonexistent/pnmpi.conf"), "{err}");
}

#[test]
fn toml_errors_name_the_line() {
    let mut case = Case::new();
    let file = case.write("pnmpi.toml", "[[module]]\nname = \"seqA\"\nstak = \"B\"\n");
    case.env("PNMPI_CONF", &file.to_string_lossy());
    let err = stopped(&case);
    assert!(err.contains(&file.display().to_string()), "{err}");
    assert!(err.contains("line 3"), "{err}");
}

#[test]
fn two_local_configurations_are_ambiguous() {
    let mut case = Case::new();
    case.conf("");
    case.write("pnmpi.toml", "");
    let err = stopped(&case);
    assert!(err.contains("choose with PNMPI_CONF"), "{err}");
}

#[test]
fn a_module_that_wraps_nothing_is_loaded_with_a_warning() {
    module("nowrap", "nowrap", &[]);
    let mut case = Case::new();
    case.conf("module nowrap\n");
    let run = case.mpirun(2, &program("ring", Link::Pnmpi), &[]);
    run.assert_ok();
    assert_eq!(run.lines("ring:"), ["ring: size 2 token 2 sum 1 wtime_ok 1"]);
    assert_eq!(
        run.stderr.matches("warning: module `nowrap`").count(),
        1,
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("wraps no MPI routine"), "{}", run.stderr);
}

#[test]
fn a_module_file_that_is_not_elf_or_is_cut_short_is_refused_by_name() {
    let mut case = Case::new();
    let text = case.write("notelf.so", "this is not a shared library\n");
    let conf = case.conf(&format!("module {}\n", text.display()));
    let err = stopped(&case);
    let want = format!("{}:1: module `{}`", conf.display(), text.display());
    assert!(err.contains(&want), "{want}\n{err}");
    assert!(err.contains("cannot parse it as ELF"), "{err}");

    // A real module cut after its first page: its headers are whole, its
    // segments not.
    let whole = std::fs::read(target_dir().join("libempty.so")).unwrap();
    let cut = case.write("cut.so", "");
    std::fs::write(&cut, &whole[..4096]).unwrap();
    let conf = case.conf(&format!("module {}\n", cut.display()));
    let err = stopped(&case);
    let want = format!("{}:1: module `{}`", conf.display(), cut.display());
    assert!(err.contains(&want), "{want}\n{err}");
    assert!(
        err.contains("it is cut short: its segments need") && err.contains("but the file has 4096"),
        "{err}"
    );
}
