//! LLNL PnMPI's own compiled modules, loaded by path, print under our libpnmpi what they print
//! under LLNL's: each stack runs `c-tests/programs/bsp_llnl.c` (or `threadlevel.c`) at 2 ranks
//! twice, once with LLNL's libpnmpi preloaded and once with ours, and every rank's stdout must be
//! the same line for line (addresses masked: `dtprint` prints buffer pointers).
//!
//! A stack that fails under LLNL's libpnmpi must fail under ours too.
//!
//! Runs only when `PNMPI_LLNL_BUILD` names the install prefix of an LLNL PnMPI built against the
//! MPI these tests use (it holds `lib/libpnmpi.so` and `lib/pnmpi-modules/`); see
//! docs/modules.md#llnl-pnmpis-own-modules. Otherwise each test prints why and passes.

use crate::common;
use common::*;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One stack: its name, its configuration, the program it runs and text a line of the modules'
/// output must hold (so that a stack whose modules printed nothing under either library fails).
struct Stack {
    name: &'static str,
    conf: &'static str,
    program: &'static str,
    expect: &'static str,
}

const STACKS: &[Stack] = &[
    Stack {
        name: "status+requests",
        conf: "module status\nmodule requests\nargument check 1\n",
        program: "bsp_llnl",
        expect: "REQUEST CHECK: all requests have been cleaned up on node 1",
    },
    Stack {
        name: "datatype+dtprint",
        conf: "module datatype\nmodule dtprint\n",
        program: "bsp_llnl",
        expect: "1 DOUBLE of size 8 at buf   0xADDR / 448",
    },
    Stack {
        name: "metrics-counter",
        conf: "module metrics-counter\n",
        program: "bsp_llnl",
        expect: "         6 MPI_Waitall",
    },
    Stack {
        name: "limit-threading",
        conf: "module limit-threading\nargument force-thread-level funneled\n",
        program: "threadlevel",
        expect: "threadlevel: provided 1 multiple 3",
    },
    Stack {
        name: "timelapse",
        conf: "module timelapse\n",
        program: "bsp_llnl",
        expect: "bsp_llnl: ranks 2 phases 3",
    },
    Stack {
        name: "virtual",
        conf: "module virtual\n",
        program: "bsp_llnl",
        expect: "Rank 1 is part of partition 0",
    },
    Stack {
        name: "sample1",
        conf: "module sample1\n",
        program: "bsp_llnl",
        expect: "WRAPPER 1: After recv",
    },
    Stack {
        name: "sample2",
        conf: "module sample2\n",
        program: "bsp_llnl",
        expect: "WRAPPER 2: After send",
    },
    Stack {
        name: "sample3",
        conf: "module sample3\n",
        program: "bsp_llnl",
        expect: "WRAPPER 3: Before recv",
    },
    Stack {
        name: "sample4",
        conf: "module sample4\n",
        program: "bsp_llnl",
        expect: "WRAPPER 4: Before send",
    },
    Stack {
        name: "sample1..4",
        conf: "module sample1\nmodule sample2\nmodule sample3\nmodule sample4\n",
        program: "bsp_llnl",
        expect: "WRAPPER 3: After recv",
    },
    // Every module but timelapse, which MPICH 4 stops (its MPI_Wtime before MPI_Init).
    Stack {
        name: "all",
        conf: "module metrics-counter\nmodule sample1\nmodule sample2\nmodule sample3\nmodule sample4\n\
               module virtual\nmodule status\nmodule requests\nargument check 1\n\
               module datatype\nmodule dtprint\nmodule limit-threading\nargument force-thread-level funneled\n",
        program: "bsp_llnl",
        expect: "WRAPPER 1: Before send",
    },
];

/// LLNL's install prefix, or `None` after saying why the tests skip.
fn llnl_prefix() -> Option<PathBuf> {
    let Some(dir) = std::env::var_os("PNMPI_LLNL_BUILD") else {
        eprintln!(
            "skipped: PNMPI_LLNL_BUILD is not set (the install prefix of an LLNL PnMPI built against {FLAVOR}; \
             see docs/modules.md)"
        );
        return None;
    };
    let dir = PathBuf::from(dir);
    for need in ["lib/libpnmpi.so", "lib/pnmpi-modules/status.so"] {
        assert!(
            dir.join(need).is_file(),
            "PNMPI_LLNL_BUILD={} has no {need}: point it at the folder LLNL's `make install` filled \
             (its CMAKE_INSTALL_PREFIX)",
            dir.display()
        );
    }
    Some(dir)
}

/// Each rank's stdout lines, in order, from output tagged per rank by the launcher, hex addresses
/// masked. Open MPI's `--tag-output` tags each line (`[1,R]<stdout>:`); MPICH's `-prepend-rank`
/// tags each chunk it forwards (`[R] `), which may start in the middle of a line, so there the
/// text between tags is gathered per rank first.
fn by_rank(stdout: &str) -> BTreeMap<u32, Vec<String>> {
    let mut text: BTreeMap<u32, String> = BTreeMap::new();
    if FLAVOR == "openmpi" {
        for line in stdout.lines() {
            let Some((tag, rest)) = line.strip_prefix("[1,").and_then(|l| l.split_once("]<stdout>:")) else {
                continue;
            };
            if let Ok(rank) = tag.parse() {
                let t: &mut String = text.entry(rank).or_default();
                t.push_str(rest);
                t.push('\n');
            }
        }
    } else {
        let mut rank = None;
        let mut rest = stdout;
        while !rest.is_empty() {
            let (chunk, next) = match next_tag(rest) {
                Some((at, r, after)) => {
                    let chunk = &rest[..at];
                    let previous = rank.replace(r);
                    ((previous, chunk), after)
                }
                None => ((rank, rest), ""),
            };
            if let (Some(r), chunk) = chunk {
                text.entry(r).or_default().push_str(chunk);
            }
            rest = next;
        }
    }
    text.into_iter()
        .map(|(rank, t)| (rank, t.lines().map(mask_addresses).collect()))
        .collect()
}

/// The next MPICH rank tag `[R] ` in `text`: where it starts, R, and the text after it.
fn next_tag(text: &str) -> Option<(usize, u32, &str)> {
    let mut from = 0;
    while let Some(at) = text[from..].find('[').map(|i| i + from) {
        let after = &text[at + 1..];
        let digits = after.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 && after[digits..].starts_with("] ") {
            return Some((at, after[..digits].parse().ok()?, &after[digits + 2..]));
        }
        from = at + 1;
    }
    None
}

/// Replaces every `0x` followed by hex digits with `0xADDR`.
fn mask_addresses(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("0x") {
        out.push_str(&rest[..at]);
        let digits = rest[at + 2..].chars().take_while(char::is_ascii_hexdigit).count();
        out.push_str(if digits > 0 { "0xADDR" } else { "0x" });
        rest = &rest[at + 2 + digits..];
    }
    out.push_str(rest);
    out
}

/// Runs `stack` at 2 ranks with `lib` preloaded and LLNL's modules on the search path.
fn run(stack: &Stack, lib: &Path, modules: &Path) -> Run {
    run_conf(stack.conf, stack.program, lib, modules)
}

/// Runs `program` at 2 ranks under the configuration `conf`, with `lib` preloaded and LLNL's
/// modules on the search path.
fn run_conf(conf: &str, program_name: &str, lib: &Path, modules: &Path) -> Run {
    let mut case = Case::new();
    case.env("PNMPI_LIB_PATH", &modules.display().to_string())
        .env("PNMPI_BE_SILENT", "1");
    let conf = case.write("stack.conf", conf);
    case.env("PNMPI_CONF", &conf.display().to_string());
    let preload = format!("LD_PRELOAD={}", lib.display());
    let mut cmd = launcher(2);
    if FLAVOR == "openmpi" {
        cmd.args([
            "--tag-output",
            "-x",
            &preload,
            "-x",
            "PNMPI_CONF",
            "-x",
            "PNMPI_LIB_PATH",
        ])
        .args(["-x", "PNMPI_BE_SILENT"]);
    } else {
        let (key, value) = preload.split_once('=').expect("KEY=VALUE");
        cmd.args(["-prepend-rank", "-genv", key, value]);
    }
    cmd.arg(program(program_name, Link::Native));
    case.finish(cmd)
}

/// Runs every stack under both libraries and compares each rank's output.
fn compare(stacks: &[Stack]) {
    let Some(prefix) = llnl_prefix() else { return };
    let modules = prefix.join("lib/pnmpi-modules");
    for stack in stacks {
        let theirs = run(stack, &prefix.join("lib/libpnmpi.so"), &modules);
        let ours = run(stack, &libpnmpi(), &modules);
        if !theirs.success() {
            // E.g. `timelapse` under MPICH 4, which refuses its MPI_Wtime
            // before MPI_Init: it must fail under ours too.
            assert!(
                !ours.success(),
                "{}: fails under LLNL's libpnmpi, not under ours",
                stack.name
            );
            eprintln!("{}: fails under both libraries:\n{}", stack.name, theirs.stderr);
            continue;
        }
        ours.assert_ok();
        let (theirs, ours) = (by_rank(&theirs.stdout), by_rank(&ours.stdout));
        assert!(
            theirs.contains_key(&0),
            "{}: LLNL's run printed nothing on rank 0",
            stack.name
        );
        for rank in theirs.keys().chain(ours.keys()) {
            assert_eq!(
                theirs.get(rank),
                ours.get(rank),
                "{}: rank {rank} printed differently under LLNL's libpnmpi (left) and ours (right)",
                stack.name
            );
        }
        // The application's clock reads pass the modules' clock wrappers
        // by, as under LLNL's libpnmpi (which defines no MPI_Wtime).
        assert!(
            ours.values()
                .flatten()
                .all(|l| !l.starts_with("bsp_llnl:") || l.ends_with(" clock_ok 1")),
            "{}: the application's clock did not move: {ours:?}",
            stack.name
        );
        assert!(
            ours.values().flatten().any(|l| l.contains(stack.expect)),
            "{}: no line holds {:?}: {ours:?}",
            stack.name,
            stack.expect
        );
        eprintln!(
            "{}: {} lines on each library, identical",
            stack.name,
            theirs[&0].len()
        );
    }
}

#[test]
fn service_modules_print_the_same() {
    compare(&STACKS[..2]);
}

#[test]
fn tool_modules_print_the_same() {
    compare(&STACKS[2..6]);
}

#[test]
fn sample_modules_print_the_same_alone_and_stacked() {
    compare(&STACKS[6..11]);
}

#[test]
fn every_module_stacked_prints_the_same() {
    compare(&STACKS[11..]);
}

/// LLNL's `dtprint`, compiled against LLNL's `datatype.h` (its walk macros), walks the state our
/// `datatype` module hands out: for each send of dtypes.c, rank 0 prints the runs the service's
/// own test computes by hand (tests/common/dtypes.rs), in dtprint's words.
#[test]
fn llnl_dtprint_walks_our_datatype_module() {
    let Some(prefix) = llnl_prefix() else { return };
    let conf = format!(
        "module {}\nmodule dtprint\n",
        target_dir().join("libdatatype.so").display()
    );
    let run = run_conf(&conf, "dtypes", &libpnmpi(), &prefix.join("lib/pnmpi-modules"));
    run.assert_ok();
    let mut want = Vec::new();
    for walk in dtypes::WALKS {
        want.push("Sending to 1 :".to_string());
        let runs = walk.split_once(" runs ").expect("tag N: size S runs ...").1;
        for r in runs.split(" | ") {
            let [offset, name, count, size] = r.split(' ').collect::<Vec<_>>()[..] else {
                panic!("{r}")
            };
            want.push(format!("{count} {name} of size {size} at buf 0xADDR / {offset}"));
        }
    }
    // dtprint pads its type names and addresses: compare words.
    let ours = by_rank(&run.stdout);
    let words = |l: &String| l.split_whitespace().collect::<Vec<_>>().join(" ");
    let rank0: Vec<String> = ours
        .get(&0)
        .map(|l| l.iter().map(words).collect())
        .unwrap_or_default();
    assert_eq!(rank0, want, "{}", run.stderr);
}

#[test]
fn addresses_are_masked_and_ranks_split() {
    assert_eq!(
        mask_addresses("at buf 0x7ffe92 / 0x / 0"),
        "at buf 0xADDR / 0x / 0"
    );
    let tagged = if FLAVOR == "openmpi" {
        "[1,1]<stdout>:b\n[1,0]<stdout>:a 0x1f\nnoise\n[1,1]<stdout>:c\n"
    } else {
        // A chunk of rank 1 ends mid-line; its next chunk, tagged again, ends the line.
        "[1] b\n[0] a 0x1f\n[1] c[1] \n"
    };
    let ranks = by_rank(tagged);
    assert_eq!(ranks[&0], vec!["a 0xADDR"]);
    assert_eq!(ranks[&1], vec!["b", "c"]);
}
