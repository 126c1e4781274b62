//! The installed package, as a tool builder uses it: `make install-files`
//! of this build into a temporary prefix, then the guide's C module
//! (c-tests/modules/guide_example.c) built once with CMake's
//! `find_package(PnMPI)` and `pnmpi_add_module`, once with `pkg-config
//! pnmpi-module`, and a plain PMPI tool (c-tests/tools/ptool.c) patched by
//! `pnmpi_patch`. Each is loaded in a chain under real mpirun and counts
//! the ring program's sends. Needs the Debian `cmake` and `pkg-config`
//! packages (scripts/deps.sh).

use crate::common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `cmd`, asserting that it succeeds; returns its stdout.
fn ok(mut cmd: Command, what: &str) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed: {cmd:?}\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Installs this build (libpnmpi, modules, headers, commands, the
/// pkg-config and CMake files) into `prefix`, as `make install` does.
fn install(prefix: &Path) {
    let mut make = Command::new("make");
    make.current_dir(repo())
        .arg("install-files")
        .arg(format!("PREFIX={}", prefix.display()))
        .arg(format!("MPI={FLAVOR}"))
        .arg(format!("TARGET={}", target_dir().display()));
    ok(make, "make install-files");
    for file in [
        "lib/libpnmpi.so",
        "include/pnmpi/xmpi.h",
        "include/pnmpi/pnmpi.h",
        "lib/pkgconfig/pnmpi.pc",
        "lib/pkgconfig/pnmpi-module.pc",
        "lib/cmake/PnMPI/PnMPIConfig.cmake",
        "lib/cmake/PnMPI/PnMPIConfigVersion.cmake",
    ] {
        assert!(prefix.join(file).is_file(), "{file} not installed");
    }
}

/// The ring on 2 ranks under `conf`.
fn ring_under(conf: &str) -> Run {
    let mut case = Case::new();
    case.conf(conf);
    let run = case.mpirun(2, &program("ring", Link::Pnmpi), &[]);
    run.assert_ok();
    run
}

/// What the guide's module prints for the ring, sorted.
fn guide_lines(run: &Run) -> Vec<String> {
    let mut lines: Vec<String> = run
        .lines("guide_example[")
        .iter()
        .map(|l| l.to_string())
        .collect();
    lines.sort();
    lines
}

fn guide_want(label: &str) -> Vec<String> {
    (0..2)
        .map(|r| format!("guide_example[{label}] rank {r}: 1 sends, 4 bytes"))
        .collect()
}

#[test]
fn the_installed_cmake_and_pkg_config_packages_build_modules_that_count() {
    let dir = tempfile::Builder::new()
        .prefix("pnmpi-package")
        .tempdir()
        .expect("tempdir");
    let prefix = dir.path().join("prefix");
    install(&prefix);
    let example = repo().join("c-tests/modules/guide_example.c");
    let ptool = repo().join("c-tests/tools/ptool.c");

    // CMake: find_package(PnMPI), pnmpi_add_module, pnmpi_patch, and
    // LLNL PnMPI's pnmpi_add_xmpi_module and pnmpi_add_pmpi_module.
    let project = dir.path().join("cmake");
    std::fs::create_dir_all(&project).expect("project folder");
    std::fs::write(
        project.join("CMakeLists.txt"),
        format!(
            "cmake_minimum_required(VERSION 3.16)\n\
             project(pnmpi_package_check C)\n\
             find_package(PnMPI 0.1 REQUIRED)\n\
             pnmpi_add_module(guide_example SOURCES {})\n\
             add_library(ptool SHARED {})\n\
             target_link_libraries(ptool PRIVATE MPI::MPI_C)\n\
             pnmpi_patch(ptool)\n\
             pnmpi_add_xmpi_module(llnl_xmpi {})\n\
             pnmpi_add_pmpi_module(llnl_pmpi {})\n\
             if(NOT PnMPI_MPI STREQUAL \"{FLAVOR}\")\n\
               message(FATAL_ERROR \"PnMPI_MPI is ${{PnMPI_MPI}}\")\n\
             endif()\n",
            example.display(),
            ptool.display(),
            example.display(),
            ptool.display()
        ),
    )
    .expect("CMakeLists.txt");
    let build = project.join("build");
    let mut configure = Command::new("cmake");
    configure
        .arg("-S")
        .arg(&project)
        .arg("-B")
        .arg(&build)
        .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display()));
    ok(configure, "cmake configure");
    let mut compile = Command::new("cmake");
    compile.arg("--build").arg(&build);
    ok(compile, "cmake --build");
    let cmake_module = build.join("guide_example.so");
    let patched = build.join("libptool.pnmpi.so");
    assert!(cmake_module.is_file() && patched.is_file(), "CMake built nothing");
    // LLNL's names: a module as it is, and a PMPI tool patched in place.
    let (llnl_xmpi, llnl_pmpi) = (build.join("llnl_xmpi.so"), build.join("llnl_pmpi.so"));

    // pkg-config: the module's flags from pnmpi-module.pc.
    let mut flags = Command::new("pkg-config");
    flags
        .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig"))
        .args(["--cflags", "--libs", "pnmpi-module"]);
    let flags = ok(flags, "pkg-config pnmpi-module");
    let mut variable = Command::new("pkg-config");
    variable
        .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig"))
        .args(["--variable=mpi", "pnmpi"]);
    assert_eq!(ok(variable, "pkg-config --variable").trim(), FLAVOR);
    let pc_module: PathBuf = dir.path().join("guide_example.so");
    let mut cc = Command::new(mpicc());
    cc.arg("-o")
        .arg(&pc_module)
        .arg(&example)
        .args(flags.split_whitespace());
    ok(cc, "mpicc with pkg-config flags");

    // Each loads and counts; the patched tool counts from below them.
    for (module, label, tool) in [
        (&cmake_module, "cmake", &patched),
        (&pc_module, "pkgconfig", &patched),
        (&llnl_xmpi, "llnl", &llnl_pmpi),
    ] {
        let run = ring_under(&format!(
            "module {}\nargument label {label}\nmodule {}\n",
            module.display(),
            tool.display()
        ));
        assert_eq!(
            guide_lines(&run),
            guide_want(label),
            "{}\n{}",
            run.stdout,
            run.stderr
        );
        let mut tool: Vec<&str> = run
            .stderr
            .lines()
            .filter(|l| l.starts_with("ptool: rank"))
            .collect();
        tool.sort_unstable();
        assert_eq!(
            tool,
            [
                "ptool: rank 0 sends=1 recvs=1 bytes=4",
                "ptool: rank 1 sends=1 recvs=1 bytes=4"
            ],
            "{}",
            run.stderr
        );
    }
}
