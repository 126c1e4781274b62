//! LLNL PnMPI's own compiled modules, loaded by path, print under our libpnmpi what they print
//! under LLNL's: each stack runs `c-tests/programs/bsp_llnl.c` (or `threadlevel.c`) at 2 ranks
//! twice, once with LLNL's libpnmpi preloaded and once with ours, and every rank's stdout must be
//! the same line for line (addresses masked: `dtprint` prints buffer pointers).
//!
//! Runs only when `PNMPI_LLNL_BUILD` names the install prefix of an LLNL PnMPI built against the
//! MPI these tests use (it holds `lib/libpnmpi.so` and `lib/pnmpi-modules/`); see
//! docs/modules.md#llnl-pnmpis-own-modules. Otherwise each test prints why and passes.

mod common;
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
    Stack {
        name: "all",
        conf: "module metrics-counter\nmodule sample1\nmodule sample2\nmodule sample3\nmodule sample4\n\
               module timelapse\nmodule virtual\nmodule status\nmodule requests\nargument check 1\n\
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

/// Each rank's stdout lines, in order, from output tagged per rank by the launcher (Open MPI's
/// `--tag-output`: `[1,R]<stdout>:`, MPICH's `-prepend-rank`: `[R] `), hex addresses masked.
fn by_rank(stdout: &str) -> BTreeMap<u32, Vec<String>> {
    let mut ranks: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    for line in stdout.lines() {
        let Some((tag, text)) = line.strip_prefix('[').and_then(|l| l.split_once(']')) else {
            continue;
        };
        let rank = tag.rsplit(',').next().and_then(|r| r.parse().ok());
        let text = text.strip_prefix("<stdout>:").unwrap_or(text);
        let text = text
            .strip_prefix(' ')
            .filter(|_| FLAVOR == "mpich")
            .unwrap_or(text);
        if let Some(rank) = rank {
            ranks.entry(rank).or_default().push(mask_addresses(text));
        }
    }
    ranks
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
    let mut case = Case::new();
    case.env("PNMPI_LIB_PATH", &modules.display().to_string())
        .env("PNMPI_BE_SILENT", "1");
    let conf = case.write("stack.conf", stack.conf);
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
    cmd.arg(program(stack.program, Link::Native));
    case.finish(cmd)
}

/// Runs every stack under both libraries and compares each rank's output.
fn compare(stacks: &[Stack]) {
    let Some(prefix) = llnl_prefix() else { return };
    let modules = prefix.join("lib/pnmpi-modules");
    for stack in stacks {
        let theirs = run(stack, &prefix.join("lib/libpnmpi.so"), &modules);
        theirs.assert_ok();
        let ours = run(stack, &libpnmpi(), &modules);
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

#[test]
fn addresses_are_masked_and_ranks_split() {
    assert_eq!(
        mask_addresses("at buf 0x7ffe92 / 0x / 0"),
        "at buf 0xADDR / 0x / 0"
    );
    let tagged = if FLAVOR == "openmpi" {
        "[1,1]<stdout>:b\n[1,0]<stdout>:a 0x1f\nnoise\n"
    } else {
        "[1] b\n[0] a 0x1f\nnoise\n"
    };
    let ranks = by_rank(tagged);
    assert_eq!(ranks[&0], vec!["a 0xADDR"]);
    assert_eq!(ranks[&1], vec!["b"]);
}
