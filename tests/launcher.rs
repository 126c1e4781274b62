//! `pnmpi run`: chaining tools on a program that was never linked with
//! libpnmpi.

use crate::common;
use common::*;
use std::process::Command;

fn pnmpi() -> std::path::PathBuf {
    target_dir().join("pnmpi")
}

#[test]
fn preloads_into_an_unlinked_program_under_mpirun() {
    let a = seq("A", &[]);
    seq("B", &[]);
    let case = Case::new();
    let conf = case.write("tools.conf", "module seqA\nmodule seqB\n");
    let mut cmd = launcher(2);
    cmd.arg(pnmpi())
        .args(["run", "--conf"])
        .arg(&conf)
        .arg("--lib-path")
        .arg(a.parent().unwrap())
        .arg("--")
        .arg(program("chain", Link::Native));
    let run = case.finish(cmd);
    run.assert_ok();
    assert_eq!(run.lines("Send:"), ["Send: A>Send B>Send B<Send A<Send"]);
}

#[test]
fn without_pnmpi_run_the_unlinked_program_sees_no_tools() {
    seq("A", &[]);
    let mut case = Case::new();
    case.conf("module seqA\n");
    let run = case.mpirun(2, &program("chain", Link::Native), &[]);
    run.assert_ok();
    assert_eq!(run.lines("Send:"), ["Send: "]);
}

#[test]
fn refuses_to_wrap_the_launcher_itself() {
    let out = Command::new(pnmpi())
        .args(["run", "--", "mpirun", "-np", "2", "./app"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(127));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("put pnmpi run after it: mpirun -np 4 pnmpi run -- ./app"),
        "{err}"
    );
}

#[test]
fn missing_conf_file_is_reported() {
    let out = Command::new(pnmpi())
        .args(["run", "--conf", "/nonexistent.conf", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--conf /nonexistent.conf: no such file"));
}
