//! Direct binding: each module's `XMPI_X` imports are bound to
//! the next layer below it, and the exported `MPI_X` jumps straight to the
//! first layer, so no libpnmpi frame lies between the application and a
//! wrapper, or between two wrappers. The modules prove it from their own
//! return addresses (`retaddr`) and from a full unwind (`backtrace`); the
//! counting modules prove that every layer still sees every call, through
//! tail calls (`tailcall`), repeated calls (`loopcall`), odd link options
//! and imports of routines a module does not wrap. `PNMPI_BINDING=dispatch`
//! brings back the dispatcher, whose frames the same modules then see.
//!
//! The program, c-tests/programs/binding.c, is linked with `-rdynamic` so
//! that dladdr can name its `main` and `app_send_site`. With 2 ranks and
//! the default 5 iterations each rank makes 6 `MPI_Send` calls: 1 from
//! `main`, 5 from `app_send_site`; and 6 `MPI_Comm_rank`, 6 `MPI_Recv`,
//! 1 `MPI_Comm_size`, 1 `MPI_Barrier`.

use crate::common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

const WARN: &[&str] = &["-Wall", "-Wextra", "-Werror"];

/// The program, with its functions in the dynamic symbol table.
fn app() -> PathBuf {
    let flags: Vec<&str> = ["-rdynamic"].iter().chain(WARN).copied().collect();
    program_with_flags("binding", Link::Pnmpi, "rdynamic", &flags)
}

/// The program's file name, as dladdr reports it (argv[0]'s basename).
fn app_file() -> String {
    file_name(&app())
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

/// `<src><name>.so` from c-tests/modules/<src>.c, built with
/// `-DNAME=<name>`, extra defines and flags, and the warnings as errors.
fn named_module(src: &str, name: &str, defines: &[&str], flags: &[&str]) -> PathBuf {
    let mut all_defines = vec![format!("NAME={name}")];
    all_defines.extend(defines.iter().map(|d| d.to_string()));
    let defines: Vec<&str> = all_defines.iter().map(String::as_str).collect();
    let flags: Vec<&str> = WARN.iter().chain(flags).copied().collect();
    module_with_flags(src, &format!("{src}{name}"), &defines, &flags)
}

/// `retaddr<name>.so`, built with extra defines and flags.
fn retaddr_with(name: &str, defines: &[&str], flags: &[&str]) -> PathBuf {
    named_module("retaddr", name, defines, flags)
}

/// `retaddr<name>.so`: reports the return address of its MPI_Send wrapper.
fn retaddr(name: &str) -> PathBuf {
    retaddr_with(name, &[], &[])
}

fn backtrace(name: &str) -> PathBuf {
    named_module("backtrace", name, &[], &[])
}

fn tailcall(name: &str) -> PathBuf {
    named_module("tailcall", name, &[], &[])
}

fn loopcall(name: &str) -> PathBuf {
    named_module("loopcall", name, &["LOOPS=3"], &[])
}

fn count(name: &str) -> PathBuf {
    api_module("count", &format!("count{name}"), &[&format!("NAME={name}")])
}

/// A configuration listing `modules` by path, in order.
fn conf_of(modules: &[&Path]) -> String {
    modules
        .iter()
        .map(|m| format!("module {}\n", m.display()))
        .collect()
}

/// A case whose configuration lists `modules` by path, in order, with the
/// environment variables `env`.
fn case_of(modules: &[&Path], env: &[(&str, &str)]) -> Case {
    let mut case = Case::new();
    case.conf(&conf_of(modules));
    for (key, value) in env {
        case.env(key, value);
    }
    case
}

/// `each(rank)` for ranks 0 and 1, in one sorted list.
fn both_ranks<T: Ord, const N: usize>(each: impl Fn(u32) -> [T; N]) -> Vec<T> {
    let mut all: Vec<T> = [0, 1].into_iter().flat_map(each).collect();
    all.sort();
    all
}

/// Runs 2 ranks of the program with `args` and checks its own report.
fn run_app(case: &Case, args: &[&str], sends: usize) -> Run {
    let run = case.mpirun(2, &app(), args);
    run.assert_ok();
    assert_eq!(
        sorted_lines(&run, "binding:"),
        both_ranks(|r| [format!(
            "binding: rank {r} size 2 sent {sends} received {sends} errors 0"
        )]),
        "stdout:\n{}\nstderr:\n{}",
        run.stdout,
        run.stderr
    );
    run
}

/// One `retaddr` report line: a caller of one module instance on one rank.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Caller {
    /// The module's file (a private copy's name without its
    /// `pnmpi-<pid>-` prefix).
    module: String,
    rank: u32,
    /// The symbol and file holding the return address.
    sym: String,
    file: String,
    calls: u64,
}

fn caller(module: &str, rank: u32, sym: &str, file: &str, calls: u64) -> Caller {
    Caller {
        module: module.into(),
        rank,
        sym: sym.into(),
        file: file.into(),
        calls,
    }
}

/// `pnmpi-1234-copy3-retaddrA.so` -> `copy3-retaddrA.so`.
fn strip_pid(file: &str) -> String {
    if let Some(rest) = file.strip_prefix("pnmpi-") {
        if let Some((pid, tail)) = rest.split_once('-') {
            if pid.chars().all(|c| c.is_ascii_digit()) && tail.starts_with("copy") {
                return tail.to_string();
            }
        }
    }
    file.to_string()
}

/// Every `retaddr` caller line of the run, sorted. Panics on any other
/// `retaddr` line (an overflow or a lost call).
fn callers(run: &Run) -> Vec<Caller> {
    let mut all: Vec<Caller> = run
        .lines("retaddr ")
        .into_iter()
        .filter(|l| !l.contains(" sizes "))
        .map(|line| {
            let w: Vec<&str> = line.split_whitespace().collect();
            let ok = w.len() == 12
                && w[2] == "in"
                && w[4] == "rank"
                && w[6] == "caller"
                && w[8] == "in"
                && w[10] == "calls";
            assert!(ok, "unexpected line `{line}`\n{}", run.stdout);
            Caller {
                module: strip_pid(w[3].trim_end_matches(':')),
                rank: w[5].parse().unwrap(),
                sym: w[7].into(),
                file: strip_pid(w[9]),
                calls: w[11].parse().unwrap(),
            }
        })
        .collect();
    all.sort();
    all
}

fn assert_callers(run: &Run, mut want: Vec<Caller>) {
    want.sort();
    assert_eq!(
        callers(run),
        want,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout,
        run.stderr
    );
}

/// What the first module sees on each rank: main's call, then
/// `app_send_site`'s `sends - 1`.
fn from_the_application(module: &str, sends: u64) -> Vec<Caller> {
    let app = app_file();
    both_ranks(|r| {
        [
            caller(module, r, "main", &app, 1),
            caller(module, r, "app_send_site", &app, sends - 1),
        ]
    })
}

/// What a module below `above` sees on each rank: every call from the
/// MPI_Send wrapper of `above`.
fn from_the_module(module: &str, above: &str, sends: u64) -> Vec<Caller> {
    both_ranks(|r| [caller(module, r, "MPI_Send", above, sends)])
}

/// The one `pnmpi: binding: ` line of stderr (rank 0's), checked to start
/// with `pnmpi: binding: <start>`.
fn assert_binding_line<'a>(run: &'a Run, start: &str) -> &'a str {
    let lines: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("pnmpi: binding: "))
        .collect();
    assert_eq!(lines.len(), 1, "{}", run.stderr);
    assert!(
        lines[0].starts_with(&format!("pnmpi: binding: {start}")),
        "{}",
        run.stderr
    );
    lines[0]
}

/// The lines of the run's stdout that start with `prefix`, sorted.
fn sorted_lines<'a>(run: &'a Run, prefix: &str) -> Vec<&'a str> {
    let mut lines = run.lines(prefix);
    lines.sort();
    lines
}

#[test]
fn the_first_module_is_called_from_the_applications_own_functions() {
    let case = case_of(&[&retaddr("A")], &[("PNMPI_VERBOSE", "1")]);
    let run = run_app(&case, &[], 6);
    assert_callers(&run, from_the_application("retaddrA.so", 6));
    // Direct is the default, and rank 0 says so (once).
    assert_binding_line(&run, "direct");
}

#[test]
fn the_second_module_is_called_from_the_first_modules_wrapper() {
    let (a, b) = (retaddr("A"), retaddr("B"));
    let case = case_of(&[&a, &b], &[("PNMPI_BINDING", "direct")]);
    let run = run_app(&case, &[], 6);
    let mut want = from_the_application("retaddrA.so", 6);
    want.extend(from_the_module("retaddrB.so", "retaddrA.so", 6));
    assert_callers(&run, want);
}

#[test]
fn ten_modules_each_called_from_the_one_above() {
    let names: Vec<String> = (0..10).map(|k| format!("R{k}")).collect();
    let modules: Vec<PathBuf> = names.iter().map(|n| retaddr(n)).collect();
    let refs: Vec<&Path> = modules.iter().map(PathBuf::as_path).collect();
    let case = case_of(&refs, &[]);
    let run = run_app(&case, &["iters", "3"], 4);
    let mut want = from_the_application("retaddrR0.so", 4);
    for k in 1..10 {
        want.extend(from_the_module(
            &format!("retaddrR{k}.so"),
            &format!("retaddrR{}.so", k - 1),
            4,
        ));
    }
    assert_callers(&run, want);
}

#[test]
fn the_same_file_listed_ten_times_chains_its_private_copies_directly() {
    let a = retaddr("A");
    let case = case_of(&[a.as_path(); 10], &[]);
    let run = run_app(&case, &["iters", "3"], 4);
    let all = callers(&run);
    for rank in [0, 1] {
        let mine: Vec<&Caller> = all.iter().filter(|c| c.rank == rank).collect();
        // The first instance (the file itself) is called by the program.
        let mut top: Vec<&Caller> = mine
            .iter()
            .copied()
            .filter(|c| c.module == "retaddrA.so")
            .collect();
        top.sort();
        let app = app_file();
        let mut want_top = [
            caller("retaddrA.so", rank, "main", &app, 1),
            caller("retaddrA.so", rank, "app_send_site", &app, 3),
        ];
        want_top.sort();
        assert_eq!(top, want_top.iter().collect::<Vec<_>>(), "{}", run.stdout);
        // Each copy is called, for all 4 sends, by the MPI_Send wrapper of
        // another instance; following those links from the top visits all
        // 10 instances, each once.
        let mut order = vec!["retaddrA.so".to_string()];
        while order.len() < 10 {
            let last = order.last().unwrap().clone();
            let below: Vec<&&Caller> = mine.iter().filter(|c| c.file == last).collect();
            assert_eq!(
                below.len(),
                1,
                "rank {rank}: who is below {last}?\n{}",
                run.stdout
            );
            let next = below[0];
            assert_eq!((next.sym.as_str(), next.calls), ("MPI_Send", 4), "{}", run.stdout);
            assert!(
                next.module.ends_with("-retaddrA.so") && !order.contains(&next.module),
                "{}",
                run.stdout
            );
            order.push(next.module.clone());
        }
        assert_eq!(mine.len(), 11, "{}", run.stdout);
    }
}

#[test]
fn four_threads_see_the_same_direct_callers() {
    let (a, b) = (retaddr("A"), retaddr("B"));
    let case = case_of(&[&a, &b], &[]);
    let run = run_app(&case, &["threads", "4", "iters", "50"], 201);
    let mut want = from_the_application("retaddrA.so", 201);
    want.extend(from_the_module("retaddrB.so", "retaddrA.so", 201));
    assert_callers(&run, want);
}

#[test]
fn main_is_the_frame_right_above_the_first_wrapper() {
    let (t, a) = (backtrace("T"), retaddr("A"));
    let case = case_of(&[&t, &a], &[]);
    let run = run_app(&case, &[], 6);
    let app = app_file();
    // Frame 0 is the wrapper. A call from main: main is frame 1. A call
    // from app_send_site (called by `exchanges`, called by main; all three
    // noinline): main is frame 3. No frame in between lies in libpnmpi.
    let want = both_ranks(|r| {
        [
            format!("backtrace T: rank {r} frame1 main in {app} main at 1 libpnmpi 0 calls 1"),
            format!("backtrace T: rank {r} frame1 app_send_site in {app} main at 3 libpnmpi 0 calls 5"),
        ]
    });
    assert_eq!(
        sorted_lines(&run, "backtrace "),
        want,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout,
        run.stderr
    );
    assert_callers(&run, from_the_module("retaddrA.so", "backtraceT.so", 6));
}

/// The instructions of `function` in `lib`, from `objdump -d`.
fn disassembly(lib: &Path, function: &str) -> String {
    let out = Command::new("objdump")
        .args(["-d", "--no-show-raw-insn"])
        .arg(lib)
        .output()
        .expect("objdump runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let start = text
        .find(&format!("<{function}>:\n"))
        .unwrap_or_else(|| panic!("no {function} in {}", lib.display()));
    let body = &text[start..];
    body[..body.find("\n\n").unwrap_or(body.len())].to_string()
}

#[test]
fn a_tail_calling_layer_leaves_no_frame() {
    let (a, t, b) = (retaddr("A"), tailcall("T"), retaddr("B"));
    // The wrapper really ends in a jump to XMPI_Send, with no call.
    let code = disassembly(&t, "MPI_Send");
    assert!(
        code.lines()
            .any(|l| l.contains("jmp") && l.contains("<XMPI_Send@plt>")),
        "{code}"
    );
    assert!(!code.contains("call"), "{code}");
    let case = case_of(&[&a, &t, &b], &[]);
    let run = run_app(&case, &[], 6);
    // B is reached by T's jump: its return address is in A's wrapper.
    let mut want = from_the_application("retaddrA.so", 6);
    want.extend(from_the_module("retaddrB.so", "retaddrA.so", 6));
    assert_callers(&run, want);
    assert_eq!(
        sorted_lines(&run, "tailcall "),
        both_ranks(|r| [format!("tailcall T: rank {r} Send 6 Comm_rank 6")])
    );
}

/// The `count NAME rank R: ...` lines of the run, without the trailing
/// `levels`/`pcself` fields, sorted.
fn count_lines(run: &Run) -> Vec<String> {
    let mut lines: Vec<String> = run
        .lines("count ")
        .into_iter()
        .map(|l| l.split(" levels ").next().unwrap().to_string())
        .collect();
    lines.sort();
    lines
}

#[test]
fn every_layer_sees_every_call_through_loops_and_tail_calls_in_both_modes() {
    let (l, a, t, b) = (loopcall("L"), count("A"), tailcall("T"), count("B"));
    for mode in ["direct", "dispatch"] {
        let case = case_of(&[&l, &a, &t, &b], &[("PNMPI_BINDING", mode)]);
        let run = run_app(&case, &[], 6);
        // L turns each of the 6 Comm_rank calls into 3: every layer below
        // sees 18, with the right result each time. Send and the routines
        // L does not wrap pass unchanged.
        assert_eq!(
            sorted_lines(&run, "loopcall "),
            both_ranks(|r| [format!("loopcall L: rank {r} Comm_rank 6 made 18 wrong 0")]),
            "{mode}"
        );
        assert_eq!(
            sorted_lines(&run, "tailcall "),
            both_ranks(|r| [format!("tailcall T: rank {r} Send 6 Comm_rank 18")]),
            "{mode}"
        );
        let want = both_ranks(|r| {
            ["A", "B"].map(|m| {
                format!("count {m} rank {r}: Send 6 Recv 6 Barrier 1 Comm_rank 18 Comm_size 1 Pcontrol 0")
            })
        });
        assert_eq!(count_lines(&run), want, "{mode}\n{}", run.stdout);
    }
}

/// `readelf <option> lib`.
fn readelf(option: &str, lib: &Path) -> String {
    let out = Command::new("readelf")
        .args(["-W", option])
        .arg(lib)
        .output()
        .expect("readelf runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The relocation types of `symbol` in `lib`.
fn relocations_of(lib: &Path, symbol: &str) -> Vec<String> {
    readelf("-r", lib)
        .lines()
        .filter(|l| l.split_whitespace().any(|w| w == symbol))
        .filter_map(|l| l.split_whitespace().nth(2).map(String::from))
        .collect()
}

#[test]
fn modules_built_with_any_relro_lazy_no_plt_or_hash_option_are_bound_directly() {
    let now = retaddr_with("Now", &[], &["-Wl,-z,now", "-Wl,-z,relro"]);
    // Only a SysV hash table: the symbol count comes from it, not DT_GNU_HASH.
    let sysv = retaddr_with("Sysv", &[], &["-Wl,--hash-style=sysv"]);
    let lazy = retaddr_with("Lazy", &[], &["-Wl,-z,lazy"]);
    let norelro = retaddr_with("Norelro", &[], &["-Wl,-z,norelro"]);
    let noplt = retaddr_with("Noplt", &[], &["-fno-plt"]);
    let plain = retaddr("P");
    // The builds are what they claim to be.
    let dynamic = |m: &Path| readelf("-d", m);
    let segments = |m: &Path| readelf("-l", m);
    assert!(dynamic(&now).contains("NOW"), "{}", dynamic(&now));
    assert!(segments(&now).contains("GNU_RELRO"));
    assert!(!dynamic(&lazy).contains("NOW"), "{}", dynamic(&lazy));
    assert!(!segments(&norelro).contains("GNU_RELRO"));
    assert!(
        dynamic(&sysv).contains("(HASH)") && !dynamic(&sysv).contains("GNU_HASH"),
        "{}",
        dynamic(&sysv)
    );
    for m in [&now, &lazy, &norelro, &sysv, &plain] {
        assert_eq!(
            relocations_of(m, "XMPI_Send"),
            ["R_X86_64_JUMP_SLOT"],
            "{}",
            m.display()
        );
    }
    assert_eq!(relocations_of(&noplt, "XMPI_Send"), ["R_X86_64_GLOB_DAT"]);

    let case = case_of(&[&now, &sysv, &lazy, &norelro, &noplt, &plain], &[]);
    let run = run_app(&case, &[], 6);
    // Each module's caller proves the module above it was bound directly:
    // P's proves it for the -fno-plt build's GLOB_DAT slot.
    let mut want = from_the_application("retaddrNow.so", 6);
    want.extend(from_the_module("retaddrSysv.so", "retaddrNow.so", 6));
    want.extend(from_the_module("retaddrLazy.so", "retaddrSysv.so", 6));
    want.extend(from_the_module("retaddrNorelro.so", "retaddrLazy.so", 6));
    want.extend(from_the_module("retaddrNoplt.so", "retaddrNorelro.so", 6));
    want.extend(from_the_module("retaddrP.so", "retaddrNoplt.so", 6));
    assert_callers(&run, want);
}

/// The bundled Rust modules are linked for lazy binding (partial RELRO,
/// calls through a PLT: .cargo/config.toml), so that ld.so leaves the
/// `XMPI_` slots libpnmpi binds itself; libpnmpi stays bound at load.
#[test]
fn bundled_modules_call_xmpi_through_lazily_bound_plt_slots() {
    let tracer = target_dir().join("libtracer.so");
    let flags = |lib: &Path| {
        readelf("-d", lib)
            .lines()
            .filter(|l| l.contains("FLAGS") || l.contains("BIND_NOW"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(!flags(&tracer).contains("NOW"), "{}", flags(&tracer));
    assert_eq!(relocations_of(&tracer, "XMPI_Send"), ["R_X86_64_JUMP_SLOT"]);
    assert!(flags(&libpnmpi()).contains("NOW"), "{}", flags(&libpnmpi()));
}

#[test]
fn an_import_of_a_routine_the_module_does_not_wrap_goes_to_the_next_wrapper_or_mpi() {
    // S's Send wrapper calls XMPI_Comm_size; S does not wrap Comm_size.
    let s = retaddr_with("S", &["CALL_SIZE"], &[]);
    let (a, b) = (count("A"), count("B"));
    assert_eq!(relocations_of(&s, "XMPI_Comm_size"), ["R_X86_64_JUMP_SLOT"]);
    let sizes = |run: &Run| {
        let mut lines = sorted_lines(run, "retaddr S in retaddrS.so: rank ");
        lines.retain(|l| l.contains(" sizes "));
        lines.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let want_sizes = both_ranks(|r| [format!("retaddr S in retaddrS.so: rank {r} sizes 6 wrong 0")]);

    // Alone: nothing below wraps Comm_size, the call goes to MPI.
    let mut case = case_of(&[&s], &[]);
    let run = run_app(&case, &[], 6);
    assert_eq!(sizes(&run), want_sizes, "{}", run.stdout);
    assert_callers(&run, from_the_application("retaddrS.so", 6));

    // Above A (Comm_size excluded: A is not in that routine's chain) and B
    // (wraps it): only B sees the 6 calls, besides the program's own one.
    case.conf(&format!(
        "module {}\nmodule {}\nexclude MPI_Comm_size\nmodule {}\n",
        s.display(),
        a.display(),
        b.display()
    ));
    let run = run_app(&case, &[], 6);
    assert_eq!(sizes(&run), want_sizes, "{}", run.stdout);
    let want = both_ranks(|r| {
        [
            format!("count A rank {r}: Send 6 Recv 6 Barrier 1 Comm_rank 6 Comm_size 0 Pcontrol 0"),
            format!("count B rank {r}: Send 6 Recv 6 Barrier 1 Comm_rank 6 Comm_size 7 Pcontrol 0"),
        ]
    });
    assert_eq!(count_lines(&run), want, "{}", run.stdout);
}

/// Under the dispatcher, every caller of each of `modules` is in libpnmpi,
/// and each module saw the 6 sends of each rank.
fn assert_all_from_libpnmpi(run: &Run, modules: &[&str]) {
    let all = callers(run);
    for c in &all {
        assert!(c.file.contains("libpnmpi"), "{c:?}\n{}", run.stdout);
    }
    for module in modules {
        for rank in [0, 1] {
            let calls: u64 = all
                .iter()
                .filter(|c| c.module == *module && c.rank == rank)
                .map(|c| c.calls)
                .sum();
            assert_eq!(calls, 6, "{module} rank {rank}\n{}", run.stdout);
        }
    }
    assert!(
        all.iter().all(|c| modules.contains(&c.module.as_str())),
        "{}",
        run.stdout
    );
}

#[test]
fn pnmpi_binding_dispatch_puts_libpnmpi_between_the_layers() {
    let (t, a) = (backtrace("T"), retaddr("A"));
    let env = [("PNMPI_BINDING", "dispatch"), ("PNMPI_VERBOSE", "1")];
    let case = case_of(&[&t, &a], &env);
    let run = run_app(&case, &[], 6);
    // The dispatcher's frame is A's caller for all 6 sends...
    assert_all_from_libpnmpi(&run, &["retaddrA.so"]);
    // ...and lies between T's wrapper and main.
    let lines = sorted_lines(&run, "backtrace ");
    assert_eq!(lines.len(), 4, "{}", run.stdout);
    for l in &lines {
        assert!(!l.contains("libpnmpi 0 "), "{l}\n{}", run.stderr);
        assert!(!l.contains("main at -1 "), "{l}\n{}", run.stderr);
    }
    assert_binding_line(&run, "dispatch (");
}

#[test]
fn importing_change_stack_forces_the_dispatcher() {
    let include = format!("-I{}", repo().join("include").display());
    let c = retaddr_with("C", &["IMPORT_CHANGESTACK"], &[&include]);
    let case = case_of(&[&c, &retaddr("B")], &[("PNMPI_VERBOSE", "1")]);
    let run = run_app(&case, &[], 6);
    let line = assert_binding_line(&run, "dispatch (");
    assert!(line.contains("PNMPI_Service_ChangeStack"), "{}", run.stderr);
    assert_all_from_libpnmpi(&run, &["retaddrC.so", "retaddrB.so"]);
}

#[test]
fn an_unknown_pnmpi_binding_stops_the_run() {
    let case = case_of(&[&retaddr("A")], &[("PNMPI_BINDING", "bogus")]);
    let err = case.stopped("ring", &["ring:", "retaddr "]);
    for word in ["PNMPI_BINDING", "bogus", "direct", "dispatch"] {
        assert!(err.contains(word), "`{word}` missing:\n{err}");
    }
}

#[test]
fn a_module_whose_wrappers_call_down_from_its_own_library_gets_the_dispatcher() {
    // The core library's GOT is not the module's: binding it to the
    // module's level is not possible, so the whole chain is dispatched,
    // and every call still reaches the module below exactly once.
    module_with_flags("splitcore", "libsplitcore", &[], WARN);
    let dir = modules_dir();
    let (link, rpath) = (
        format!("-L{}", dir.display()),
        format!("-Wl,-rpath,{}", dir.display()),
    );
    let flags: Vec<&str> = WARN
        .iter()
        .copied()
        .chain([link.as_str(), "-Wl,--no-as-needed", "-lsplitcore", rpath.as_str()])
        .collect();
    let front = module_with_flags("splitfront", "splitfront", &[], &flags);
    let case = case_of(&[&front, &retaddr("B")], &[("PNMPI_VERBOSE", "1")]);
    let run = run_app(&case, &[], 6);
    let line = assert_binding_line(&run, "dispatch (");
    assert!(line.contains("libsplitcore.so"), "{}", run.stderr);
    assert_eq!(
        sorted_lines(&run, "splitfront:"),
        both_ranks(|r| [format!("splitfront: rank {r} sends 6")])
    );
    assert_all_from_libpnmpi(&run, &["retaddrB.so"]);
}
