//! Every kind of bad input gives one error line naming the file, a documented exit code, no
//! panic, and no output file.

use std::fs;
use std::path::{Path, PathBuf};

use goblin::elf::Elf;

use crate::common::*;

/// A tempdir with ptool in it and the names of everything there before the run.
struct Case {
    dir: tempfile::TempDir,
    tool: PathBuf,
}

impl Case {
    fn new() -> Case {
        let dir = tempfile::tempdir().unwrap();
        let tool = ptool(dir.path());
        Case { dir, tool }
    }

    fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.dir.path().join(name);
        fs::write(&path, bytes).unwrap();
        path
    }

    /// Patches `input` expecting failure `code` with an error about `file` containing `what`,
    /// and checks nothing was added to the directory.
    fn refuse(&self, input: &Path, code: i32, file: &Path, what: &str) -> Run {
        let before = listing(self.dir.path());
        let run = patcher_expect(&[input], code);
        assert_error(&run, file, what);
        assert_eq!(listing(self.dir.path()), before, "no file written");
        run
    }
}

#[test]
fn missing_and_unreadable_files() {
    let case = Case::new();
    let missing = case.dir.path().join("nosuch.so");
    case.refuse(&missing, 1, &missing, "cannot read the file");
    let subdir = case.dir.path().join("libdir.so");
    fs::create_dir(&subdir).unwrap();
    case.refuse(&subdir, 1, &subdir, "cannot read the file");
}

#[test]
fn not_elf_says_what_magic_was_found() {
    let case = Case::new();
    let script = case.write("tool.so", b"#!/bin/sh\necho hi\n");
    case.refuse(&script, 1, &script, "not an ELF file: it starts with 23 21 2f 62");
    let empty = case.write("empty.so", b"");
    let run = case.refuse(&empty, 1, &empty, "the file is empty");
    assert!(run.stderr.contains("(offset 0x0)"), "{}", run.stderr);
}

#[test]
fn static_archive_and_object_file_say_how_to_link_them() {
    let case = Case::new();
    let object = case.dir.path().join("ptool.o");
    let src = source("ptool.c");
    compile(
        &mpicc(),
        &[
            "-c",
            "-fPIC",
            "-o",
            object.to_str().unwrap(),
            src.to_str().unwrap(),
        ],
    );
    let archive = case.dir.path().join("libptool.a");
    compile(
        "ar",
        &["rcs", archive.to_str().unwrap(), object.to_str().unwrap()],
    );
    let run = case.refuse(&archive, 1, &archive, "static archive");
    assert!(
        run.stderr.contains("-Wl,--whole-archive libtool.a"),
        "{}",
        run.stderr
    );
    case.refuse(&object, 1, &object, "relocatable object file");
}

#[test]
fn truncated_elf_is_refused_at_every_length() {
    let case = Case::new();
    let bytes = fs::read(&case.tool).unwrap();
    let truncated = case.dir.path().join("libcut.so");
    for len in [5, 63, 64, 200, bytes.len() / 4, bytes.len() / 2, bytes.len() - 1] {
        fs::write(&truncated, &bytes[..len]).unwrap();
        case.refuse(&truncated, 1, &truncated, "corrupt or truncated ELF");
    }
}

#[test]
fn dynstr_offset_out_of_range_names_the_symbol_and_offset() {
    let case = Case::new();
    let mut bytes = fs::read(&case.tool).unwrap();
    let elf = Elf::parse(&bytes).unwrap();
    let dynsym = elf
        .section_headers
        .iter()
        .find(|sh| sh.sh_type == goblin::elf::section_header::SHT_DYNSYM)
        .unwrap();
    let at = dynsym.sh_offset as usize + 24 * 3;
    drop(elf);
    bytes[at..at + 4].copy_from_slice(&0x7fff_0000u32.to_le_bytes());
    let bad = case.write("libbad.so", &bytes);
    let run = case.refuse(
        &bad,
        1,
        &bad,
        "dynamic symbol #3 points at .dynstr index 0x7fff0000",
    );
    assert!(
        run.stderr.contains(&format!("(offset 0x{at:x})")),
        "{}",
        run.stderr
    );
}

#[test]
fn no_dynamic_symbol_table_is_reported() {
    let case = Case::new();
    let mut bytes = fs::read(&case.tool).unwrap();
    let elf = Elf::parse(&bytes).unwrap();
    let phoff = elf.header.e_phoff as usize;
    let index = elf
        .program_headers
        .iter()
        .position(|ph| ph.p_type == goblin::elf::program_header::PT_DYNAMIC)
        .unwrap();
    drop(elf);
    bytes[phoff + 56 * index..phoff + 56 * index + 4].copy_from_slice(&0u32.to_le_bytes());
    let bad = case.write("libnodyn.so", &bytes);
    case.refuse(&bad, 1, &bad, "no dynamic symbol table");
}

#[test]
fn library_without_pmpi_imports_is_not_a_pmpi_tool() {
    let case = Case::new();
    let plain = shared_lib(
        &cc(),
        case.dir.path(),
        "libplain.so",
        "fakempi.c",
        &["-nostdlib", "-DAS_PNMPI"],
    );
    let run = case.refuse(
        &plain,
        1,
        &plain,
        "imports no PMPI_ routine, so it is not a PMPI tool",
    );
    assert!(
        run.stderr.contains("PnMPI native modules already call XMPI_"),
        "{}",
        run.stderr
    );
    let mpi = shared_lib(
        &cc(),
        case.dir.path(),
        "libmpi_inside.so",
        "fakempi.c",
        &["-nostdlib"],
    );
    case.refuse(&mpi, 1, &mpi, "MPI is statically linked into it");
}

#[test]
fn output_path_that_is_a_directory() {
    let case = Case::new();
    let out = case.dir.path().join("out");
    fs::create_dir(&out).unwrap();
    let run = patcher_expect(&[&case.tool, Path::new("-o"), &out], 4);
    assert_error(&run, &out, "the output path is a directory");
    assert!(fs::read_dir(&out).unwrap().next().is_none());
}

#[test]
fn usage_errors_exit_2() {
    let case = Case::new();
    let run = patcher_expect(
        &[
            Path::new("--in-place"),
            Path::new("-o"),
            Path::new("x.so"),
            &case.tool,
        ],
        2,
    );
    assert!(run.stderr.contains("cannot be used with"), "{}", run.stderr);
    patcher_expect(&[Path::new("--json"), &case.tool], 2);
    patcher_expect(&[], 2);
    let help = patcher_expect(&[Path::new("--help")], 0).stdout;
    assert!(
        help.contains("Exit codes:") && help.contains("--against"),
        "{help}"
    );
}

#[test]
fn unreadable_against_library_is_named() {
    let case = Case::new();
    let script = case.write("libpnmpi.so", b"not a library");
    let run = patcher_expect(&[Path::new("--against"), &script, &case.tool], 1);
    assert_error(&run, &script, "not an ELF file");
}
