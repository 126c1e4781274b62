//! ptool, a real PMPI tool built with `$MPICC`: patching, checking, idempotence, `--against`.
//! Running patched tools under the real libpnmpi is tested in the root package
//! (tests/patched_tools.rs).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

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
    // A "libpnmpi" with XMPI_Send only; the real libpnmpi, which has them all, is used in the
    // root package's tests/patched_tools.rs.
    let dir = tempfile::tempdir().unwrap();
    let tool = ptool(dir.path());
    let partial = shared_lib(
        &cc(),
        dir.path(),
        "libpartial.so",
        "fakempi.c",
        &["-nostdlib", "-DAS_PNMPI"],
    );
    let missing = [
        "XMPI_Comm_rank",
        "XMPI_Finalize",
        "XMPI_Init",
        "XMPI_Recv",
        "XMPI_Type_size",
    ];

    let against = Path::new("--against");
    let (code, report) = json_check(&[against, &partial, &tool]);
    assert_eq!(code, 3);
    assert_eq!(strings(&report["against"]["missing"]), missing);

    let run = patcher_expect(&[Path::new("--check"), against, &partial, &tool], 3);
    let want = format!("MISSING entry points (5): {}", missing.join(" "));
    assert!(run.stdout.contains(&want), "{}", run.stdout);

    let before = listing(dir.path());
    let run = patcher_expect(&[against, &partial, &tool], 3);
    assert_error(&run, &tool, &missing.join(", "));
    assert!(
        run.stderr.contains(&partial.display().to_string()),
        "{}",
        run.stderr
    );
    assert_eq!(listing(dir.path()), before, "nothing written");
}
