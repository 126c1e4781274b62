//! ptool, a real PMPI tool built with `$MPICC`: patching, checking, idempotence, `--against`,
//! and running the patched tool under a stand-in libpnmpi.

use std::env;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use crate::common::*;

const WRAPPERS: [&str; 5] = [
    "MPI_Comm_rank",
    "MPI_Finalize",
    "MPI_Init",
    "MPI_Recv",
    "MPI_Send",
];
const IMPORTS: [&str; 6] = [
    "PMPI_Comm_rank",
    "PMPI_Finalize",
    "PMPI_Init",
    "PMPI_Recv",
    "PMPI_Send",
    "PMPI_Type_size",
];

fn json_check(args: &[&Path]) -> (i32, serde_json::Value) {
    let mut all = vec![Path::new("--check"), Path::new("--json")];
    all.extend_from_slice(args);
    let run = patcher(&all);
    let json = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout));
    (run.code, json)
}

fn strings(value: &serde_json::Value) -> Vec<String> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn patched_ptool_differs_only_in_renamed_imports() {
    let dir = tempfile::tempdir().unwrap();
    let tool = ptool(dir.path());
    fs::set_permissions(&tool, fs::Permissions::from_mode(0o750)).unwrap();
    let out = dir.path().join("out.so");
    let run = patcher_expect(&[&tool, Path::new("-o"), &out], 0);
    assert!(
        run.stdout.contains("renamed 6 PMPI import(s) to XMPI_"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("module out"), "{}", run.stdout);

    assert_only_renamed(&tool, &out, &IMPORTS, false);
    let rodata = section(&out, ".rodata");
    assert_eq!(section(&tool, ".rodata"), rodata);
    let banner = b"ptool wraps MPI_Send and calls PMPI_Send";
    assert!(
        rodata.windows(banner.len()).any(|w| w == banner),
        "banner kept in .rodata"
    );
    assert_eq!(section(&tool, ".text"), section(&out, ".text"));

    let (before, after) = (fs::read(&tool).unwrap(), fs::read(&out).unwrap());
    let changed: Vec<u8> = (0..before.len())
        .filter(|&i| before[i] != after[i])
        .map(|i| before[i])
        .collect();
    assert_eq!(changed, [b'P'; 6], "only the six first bytes change");
    assert_eq!(fs::metadata(&out).unwrap().permissions().mode() & 0o777, 0o750);
}

#[test]
fn check_reports_wrappers_imports_and_state() {
    let dir = tempfile::tempdir().unwrap();
    let tool = ptool(dir.path());
    let (code, report) = json_check(&[&tool]);
    assert_eq!(code, 0);
    assert_eq!(report["state"], "unpatched");
    assert_eq!(strings(&report["wrappers"]), WRAPPERS);
    assert_eq!(strings(&report["pmpi_imports"]), IMPORTS);
    assert_eq!(strings(&report["xmpi_imports"]), Vec::<String>::new());
    assert!(report["problem"].is_null());

    let text = patcher_expect(&[Path::new("--check"), &tool], 0).stdout;
    assert!(text.contains("state: unpatched"), "{text}");
    assert!(
        text.contains(&format!("MPI wrappers defined (5): {}", WRAPPERS.join(" "))),
        "{text}"
    );
    assert!(
        text.contains(&format!("PMPI imports (6): {}", IMPORTS.join(" "))),
        "{text}"
    );
    assert!(
        fs::read_dir(dir.path()).unwrap().count() == 1,
        "--check wrote nothing"
    );

    let out = dir.path().join("libptool.pnmpi.so");
    patcher_expect(&[&tool], 0);
    let (code, report) = json_check(&[&out]);
    assert_eq!(code, 0);
    assert_eq!(report["state"], "patched");
    assert_eq!(strings(&report["wrappers"]), WRAPPERS);
    let xmpi: Vec<String> = IMPORTS.iter().map(|n| n.replacen('P', "X", 1)).collect();
    assert_eq!(strings(&report["xmpi_imports"]), xmpi);
}

#[test]
fn patching_twice_is_idempotent_and_in_place_works() {
    let dir = tempfile::tempdir().unwrap();
    let tool = ptool(dir.path());
    let once = dir.path().join("libptool.pnmpi.so");
    patcher_expect(&[&tool], 0);
    let twice = dir.path().join("twice.so");
    let run = patcher_expect(&[&once, Path::new("-o"), &twice], 0);
    assert!(run.stdout.contains("already patched"), "{}", run.stdout);
    assert_eq!(fs::read(&once).unwrap(), fs::read(&twice).unwrap());

    let copy = dir.path().join("libcopy.so.1.0");
    fs::copy(&tool, &copy).unwrap();
    let link = dir.path().join("libcopy.so.1");
    std::os::unix::fs::symlink("libcopy.so.1.0", &link).unwrap();
    patcher_expect(&[Path::new("--in-place"), &link], 0);
    assert!(
        fs::symlink_metadata(&link).unwrap().file_type().is_symlink(),
        "link kept"
    );
    assert_eq!(fs::read(&copy).unwrap(), fs::read(&once).unwrap());
    let run = patcher_expect(&[Path::new("--in-place"), &link], 0);
    assert!(
        run.stdout.contains("already patched; nothing to rename"),
        "{}",
        run.stdout
    );
    assert_eq!(fs::read(&copy).unwrap(), fs::read(&once).unwrap());
}

#[test]
fn against_lists_missing_entry_points_and_refuses_to_patch() {
    let dir = tempfile::tempdir().unwrap();
    let tool = ptool(dir.path());
    let full = shared_lib(&mpicc(), dir.path(), "libfull.so", "fake_pnmpi.c", &[]);
    let partial = shared_lib(
        &mpicc(),
        dir.path(),
        "libpartial.so",
        "fake_pnmpi.c",
        &["-DOMIT_TYPE_SIZE"],
    );

    let against = Path::new("--against");
    let (code, report) = json_check(&[against, &full, &tool]);
    assert_eq!(code, 0);
    assert_eq!(strings(&report["against"]["missing"]), Vec::<String>::new());

    let run = patcher_expect(&[Path::new("--check"), against, &partial, &tool], 3);
    assert!(
        run.stdout.contains("MISSING entry points (1): XMPI_Type_size"),
        "{}",
        run.stdout
    );

    let before = listing(dir.path());
    let run = patcher_expect(&[against, &partial, &tool], 3);
    assert_error(&run, &tool, "XMPI_Type_size");
    assert!(
        run.stderr.contains(&partial.display().to_string()),
        "{}",
        run.stderr
    );
    assert_eq!(listing(dir.path()), before, "nothing written");

    patcher_expect(&[against, &full, &tool], 0);
    let (code, report) = json_check(&[against, &full, &dir.path().join("libptool.pnmpi.so")]);
    assert_eq!((code, report["state"].as_str()), (0, Some("patched")));
}

/// `mpirun` matching `$MPICC`: `$MPIRUN` if set, `mpirun.mpich` for MPICH, else `mpirun`.
fn mpirun() -> String {
    env::var("MPIRUN").unwrap_or_else(|_| {
        if mpicc().contains("mpich") {
            "mpirun.mpich".into()
        } else {
            "mpirun".into()
        }
    })
}

#[test]
fn patched_ptool_runs_under_a_stand_in_libpnmpi() {
    let dir = tempfile::tempdir().unwrap();
    let tool = ptool(dir.path());
    let fake = shared_lib(&mpicc(), dir.path(), "libfake_pnmpi.so", "fake_pnmpi.c", &[]);
    patcher_expect(&[&tool, Path::new("--against"), &fake], 0);
    let app = dir.path().join("ptool_app");
    let d = dir.path().to_str().unwrap();
    compile(
        &mpicc(),
        &[
            "-o",
            app.to_str().unwrap(),
            source("ptool_app.c").to_str().unwrap(),
            &format!("-L{d}"),
            &format!("-Wl,-rpath,{d}"),
            "-Wl,--no-as-needed",
            "-lptool.pnmpi",
            "-lfake_pnmpi",
        ],
    );
    let out = Command::new("timeout")
        .args(["120", &mpirun(), "-np", "2"])
        .arg(&app)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .output()
        .expect("run mpirun");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{} failed: {stderr}", mpirun());
    let mut lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("ptool:") || l.starts_with("fake_pnmpi:"))
        .collect();
    lines.sort();
    // rank 0: Init + its Comm_rank, app's Comm_rank, 3 x (Comm_rank, Type_size, Send), Finalize.
    assert_eq!(
        lines,
        [
            "fake_pnmpi: xmpi_calls=13",
            "fake_pnmpi: xmpi_calls=7",
            "ptool: rank 0 sends=3 recvs=0 bytes=12",
            "ptool: rank 1 sends=0 recvs=3 bytes=0",
        ],
        "{stderr}"
    );
}
